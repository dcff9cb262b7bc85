"""``save``: the writer of Note [checkpoint format] (in ``_format.py``)."""

from __future__ import annotations

import base64
import json
import os
import struct
import zlib
from collections import Counter, OrderedDict
from typing import IO, Any, Callable

import numpy as np

from chainrule import _dtype
from chainrule._tensor import Size, Tensor
from chainrule.serialization import _pickle
from chainrule.serialization._format import (
    _BIG_ENDIAN,
    _CODE_OF,
    _FORMAT,
    _VERSION,
    _VERSION_PICKLED,
    FileLike,
    _bytes_view,
    _canonical,
    load_ext_codes,
)

_JSON_CONTAINERS = frozenset((list, tuple, dict, OrderedDict, Counter))


class _Encoder:
    """Flattens the saved object into the node list of Note [checkpoint format], iteratively
    (any depth) and with a memo (a shared container or tensor becomes one node)."""

    def __init__(self, pickle_module: Any = None, pickle_protocol: int = 2) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.nodes: list[Any] = []
        self.memo: dict[Any, int] = {}
        self.pickle_module = pickle_module
        self.pickle_protocol = pickle_protocol
        self.pickled = 0  # how many pickle nodes (Note [pickled nodes])
        self.keep: list[Any] = []  # objects whose id() is a memo key stay alive until the end

    def _store(self, t: Tensor) -> str:
        """Keep ``t``'s bytes (C order, little-endian) for the file; their key."""
        key = str(len(self.arrays))
        host = np.asarray(t._backend.to_host(t._data))
        # ascontiguousarray would turn a 0-d array into 1-d.
        host = host if host.flags.c_contiguous else host.copy(order="C")
        if _BIG_ENDIAN:
            host = host.astype(host.dtype.newbyteorder("<"))
        self.arrays[key] = host
        return key

    def _tensor_node(self, t: Tensor) -> dict[str, Any]:
        from chainrule.nn.parameter import Parameter
        from chainrule.sparse._coo import SparseTensor

        if isinstance(t, SparseTensor):
            # A sparse COO tensor: its indices and values as two arrays (Note [checkpoint
            # format]); loading rebuilds it through sparse_coo_tensor, which checks them.
            return {
                "t": "sparse_coo",
                "i": self._store(t._indices()),
                "v": self._store(t._values()),
                "size": [int(s) for s in t.shape],
                "co": bool(t.is_coalesced()),
                "rg": bool(t.requires_grad),
            }
        key = self._store(t)
        node = {
            "t": "tensor",
            "k": key,
            "rg": bool(t.requires_grad),
            "param": isinstance(t, Parameter),
        }
        if t.device.type != "cpu":
            node["loc"] = str(t.device)  # torch.load's location (serialization/_location.py)
        return node

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

            node = self._tensor_node(as_tensor(obj))
            node["np"] = True  # loads back as an ndarray, as torch.load gives one
            return node
        return self._pickle_node(obj)

    def _tensor_index(self, t: Tensor) -> int:
        hit = self.memo.get(id(t))
        return hit if hit is not None else self._add(self._tensor_node(t), id(t))

    def _pickle_node(self, obj: Any) -> dict[str, Any]:
        """Any other object: pickled, its tensors as persistent ids (Note [pickled nodes])."""
        refs: list[int] = []

        def persistent_id(o: Any) -> Any:
            if isinstance(o, Tensor):
                self.keep.append(o)
                i = self._tensor_index(o)
                refs.append(i)
                return i
            return None

        data = _pickle.dumps(obj, persistent_id, self.pickle_protocol, self.pickle_module)
        self.pickled += 1
        return {
            "t": "pickle",
            "v": base64.b64encode(data).decode("ascii"),
            "p": sorted(set(refs)),
        }

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
            return _frames_path(stack)

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
            # Exactly these container types are JSON nodes; subclasses (a defaultdict, a
            # namedtuple) are pickled, so that they come back as what they were.
            if type(obj) in _JSON_CONTAINERS:
                hit = self.memo.get(id(obj))
                if hit is not None:
                    return hit
                if id(obj) in active:
                    raise ValueError(
                        f"chainrule.save: cannot save an object that contains itself (at "
                        f"{path()}); checkpoints hold trees of tensors and plain values"
                    )
                active.add(id(obj))
                stack.append([obj, *_container_parts(obj), []])
                return None
            if isinstance(obj, Tensor):
                hit = self.memo.get(id(obj))
                return hit if hit is not None else self._add(self._leaf(obj, path), id(obj))
            if isinstance(obj, (float, np.integer, np.floating, _dtype.dtype, Size)):
                return self._add(self._leaf(obj, path))
            # Anything else is pickled once per object, so that it comes back shared.
            hit = self.memo.get(id(obj))
            if hit is not None:
                return hit
            self.keep.append(obj)
            return self._add(self._leaf(obj, path), id(obj))

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
            done = self._add(_container_node(obj, tag, results), id(obj))
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
    *,
    format: str = "chainrule",  # noqa: A002 - the natural name; torch has no such argument
) -> None:
    """Save ``obj`` to ``f``, a path or a binary file object, as ``torch.save`` does: a
    tensor, a state dict, a training checkpoint (``{"epoch": 3, "model": model.state_dict(),
    "opt": opt.state_dict()}``) or a whole object such as an ``nn.Module``.

    Tensors, dicts, lists, tuples, dtypes, sizes and None/bool/int/float/str are stored as
    JSON beside the tensors' bytes (Note [checkpoint format]), with no pickle; any other object
    is pickled with its tensors left out as references to the tensors stored in the file
    (Note [pickled nodes]), and loading it needs ``weights_only=False`` or an allow-list
    (``serialization.add_safe_globals``), as in PyTorch. The tensors' bytes are streamed to
    the file from the tensors' own memory; a path is written beside the target and renamed
    over it, so a crash mid-write leaves any old file intact.

    Args:
        obj: what to save.
        f: a path or a writable binary file object.
        pickle_module: the module whose ``Pickler`` pickles the non-tensor objects
            (default: ``pickle``).
        pickle_protocol: the pickle protocol of those objects (default 2, as torch).
        _use_new_zipfile_serialization: accepted for torch compatibility.
        format: ``"chainrule"`` (the default, Note [checkpoint format]) or ``"torch"``:
            PyTorch's zip format, which ``torch.load`` reads with its default
            ``weights_only=True`` (for tensors, Parameters, dicts, OrderedDicts, lists, tuples,
            dtypes, sizes, devices and plain values only; ``_torch_writer.py``).

    Differs from torch: the file is safetensors with JSON metadata (``safetensors`` and
    older chainrule versions read the tensors of a file without pickled parts); tensors that
    share memory but are different objects are stored separately, and an object pickled in
    two places of ``obj`` comes back as two copies unless it is the same node of ``obj``.

    Raises:
        ValueError: ``obj`` (outside its pickled parts) contains itself; an unknown ``format``.
        TypeError: with ``format="torch"``, an object that format is not written for.
        pickle.PicklingError and what pickle raises: an object that cannot be pickled
            (a lambda, a local class), as in torch.
    """
    if format == "torch":
        from chainrule.serialization._torch_writer import save_torch_zip

        save_torch_zip(obj, f)
        return
    if format != "chainrule":
        raise ValueError(f"chainrule.save: format must be 'chainrule' or 'torch', got {format!r}")
    enc = _Encoder(pickle_module, pickle_protocol)
    enc.encode(obj)
    # Largest item size first: with an 8-byte-aligned header every tensor is then aligned.
    order = sorted(enc.arrays, key=lambda k: -enc.arrays[k].dtype.itemsize)
    entries: dict[str, Any] = {}
    crc: dict[str, int] = {}
    offset = 0
    for key in order:
        arr = enc.arrays[key]
        if arr.dtype.num >= 256:
            load_ext_codes()
        if arr.dtype.newbyteorder("=") not in _CODE_OF:
            raise TypeError(
                f"chainrule.save: tensor {key!r} is {arr.dtype}, which the safetensors format "
                "has no code for; save it as complex64 (.cfloat()), or as its view_as_real()"
            )
        entries[key] = {
            "dtype": _CODE_OF[arr.dtype.newbyteorder("=")],
            "shape": [int(s) for s in arr.shape],
            "data_offsets": [offset, offset + arr.nbytes],
        }
        crc[key] = zlib.crc32(_bytes_view(arr))
        offset += arr.nbytes
    meta = {
        "format": _FORMAT,
        # Version 3 only when the file has pickled parts, so that older chainrule versions
        # still read checkpoints of tensors and plain containers.
        "format_version": _VERSION_PICKLED if enc.pickled else _VERSION,
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


def _container_node(obj: Any, tag: str, results: list[int]) -> dict[str, Any]:
    """The node of a container whose children were encoded as ``results``."""
    if not isinstance(obj, dict):
        return {"t": tag, "v": results}
    n = len(obj)
    node: dict[str, Any] = {"t": tag, "k": results[:n], "v": results[n:]}
    md = _state_dict_metadata(obj) if tag == "odict" else None
    if md is not None:
        node["md"] = md
    return node


def _state_dict_metadata(obj: Any) -> dict[str, Any] | None:
    """A state dict's ``_metadata`` (per-module ``{"version": n}``), when it is plain JSON: it
    is saved with the dict, as PyTorch's pickle keeps it, so versioned loading still works."""
    md = getattr(obj, "_metadata", None)
    if not isinstance(md, dict):
        return None
    ok = all(
        isinstance(k, str)
        and isinstance(v, dict)
        and all(isinstance(a, str) and isinstance(b, (bool, int, float, str)) for a, b in v.items())
        for k, v in md.items()
    )
    return {k: dict(v) for k, v in md.items()} if ok else None


def _container_parts(obj: Any) -> tuple[str, list[Any]]:
    """A JSON container's tag and its children in encoding order (a dict's keys, then its
    values)."""
    if isinstance(obj, dict):
        if isinstance(obj, Counter):
            tag = "counter"
        elif isinstance(obj, OrderedDict):
            tag = "odict"
        else:
            tag = "dict"
        return tag, [*obj.keys(), *obj.values()]
    return ("list" if isinstance(obj, list) else "tuple"), list(obj)


def _frames_path(stack: list[list[Any]]) -> str:
    """Where the encoder is, for error messages: ``obj["model"][3]``, from its frames."""
    parts = ["obj"]
    for obj, _tag, children, results in stack:
        i = len(results)
        if isinstance(obj, dict):
            n = len(obj)
            parts.append(".<key>" if i < n else f"[{children[i - n]!r}]")
        else:
            parts.append(f"[{i}]")
    return "".join(parts)
