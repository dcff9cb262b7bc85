"""Turning a checked header into the saved object: the structure's nodes, and ``load``'s
path for chainrule's own (safetensors) checkpoints."""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from collections import Counter, OrderedDict
from typing import Any, Callable

import numpy as np

from chainrule import _dtype
from chainrule._tensor import Size, Tensor
from chainrule.serialization import _pickle
from chainrule.serialization._format import (
    _FORMAT,
    _READABLE_VERSIONS,
    CheckpointError,
    CheckpointIntegrityError,
    FileLike,
    _canonical,
    _is_int,
    _name_of,
    _show,
)
from chainrule.serialization._reader import _DuplicateKey, _Reader


class _Decoder:
    """Builds the saved object from the node list (or a version-1 tree), checking each node."""

    def __init__(
        self,
        arrays: dict[str, np.ndarray],
        fail: Callable[[str], CheckpointError],
        map_location: Any,
        weights_only: bool = True,
        pickle_module: Any = None,
    ) -> None:
        self.arrays = arrays
        self.fail = fail
        self.map_location = map_location
        self.weights_only = weights_only
        self.pickle_module = pickle_module
        self.made: dict[str, Tensor] = {}

    def tensor(self, node: dict[str, Any]) -> Tensor | np.ndarray:
        key = node.get("k")
        if not isinstance(key, str):
            raise self.fail(
                f"a tensor node of its structure has key {_show(key, 40)}; expected a string"
            )
        for flag in ("rg", "param", "np"):
            if not isinstance(node.get(flag, False), bool):
                raise self.fail(
                    f"tensor node '{key}' of its structure has '{flag}': "
                    f"{_show(node[flag], 40)}; expected true or false"
                )
        if key not in self.arrays:
            raise self.fail(f"its structure refers to tensor '{key}', which the file does not hold")
        if node.get("np"):  # a saved NumPy array comes back as one (its own copy)
            return np.array(self.arrays[key])
        if key in self.made:
            return self.made[key]
        from chainrule.nn.parameter import Parameter
        from chainrule.serialization._location import place

        t = Tensor._wrap(self.arrays[key])
        loc = node.get("loc", "cpu")
        if not isinstance(loc, str):
            raise self.fail(f"tensor node '{key}' has location {_show(loc, 40)}")
        t = place(t, loc, self.map_location)
        if node.get("param"):
            t = Parameter(t, requires_grad=bool(node.get("rg")))
        elif node.get("rg"):
            t.requires_grad_(True)
        self.made[key] = t
        return t

    def sparse(self, node: dict[str, Any], i: int) -> Tensor:
        """A sparse COO tensor from its indices and values arrays, checked as
        ``sparse_coo_tensor`` checks its arguments."""
        from chainrule.sparse._coo import sparse_coo_tensor

        parts = []
        for field in ("i", "v"):
            key = node.get(field)
            if not isinstance(key, str) or key not in self.arrays:
                raise self.fail(
                    f"structure node {i} (sparse_coo) has '{field}': {_show(key, 40)}; expected "
                    "the key of a tensor the file holds"
                )
            parts.append(Tensor._wrap(self.arrays[key]))
        size = node.get("size")
        if not isinstance(size, list) or not all(_is_int(s) and s >= 0 for s in size):
            raise self.fail(
                f"structure node {i} (sparse_coo) has 'size': {_show(size)}; expected a list "
                "of non-negative integers"
            )
        for flag in ("co", "rg"):
            if not isinstance(node.get(flag, False), bool):
                raise self.fail(
                    f"structure node {i} (sparse_coo) has '{flag}': {_show(node[flag], 40)}; "
                    "expected true or false"
                )
        try:
            t = sparse_coo_tensor(
                parts[0],
                parts[1],
                tuple(size),
                requires_grad=bool(node.get("rg")),
                is_coalesced=bool(node.get("co")) or None,
            )
        except (RuntimeError, ValueError, TypeError) as e:
            raise self.fail(
                f"structure node {i} (sparse_coo) is not a valid sparse tensor: {e}"
            ) from None
        if node.get("co"):  # a file's word that its indices are sorted and unique is checked
            idx = np.asarray(parts[0]._data)
            if idx.shape[1] > 1:
                flat = np.ravel_multi_index(tuple(idx), tuple(size[: idx.shape[0]]))
                if not bool(np.all(np.diff(flat) > 0)):
                    raise self.fail(
                        f"structure node {i} (sparse_coo) says it is coalesced, but its indices "
                        "are not sorted and unique"
                    )
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
        if tag == "sparse_coo":
            return self.sparse(node, i)
        if tag == "list":
            return children("v")
        if tag == "tuple":
            return tuple(children("v"))
        if tag in ("dict", "odict", "counter"):
            d = self.mapping(tag, children("k"), children("v"), f"structure node {i}")
            if tag == "odict" and "md" in node:
                d._metadata = self.metadata(node["md"], i)
            return d
        if tag == "pickle":
            return self.pickled(node, i, children("p"))
        return self.scalar_node(tag, node, f"structure node {i}")

    def metadata(self, md: Any, i: int) -> Any:
        """A state dict's ``_metadata``: ``{module name: {field: JSON scalar}}``."""
        if not isinstance(md, dict) or not all(isinstance(v, dict) for v in md.values()):
            raise self.fail(
                f"structure node {i} (odict) has 'md': {_show(md)}; expected an object of "
                "objects (a state dict's per-module metadata)"
            )
        return OrderedDict((k, dict(v)) for k, v in md.items())

    def pickled(self, node: dict[str, Any], i: int, refs: list[Any]) -> Any:
        """A pickle node (Note [pickled nodes]): its tensors are the nodes listed in 'p'."""
        if not all(isinstance(t, Tensor) for t in refs):
            raise self.fail(f"structure node {i} (pickle) refers to a node that is not a tensor")
        allowed = dict(zip(node["p"], refs))
        v = node.get("v")
        try:
            data = base64.b64decode(v, validate=True) if isinstance(v, str) else None
        except (binascii.Error, ValueError):
            data = None
        if not data:
            raise self.fail(f"structure node {i} (pickle) has 'v': {_show(v, 40)}; expected base64")

        def persistent(pid: Any) -> Any:
            if not _is_int(pid) or pid not in allowed:
                raise self.fail(
                    f"the pickle of structure node {i} refers to {_show(pid, 40)}, which is not "
                    "one of the tensors it lists"
                )
            return allowed[pid]

        return _pickle.unpickle(data, persistent, self.weights_only, self.pickle_module)

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
                    kids = None
                    if isinstance(k, list) and isinstance(v, list):
                        if len(k) != len(v):
                            raise self.fail(
                                f"a {tag} of its structure has {len(k)} keys but {len(v)} values"
                            )
                        kids = [*k, *v]
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


