"""``dtype.to_complex``/``to_real``/``abbr`` and the Generator methods PyTorch 2.13 has beyond
seeding (``clone_state``, offsets, graph-safe state), compared with PyTorch."""

from __future__ import annotations

import pytest
import torch

import chainrule as cr

NAMES = [
    "float16", "float32", "float64", "bfloat16", "complex32", "complex64", "complex128",
    "bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
    "float4_e2m1fn_x2", "bits8", "bits16", "bits1x8", "bits2x4", "bits4x2",
    "int1", "int4", "int7", "uint1", "uint4", "uint7",
]  # fmt: skip


def _outcome(f):
    try:
        return "ok", str(f()).split(".")[-1]
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return type(e).__name__, str(e)


@pytest.mark.parametrize("name", NAMES)
def test_dtype_complex_real_abbr_as_torch(name):
    t, c = getattr(torch, name), getattr(cr, name)
    assert c.abbr == t.abbr
    assert _outcome(c.to_complex) == _outcome(t.to_complex)
    assert _outcome(c.to_real) == _outcome(t.to_real)


def test_clone_state_draws_the_same_numbers_independently():
    g = cr.Generator().manual_seed(3)
    cr.rand(5, generator=g)
    h = g.clone_state()
    assert h.initial_seed() == g.initial_seed() == 3
    a = cr.rand(4, generator=g)
    b = cr.rand(4, generator=h)
    assert a.tolist() == b.tolist()
    cr.rand(1, generator=h)  # advancing one leaves the other
    assert cr.rand(2, generator=g).tolist() != cr.rand(2, generator=h).tolist()
    tg = torch.Generator().manual_seed(3)
    assert type(tg.clone_state()) is torch.Generator and type(h) is cr.Generator


@pytest.mark.parametrize(
    "call",
    [
        lambda g: g.get_offset(),
        lambda g: g.set_offset(3),
        lambda g: g.graphsafe_get_state(),
        lambda g: g.graphsafe_set_state(g),
    ],
)
def test_cpu_generator_refusals_as_torch(call):
    assert _outcome(lambda: call(cr.Generator())) == _outcome(lambda: call(torch.Generator()))
