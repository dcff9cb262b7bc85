"""``save`` and ``load``: checkpoints in the safetensors format, never pickle.

This file is longer than most because it holds the whole format in one place: the writer, the
reader, and the validation that turns every malformed or hostile file into a CheckpointError
naming what is wrong (the reader is the part users' files reach, so it checks every field).

Note [checkpoint format]
A checkpoint is one safetensors file (readable by ``safetensors.numpy.load_file``): an 8-byte
little-endian header length, a JSON header padded with spaces to a multiple of 8 bytes, then
the tensors' bytes, largest item size first so that every tensor is aligned. Tensors are
stored under the keys "0", "1", ... (a tensor object saved twice is stored once). The header's
``__metadata__`` (a str -> str map) holds:
  - ``format``: "chainrule", ``format_version``: "2";
  - ``structure``: a JSON list of nodes, the saved object being the last. A node is a JSON
    None, bool, int, float (NaN and infinities allowed) or string standing for itself, or a
    tagged object whose children are indices of earlier nodes:
    ``{"t": "tensor", "k": key, "rg": requires_grad, "param": is_parameter}``,
    ``{"t": "list" | "tuple", "v": [indices]}``, ``{"t": "dict" | "odict" | "counter",
    "k": [indices], "v": [indices]}`` (keys are nodes too, so int keys survive),
    ``{"t": "dtype", "v": name}`` and ``{"t": "size", "v": [ints]}``. The list is flat, so
    any nesting depth loads without recursion, and a container saved twice is one node, so
    shared objects come back shared (as with torch's pickle);
  - ``crc32``: a JSON map from tensor key to the CRC-32 of its bytes, so that a corrupted
    tensor is detected and named;
  - ``header_crc32``: the CRC-32 of the rest of the header in a canonical form (every tensor's
    dtype, shape and offsets and every other metadata field, as sorted compact JSON), so that
    a damaged dtype, shape, offset, checksum or structure is detected too.
Format version 1 (written before the header checksum) held the structure as a nested JSON
tree and no ``header_crc32``; it still loads. Loading only parses JSON and reads arrays, so it
cannot run code. A safetensors file without this metadata (from another tool) loads as a
plain ``{name: tensor}`` dict.
"""

from __future__ import annotations

import json
import mmap as _mmap
import os
import struct
import sys
import zlib
from collections import Counter, OrderedDict
from typing import IO, Any, Callable, Union

import numpy as np

from chainrule import _dtype
from chainrule._tensor import Size, Tensor

__all__ = ["save", "load", "CheckpointError", "CheckpointIntegrityError"]

FileLike = Union[str, "os.PathLike[str]", IO[bytes]]

_FORMAT = "chainrule"
_VERSION = "2"
_READABLE_VERSIONS = ("1", "2")

# safetensors dtype codes of the dtypes chainrule has.
_CODES = {
    "F16": np.dtype(np.float16),
    "F32": np.dtype(np.float32),
    "F64": np.dtype(np.float64),
    "U8": np.dtype(np.uint8),
    "I8": np.dtype(np.int8),
    "I16": np.dtype(np.int16),
    "I32": np.dtype(np.int32),
    "I64": np.dtype(np.int64),
    "BOOL": np.dtype(np.bool_),
}
_CODE_OF = {d: c for c, d in _CODES.items()}
# Codes safetensors knows but chainrule has no dtype for (named as such in the error).
_FOREIGN_CODES = ("BF16", "U16", "U32", "U64", "F8_E4M3", "F8_E5M2", "C64")
_CHUNK = 1 << 22  # bytes copied and checksummed at a time while the chunk is in cache
_THREADED_BYTES = 1 << 25  # from 32 MB of tensors, checksum on a second thread
_BIG_ENDIAN = sys.byteorder == "big"


class CheckpointError(RuntimeError):
    """A checkpoint could not be read: truncated, malformed, or not a chainrule checkpoint.
    The message names the file, the field or tensor at fault and what was expected."""


class CheckpointIntegrityError(CheckpointError):
    """A checkpoint is well formed but fails a checksum: its header (dtypes, shapes, offsets,
    structure) or a tensor's bytes were altered after it was written."""


def _name_of(f: Any) -> str:
    if isinstance(f, (str, os.PathLike)):
        return os.fspath(f)
    return str(getattr(f, "name", f"<{type(f).__name__}>"))


def _show(v: Any, n: int = 80) -> str:
    """A header value as JSON for an error message, cut to ``n`` characters."""
    try:
        return json.dumps(v)[:n]
    except (ValueError, RecursionError, TypeError):
        return f"<a {type(v).__name__}>"


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _canonical(entries: dict[str, Any], meta: dict[str, str]) -> bytes:
    """What ``header_crc32`` covers: the header minus that field, as sorted compact JSON."""
    rest = {k: v for k, v in meta.items() if k != "header_crc32"}
    return json.dumps(
        {"tensors": entries, "metadata": rest},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
    ).encode("ascii")


def _bytes_view(arr: np.ndarray) -> memoryview:
    """The bytes of a C-contiguous array, without a copy (0-d and empty arrays included)."""
    return memoryview(arr.reshape(-1).view(np.uint8))


# Saving ---------------------------------------------------------------------------------------
class _Encoder:
    """Flattens the saved object into the node list of Note [checkpoint format], iteratively
    (any depth) and with a memo (a shared container or tensor becomes one node)."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.nodes: list[Any] = []
        self.memo: dict[Any, int] = {}

    def _tensor_node(self, t: Tensor) -> dict[str, Any]:
        from chainrule.nn.parameter import Parameter

        key = str(len(self.arrays))
        host = np.asarray(t._backend.to_host(t._data))
        # ascontiguousarray would turn a 0-d array into 1-d.
        host = host if host.flags.c_contiguous else host.copy(order="C")
        if _BIG_ENDIAN:
            host = host.astype(host.dtype.newbyteorder("<"))
        self.arrays[key] = host
        return {
            "t": "tensor",
            "k": key,
            "rg": bool(t.requires_grad),
            "param": isinstance(t, Parameter),
        }

    def _leaf(self, obj: Any, path: Callable[[], str]) -> Any:
        """The node of a non-container, or raise TypeError naming the object's place."""
        if isinstance(obj, (int, np.integer)):
            return int(obj)
        if isinstance(obj, (float, np.floating)):
            return float(obj)
        if isinstance(obj, _dtype.dtype):
            return {"t": "dtype", "v": obj.name}
        if isinstance(obj, Size):
            return {"t": "size", "v": [int(s) for s in obj]}
        if isinstance(obj, Tensor):
            return self._tensor_node(obj)
        if isinstance(obj, np.ndarray):
            from chainrule._creation import as_tensor

            return self._tensor_node(as_tensor(obj))
        raise TypeError(
            f"chainrule.save: cannot save an object of type {type(obj).__name__} (at {path()}); "
            "checkpoints hold tensors, dicts, lists, tuples, dtypes and None/bool/int/float/str "
            "only (no pickle)"
        )

    def _add(self, node: Any, memo_key: Any = None) -> int:
        self.nodes.append(node)
        if memo_key is not None:
            self.memo[memo_key] = len(self.nodes) - 1
        return len(self.nodes) - 1

    def encode(self, root: Any) -> int:
        # A frame is [container, tag, children, results]; its children are encoded first
        # (post-order), so every node's children have smaller indices than the node.
        stack: list[list[Any]] = []
        active: set[int] = set()  # ids of the containers being encoded: a cycle check

        def path() -> str:
            parts = ["obj"]
            for obj, _tag, children, results in stack:
                i = len(results)
                if isinstance(obj, dict):
                    n = len(obj)
                    parts.append(".<key>" if i < n else f"[{children[i - n]!r}]")
                else:
                    parts.append(f"[{i}]")
            return "".join(parts)

        def visit(obj: Any) -> int | None:
            """The node index of ``obj`` if it is done at once, or None after pushing a frame."""
            if (
                obj is None
                or isinstance(obj, (bool, str))
                or (isinstance(obj, int) and type(obj) is int)
            ):
                key = (type(obj), obj)
                hit = self.memo.get(key)
                return hit if hit is not None else self._add(obj, key)
            if isinstance(obj, (list, tuple, dict)) and not isinstance(obj, Size):
                hit = self.memo.get(id(obj))
                if hit is not None:
                    return hit
                if id(obj) in active:
                    raise ValueError(
                        f"chainrule.save: cannot save an object that contains itself (at "
                        f"{path()}); checkpoints hold trees of tensors and plain values"
                    )
                active.add(id(obj))
                if isinstance(obj, dict):
                    tag = (
                        "counter"
                        if isinstance(obj, Counter)
                        else "odict"
                        if isinstance(obj, OrderedDict)
                        else "dict"
                    )
                    children = [*obj.keys(), *obj.values()]
                else:
                    tag = "list" if isinstance(obj, list) else "tuple"
                    children = list(obj)
                stack.append([obj, tag, children, []])
                return None
            if isinstance(obj, Tensor):
                hit = self.memo.get(id(obj))
                return hit if hit is not None else self._add(self._leaf(obj, path), id(obj))
            return self._add(self._leaf(obj, path))

        done = visit(root)
        while stack:
            frame = stack[-1]
            obj, tag, children, results = frame
            if len(results) < len(children):
                i = visit(children[len(results)])
                if i is not None:
                    results.append(i)
                continue
            stack.pop()
            active.discard(id(obj))
            if isinstance(obj, dict):
                n = len(obj)
                node = {"t": tag, "k": results[:n], "v": results[n:]}
            else:
                node = {"t": tag, "v": results}
            done = self._add(node, id(obj))
            if stack:
                stack[-1][3].append(done)
        assert done is not None
        return done


def save(
    obj: Any,
    f: FileLike,
    pickle_module: Any = None,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
) -> None:
    """Save ``obj`` (a tensor, or nested dicts/lists/tuples of tensors and plain Python
    values: a module's or optimizer's ``state_dict``, a training checkpoint) to ``f``, a path
    or a binary file object. See Note [checkpoint format].

    The tensors' bytes are streamed to the file from the tensors' own memory (no copy of the
    checkpoint is built in memory); a path is written beside the target and renamed over it,
    so a crash mid-write leaves any old file intact.

    Differs from torch: the file is safetensors with JSON metadata, not a pickle, so
    arbitrary Python objects cannot be saved (a TypeError names the offending one); tensors
    that share memory but are different objects are stored separately.

    Raises:
        TypeError: ``obj`` holds something other than tensors, dicts, lists, tuples, dtypes,
            sizes and None/bool/int/float/str; the message names where.
        ValueError: ``obj`` contains itself.
    """
    enc = _Encoder()
    enc.encode(obj)
    # Largest item size first: with an 8-byte-aligned header every tensor is then aligned.
    order = sorted(enc.arrays, key=lambda k: -enc.arrays[k].dtype.itemsize)
    entries: dict[str, Any] = {}
    crc: dict[str, int] = {}
    offset = 0
    for key in order:
        arr = enc.arrays[key]
        entries[key] = {
            "dtype": _CODE_OF[arr.dtype.newbyteorder("=")],
            "shape": [int(s) for s in arr.shape],
            "data_offsets": [offset, offset + arr.nbytes],
        }
        crc[key] = zlib.crc32(_bytes_view(arr))
        offset += arr.nbytes
    meta = {
        "format": _FORMAT,
        "format_version": _VERSION,
        "structure": json.dumps(enc.nodes, allow_nan=True, separators=(",", ":")),
        "crc32": json.dumps(crc, separators=(",", ":")),
    }
    meta["header_crc32"] = str(zlib.crc32(_canonical(entries, meta)))
    header = json.dumps({"__metadata__": meta, **entries}, separators=(",", ":")).encode()
    header += b" " * (-len(header) % 8)

    def write(fh: IO[bytes]) -> None:
        fh.write(struct.pack("<Q", len(header)))
        fh.write(header)
        for key in order:
            if enc.arrays[key].nbytes:
                fh.write(_bytes_view(enc.arrays[key]))

    if isinstance(f, (str, os.PathLike)):
        tmp = os.fspath(f) + ".tmp"
        try:
            with open(tmp, "wb") as fh:
                write(fh)
            os.replace(tmp, f)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
    else:
        write(f)


