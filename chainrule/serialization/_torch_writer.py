"""Writing PyTorch's zip checkpoint format (Note [torch checkpoints] in ``_torch_format.py``),
so that ``torch.load`` reads what ``chainrule.save(obj, f, format="torch")`` wrote.

The pickle is emitted opcode by opcode (protocol 2) rather than with ``pickle.Pickler``: a
Pickler checks every global it writes by importing it, and ``torch._utils._rebuild_tensor_v2``
must be written without torch. So only what a state dict or a training checkpoint holds is
written: tensors and Parameters, dicts, OrderedDicts, lists, tuples, str, bytes, int, float,
bool, None, dtypes, sizes and devices; each is a name ``torch.load(weights_only=True)``
accepts. Storage records are 64-byte aligned as PyTorch's writer aligns them (so
``torch.load(mmap=True)`` works).
"""

from __future__ import annotations

import os
import struct
import zipfile
from collections import OrderedDict
from typing import IO, Any

import numpy as np

from chainrule.serialization._format import FileLike

__all__ = ["save_torch_zip"]

_STORAGE_OF = {
    "float32": "FloatStorage",
    "float64": "DoubleStorage",
    "float16": "HalfStorage",
    "int64": "LongStorage",
    "int32": "IntStorage",
    "int16": "ShortStorage",
    "int8": "CharStorage",
    "uint8": "ByteStorage",
    "bool": "BoolStorage",
    "bfloat16": "BFloat16Storage",
    "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}
_ALIGN = 64


class _Emitter:
    """Protocol-2 pickle opcodes for the supported values, with a memo for shared objects."""

    def __init__(self) -> None:
        self.out: list[bytes] = [b"\x80\x02"]
        self.memo: dict[int, int] = {}
        self.keep: list[Any] = []  # memoized objects stay alive while their id() is a key
        self.storages: list[np.ndarray] = []

    def put(self, obj: Any) -> None:
        i = len(self.memo)
        self.memo[id(obj)] = i
        self.keep.append(obj)
        self.out.append(b"q" + struct.pack("<B", i) if i < 256 else b"r" + struct.pack("<I", i))

    def get(self, obj: Any) -> bool:
        i = self.memo.get(id(obj))
        if i is None:
            return False
        self.out.append(b"h" + struct.pack("<B", i) if i < 256 else b"j" + struct.pack("<I", i))
        return True

    def glob(self, module: str, name: str) -> None:
        self.out.append(b"c" + module.encode() + b"\n" + name.encode() + b"\n")

    def text(self, s: str) -> None:
        b = s.encode("utf-8", "surrogatepass")
        self.out.append(b"X" + struct.pack("<I", len(b)) + b)

    def integer(self, v: int) -> None:
        if 0 <= v < 256:
            self.out.append(b"K" + struct.pack("<B", v))
        elif -(2**31) <= v < 2**31:
            self.out.append(b"J" + struct.pack("<i", v))
        else:
            n = (v.bit_length() + 8) // 8
            self.out.append(b"\x8a" + struct.pack("<B", n) + v.to_bytes(n, "little", signed=True))

    def empty_ordered_dict(self) -> None:
        self.glob("collections", "OrderedDict")
        self.out.append(b")R")

    def value(self, obj: Any, path: str) -> None:
        """Pickle ``obj`` (found at ``path``, for error messages): a Python atom, or else one
        of the torch objects and containers (:meth:`torch_object`)."""
        if obj is None:
            self.out.append(b"N")
        elif obj is True or obj is False:
            self.out.append(b"\x88" if obj else b"\x89")
        elif isinstance(obj, (int, np.integer)) and not isinstance(obj, bool):
            self.integer(int(obj))
        elif isinstance(obj, (float, np.floating)):
            self.out.append(b"G" + struct.pack(">d", float(obj)))
        elif isinstance(obj, str):
            self.text(obj)
        elif isinstance(obj, bytes):  # protocol 2 writes bytes as _codecs.encode(str, latin1)
            self.glob("_codecs", "encode")
            self.text(obj.decode("latin1"))
            self.text("latin1")
            self.out.append(b"\x86R")
        elif type(obj) in (dict, OrderedDict):
            self.mapping(obj, path)
        elif type(obj) is list:
            self.list_of(obj, path)
        elif type(obj) is tuple:
            self.tuple_of(obj, path)
        else:
            self.torch_object(obj, path)

    def torch_object(self, obj: Any, path: str) -> None:
        """Pickle a dtype, Size, device or Tensor as PyTorch does; raise for anything else."""
        from chainrule import _dtype, _layout
        from chainrule._device import device
        from chainrule._tensor import Size, Tensor

        if isinstance(obj, _dtype.dtype):
            self.glob("torch", obj.name)
        elif isinstance(obj, Size):
            self.glob("torch", "Size")
            self.tuple_of([int(s) for s in obj], path)
            self.out.append(b"\x85R")
        elif isinstance(obj, device):
            self.glob("torch", "device")
            self.text(str(obj))
            self.out.append(b"\x85R")
        elif isinstance(obj, Tensor):
            if obj.layout is not _layout.strided:
                raise TypeError(
                    f"chainrule.save(format='torch'): cannot write a {obj.layout} tensor (at "
                    f"{path}); this writer writes strided tensors (save it with chainrule's "
                    "own format, or its .to_dense())"
                )
            if not self.get(obj):
                self.tensor(obj)
                self.put(obj)
        else:
            raise TypeError(
                f"chainrule.save(format='torch'): cannot write an object of type "
                f"{type(obj).__name__} (at {path}); PyTorch's format is written for tensors, "
                "dicts, lists, tuples, dtypes, sizes, devices and None/bool/int/float/str/bytes "
                "(save it with chainrule's own format instead)"
            )

    def mapping(self, obj: Any, path: str) -> None:
        """A dict or OrderedDict (memoised: a second reference pickles as a get)."""
        if self.get(obj):
            return
        if type(obj) is dict:
            self.out.append(b"}")
        else:
            self.empty_ordered_dict()
        self.put(obj)
        if obj:
            self.out.append(b"(")
            for k, v in obj.items():
                self.value(k, f"{path}.<key>")
                self.value(v, f"{path}[{k!r}]")
            self.out.append(b"u")

    def list_of(self, obj: Any, path: str) -> None:
        """A list (memoised)."""
        if self.get(obj):
            return
        self.out.append(b"]")
        self.put(obj)
        if obj:
            self.out.append(b"(")
            for i, v in enumerate(obj):
                self.value(v, f"{path}[{i}]")
            self.out.append(b"e")

    def tuple_of(self, items: Any, path: str) -> None:
        self.out.append(b"(")
        for i, v in enumerate(items):
            self.value(v, f"{path}[{i}]")
        self.out.append(b"t")

    def tensor(self, t: Any) -> None:
        from chainrule.nn.parameter import Parameter

        if isinstance(t, Parameter):
            self.glob("torch._utils", "_rebuild_parameter")
            self.out.append(b"(")
            self.plain_tensor(t, False)
            self.out.append(b"\x88" if t.requires_grad else b"\x89")
            self.empty_ordered_dict()
            self.out.append(b"tR")
        else:
            self.plain_tensor(t, bool(t.requires_grad))

    def plain_tensor(self, t: Any, requires_grad: bool) -> None:
        arr = np.asarray(t.detach().cpu().numpy())
        arr = arr if arr.flags.c_contiguous else arr.copy(order="C")
        if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and not np.little_endian):
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        key = str(len(self.storages))
        self.storages.append(arr)
        if t.dtype.name not in _STORAGE_OF:
            raise TypeError(
                f"chainrule.save(format='torch'): a tensor of {t.dtype} is not written in "
                "PyTorch's format (its legacy storage types cover float16/32/64, bfloat16, "
                "the signed integers, uint8 and bool); save it in chainrule's default format"
            )
        self.glob("torch._utils", "_rebuild_tensor_v2")
        self.out.append(b"((")
        self.text("storage")
        self.glob("torch", _STORAGE_OF[t.dtype.name])
        self.text(key)
        self.text("cpu")
        self.integer(arr.size)
        self.out.append(b"tQ")
        self.integer(0)
        self.tuple_of([int(s) for s in arr.shape], "size")
        strides, acc = [], 1
        for s in reversed(arr.shape):
            strides.append(acc)
            acc *= int(s)
        self.tuple_of(list(reversed(strides)), "stride")
        self.out.append(b"\x88" if requires_grad else b"\x89")
        self.empty_ordered_dict()
        self.out.append(b"tR")


