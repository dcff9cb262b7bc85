"""The reader of Note [checkpoint format]: the header validated field by field, then the
tensors copied (or mapped) out of the file with their checksums.

This file is over 400 lines because every field of a hostile file is checked here, each with
its own message naming the field and what was expected.
"""

from __future__ import annotations

import json
import mmap as _mmap
import os
import struct
import zlib
from typing import IO, Any

import numpy as np

from chainrule.serialization._format import (
    _BIG_ENDIAN,
    _CODES,
    _EXT_CODES,
    _FOREIGN_CODES,
    CheckpointError,
    CheckpointIntegrityError,
    FileLike,
    _bytes_view,
    _is_int,
    _show,
    load_ext_codes,
)

_CHUNK = 1 << 22  # bytes copied and checksummed at a time while the chunk is in cache
_THREADED_BYTES = 1 << 25  # from 32 MB of tensors, checksum on a second thread


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
        if head[:2] == b"PK":
            raise self.fail(
                "it looks like a PyTorch (zip) checkpoint, but it is not a valid zip archive "
                "with a data.pkl record (truncated or damaged?)"
            )
        if head[:1] == b"\x80":
            raise self.fail(
                "it looks like a PyTorch checkpoint in the legacy (pre-1.6, not zip) format or "
                "a raw pickle, which chainrule does not read; re-save it with torch.save in "
                "PyTorch >= 1.6 (or convert it with safetensors.torch.save_file)"
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
            if isinstance(code, str) and code in _EXT_CODES:
                load_ext_codes()
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
