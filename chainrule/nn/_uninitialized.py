"""``UninitializedParameter`` / ``UninitializedBuffer``: tensors of a lazy module whose shape
is not known yet.

Note [uninitialized tensors]
They hold no array: reading ``_data`` (which every op does) raises, as does asking for the
shape, so an uninitialized tensor cannot leak into a computation. What a module needs before
the first forward works: ``requires_grad``, ``dtype``, ``to(dtype)`` (recorded for later),
``detach()`` (itself, so that ``state_dict()`` lists them as in PyTorch) and ``repr``.
``materialize(shape)`` gives the tensor an (uninitialized) array of that shape and turns the
same object into a plain ``Parameter`` / ``Tensor``, so whoever holds it keeps a valid
reference.
"""

from __future__ import annotations

import copy
from typing import Any

from chainrule._creation import empty
from chainrule._dtype import get_default_dtype
from chainrule._tensor import Tensor
from chainrule.nn._parameter import Parameter

__all__ = ["UninitializedBuffer", "UninitializedParameter", "UninitializedTensorMixin"]

# The storage slot of Tensor's ``_data``, written directly because the mixin's ``_data``
# property (which raises on reads) shadows it.
_DATA_SLOT = vars(Tensor)["_data"]

_SHAPE_MSG = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually "
    "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
    "initialized one. Call `forward` to initialize the parameters before accessing their "
    "attributes."
)


def _use_error(what: str) -> ValueError:
    return ValueError(
        f"Attempted to use an uninitialized parameter in {what}. This error happens when you "
        "are using a `LazyModule` or explicitly manipulating "
        "`torch.nn.parameter.UninitializedParameter` objects. When using LazyModules Call "
        "`forward` with a dummy batch to initialize the parameters before calling torch "
        "functions"
    )


class UninitializedTensorMixin:
    """What makes a tensor uninitialized (Note [uninitialized tensors])."""

    __slots__ = ()
    cls_to_become: type

    @property
    def _data(self) -> Any:
        raise _use_error("an operation")

    @_data.setter
    def _data(self, value: Any) -> None:
        _DATA_SLOT.__set__(self, value)

    @property
    def shape(self) -> Any:
        raise RuntimeError(_SHAPE_MSG)

    def size(self, dim: int | None = None) -> Any:
        raise RuntimeError(_SHAPE_MSG)

    @property
    def ndim(self) -> int:
        raise RuntimeError(_SHAPE_MSG)

    def dim(self) -> int:
        raise RuntimeError(_SHAPE_MSG)

    def numel(self) -> int:
        raise _use_error("<method 'numel'>")

    @property
    def dtype(self) -> Any:
        return self.__dict__["_lazy_dtype"]

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def requires_grad_(self, requires_grad: bool = True) -> Any:
        self._requires_grad = bool(requires_grad)
        return self

    def detach(self) -> Any:
        return self

    def to(self, *args: Any, **kwargs: Any) -> Any:
        """Record a new device and dtype for ``materialize``."""
        from chainrule._device import parse_to
        from chainrule._dtype import to_dtype

        dev, dt, _, _ = parse_to(args, kwargs, Tensor)
        if dt is not None:
            self.__dict__["_lazy_dtype"] = to_dtype(dt)
        if dev is not None:
            self.__dict__["_lazy_device"] = dev
        return self

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give this tensor an array of ``shape`` (values unset) and make it a plain
        ``cls_to_become`` (Parameter or Tensor), in place."""
        if isinstance(shape, int):
            shape = (shape,)
        dt = self.dtype if dtype is None else dtype
        if device is None:
            device = self.__dict__.pop("_lazy_device", None)
        arr = empty(tuple(shape), dtype=dt, device=device)
        _DATA_SLOT.__set__(self, vars(Tensor)["_data"].__get__(arr))
        self.__dict__.pop("_lazy_dtype", None)
        self.__class__ = self.cls_to_become  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        new = type(self)(requires_grad=self.requires_grad, dtype=self.dtype)
        memo[id(self)] = new
        return new

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (type(self), (self.requires_grad, None, self.dtype))

    def __copy__(self) -> Any:
        return copy.deepcopy(self)


def _new_uninitialized(cls: type, requires_grad: bool, dtype: Any) -> Any:
    t = cls._make_subclass(empty(0), False)  # type: ignore[attr-defined]
    t.__dict__["_lazy_dtype"] = get_default_dtype() if dtype is None else dtype
    t._requires_grad = bool(requires_grad)
    return t


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape a lazy module fills in on its first forward; ``materialize``
    makes it an ordinary ``Parameter``."""

    cls_to_become = Parameter

    def __new__(
        cls, requires_grad: bool = True, device: Any = None, dtype: Any = None
    ) -> UninitializedParameter:
        return _new_uninitialized(cls, requires_grad, dtype)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape a lazy module fills in on its first forward; ``materialize``
    makes it an ordinary ``Tensor``."""

    cls_to_become = Tensor

    def __new__(
        cls,
        requires_grad: bool = False,
        device: Any = None,
        dtype: Any = None,
        persistent: bool = True,
    ) -> UninitializedBuffer:
        t = _new_uninitialized(cls, requires_grad, dtype)
        t.persistent = persistent
        return t

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass
