"""Reading the checkpoints that PyTorch's ``torch.save`` writes, without torch.

Over 400 lines because every record a hostile file can hold (storage ids, sizes, strides,
offsets, byte order, the pickle itself) is checked here with its own message.

Note [torch checkpoints]
Since PyTorch 1.6 ``torch.save`` writes a zip archive (stored, not compressed) whose entries
share one top folder, ``<prefix>/``: ``data.pkl`` (a pickle of the saved object), ``data/<key>``
(the raw bytes of each storage), ``byteorder`` ("little" or "big"; absent in old files, which
were native, i.e. little on every machine PyTorch ran on), ``version`` and a few more. In the
pickle, a tensor is a call of ``torch._utils._rebuild_tensor_v2(storage, storage_offset, size,
stride, requires_grad, backward_hooks[, metadata])`` (offsets and strides in elements), a
Parameter is ``_rebuild_parameter(tensor, requires_grad, backward_hooks)``, and a storage is a
persistent id ``('storage', torch.<Type>Storage, key, location, numel)``.

The pickle is read by ``_pickle.RestrictedUnpickler``, whose allow-list is, beside the default
one, exactly these PyTorch names mapped to chainrule's own functions: the rebuild functions
above, the storage types, dtypes, ``torch.Size`` and ``torch.device``. So no torch import
happens and no code named by the file runs; any other global is refused (PyTorch's
"Weights only load failed" error naming it). ``weights_only=False`` lets globals outside
``torch`` through as plain pickle would, but PyTorch's other classes are still refused: they
cannot be rebuilt without torch. Tensors that view one storage come back as NumPy views of
one array, so they share memory as in PyTorch. The pre-1.6 (non-zip) format is not read.
"""

from __future__ import annotations

import os
import pickle
import struct
import zipfile
from collections import OrderedDict
from typing import Any

import numpy as np

from chainrule.serialization import _pickle
from chainrule.serialization._format import CheckpointError, FileLike, _name_of
from chainrule.serialization._reader import _THREADED_BYTES, _Checksums

__all__ = ["is_torch_zip", "load_torch_zip"]

# PyTorch's legacy storage classes and the NumPy dtypes of their elements.
_STORAGES = {
    "FloatStorage": np.float32,
    "DoubleStorage": np.float64,
    "HalfStorage": np.float16,
    "LongStorage": np.int64,
    "IntStorage": np.int32,
    "ShortStorage": np.int16,
    "CharStorage": np.int8,
    "ByteStorage": np.uint8,
    "BoolStorage": np.bool_,
    "ComplexFloatStorage": np.complex64,
    "ComplexDoubleStorage": np.complex128,
}
# PyTorch storages chainrule has no dtype for (named in the error).
_FOREIGN_STORAGES = (
    "ComplexFloatStorage",
    "ComplexDoubleStorage",
    "BFloat16Storage",
    "QInt8Storage",
    "QUInt8Storage",
    "QInt32Storage",
    "QUInt4x2Storage",
    "QUInt2x4Storage",
)
_MAGIC = b"PK\x03\x04"


