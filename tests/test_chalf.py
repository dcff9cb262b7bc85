"""torch.chalf / complex32 against PyTorch: the dtype object, its promotion and finfo; and the
TypeError where PyTorch would make a tensor (NumPy has no 32-bit complex type)."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def _name(d: Any) -> str:
    return str(d).split(".")[-1]


def test_dtype_attributes_match_torch() -> None:
    assert cr.chalf is cr.complex32
    c, t = cr.complex32, torch.complex32
    assert _name(c) == _name(t) == "complex32"
    assert (c.is_complex, c.is_floating_point, c.is_signed, c.itemsize) == (
        t.is_complex,
        t.is_floating_point,
        t.is_signed,
        t.itemsize,
    )
    assert _name(c.to_real()) == _name(t.to_real()) == "float16"
    assert c.to_complex() is c


@pytest.mark.parametrize(
    "other", ["float16", "float32", "float64", "int64", "bool", "complex64", "complex128"]
)
def test_promotion_matches_torch(other: str) -> None:
    for a, b in ((cr.chalf, getattr(cr, other)), (getattr(cr, other), cr.chalf)):
        tp = torch.promote_types(getattr(torch, _name(a)), getattr(torch, _name(b)))
        assert _name(cr.promote_types(a, b)) == _name(tp)


@pytest.mark.parametrize("d", ["complex32", "complex64", "complex128"])
def test_finfo_of_complex_dtypes_is_that_of_the_parts(d: str) -> None:
    c, t = cr.finfo(getattr(cr, d)), torch.finfo(getattr(torch, d))
    assert (c.dtype, c.bits, c.eps, c.max, c.tiny) == (t.dtype, t.bits, t.eps, t.max, t.tiny)


MAKERS: list[Callable[[Any], Any]] = [
    lambda m: m.zeros(2, dtype=m.chalf),
    lambda m: m.tensor([1 + 2j], dtype=m.complex32),
    lambda m: m.tensor([1.1 + 2.3j]).chalf(),
    lambda m: m.tensor([1.1 + 2.3j]).to(m.chalf),
]


@pytest.mark.parametrize("make", MAKERS, ids=["zeros", "tensor", "chalf", "to"])
def test_tensors_of_complex32_raise_a_clear_type_error(make: Callable[[Any], Any]) -> None:
    with warnings.catch_warnings():  # PyTorch makes one, warning once that it is experimental
        warnings.simplefilter("ignore", UserWarning)
        t = make(torch)
    assert t.dtype == torch.complex32
    with pytest.raises(TypeError, match="NumPy has no 32-bit complex type; use complex64"):
        make(cr)