# Loading --------------------------------------------------------------------------------------
class _Reader:
    """Reads one checkpoint: the header (validated field by field), then the tensors."""

    def __init__(self, f: FileLike, name: str, use_mmap: bool) -> None:
        self.name = name
        self.mm: _mmap.mmap | None = None
        self.fh: IO[bytes] | None = None
        self.base = 0  # where the checkpoint starts in the file or mapping
        if isinstance(f, (str, os.PathLike)):
            with open(f, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size:
                    # ACCESS_COPY (MAP_PRIVATE): writable arrays whose writes never reach the
                    # file, as torch.load(mmap=True) gives. Without mmap=True the tensors are
                    # copied out of the mapping (faster here than read(), and no second copy).
                    access = _mmap.ACCESS_COPY if use_mmap else _mmap.ACCESS_READ
                    self.mm = _mmap.mmap(fh.fileno(), 0, access=access)
            self.size = size
        elif use_mmap:
            raise ValueError("f must be a file path in order to use the mmap argument")
        else:
            self.fh = f  # type: ignore[assignment]
            try:
                self.base = f.tell()  # type: ignore[union-attr]
                end = f.seek(0, os.SEEK_END)  # type: ignore[union-attr]
                f.seek(self.base)  # type: ignore[union-attr]
                self.size = end - self.base
            except (AttributeError, OSError, ValueError):
                # Not seekable: read it all, so that no header can make us allocate more
                # than the stream holds.
                import io

                data = f.read()  # type: ignore[union-attr]
                self.fh, self.base, self.size = io.BytesIO(data), 0, len(data)

    def fail(self, what: str, cls: type[CheckpointError] = CheckpointError) -> CheckpointError:
        return cls(f"chainrule.load: cannot read '{self.name}': {what}")

    def read(self, start: int, n: int) -> bytes:
        """``n`` bytes at ``start`` (relative to the checkpoint), or fewer at the end."""
        if self.mm is not None:
            return self.mm[start : start + n]
        if self.fh is None:  # an empty file
            return b""
        self.fh.seek(self.base + start)
        parts, got = [], 0
        while got < n:  # a raw stream may return less than asked for
            part = self.fh.read(n - got)
            if not part:
                break
            parts.append(part)
            got += len(part)
        return b"".join(parts)

    # The header ---------------------------------------------------------------------------
    def header(self) -> tuple[dict[str, Any], dict[str, str], int]:
        """(tensor entries, metadata, data start), every field checked."""
        head = self.read(0, 8)
        if len(head) < 8:
            raise self.fail(
                f"the file is truncated or empty ({len(head)} bytes; a checkpoint "
                "starts with an 8-byte header length)"
            )
        (n,) = struct.unpack("<Q", head)
        if n > self.size - 8:
            self._sniff(head)
            raise self.fail(
                f"the file is truncated or not a safetensors file (its header claims {n} bytes, "
                f"but only {self.size - 8} follow the length field)"
            )
        raw = self.read(8, n)
        try:
            header = json.loads(raw.decode("utf-8"), object_pairs_hook=self._no_duplicates)
        except _DuplicateKey as e:
            raise self.fail(
                f"its header has the key {e.args[0]!r} twice; a checkpoint names "
                "each tensor and metadata field once"
            ) from None
        except RecursionError:
            raise self.fail("its header is nested too deeply to be a checkpoint") from None
        except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, huge int literals
            self._sniff(head)
            raise self.fail(
                f"the header is not valid JSON, so the file is corrupted ({e})"
            ) from None
        if not isinstance(header, dict):
            self._sniff(head)
            raise self.fail("the header is not a JSON object, so the file is corrupted")
        meta = header.pop("__metadata__", None)
        if meta is None:
            meta = {}
        if not isinstance(meta, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in meta.items()
        ):
            raise self.fail(
                f"its header's '__metadata__' must be a JSON object of strings (got {_show(meta)})"
            )
        data_len = self.size - 8 - n
        self._check_entries(header, data_len)
        return header, meta, 8 + n

    @staticmethod
    def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        d = dict(pairs)
        if len(d) != len(pairs):
            seen: set[str] = set()
            for k, _ in pairs:
                if k in seen:
                    raise _DuplicateKey(k)
                seen.add(k)
        return d

    def _sniff(self, head: bytes) -> None:
        """Called only once the bytes failed to parse as safetensors: name a torch file."""
        if head[:2] == b"PK" or head[:1] == b"\x80":
            raise self.fail(
                "it looks like a PyTorch (zip/pickle) checkpoint; chainrule reads only "
                "safetensors checkpoints written by chainrule.save or safetensors (convert it "
                "with torch and safetensors.torch.save_file)"
            )

    def _check_entries(self, entries: dict[str, Any], data_len: int) -> None:
        spans = []
        for key, info in entries.items():
            where = f"the header entry for tensor '{key}'"
            if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= set(info):
                raise self.fail(
                    f"{where} must be an object with 'dtype', 'shape' and "
                    f"'data_offsets' (got {_show(info)})"
                )
            code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
            if not isinstance(code, str) or code not in _CODES:
                known = ", ".join(_CODES)
                if isinstance(code, str) and code in _FOREIGN_CODES:
                    raise self.fail(
                        f"{where} has dtype {code}, which chainrule does not "
                        f"support (it supports {known})"
                    )
                raise self.fail(f"{where} has dtype {_show(code, 40)}; expected one of {known}")
            if not isinstance(shape, list) or not all(_is_int(s) and s >= 0 for s in shape):
                raise self.fail(
                    f"{where} has shape {_show(shape)}; expected a list of non-negative integers"
                )
            if not (
                isinstance(offsets, list)
                and len(offsets) == 2
                and all(_is_int(o) for o in offsets)
                and 0 <= offsets[0] <= offsets[1]
            ):
                raise self.fail(
                    f"{where} has data_offsets {_show(offsets)}; expected "
                    "[start, end], two integers with 0 <= start <= end"
                )
            start, end = offsets
            numel = 1
            for s in shape:
                numel *= s
            if numel * _CODES[code].itemsize != end - start:
                raise self.fail(
                    f"{where} is inconsistent: shape {shape} of {code} needs "
                    f"{numel * _CODES[code].itemsize} bytes, but its data_offsets span "
                    f"{end - start}"
                )
            if end > data_len:
                raise self.fail(
                    f"the file is truncated: tensor '{key}' needs bytes {start}..{end} of the "
                    f"data section, which has {data_len} bytes"
                )
            spans.append((start, end, key))
        spans.sort()
        pos = 0
        for start, end, key in spans:
            if start != pos:
                what = "overlaps the tensor before it" if start < pos else "leaves a gap before it"
                raise self.fail(
                    f"tensor '{key}' (data_offsets [{start}, {end}]) {what}; the "
                    "tensors must tile the data section"
                )
            pos = end
        if pos != data_len:
            raise self.fail(
                f"the data section has {data_len - pos} bytes after its last tensor "
                "(the file was damaged or appended to)"
            )

    # The tensors --------------------------------------------------------------------------
    def arrays(
        self, entries: dict[str, Any], data_start: int, crc: dict[str, int] | None, use_mmap: bool
    ) -> dict[str, np.ndarray]:
        """Every tensor's array, each checked against ``crc`` (when given) as it is read."""
        out = {}
        order = sorted(entries.items(), key=lambda kv: kv[1]["data_offsets"][0])
        total = sum(info["data_offsets"][1] - info["data_offsets"][0] for _, info in order)
        sums = _Checksums(crc is not None, threaded=total >= _THREADED_BYTES)
        for key, info in order:
            start, end = info["data_offsets"]
            dt, shape = _CODES[info["dtype"]], tuple(info["shape"])
            lo, hi = data_start + start, data_start + end
            if use_mmap and self.mm is not None and end > start:
                arr = np.frombuffer(
                    self.mm, dtype=dt, count=(end - start) // dt.itemsize, offset=lo
                ).reshape(shape)
                sums.add(key, memoryview(self.mm)[lo:hi])
            else:
                arr = np.empty(shape, dt)
                self._copy_into(_bytes_view(arr), lo, key, sums)
            if _BIG_ENDIAN:
                arr = arr.view(dt.newbyteorder("<")).astype(dt)
            out[key] = arr
        got = sums.results()
        if crc is not None:
            for key, info in order:
                self._check_crc(key, info, got.get(key, 0), crc)
        return out

    def _copy_into(self, dst: memoryview, lo: int, key: str, sums: _Checksums) -> None:
        """Copy the bytes at ``lo`` into ``dst`` chunk by chunk, handing each chunk to
        ``sums`` while it is in cache."""
        n = len(dst)
        if self.mm is not None:
            src = memoryview(self.mm)
            page = _mmap.PAGESIZE
            for o in range(0, n, _CHUNK):
                m = min(_CHUNK, n - o)
                dst[o : o + m] = src[lo + o : lo + o + m]
                sums.add(key, dst[o : o + m])
                # Drop the mapped pages just copied (they stay in the page cache) so that the
                # mapping does not add the file's size to this process's resident memory.
                a = (lo + o) // page * page
                b = (lo + o + m) // page * page
                if b > a and hasattr(self.mm, "madvise"):
                    self.mm.madvise(_mmap.MADV_DONTNEED, a, b - a)
            src.release()
            return
        assert self.fh is not None
        self.fh.seek(self.base + lo)
        o = 0
        while o < n:
            got = self.fh.readinto(dst[o : min(n, o + _CHUNK)])  # type: ignore[attr-defined]
            if not got:
                raise self.fail(f"the file is truncated inside tensor '{key}'")
            sums.add(key, dst[o : o + got])
            o += got

    def _check_crc(self, key: str, info: dict[str, Any], got: int, crc: dict[str, int]) -> None:
        if got != crc[key]:
            raise self.fail(
                f"tensor '{key}' (shape {tuple(info['shape'])}, {info['dtype']}) fails its "
                "checksum, so the file is corrupted",
                CheckpointIntegrityError,
            )

    def close(self, keep_mapping: bool) -> None:
        if self.fh is not None:
            end = self.base + self.size
            self.fh.seek(end)
        if self.mm is not None and not keep_mapping:
            try:
                self.mm.close()
            except BufferError:  # an array still views it (only with mmap=True)
                pass


class _DuplicateKey(Exception):
    pass


class _Checksums:
    """A running CRC-32 per tensor over the chunks handed to ``add`` in file order. For a
    large checkpoint the chunks are checksummed on one worker thread (zlib releases the GIL)
    while the next chunk is copied, so that the checksum costs little wall time."""

    def __init__(self, enabled: bool, threaded: bool) -> None:
        self.enabled = enabled
        self.crc: dict[str, int] = {}
        self.pool: Any = None
        self.pending: list[Any] = []
        if enabled and threaded:
            from concurrent.futures import ThreadPoolExecutor

            self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chainrule-crc")

    def _update(self, key: str, view: memoryview) -> None:
        self.crc[key] = zlib.crc32(view, self.crc.get(key, 0))

    def add(self, key: str, view: memoryview) -> None:
        if not self.enabled:
            return
        if self.pool is None:
            self._update(key, view)
        else:  # one worker runs the updates in submission order
            self.pending.append(self.pool.submit(self._update, key, view))

    def results(self) -> dict[str, int]:
        if self.pool is not None:
            self.pool.shutdown(wait=True)
            for fut in self.pending:
                fut.result()
            self.pending.clear()
        return self.crc


class _Decoder:
    """Builds the saved object from the node list (or a version-1 tree), checking each node."""

    def __init__(
        self,
        arrays: dict[str, np.ndarray],
        fail: Callable[[str], CheckpointError],
        map_location: Any,
    ) -> None:
        self.arrays = arrays
        self.fail = fail
        self.map_location = map_location
        self.made: dict[str, Tensor] = {}

    def tensor(self, node: dict[str, Any]) -> Tensor:
        key = node.get("k")
        if not isinstance(key, str):
            raise self.fail(
                f"a tensor node of its structure has key {_show(key, 40)}; expected a string"
            )
        for flag in ("rg", "param"):
            if not isinstance(node.get(flag, False), bool):
                raise self.fail(
                    f"tensor node '{key}' of its structure has '{flag}': "
                    f"{_show(node[flag], 40)}; expected true or false"
                )
        if key in self.made:
            return self.made[key]
        if key not in self.arrays:
            raise self.fail(f"its structure refers to tensor '{key}', which the file does not hold")
        from chainrule.nn.parameter import Parameter

        t = Tensor._wrap(self.arrays[key])
        if self.map_location is not None and not callable(self.map_location):
            if not isinstance(self.map_location, dict):
                t = t.to(self.map_location)
        if node.get("param"):
            t = Parameter(t, requires_grad=bool(node.get("rg")))
        elif node.get("rg"):
            t.requires_grad_(True)
        self.made[key] = t
        return t

    def nodes(self, nodes: Any) -> Any:
        """Decode a version-2 node list in one forward pass (children come first)."""
        if not isinstance(nodes, list) or not nodes:
            raise self.fail("its structure must be a non-empty JSON list of nodes")
        out: list[Any] = []
        for i, node in enumerate(nodes):
            out.append(self.node(node, i, out))
        return out[-1]

    def node(self, node: Any, i: int, out: list[Any]) -> Any:
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if not isinstance(node, dict) or not isinstance(node.get("t"), str):
            raise self.fail(
                f"structure node {i} is {_show(node)}; expected a JSON "
                "scalar or an object with a string 't'"
            )
        tag = node["t"]

        def children(field: str) -> list[Any]:
            idx = node.get(field)
            if not isinstance(idx, list) or not all(_is_int(j) and 0 <= j < i for j in idx):
                raise self.fail(
                    f"structure node {i} ({tag}) has '{field}': "
                    f"{_show(idx)}; expected a list of indices of "
                    "earlier nodes"
                )
            return [out[j] for j in idx]

        if tag == "tensor":
            return self.tensor(node)
        if tag == "list":
            return children("v")
        if tag == "tuple":
            return tuple(children("v"))
        if tag in ("dict", "odict", "counter"):
            return self.mapping(tag, children("k"), children("v"), f"structure node {i}")
        return self.scalar_node(tag, node, f"structure node {i}")

    def mapping(self, tag: str, keys: list[Any], vals: list[Any], where: str) -> Any:
        if len(keys) != len(vals):
            raise self.fail(f"{where} ({tag}) has {len(keys)} keys but {len(vals)} values")
        for k in keys:
            try:
                hash(k)
            except TypeError:
                raise self.fail(
                    f"{where} ({tag}) has a key of type {type(k).__name__}, which "
                    "cannot be a dict key"
                ) from None
        d = dict(zip(keys, vals))
        if len(d) != len(keys):
            raise self.fail(f"{where} ({tag}) has a duplicate key")
        if tag == "dict":
            return d
        if tag == "odict":
            return OrderedDict(d)
        out: Counter[Any] = Counter()
        for k, v in d.items():  # Counter(d) would add counts; this keeps the values as saved
            out[k] = v
        return out

    def scalar_node(self, tag: str, node: dict[str, Any], where: str) -> Any:
        v = node.get("v")
        if tag == "dtype":
            if not isinstance(v, str) or v not in _dtype._BY_NAME:
                raise self.fail(
                    f"{where} (dtype) names {_show(v, 40)}; expected one of "
                    f"{', '.join(_dtype._BY_NAME)}"
                )
            return _dtype.to_dtype(v)
        if tag == "size":
            if not isinstance(v, list) or not all(_is_int(s) and s >= 0 for s in v):
                raise self.fail(
                    f"{where} (size) is {_show(v)}; expected a list of non-negative integers"
                )
            return Size(v)
        raise self.fail(f"{where} has the unknown type {_show(tag, 40)}")

    def tree(self, root: Any) -> Any:
        """Decode a version-1 nested tree without recursion (post-order with a stack)."""
        # A frame is [node, children (JSON), decoded children]; scalars decode in place.
        result: list[Any] = []
        stack: list[list[Any]] = [[root, None, []]]
        while stack:
            frame = stack[-1]
            node, kids, done = frame
            if kids is None:
                if node is None or isinstance(node, (bool, int, float, str)):
                    stack.pop()
                    (stack[-1][2] if stack else result).append(node)
                    continue
                if not isinstance(node, dict) or not isinstance(node.get("t"), str):
                    raise self.fail(f"its structure holds the unknown node {_show(node)}")
                tag = node["t"]
                if tag in ("list", "tuple"):
                    kids = node.get("v")
                elif tag in ("dict", "odict", "counter"):
                    k, v = node.get("k"), node.get("v")
                    kids = [*k, *v] if isinstance(k, list) and isinstance(v, list) else None
                    if kids is not None and len(k) != len(v):
                        raise self.fail(
                            f"a {tag} of its structure has {len(k)} keys but {len(v)} values"
                        )
                else:
                    kids = []
                if not isinstance(kids, list):
                    raise self.fail(f"a {tag} node of its structure is malformed ({_show(node)})")
                frame[1] = kids
                continue
            if len(done) < len(kids):
                stack.append([kids[len(done)], None, []])
                continue
            stack.pop()
            tag = node["t"]
            if tag == "tensor":
                value = self.tensor(node)
            elif tag == "list":
                value = done
            elif tag == "tuple":
                value = tuple(done)
            elif tag in ("dict", "odict", "counter"):
                n = len(done) // 2
                value = self.mapping(tag, done[:n], done[n:], "a node of its structure")
            else:
                value = self.scalar_node(tag, node, "a node of its structure")
            (stack[-1][2] if stack else result).append(value)
        return result[0]


def _checksums(
    meta: dict[str, str], entries: dict[str, Any], fail: Callable[..., CheckpointError]
) -> dict[str, int]:
    """The ``crc32`` field, checked: one 32-bit integer for each tensor and no other."""
    try:
        crc = json.loads(meta.get("crc32", ""), object_pairs_hook=_Reader._no_duplicates)
    except (ValueError, RecursionError, _DuplicateKey):
        crc = None
    if not isinstance(crc, dict) or not all(_is_int(v) and 0 <= v < 2**32 for v in crc.values()):
        raise fail(
            f"its 'crc32' metadata is {meta.get('crc32', '(missing)')[:80]!r}; expected "
            "a JSON object mapping each tensor key to a 32-bit unsigned integer"
        )
    missing = sorted(set(entries) - set(crc))
    extra = sorted(set(crc) - set(entries))
    if missing or extra:
        raise fail(
            f"its 'crc32' metadata does not match its tensors (no checksum for "
            f"{missing[:5]}, checksums for absent tensors {extra[:5]})",
            CheckpointIntegrityError,
        )
    return crc


def load(
    f: FileLike,
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    verify: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Load an object saved by ``save`` from a path or binary file object.

    Tensors come back with their dtypes and exact bytes, as Parameters where they were
    Parameters, with ``requires_grad`` as saved. ``map_location`` may name a device. The
    header's checksum is always verified; each tensor's bytes are checksummed as they are
    copied out of the file (one copy, straight into the tensor's memory).

    Args:
        f: a path, or a binary file object positioned at the checkpoint.
        map_location: a device for every tensor (callables and dicts are accepted and ignored:
            chainrule's tensors live on one host).
        pickle_module, weights_only: accepted for torch compatibility; loading never unpickles.
        mmap: as in torch: map the file instead of reading it (``f`` must be a path). The
            tensors view a private copy-on-write mapping (MAP_PRIVATE): they are writable and
            their writes never reach the file; pages are read when first touched.
        verify: checksum every tensor's bytes. Default: True, except with ``mmap=True``,
            where reading every page to checksum it would defeat the mapping.

    Raises:
        CheckpointError (a RuntimeError): the file is truncated, malformed (any header field
            of the wrong type or out of range, duplicate keys, overlapping data) or not a
            safetensors checkpoint; the message names the file, the field and what was
            expected. Its subclass CheckpointIntegrityError: a checksum of the header or of
            a tensor does not match.
        ValueError: ``mmap=True`` with a file object.
    """
    name = _name_of(f)
    use_mmap = bool(mmap)
    if verify is None:
        verify = not use_mmap
    reader = _Reader(f, name, use_mmap)
    keep = False
    try:
        entries, meta, data_start = reader.header()
        # header_crc32 marks a chainrule file too, so that a damaged 'format' value is caught
        # by the header checksum rather than loading the file as a plain safetensors one.
        if meta.get("format") != _FORMAT and "header_crc32" not in meta:
            # A plain safetensors file: its tensors by name, unchecked (it holds no checksums).
            arrays = reader.arrays(entries, data_start, None, use_mmap)
            dec = _Decoder(arrays, reader.fail, map_location)
            result = {k: dec.tensor({"k": k}) for k in entries}
            keep = use_mmap
            return result
        version = meta.get("format_version")
        if version not in _READABLE_VERSIONS:
            raise reader.fail(
                f"its format_version is {version!r}; this chainrule reads "
                f"versions {', '.join(_READABLE_VERSIONS)} (a newer chainrule "
                "wrote it?)"
            )
        crc = _checksums(meta, entries, reader.fail)
        if version != "1" or "header_crc32" in meta:
            stored = meta.get("header_crc32")
            if stored is None or not (stored.isascii() and stored.isdigit() and len(stored) <= 10):
                raise reader.fail(
                    f"its 'header_crc32' metadata is {stored!r}; expected the "
                    "decimal CRC-32 of the header"
                )
            if int(stored) != zlib.crc32(_canonical(entries, meta)):
                raise reader.fail(
                    "its header fails its checksum (a dtype, shape, offset, checksum or the "
                    "structure was altered), so the file is corrupted",
                    CheckpointIntegrityError,
                )
        if "structure" not in meta:
            raise reader.fail("its 'structure' metadata is missing")
        try:
            tree = json.loads(meta["structure"])
        except RecursionError:
            raise reader.fail("its structure is nested too deeply to load") from None
        except ValueError as e:
            raise reader.fail(f"its structure metadata is not valid JSON ({e})") from None
        arrays = reader.arrays(entries, data_start, crc if verify else None, use_mmap)
        dec = _Decoder(arrays, reader.fail, map_location)
        result = dec.tree(tree) if version == "1" else dec.nodes(tree)
        keep = use_mmap
        return result
    finally:
        reader.close(keep)