class _StorageType:
    """Stands for ``torch.<name>`` in the pickle: a storage class and its element dtype."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str, dtype: Any) -> None:
        self.name = name
        self.dtype = None if dtype is None else np.dtype(dtype)

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class _Storage:
    """A storage read from the archive: a 1-D array of its elements."""

    __slots__ = ("array", "location")

    def __init__(self, array: np.ndarray, location: str) -> None:
        self.array = array
        self.location = location


def _peek(f: Any, n: int) -> bytes:
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return fh.read(n)
    pos = f.tell()
    try:
        return f.read(n)
    finally:
        f.seek(pos)


def is_torch_zip(f: FileLike) -> bool:
    """True if ``f`` (a path or a seekable file object) is a zip archive with a ``data.pkl``
    record, which a safetensors file can never be (its header would be over 67 MB long and
    not followed by a zip directory)."""
    try:
        if _peek(f, 4) != _MAGIC:
            return False
    except (OSError, AttributeError, ValueError):
        return False
    try:
        with _open_zip(f) as zf:
            return _prefix(zf) is not None
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return False


class _open_zip:
    """A ZipFile on a path or on a file object from its current position, left where the
    caller had it."""

    def __init__(self, f: FileLike) -> None:
        self.f = f
        self.pos = None if isinstance(f, (str, os.PathLike)) else f.tell()  # type: ignore[union-attr]

    def __enter__(self) -> zipfile.ZipFile:
        try:
            self.zf = zipfile.ZipFile(self.f)  # type: ignore[arg-type]
        except BaseException:
            if self.pos is not None:
                self.f.seek(self.pos)  # type: ignore[union-attr]
            raise
        return self.zf

    def __exit__(self, *exc: object) -> None:
        self.zf.close()
        if self.pos is not None:
            self.f.seek(self.pos)  # type: ignore[union-attr]


def _prefix(zf: zipfile.ZipFile) -> str | None:
    """The archive's top folder (``archive/`` for a file object, the file's stem for a path in
    older versions), found by its ``data.pkl``."""
    for name in zf.namelist():
        if name.endswith("data.pkl") and name.count("/") == 1:
            return name[: -len("data.pkl")]
    return None


def data_pickle(f: FileLike) -> tuple[bytes, dict[str, Any]]:
    """The archive's ``data.pkl`` and the PyTorch globals its reader resolves."""
    with _open_zip(f) as zf:
        prefix = _prefix(zf)
        assert prefix is not None
        return zf.read(prefix + "data.pkl"), _torch_globals()


def _torch_globals() -> dict[str, Any]:
    """The PyTorch names a checkpoint of tensors and plain containers uses, mapped to the
    chainrule functions that rebuild them (Note [torch checkpoints])."""
    from chainrule import _dtype
    from chainrule._device import device
    from chainrule._tensor import Size

    out: dict[str, Any] = {
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch.Size": Size,
        "torch.device": device,
    }
    for name, dt in _STORAGES.items():
        out[f"torch.{name}"] = _StorageType(name, dt)
    # bfloat16's NumPy dtype comes from ml_dtypes, imported here rather than with chainrule.
    out["torch.BFloat16Storage"] = _StorageType("BFloat16Storage", _dtype.bfloat16.np)
    out["torch.storage.UntypedStorage"] = _StorageType("UntypedStorage", np.uint8)
    torch_dtype_names = {
        "float": "float32",
        "double": "float64",
        "half": "float16",
        "long": "int64",
        "int": "int32",
        "short": "int16",
        "cfloat": "complex64",
        "cdouble": "complex128",
    }
    for name in (*_dtype._BY_NAME, *torch_dtype_names):
        out[f"torch.{name}"] = _dtype.to_dtype(torch_dtype_names.get(name, name))
    return out


class _TorchUnpickler(_pickle.RestrictedUnpickler):
    """The restricted unpickler with PyTorch's names; with ``weights_only=False`` globals
    outside ``torch`` resolve as plain pickle resolves them."""

    def __init__(self, data: bytes, persistent: Any, weights_only: bool) -> None:
        super().__init__(data, persistent, _torch_globals())
        self.weights_only = weights_only
        self._check_build = weights_only

    def find_class(self, module: str, name: str) -> Any:
        full = _pickle.py3_name(module, name)
        if full in self._allowed:
            return self._allowed[full]
        if name in _FOREIGN_STORAGES and module == "torch":
            raise CheckpointError(
                f"chainrule.load: the checkpoint holds a tensor of torch.{name}, a storage type "
                "chainrule has no dtype for; convert it in PyTorch first (e.g. .float())"
            )
        if module == "torch" or module.startswith("torch."):
            if self.weights_only:
                raise _pickle.unsupported_global(full)
            raise pickle.UnpicklingError(
                f"chainrule.load: the checkpoint names the PyTorch global {full}, which "
                "chainrule cannot rebuild without PyTorch (it reads tensors, Parameters, "
                "dtypes, sizes, devices and plain Python containers from PyTorch files)"
            )
        if self.weights_only:
            raise _pickle.unsupported_global(full)
        return pickle._Unpickler.find_class(self, module, name)  # type: ignore[attr-defined]


def _bad(what: str) -> CheckpointError:
    return CheckpointError(f"chainrule.load: a tensor of the PyTorch checkpoint {what}")