def _write_aligned(zf: zipfile.ZipFile, fh: IO[bytes], name: str, data: Any) -> None:
    """A stored record whose data starts at a multiple of 64 bytes in the file (padding in the
    local header's extra field, as PyTorch's writer does)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    start = fh.tell() + 30 + len(name.encode())
    pad = -(start + 4) % _ALIGN
    info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad  # id "FB", as PyTorch's
    with zf.open(info, "w", force_zip64=len(data) >= 2**31) as dst:
        dst.write(data)


def save_torch_zip(obj: Any, f: FileLike) -> None:
    """Write ``obj`` to ``f`` in PyTorch's zip format (see the module's docstring)."""
    em = _Emitter()
    em.value(obj, "obj")
    em.out.append(b".")
    pkl = b"".join(em.out)

    def write(fh: IO[bytes]) -> None:
        with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as zf:
            _write_aligned(zf, fh, "archive/data.pkl", pkl)
            _write_aligned(zf, fh, "archive/.format_version", b"1")
            _write_aligned(zf, fh, "archive/.storage_alignment", b"64")
            _write_aligned(zf, fh, "archive/byteorder", b"little")
            for i, arr in enumerate(em.storages):
                _write_aligned(zf, fh, f"archive/data/{i}", arr.reshape(-1).view(np.uint8).data)
            _write_aligned(zf, fh, "archive/version", b"3\n")

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
