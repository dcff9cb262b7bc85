"""Shared by the linear-algebra modules: LinAlgError, the batched transpose, and the
argument and dtype checks with PyTorch's messages."""

from __future__ import annotations

from typing import Any, Sequence

from chainrule import _dtype
from chainrule.ops._registry import ns
from chainrule.ops.complex_numbers import cj

__all__ = []


class LinAlgError(RuntimeError):
    """Raised for singular inputs, like ``torch.linalg.LinAlgError``."""


def _mT(x: Any) -> Any:
    return ns.transpose(x, dim0=x.ndim - 1, dim1=x.ndim - 2)


def _mH(x: Any) -> Any:  # noqa: N802
    """The conjugate transpose (the transpose of a real x): what the VJPs use, so that they
    are PyTorch's for complex matrices too (Note [Wirtinger gradients])."""
    return cj(ns.transpose(x, dim0=x.ndim - 1, dim1=x.ndim - 2))


def _require_tensor(name: str, x: Any, arg: str) -> None:
    if not hasattr(x, "_data"):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(x).__name__}")


def _shape_str(s: Sequence[int]) -> str:
    return "x".join(map(str, s))


def _type_name(t: Any) -> str:
    from chainrule._tensor import _type_name

    return _type_name(t._data.dtype).replace("Tensor", "")


_C_NAMES = _dtype.CPP_NAMES


def _c_name(t: Any) -> str:
    """The C++ scalar type name some PyTorch messages use (float, double...)."""
    n: str = t._data.dtype.name
    return _C_NAMES.get(n, n)


def _check_same_dtype(name: str, a: Any, b: Any, msg: str | None = None) -> None:
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(
            msg
            or f"{name}: expected both vectors to have same dtype, but found "
            f"{_type_name(a)} and {_type_name(b)}"
        )


def _check_matmul_dtype(a: Any, b: Any) -> None:
    """matmul's operands share one dtype (no promotion, as in torch); the message is the one
    of the kernel torch dispatches to for these ranks."""
    da, db = a._data.dtype, b._data.dtype
    if da == db:
        return
    na, nb = a._data.ndim, b._data.ndim
    if nb == 1 and na >= 2:
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got "
            f"{_type_name(b)}, {_type_name(a)}, and {_type_name(b)}"
        )
    if nb == 2:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_c_name(a)} != {_c_name(b)}"
        )
    raise RuntimeError(f"expected scalar type {_type_name(a)} but found {_type_name(b)}")


def check_addmm_dtype(input: Any, mat1: Any, mat2: Any) -> None:
    """addmm's (and linear-with-bias's) dtype rule and torch's texts: input against mat2 first,
    then mat1 against mat2."""
    if input._data.dtype != mat2._data.dtype:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {_type_name(input)} "
            f"and {_type_name(mat2)}"
        )
    if mat1._data.dtype != mat2._data.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {_type_name(mat1)} "
            f"and {_type_name(mat2)}"
        )
