"""Tensor methods of the "surface" family (see chainrule/_methods/__init__.py): constructors
that inherit from ``self`` (``new_*``), memory-layout queries (``storage_offset``, ``data_ptr``,
``nbytes``, ``dim_order``), ``as_strided``, Python-function maps (``apply_``, ``map_``),
shared and pinned memory, and the DLPack protocol.

Memory is NumPy's: a tensor's storage is the root ndarray its array is a view of (following
``ndarray.base``), so offsets and pointers are measured from that root's first byte.
"""

from __future__ import annotations

import mmap
import warnings
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from chainrule import _shm
from chainrule._dispatch import creation as _creation_table
from chainrule._dispatch import upper as _upper
from chainrule._methods._base import TensorAttrs, TensorBase, type_name

if TYPE_CHECKING:
    from typing import Self  # the in-place maps return their Tensor itself

    from chainrule._tensor import Tensor

__all__ = ["SurfaceMethods"]


def _creation() -> Any:
    # chainrule._creation sits above _tensor: reached through its table (_dispatch.py).
    return _creation_table


def _root(a: np.ndarray) -> np.ndarray:
    """The ndarray that owns (or first wraps) the memory ``a`` views."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _ptr(a: Any) -> int:
    if isinstance(a, np.ndarray):
        return int(a.__array_interface__["data"][0])
    return int(a.data.ptr)  # a device array (CuPy)


def _is_int(s: Any) -> bool:
    return isinstance(s, (int, np.integer)) and not isinstance(s, bool)


def _size_arg(name: str, size: tuple[Any, ...]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    elif len(size) == 1 and not _is_int(size[0]):
        raise TypeError(
            f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
            f"{type(size[0]).__name__}"
        )
    for i, s in enumerate(size):
        if not _is_int(s):
            raise TypeError(
                f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} with "
                f'error "type must be tuple of ints,but got {type(s).__name__}"'
            )
    return tuple(int(s) for s in size)


class SurfaceMethods(TensorAttrs):
    __slots__ = ()

    # Constructors inheriting dtype and device ----------------------------------------------
    def new_tensor(
        self,
        data: Any,
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        layout: Any = None,
        pin_memory: bool = False,
    ) -> Tensor:
        """A new tensor holding a copy of ``data``, with ``self``'s dtype and device unless
        given (a NumPy array or tensor is cast too, as PyTorch does)."""
        if isinstance(data, TensorBase):
            warnings.warn(
                "To copy construct from a tensor, it is recommended to use "
                "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                "requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
                UserWarning,
                stacklevel=2,
            )
            data = data.detach()._data
        return _creation().tensor(
            data,
            dtype=self.dtype if dtype is None else dtype,
            device=self.device if device is None else device,
            requires_grad=requires_grad,
        )

    def _new_filled(
        self,
        fn: Any,
        name: str,
        size: tuple[Any, ...],
        dtype: Any,
        device: Any,
        requires_grad: bool,
    ) -> Tensor:
        return fn(
            _size_arg(name, size),
            dtype=self.dtype if dtype is None else dtype,
            device=self.device if device is None else device,
            requires_grad=requires_grad,
        )

    def new_zeros(
        self,
        *size: Any,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        layout: Any = None,
        pin_memory: bool = False,
    ) -> Tensor:
        """Zeros of shape ``size`` with ``self``'s dtype and device unless given."""
        return self._new_filled(_creation().zeros, "new_zeros", size, dtype, device, requires_grad)

    def new_ones(
        self,
        *size: Any,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        layout: Any = None,
        pin_memory: bool = False,
    ) -> Tensor:
        """Ones of shape ``size`` with ``self``'s dtype and device unless given."""
        return self._new_filled(_creation().ones, "new_ones", size, dtype, device, requires_grad)

    def new_empty(
        self,
        *size: Any,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        layout: Any = None,
        pin_memory: bool = False,
    ) -> Tensor:
        """An uninitialised (here: zeroed) tensor of shape ``size``, ``self``'s dtype/device."""
        return self._new_filled(_creation().empty, "new_empty", size, dtype, device, requires_grad)

    def new_full(
        self,
        size: Sequence[int],
        fill_value: Any,
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        layout: Any = None,
        pin_memory: bool = False,
    ) -> Tensor:
        """``fill_value`` in shape ``size`` (a sequence), ``self``'s dtype/device unless given."""
        if not isinstance(size, (list, tuple)):
            raise TypeError(
                "new_full(): argument 'size' (position 1) must be tuple of ints, not "
                f"{type(size).__name__}"
            )
        return _creation().full(
            _size_arg("new_full", (tuple(size),)),
            fill_value,
            dtype=self.dtype if dtype is None else dtype,
            device=self.device if device is None else device,
            requires_grad=requires_grad,
        )

    def type_as(self, other: Any) -> Tensor:
        """``self`` cast to ``other``'s dtype (``self`` itself when they match)."""
        return self.to(other.dtype)

    # Memory layout ---------------------------------------------------------------------------
    def storage_offset(self) -> int:
        """Offset of the first element from the start of the storage, in elements."""
        d = self._data
        if not isinstance(d, np.ndarray):
            return 0
        return (_ptr(d) - _ptr(_root(d))) // d.itemsize

    def data_ptr(self) -> int:
        """Address of the first element (0 for a tensor with no elements, as PyTorch)."""
        return 0 if self._data.size == 0 else _ptr(self._data)

    const_data_ptr = data_ptr

    @property
    def nbytes(self) -> int:
        """Bytes of the elements the tensor spans (numel * element_size)."""
        return int(self._data.size * self._data.itemsize)

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return int(self._data.itemsize)

    def dim_order(self, *, ambiguity_check: bool = False) -> tuple[int, ...]:
        """The dims from outermost to innermost in memory (by decreasing stride)."""
        st = self.stride()
        return tuple(sorted(range(len(st)), key=lambda d: -st[d]))

    def as_strided(
        self, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
    ) -> Tensor:
        """A view of ``self``'s storage with the given sizes, strides (in elements) and offset.

        Without gradients it shares memory with ``self``. When ``self`` requires grad, the
        result is the same elements gathered from the storage (a differentiable copy: its
        gradient is the scatter-add of ``g`` into the storage, as PyTorch's), so writes to it
        do not reach ``self``."""
        d = self._data
        if not isinstance(d, np.ndarray):
            raise NotImplementedError("as_strided is supported for CPU (NumPy) tensors only")
        size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
        if len(size) != len(stride):
            raise RuntimeError("mismatch in length of strides and shape")
        if any(s < 0 for s in stride):
            raise RuntimeError(
                f"as_strided: Negative strides are not supported at the moment, got strides: "
                f"{list(stride)}"
            )
        off = self.storage_offset() if storage_offset is None else int(storage_offset)
        root = _root(d)
        n_storage = root.nbytes // d.itemsize
        need = 0 if 0 in size else off + 1 + sum((n - 1) * s for n, s in zip(size, stride))
        if need > n_storage:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off},"
                f" and itemsize {d.itemsize} requiring a storage size of {need * d.itemsize} "
                f"are out of bounds for storage of size {n_storage * d.itemsize}"
            )
        if self.requires_grad:
            if not (
                self.is_contiguous() and self.storage_offset() == 0 and self._data.size == n_storage
            ):
                raise NotImplementedError(
                    "as_strided of a tensor that requires grad is supported only when the "
                    "tensor is its whole contiguous storage"
                )
            idx = off + sum(
                np.arange(n).reshape((-1,) + (1,) * (len(size) - i - 1)) * s
                for i, (n, s) in enumerate(zip(size, stride))
            )
            idx = np.broadcast_to(np.asarray(idx, dtype=np.int64), size)
            return self.reshape(-1)[self._wrap(np.ascontiguousarray(idx))]
        if not root.flags.c_contiguous:
            raise NotImplementedError("as_strided needs a contiguous storage")
        # An ndarray over the root's buffer: its ``base`` is the root, so it is a view of it.
        out = np.ndarray(
            size,
            d.dtype,
            buffer=root,
            offset=off * d.itemsize,
            strides=tuple(s * d.itemsize for s in stride),
        )
        return self._wrap(out)

    # Python-function maps --------------------------------------------------------------------
    def apply_(self, callable: Callable[[Any], Any]) -> Self:
        """Replace each element ``x`` by ``callable(x)`` (a Python number), in place (CPU)."""
        if self.requires_grad:
            raise RuntimeError(
                "Can't call apply_() on Variable that requires grad. Use var.detach().apply_() "
                "instead."
            )
        d = self._data
        flat = [callable(v) for v in d.ravel().tolist()]
        d[...] = np.asarray(flat, dtype=d.dtype).reshape(d.shape)
        self._bump_version()
        return self

    def map_(self, tensor: Any, callable: Callable[[Any, Any], Any]) -> Self:
        """``self[i] = callable(self[i], tensor[i])`` for each element, ``tensor`` broadcast
        to ``self``'s shape, in place (CPU)."""
        if self.requires_grad:
            raise RuntimeError(
                "Can't call map_() on Variable that requires grad. Use var.detach().map_() instead."
            )
        if tensor.dtype != self.dtype:
            raise TypeError(
                f"map_: expected torch.{type_name(self._data.dtype)} for 'other' (got "
                f"torch.{type_name(tensor._data.dtype)})"
            )
        other = tensor.expand_as(self)._data
        d = self._data
        flat = [callable(a, b) for a, b in zip(d.ravel().tolist(), other.ravel().tolist())]
        d[...] = np.asarray(flat, dtype=d.dtype).reshape(d.shape)
        self._bump_version()
        return self

    # Pinned and shared memory ------------------------------------------------------------------
    def pin_memory(self, device: Any = None) -> Tensor:
        """Page-locked memory needs an accelerator; there is none, so this fails as PyTorch
        does on a machine without one."""
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def is_pinned(self, device: Any = None) -> bool:
        return False

    def share_memory_(self) -> Self:
        """Move the data to shared memory, in place; a no-op when already shared.

        The memory is an anonymous file mapped shared (``chainrule/_shm.py``): forked children
        see it, and a tensor sent to a *spawned* child (a ``Process`` argument, a ``Queue``
        item) travels as its file descriptor, so both processes then update the same values,
        as PyTorch's ``file_descriptor`` strategy does. Views made before the call keep the old
        memory (PyTorch moves the storage under them)."""
        if self.is_shared() or not isinstance(self._data, np.ndarray) or self._data.size == 0:
            return self
        d = self._data
        a = np.frombuffer(_shm.new_block(d.nbytes), dtype=d.dtype, count=d.size).reshape(d.shape)
        a[...] = d
        self._data = a
        # Processes get tensors through multiprocessing's pickler once its reducers are in.
        _upper.register_tensor_reducers()
        return self

    def is_shared(self) -> bool:
        d = self._data
        if not isinstance(d, np.ndarray):
            return False
        owner = _root(d).base
        if isinstance(owner, memoryview):
            owner = owner.obj
        return isinstance(owner, mmap.mmap)

    # DLPack ------------------------------------------------------------------------------------
    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: Any = None,
        dl_device: Any = None,
        copy: Any = None,
    ) -> Any:
        """A DLPack capsule of the tensor's memory (shared, not copied)."""
        if self.requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        kw: dict[str, Any] = {}
        if max_version is not None:
            kw["max_version"] = max_version
        if copy is not None:
            kw["copy"] = copy
        return self._data.__dlpack__(stream=stream, **kw)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._data.__dlpack_device__()
