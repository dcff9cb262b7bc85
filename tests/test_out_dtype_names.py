"""Dtype names in the ``out=`` and scaled_dot_product_attention errors, against PyTorch: the
C++ element types (``c10::complex<float>``, ``c10::BFloat16``: ``_dtype.CPP_NAMES``) and the
ScalarType names (``ComplexFloat``, ``BFloat16``), complex and bfloat16 included."""

from __future__ import annotations

from typing import Any, Callable

import pytest

import chainrule as cr

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64", "complex128", "int64", "int8"]


def _err(f: Callable[[], Any]) -> Any:
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return (type(e).__name__, str(e).split("\n")[0])
    return None


_SHAPES = {
    "matmul": ((2, 2), (2, 2)),
    "mm": ((2, 2), (2, 2)),
    "bmm": ((1, 2, 2), (1, 2, 2)),
    "mv": ((2, 2), (2,)),
    "dot": ((2,), (2,)),
}


@pytest.mark.parametrize("out_dt", DTYPES)
@pytest.mark.parametrize("dt", ["float32", "bfloat16", "complex64", "int64"])
@pytest.mark.parametrize("op", sorted(_SHAPES) + ["where", "clamp"])
def test_out_dtype_errors(op: str, dt: str, out_dt: str) -> None:
    if dt == out_dt or (op == "clamp" and dt == "complex64"):
        pytest.skip("no dtype error / clamp has no complex kernel")
    if dt == "int64" and op in ("matmul", "mm", "bmm", "mv") and out_dt != "float16":
        pytest.skip("an integer product is one case enough")

    def run(m: Any) -> Any:
        d, od = getattr(m, dt), getattr(m, out_dt)
        out = m.empty(0 if op in _SHAPES else 3, dtype=od)
        if op == "where":
            a = m.ones(3, dtype=d)
            return _err(lambda: m.where(m.ones(3, dtype=m.bool), a, a, out=out))
        if op == "clamp":
            return _err(lambda: m.clamp(m.ones(3, dtype=d), 0, 1, out=out))
        sa, sb = _SHAPES[op]
        return _err(lambda: getattr(m, op)(m.ones(*sa, dtype=d), m.ones(*sb, dtype=d), out=out))

    ref = run(torch)
    assert run(cr) == ref
    assert ref is not None


@pytest.mark.parametrize("kdt", DTYPES + ["bool"])
@pytest.mark.parametrize("qdt", ["float32", "bfloat16", "complex64", "complex128", "int64"])
@pytest.mark.parametrize("ndim", [3, 4])
def test_sdpa_dtype_errors(qdt: str, kdt: str, ndim: int) -> None:
    def run(m: Any) -> Any:
        shape = (1,) * (ndim - 2) + (2, 2)
        q, k = m.ones(*shape, dtype=getattr(m, qdt)), m.ones(*shape, dtype=getattr(m, kdt))
        F = m.nn.functional
        return [
            _err(lambda: F.scaled_dot_product_attention(q, k, k)),
            _err(lambda: F.scaled_dot_product_attention(q, q, q, attn_mask=k[0])),
            _err(lambda: F.scaled_dot_product_attention(q, q, k, is_causal=True)),
        ]

    if qdt == "bfloat16" and kdt in ("bfloat16", "bool"):
        pytest.skip("a bfloat16 attention runs (values: tests/test_bfloat16.py)")
    mine, ref = run(cr), run(torch)
    if qdt == "int64" and kdt in ("int64", "bool"):
        # An integer query with a mask it accepts (bool, its own dtype, the causal one):
        # PyTorch fails converting
        # the scale to int64 ("value cannot be converted to type int64_t without overflow");
        # chainrule refuses the integer query as PyTorch does without a mask.
        mine, ref = mine[:1], ref[:1]
    assert mine == ref