def _ints(v: Any, what: str) -> tuple[int, ...]:
    if not isinstance(v, (tuple, list)) or not all(
        isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in v
    ):
        raise _bad(f"has {what} {v!r:.60}; expected a tuple of non-negative integers")
    return tuple(v)


def _rebuild_tensor_v2(
    storage: Any,
    storage_offset: Any,
    size: Any,
    stride: Any,
    requires_grad: Any = False,
    backward_hooks: Any = None,
    metadata: Any = None,
) -> Any:
    """A tensor viewing ``storage`` from ``storage_offset`` with ``size`` and ``stride``
    (in elements), as PyTorch's ``_rebuild_tensor_v2``; its bounds are checked."""
    from chainrule import _creation

    if not isinstance(storage, _Storage):
        raise _bad(f"is built from {type(storage).__name__}, not from a storage of the file")
    size = _ints(size, "size")
    stride = _ints(stride, "stride")
    if len(stride) != len(size):
        raise _bad(f"has size {size} but stride {stride}")
    if type(storage_offset) is not int or storage_offset < 0:
        raise _bad(f"has storage offset {storage_offset!r:.40}")
    arr = storage.array
    numel = 1
    for s in size:
        numel *= s
    if numel == 0:
        view = np.empty(size, arr.dtype)
    else:
        last = storage_offset + sum((s - 1) * st for s, st in zip(size, stride))
        if last >= arr.size:
            raise _bad(
                f"(size {size}, stride {stride}, offset {storage_offset}) reaches element "
                f"{last} of a storage of {arr.size} elements"
            )
        view = np.lib.stride_tricks.as_strided(
            arr[storage_offset:], shape=size, strides=[st * arr.itemsize for st in stride]
        )
    t = _creation.from_numpy(view)
    if requires_grad is True:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(
    storage: Any,
    storage_offset: Any,
    size: Any,
    stride: Any,
    requires_grad: Any,
    backward_hooks: Any,
    dtype: Any,
    metadata: Any = None,
) -> Any:
    """PyTorch's ``_rebuild_tensor_v3``: a tensor of ``dtype`` over an untyped (byte) storage,
    which is how PyTorch saves the dtypes without a legacy storage class (uint16, float8...)."""
    if not isinstance(storage, _Storage):
        raise _bad(f"is built from {type(storage).__name__}, not from a storage of the file")
    from chainrule import _dtype

    if not isinstance(dtype, _dtype.dtype):
        raise _bad(f"has dtype {dtype!r:.40}")
    arr = storage.array
    if arr.dtype != np.uint8 or arr.size % dtype.itemsize:
        raise _bad(f"views a storage of {arr.dtype} ({arr.size} elements) as {dtype}")
    typed = _Storage(arr.view(dtype.np), storage.location)
    return _rebuild_tensor_v2(typed, storage_offset, size, stride, requires_grad, backward_hooks)


def _rebuild_tensor(storage: Any, storage_offset: Any, size: Any, stride: Any) -> Any:
    return _rebuild_tensor_v2(storage, storage_offset, size, stride)


def _rebuild_parameter(data: Any, requires_grad: Any, backward_hooks: Any) -> Any:
    from chainrule._tensor import Tensor
    from chainrule.nn.parameter import Parameter

    if not isinstance(data, Tensor):
        raise _bad(f"(a Parameter) wraps {type(data).__name__}, not a tensor")
    return Parameter(data, requires_grad=bool(requires_grad))


def _rebuild_parameter_with_state(
    data: Any, requires_grad: Any, backward_hooks: Any, state: Any
) -> Any:
    p = _rebuild_parameter(data, requires_grad, backward_hooks)
    if isinstance(state, dict):  # attributes set on the Parameter in PyTorch
        for k, v in state.items():
            if isinstance(k, str):
                setattr(p, k, v)
    return p


def _data_offset(read_at: Any, info: zipfile.ZipInfo, size: int, name: str) -> int:
    """Where a stored record's bytes start in the file, from its local header."""
    head = read_at(info.header_offset, 30)
    if len(head) < 30 or head[:4] != _MAGIC:
        raise CheckpointError(f"chainrule.load: cannot read '{name}': a damaged zip entry")
    n, m = struct.unpack("<HH", head[26:30])
    lo = info.header_offset + 30 + n + m
    if lo + info.file_size > size:
        raise CheckpointError(f"chainrule.load: cannot read '{name}': a truncated zip entry")
    return lo


