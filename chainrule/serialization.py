"""``save`` and ``load``: checkpoints in the safetensors format, never pickle.

Note [checkpoint format]
A checkpoint is one safetensors file. Its tensors are stored under the keys "0", "1", ...
(a tensor object saved twice is stored once). The safetensors header's ``__metadata__`` (a
str -> str map) holds:
  - ``format``: "chainrule", ``format_version``: "1";
  - ``structure``: a JSON tree of the saved object. JSON's own None, bools, ints, floats
    (NaN and infinities allowed) and strings stand for themselves; every other node is a
    tagged object: ``{"t": "tensor", "k": key, "rg": requires_grad, "param": is_parameter}``,
    ``{"t": "list" | "tuple", "v": [...]}``, ``{"t": "dict" | "odict" | "counter",
    "k": [keys], "v": [values]}`` (keys are nodes too, so int keys survive),
    ``{"t": "dtype", "v": name}`` and ``{"t": "size", "v": [...]}``;
  - ``crc32``: a JSON map from tensor key to the CRC-32 of its bytes, so that a corrupted
    file is detected and the damaged tensor named.
Loading only parses JSON and reads arrays, so it cannot run code. A safetensors file without
this metadata (from another tool) loads as a plain ``{name: tensor}`` dict.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from collections import Counter, OrderedDict
from typing import IO, Any, Union

import numpy as np

from chainrule import _dtype
from chainrule._tensor import Size, Tensor

__all__ = ["save", "load", "CheckpointError"]

FileLike = Union[str, "os.PathLike[str]", IO[bytes]]

_FORMAT = "chainrule"
_VERSION = "1"


class CheckpointError(RuntimeError):
    """A checkpoint could not be read: truncated, corrupted, or not a chainrule checkpoint."""


def _name_of(f: Any) -> str:
    if isinstance(f, (str, os.PathLike)):
        return os.fspath(f)
    return str(getattr(f, "name", f"<{type(f).__name__}>"))


# Saving ---------------------------------------------------------------------------------------
class _Encoder:
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.keys: dict[int, str] = {}
        self.crc: dict[str, int] = {}

    def tensor(self, t: Tensor) -> dict[str, Any]:
        key = self.keys.get(id(t))
        if key is None:
            key = str(len(self.arrays))
            host = np.asarray(t._backend.to_host(t._data))
            # ascontiguousarray would turn a 0-d array into 1-d.
            host = host if host.flags.c_contiguous else host.copy(order="C")
            self.arrays[key] = host
            self.crc[key] = zlib.crc32(host.tobytes())
            self.keys[id(t)] = key
        from chainrule.nn.parameter import Parameter

        return {
            "t": "tensor", "k": key, "rg": bool(t.requires_grad),
            "param": isinstance(t, Parameter),
        }

    def encode(self, obj: Any, path: str) -> Any:
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, (int, np.integer)):
            return int(obj)
        if isinstance(obj, (float, np.floating)):
            return float(obj)
        if isinstance(obj, Tensor):
            return self.tensor(obj)
        if isinstance(obj, _dtype.dtype):
            return {"t": "dtype", "v": obj.name}
        if isinstance(obj, Size):
            return {"t": "size", "v": [int(s) for s in obj]}
        if isinstance(obj, np.ndarray):
            from chainrule._creation import as_tensor

            return self.tensor(as_tensor(obj))
        if isinstance(obj, (list, tuple)):
            tag = "list" if isinstance(obj, list) else "tuple"
            return {"t": tag, "v": [self.encode(v, f"{path}[{i}]") for i, v in enumerate(obj)]}
        if isinstance(obj, dict):
            tag = "counter" if isinstance(obj, Counter) else (
                "odict" if isinstance(obj, OrderedDict) else "dict"
            )
            keys = [self.encode(k, f"{path}.<key>") for k in obj]
            vals = [self.encode(v, f"{path}[{k!r}]") for k, v in obj.items()]
            return {"t": tag, "k": keys, "v": vals}
        raise TypeError(
            f"chainrule.save: cannot save an object of type {type(obj).__name__} (at {path}); "
            "checkpoints hold tensors, dicts, lists, tuples, dtypes and None/bool/int/float/str "
            "only (no pickle)"
        )


def save(obj: Any, f: FileLike, pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Save ``obj`` (a tensor, or nested dicts/lists/tuples of tensors and plain Python
    values: a module's or optimizer's ``state_dict``, a training checkpoint) to ``f``, a path
    or a binary file object. See Note [checkpoint format].

    Differs from torch: the file is safetensors with JSON metadata, not a pickle, so
    arbitrary Python objects cannot be saved (a TypeError names the offending one); tensors
    that share memory but are different objects are stored separately.
    """
    from safetensors.numpy import save as st_save

    enc = _Encoder()
    tree = enc.encode(obj, "obj")
    metadata = {
        "format": _FORMAT,
        "format_version": _VERSION,
        "structure": json.dumps(tree, allow_nan=True),
        "crc32": json.dumps(enc.crc),
    }
    data = st_save(enc.arrays, metadata=metadata)
    if isinstance(f, (str, os.PathLike)):
        # Write beside the target, then rename: a crash mid-write leaves any old file intact.
        tmp = os.fspath(f) + ".tmp"
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, f)
    else:
        f.write(data)


