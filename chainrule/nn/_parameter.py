"""``Parameter``: a Tensor that a ``Module`` registers as one of its learnable weights."""

from __future__ import annotations

from chainrule._tensor import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A leaf Tensor that ``Module.__setattr__`` registers in ``_parameters``.

    ``Parameter(data)`` shares ``data``'s array and version counter (no copy) and is a leaf with
    ``requires_grad=True`` unless told otherwise. ``_param_name`` holds the attribute name it was
    assigned under, and its dotted name from the root once ``named_parameters()`` has run there;
    error messages elsewhere read it with ``getattr(t, "_param_name", None)``.
    """

    _is_param = True

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            from chainrule._creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, got {type(data).__name__}")
        return cls._make_subclass(data, requires_grad)  # type: ignore[return-value]

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
