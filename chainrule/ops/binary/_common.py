"""Helpers of the binary family: PyTorch's broadcasting error, argument checks and dtype names."""

from __future__ import annotations

from typing import Any

from chainrule import _dtype
from chainrule._scalar_convert import int_operand

__all__ = ["broadcast_error"]


def broadcast_error(*arrays: Any) -> RuntimeError | None:
    """PyTorch's error for operands whose shapes do not broadcast, or None if they do.

    Shapes are combined left to right, as PyTorch's TensorIterator does: "tensor a" is the shape
    accumulated so far, "tensor b" the next operand's.
    """
    shape: tuple[int, ...] | None = None
    for x in arrays:
        s = getattr(x, "shape", None)
        if s is None:
            continue
        if shape is None:
            shape = tuple(s)
            continue
        n = max(len(shape), len(s))
        a = (1,) * (n - len(shape)) + shape
        b = (1,) * (n - len(s)) + tuple(s)
        out = []
        for i in range(n - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                return RuntimeError(
                    f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) "
                    f"at non-singleton dimension {i}"
                )
            out.append(b[i] if a[i] == 1 else a[i])
        shape = tuple(reversed(out))
    return None


def _checked(f: Any) -> Any:
    """Wrap a two-input forward so that a broadcasting failure raises PyTorch's error."""

    def fwd(xp: Any, a: Any, b: Any, **kw: Any) -> Any:
        try:
            return f(xp, a, b, **kw)
        except ValueError:
            err = broadcast_error(a, b)
            if err is None:
                raise
            raise err from None

    fwd.__name__ = getattr(f, "__name__", "fwd")
    return fwd


def _scalar_as_tensor(v: Any, other: Any) -> Any:
    """A Python number in the first operand's place, as a 0-dim tensor of the dtype promotion
    gives the pair (so the result dtype is unchanged)."""
    from chainrule._creation import tensor
    from chainrule._dtype import result_type

    dt = result_type(v, other)
    if type(v) is int and not 0 <= v <= 127:  # Note [int operands of binary ops]
        v = int_operand(v, dt.np, other._data.dtype.kind)
    return tensor(v, dtype=dt)


def _tensor_pair(name: str, input: Any, other: Any) -> None:
    if not hasattr(other, "_data"):
        raise TypeError(
            f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}"
        )
    if not hasattr(input, "_data"):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )


def _torch_name(t: Any) -> str:
    # c10's C++ names of the scalar types, as PyTorch's dtype checks print them ("long int",
    # "c10::Half", "unsigned char" ...)
    n: str = t.dtype.name
    return _C10_NAMES.get(n, n)


_C10_NAMES = _dtype.CPP_NAMES


def _legacy(t: Any) -> str:
    from chainrule.ops._registry import _legacy_name

    return _legacy_name(t._data.dtype)
