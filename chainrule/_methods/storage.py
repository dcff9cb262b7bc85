"""Tensor methods of the "storage" family: the tensor's storage (``untyped_storage``,
``storage``, ``storage_type``), ``set_`` onto a storage or another tensor's memory, and a few
small queries (``is_nested``, ``record_stream``, ``as_subclass``), and the method forms of
``hash_tensor``, ``as_strided_scatter`` and ``slice_inverse`` (in ``chainrule/_misc_api.py``).

The storage classes live in ``chainrule/storage.py``, above ``Tensor``; these methods reach
them through ``_dispatch.upper`` (loaded on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from chainrule._dispatch import ops as _ops
from chainrule._dispatch import upper as _upper
from chainrule._grad_state import _state
from chainrule._methods._base import TensorAttrs, TensorBase

if TYPE_CHECKING:
    from chainrule._tensor import Tensor

__all__ = ["StorageMethods"]


class StorageMethods(TensorAttrs):
    def untyped_storage(self) -> Any:
        """The bytes of the memory this tensor views (a ``chainrule.UntypedStorage`` sharing
        them: writes through either are seen by the other)."""
        return _upper.storage_of(self)

    def storage(self) -> Any:
        """The storage as a ``TypedStorage`` of this tensor's dtype (deprecated in PyTorch:
        warns once per process with a ``UserWarning``)."""
        return _upper.typed_storage_of(self)

    def storage_type(self) -> Any:
        """The legacy storage class of the dtype (``chainrule.FloatStorage`` for float32)."""
        return _upper.storage_type_of(self)

    def set_(
        self,
        source: Any = None,
        storage_offset: int = 0,
        size: Sequence[int] | None = None,
        stride: Sequence[int] | None = None,
    ) -> Tensor:
        """Make ``self`` view other memory, in place: a storage (from ``storage_offset``, in
        elements, with ``size`` and ``stride``; the whole storage by default), another tensor
        (the same view of the same memory), or, with no argument, an empty storage. Writes
        through ``self`` are then seen by every tensor viewing that memory. Differs from torch:
        not allowed, with grad mode on, on a tensor that has autograd history."""
        _ops.check_inplace(self)  # pyright: ignore[reportArgumentType]  (a mixin: self is a Tensor)
        if self.requires_grad and self.grad_fn is not None and _state.enabled:  # type: ignore[attr-defined]
            raise NotImplementedError(
                "set_ on a tensor with autograd history is not supported (chainrule would not "
                "know how gradients reach the new memory); call it under no_grad() or on a "
                "detached tensor"
            )
        dt = self.dtype
        if source is None:
            new = np.zeros(0, dt.np)
        elif hasattr(source, "_data") and hasattr(source, "grad_fn"):
            if source.dtype is not dt:
                cpp = _upper.cpp_type_name
                raise RuntimeError(
                    f"Could not set tensor of type {cpp(source.dtype)} to a tensor of type "
                    f"{cpp(dt)}"
                )
            new = source._data.view()
        else:
            new = _upper.array_on(self, source, storage_offset, size, stride)
        self._data = new
        self._bump_version()
        return self  # type: ignore[return-value]

    @property
    def is_nested(self) -> bool:
        """False: chainrule has no nested tensors."""
        return False

    def record_stream(self, stream: Any) -> None:
        """Streams order work on accelerators; a CPU tensor has none (PyTorch's error)."""
        raise NotImplementedError(
            "Could not run 'aten::record_stream' with arguments from the 'CPU' backend. This "
            "could be because the operator doesn't exist for this backend, or was omitted "
            "during the selective/custom build process (if using custom build)."
        )

    def as_subclass(self, cls: type) -> Any:
        """``self`` as an instance of ``cls`` (a subclass of Tensor), sharing its memory and
        staying in the autograd graph (an alias, as PyTorch's)."""
        if not isinstance(cls, type) or not issubclass(cls, TensorBase):
            raise TypeError(
                "Creating a Tensor subclass from a class that does not inherit from Tensor is "
                "not possible. Make sure your class inherits from Tensor."
            )
        out = self.view_as(self)  # type: ignore[attr-defined]
        out.__class__ = cls
        return out

    def hash_tensor(
        self, dim: int | Sequence[int] | None = None, *, keepdim: bool = False, mode: int = 0
    ) -> Tensor:
        """``chainrule.hash_tensor(self, dim, keepdim=, mode=)``: the XOR of the elements'
        64-bit patterns, as ``uint64``."""
        return _upper.hash_tensor(self, dim, keepdim=keepdim, mode=mode)

    def as_strided_scatter(
        self,
        src: Tensor,
        size: Sequence[int],
        stride: Sequence[int],
        storage_offset: int | None = None,
    ) -> Tensor:
        """``chainrule.as_strided_scatter(self, src, size, stride, storage_offset)``."""
        return _upper.as_strided_scatter(self, src, size, stride, storage_offset)

    def slice_inverse(
        self,
        src: Tensor,
        dim: int = 0,
        start: int | None = None,
        end: int | None = None,
        step: int = 1,
    ) -> Tensor:
        """``chainrule.slice_inverse(self, src, dim, start, end, step)``."""
        return _upper.slice_inverse(self, src, dim, start, end, step)
