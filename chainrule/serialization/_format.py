"""The shared pieces of chainrule's checkpoint format: dtype codes, errors, small helpers.

Note [checkpoint format]
A checkpoint is one safetensors file (readable by ``safetensors.numpy.load_file``): an 8-byte
little-endian header length, a JSON header padded with spaces to a multiple of 8 bytes, then
the tensors' bytes, largest item size first so that every tensor is aligned. Tensors are
stored under the keys "0", "1", ... (a tensor object saved twice is stored once). The header's
``__metadata__`` (a str -> str map) holds:
  - ``format``: "chainrule", ``format_version``: "2" ("3" when the structure has pickle
    nodes, Note [pickled nodes] in ``_pickle.py``);
  - ``structure``: a JSON list of nodes, the saved object being the last. A node is a JSON
    None, bool, int, float (NaN and infinities allowed) or string standing for itself, or a
    tagged object whose children are indices of earlier nodes:
    ``{"t": "tensor", "k": key, "rg": requires_grad, "param": is_parameter}`` (with
    ``"np": true`` for a saved NumPy array, which loads back as an ndarray),
    ``{"t": "sparse_coo", "i": indices key, "v": values key, "size": [ints], "co":
    is_coalesced, "rg": requires_grad}`` (a sparse COO tensor, rebuilt and checked by
    ``sparse_coo_tensor``; a file's "co" is checked against its indices),
    ``{"t": "list" | "tuple", "v": [indices]}``, ``{"t": "dict" | "odict" | "counter",
    "k": [indices], "v": [indices]}`` (keys are nodes too, so int keys survive; an odict may
    carry ``"md"``, a state dict's ``_metadata`` of per-module versions),
    ``{"t": "dtype", "v": name}``, ``{"t": "size", "v": [ints]}`` and ``{"t": "pickle",
    "v": base64, "p": [indices of tensor nodes]}`` (any other object). The list is flat, so
    any nesting depth loads without recursion, and a container saved twice is one node, so
    shared objects come back shared (as with torch's pickle);
  - ``crc32``: a JSON map from tensor key to the CRC-32 of its bytes, so that a corrupted
    tensor is detected and named;
  - ``header_crc32``: the CRC-32 of the rest of the header in a canonical form (every tensor's
    dtype, shape and offsets and every other metadata field, as sorted compact JSON), so that
    a damaged dtype, shape, offset, checksum or structure is detected too.
Format version 1 (written before the header checksum) held the structure as a nested JSON
tree and no ``header_crc32``; it still loads. Loading parses JSON and reads arrays; it unpickles
only pickle nodes, behind an allow-list unless ``weights_only=False``. A safetensors file
without this metadata (from another tool) loads as a plain ``{name: tensor}`` dict.
"""

from __future__ import annotations

import json
import os
import sys
from typing import IO, Any, Union

import numpy as np

FileLike = Union[str, "os.PathLike[str]", IO[bytes]]

_FORMAT = "chainrule"
_VERSION = "2"
_VERSION_PICKLED = "3"  # a file with pickled parts (Note [pickled nodes])
_READABLE_VERSIONS = ("1", "2", "3")

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
    "U16": np.dtype(np.uint16),
    "U32": np.dtype(np.uint32),
    "U64": np.dtype(np.uint64),
    "C64": np.dtype(np.complex64),
}
_CODE_OF = {d: c for c, d in _CODES.items()}
# The codes of the ml_dtypes formats: added to _CODES by load_ext_codes() when first met, so
# that ml_dtypes is imported only by a file (or a tensor) that has one.
_EXT_CODES = {"BF16": "bfloat16", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2"}
# Codes safetensors knows but chainrule has no dtype for (named as such in the error).
_FOREIGN_CODES = ("F8_E8M0", "F4", "F6_E2M3", "F6_E3M2")


def load_ext_codes() -> None:
    """Add the ml_dtypes formats (bfloat16, float8_e4m3fn, float8_e5m2) to _CODES/_CODE_OF."""
    if "BF16" in _CODES:
        return
    from chainrule import _dtype

    for code, name in _EXT_CODES.items():
        d = _dtype.to_dtype(name).np
        _CODES[code] = d
        _CODE_OF[d] = code


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
    return arr.reshape(-1).view(np.uint8).data