def _read_record(
    zf: zipfile.ZipFile,
    fh: Any,
    info: zipfile.ZipInfo,
    numel: int,
    dt: np.dtype,
    name: str,
    key: str,
    sums: Any,
) -> np.ndarray:
    """A storage record copied straight into a new array: a stored record is read from the
    file at its offset and handed to ``sums`` for its CRC-32 (computed on a second thread for
    large files, while the next record is read; zipfile's own reader copies through buffers
    and checksums in line); a compressed one is read through zipfile."""
    arr = np.empty(numel, dt)
    buf = arr.reshape(-1).view(np.uint8).data
    truncated = f"chainrule.load: cannot read '{name}': storage '{key}' is truncated"
    if info.compress_type == zipfile.ZIP_STORED and fh is not None and len(buf):

        def read_at(o: int, n: int) -> bytes:
            fh.seek(o)
            return fh.read(n)

        size = fh.seek(0, os.SEEK_END)
        fh.seek(_data_offset(read_at, info, size, name))
        got = 0
        while got < len(buf):
            n = fh.readinto(buf[got:])
            if not n:
                raise CheckpointError(truncated)
            got += n
        if info.CRC:  # a zero CRC: written without checksums
            sums.add(key, buf)
        return arr
    try:
        with zf.open(info) as src:
            got = 0
            while got < len(buf):
                n = src.readinto(buf[got:])  # type: ignore[attr-defined]
                if not n:
                    raise CheckpointError(truncated)
                got += n
    except zipfile.BadZipFile as e:
        raise CheckpointError(f"chainrule.load: cannot read '{name}': {e}") from None
    return arr


def load_torch_zip(f: FileLike, map_location: Any, weights_only: bool, mmap: Any) -> Any:
    """``load`` for a PyTorch zip checkpoint (Note [torch checkpoints]); with ``mmap=True``
    the storages view a private copy-on-write mapping of the file, as in torch."""
    name = _name_of(f)
    mapping = None
    if mmap:
        if not isinstance(f, (str, os.PathLike)):
            raise ValueError("f must be a file path in order to use the mmap argument")
        import mmap as _mmap

        with open(f, "rb") as fh:
            mapping = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY)
    own = open(f, "rb") if isinstance(f, (str, os.PathLike)) else None  # noqa: SIM115
    try:
        return _load_zip(
            f, own if own is not None else f, name, mapping, map_location, weights_only
        )
    finally:
        if own is not None:
            own.close()


def _load_zip(
    f: Any, fh: Any, name: str, mapping: Any, map_location: Any, weights_only: bool
) -> Any:
    def mapped_offset(info: zipfile.ZipInfo) -> int | None:
        """Where a stored record's bytes start in the mapping (None if compressed)."""
        if info.compress_type != zipfile.ZIP_STORED:
            return None
        return _data_offset(lambda o, n: mapping[o : o + n], info, len(mapping), name)

    with _open_zip(f) as zf:
        prefix = _prefix(zf)
        assert prefix is not None
        order = _byteorder(zf, prefix, name)
        storages: dict[str, _Storage] = {}
        crcs: dict[str, int] = {}
        stored = sum(i.file_size for i in zf.infolist())
        sums = _Checksums(True, threaded=stored >= _THREADED_BYTES)

        def persistent(pid: Any) -> Any:
            stype, key, location, numel = _storage_pid(pid, name)
            hit = storages.get(key)
            if hit is not None:
                return hit
            dt = stype.dtype
            try:
                info = zf.getinfo(f"{prefix}data/{key}")
            except KeyError:
                raise CheckpointError(
                    f"chainrule.load: cannot read '{name}': storage '{key}' is missing from "
                    "the archive"
                ) from None
            if info.file_size != numel * dt.itemsize:
                raise CheckpointError(
                    f"chainrule.load: cannot read '{name}': storage '{key}' holds "
                    f"{info.file_size} bytes; {numel} elements of {stype!r} need "
                    f"{numel * dt.itemsize}"
                )
            lo = mapped_offset(info) if mapping is not None and numel else None
            if lo is not None and mapping is not None:
                # mmap=True: the storage views the private (copy-on-write) mapping.
                arr = np.frombuffer(mapping, dtype=dt, count=numel, offset=lo)
            else:
                arr = _read_record(zf, fh, info, numel, dt, name, key, sums)
                crcs[key] = info.CRC
            if order != ("little" if np.little_endian else "big") and dt.itemsize > 1:
                arr = arr.view(dt.newbyteorder("S")).astype(dt)
            st = _Storage(arr, str(location))
            storages[key] = st
            return st

        data = zf.read(prefix + "data.pkl")
        try:
            obj = _unpickle(_TorchUnpickler(data, persistent, weights_only), name)
        finally:
            got = sums.results()
        for key, crc in crcs.items():
            if key in got and got[key] != crc:
                raise CheckpointError(
                    f"chainrule.load: cannot read '{name}': storage '{key}' fails its CRC-32, "
                    "so the file is corrupted"
                )
    if map_location is not None:
        obj = _map_all(obj, map_location)
    return obj