# Loading --------------------------------------------------------------------------------------
def _read_header(buf: bytes, name: str) -> dict[str, Any]:
    def fail(what: str) -> CheckpointError:
        return CheckpointError(f"chainrule.load: cannot read '{name}': {what}")

    if buf[:2] == b"PK" or buf[:1] == b"\x80":
        raise fail(
            "it looks like a PyTorch (zip/pickle) checkpoint; chainrule reads only safetensors "
            "checkpoints written by chainrule.save or safetensors (convert it with torch and "
            "safetensors.torch.save_file)"
        )
    if len(buf) < 8:
        raise fail(f"the file is truncated or empty ({len(buf)} bytes; a checkpoint starts with "
                   "an 8-byte header length)")
    (n,) = struct.unpack("<Q", buf[:8])
    if n > len(buf) - 8:
        raise fail(
            f"the file is truncated or not a safetensors file (its header claims {n} bytes, but "
            f"only {len(buf) - 8} follow the length field)"
        )
    try:
        header = json.loads(buf[8 : 8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise fail(f"the header is not valid JSON, so the file is corrupted ({e})") from None
    if not isinstance(header, dict):
        raise fail("the header is not a JSON object, so the file is corrupted")
    data_len = len(buf) - 8 - n
    for key, info in header.items():
        if key == "__metadata__":
            continue
        try:
            start, end = info["data_offsets"]
        except (TypeError, KeyError, ValueError):
            raise fail(f"the header entry for tensor '{key}' is malformed") from None
        if end > data_len:
            raise fail(
                f"the file is truncated: tensor '{key}' needs bytes {start}..{end} of the data "
                f"section, which has {data_len} bytes"
            )
    return header


class _Decoder:
    def __init__(self, arrays: dict[str, np.ndarray], name: str, map_location: Any) -> None:
        self.arrays = arrays
        self.name = name
        self.map_location = map_location
        self.made: dict[str, Tensor] = {}

    def fail(self, what: str) -> CheckpointError:
        return CheckpointError(f"chainrule.load: cannot read '{self.name}': {what}")

    def tensor(self, node: dict[str, Any]) -> Tensor:
        key = node.get("k")
        if key in self.made:
            return self.made[key]
        if key not in self.arrays:
            raise self.fail(f"its structure refers to tensor '{key}', which the file does not hold")
        from chainrule.nn.parameter import Parameter

        t = Tensor._wrap(np.array(self.arrays[key], copy=True))
        if self.map_location is not None and not callable(self.map_location):
            if not isinstance(self.map_location, dict):
                t = t.to(self.map_location)
        if node.get("param"):
            t = Parameter(t, requires_grad=bool(node.get("rg")))
        elif node.get("rg"):
            t.requires_grad_(True)
        self.made[key] = t
        return t

    def decode(self, node: Any) -> Any:
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if not isinstance(node, dict) or "t" not in node:
            raise self.fail(f"its structure holds an unknown node {node!r:.80}")
        tag = node["t"]
        if tag == "tensor":
            return self.tensor(node)
        if tag == "list":
            return [self.decode(v) for v in node["v"]]
        if tag == "tuple":
            return tuple(self.decode(v) for v in node["v"])
        if tag in ("dict", "odict", "counter"):
            cls = {"dict": dict, "odict": OrderedDict, "counter": Counter}[tag]
            keys = [self.decode(k) for k in node["k"]]
            vals = [self.decode(v) for v in node["v"]]
            if len(keys) != len(vals):
                raise self.fail("a dict in its structure has unequal key and value lists")
            return cls(zip(keys, vals))
        if tag == "dtype":
            return _dtype.to_dtype(node["v"])
        if tag == "size":
            return Size(node["v"])
        raise self.fail(f"its structure holds an unknown node type {tag!r}")


def load(f: FileLike, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, **kwargs: Any) -> Any:
    """Load an object saved by ``save`` from a path or binary file object.

    Tensors come back with their dtypes and exact bytes, as Parameters where they were
    Parameters, with ``requires_grad`` as saved. ``map_location`` may name a device.

    Raises:
        CheckpointError (a RuntimeError): the file is truncated, corrupted (bad header or a
            tensor whose checksum does not match) or not a safetensors checkpoint; the message
            names the file and the problem.
    """
    from safetensors.numpy import load as st_load

    name = _name_of(f)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            buf = fh.read()
    else:
        buf = f.read()
    header = _read_header(buf, name)
    try:
        arrays = st_load(buf)
    except Exception as e:  # safetensors raises its own error type for bad files
        raise CheckpointError(
            f"chainrule.load: cannot read '{name}': the safetensors data is corrupted ({e})"
        ) from None
    meta = header.get("__metadata__") or {}
    dec = _Decoder(arrays, name, map_location)
    if meta.get("format") != _FORMAT:
        # A plain safetensors file: its tensors by name.
        return {k: dec.tensor({"k": k}) for k in arrays}
    try:
        crc = json.loads(meta.get("crc32", "{}"))
        tree = json.loads(meta["structure"])
    except (KeyError, json.JSONDecodeError) as e:
        raise dec.fail(f"its structure metadata is missing or corrupted ({e})") from None
    for key, arr in arrays.items():
        if key in crc and zlib.crc32(arr.tobytes()) != crc[key]:
            raise dec.fail(
                f"tensor '{key}' (shape {tuple(arr.shape)}, {arr.dtype}) fails its checksum, so "
                "the file is corrupted"
            )
    return dec.decode(tree)