def load_checkpoint(
    f: FileLike,
    map_location: Any,
    weights_only: bool,
    pickle_module: Any,
    mmap: bool | None,
    verify: bool | None,
) -> Any:
    """``load`` for chainrule's checkpoints and plain safetensors files (see ``load``)."""
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
        dec = _Decoder(arrays, reader.fail, map_location, weights_only, pickle_module)
        result = dec.tree(tree) if version == "1" else dec.nodes(tree)
        keep = use_mmap
        return result
    finally:
        reader.close(keep)


def pickles_of(f: FileLike) -> list[bytes]:
    """The pickles of a chainrule checkpoint's pickle nodes, not unpickled (a checkpoint
    of tensors and plain containers has none)."""
    reader = _Reader(f, _name_of(f), False)
    try:
        _entries, meta, _start = reader.header()
        try:
            nodes = json.loads(meta.get("structure", "[]"))
        except (ValueError, RecursionError):
            raise reader.fail("its structure metadata is not valid JSON") from None
        out = []
        for node in nodes if isinstance(nodes, list) else ():
            if isinstance(node, dict) and node.get("t") == "pickle":
                try:
                    out.append(base64.b64decode(node.get("v", ""), validate=True))
                except (binascii.Error, ValueError, TypeError):
                    raise reader.fail("a pickle node of its structure is not base64") from None
        return out
    finally:
        reader.close(False)