def _byteorder(zf: zipfile.ZipFile, prefix: str, name: str) -> str:
    """The archive's byteorder record ("little" when it has none, as older PyTorch wrote)."""
    try:
        order = zf.read(prefix + "byteorder").decode("ascii", "replace").strip()
    except KeyError:
        order = "little"
    if order not in ("little", "big"):
        raise CheckpointError(
            f"chainrule.load: cannot read '{name}': its byteorder record is {order!r:.20}"
        )
    return order


def _storage_pid(pid: Any, name: str) -> tuple[Any, str, Any, int]:
    """A pickle's persistent id checked as a storage reference: (type, key, location, numel)."""
    if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
        raise CheckpointError(
            f"chainrule.load: cannot read '{name}': its pickle refers to {pid!r:.60}, "
            "which is not a storage"
        )
    _, stype, key, location, numel = pid
    if not isinstance(stype, _StorageType) or stype.dtype is None:
        raise CheckpointError(
            f"chainrule.load: cannot read '{name}': a storage of type {stype!r:.40}"
        )
    if not isinstance(key, str) or not isinstance(numel, int) or numel < 0:
        raise CheckpointError(
            f"chainrule.load: cannot read '{name}': a storage with key {key!r:.20} "
            f"and {numel!r:.20} elements"
        )
    return stype, key, location, numel


def _unpickle(up: Any, name: str) -> Any:
    """``up.load()``, its failures reported as a malformed data.pkl of ``name``."""
    try:
        return up.load()
    except CheckpointError:
        raise
    except pickle.UnpicklingError as e:
        if str(e).startswith(("Weights only load failed", "chainrule.load")):
            raise
        raise CheckpointError(
            f"chainrule.load: cannot read '{name}': its data.pkl is malformed ({e})"
        ) from None
    except (EOFError, ValueError, IndexError, KeyError, TypeError, AttributeError) as e:
        raise CheckpointError(
            f"chainrule.load: cannot read '{name}': its data.pkl is malformed "
            f"({type(e).__name__}: {e})"
        ) from None


def _map_all(obj: Any, map_location: Any) -> Any:
    """Every tensor of a loaded object placed by ``map_location`` (serialization/_location.py),
    each counted as saved from the CPU."""
    from chainrule._tensor import Tensor
    from chainrule.serialization._location import place

    memo: dict[int, Any] = {}

    def walk(o: Any) -> Any:
        if id(o) in memo:
            return memo[id(o)]
        if isinstance(o, Tensor):
            # The storages' own locations are not kept: every tensor counts as saved on the CPU.
            r: Any = place(o, "cpu", map_location)
        elif isinstance(o, (dict, OrderedDict)):
            r = type(o)((k, walk(v)) for k, v in o.items())
        elif isinstance(o, list):
            r = [walk(v) for v in o]
        elif isinstance(o, tuple) and type(o) is tuple:
            r = tuple(walk(v) for v in o)
        else:
            r = o
        memo[id(o)] = r
        return r

    return walk(obj)
