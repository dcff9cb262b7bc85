"""nn.functional's helper names (chainrule/nn/_functional_helpers.py) and lr_scheduler's
re-exports, against PyTorch's: the ``__torch_function__`` helpers on plain tensors and on
overriding objects, boolean_dispatch, assert_int_or_pair, the typing names and note tables."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


class _Overrides:
    """An object that takes part in the ``__torch_function__`` protocol."""

    calls: list = []

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        cls.calls.append((func, types))
        return ("handled", cls.__name__)


class _Sub(_Overrides):
    pass


class _Declines:
    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return NotImplemented


@pytest.mark.parametrize("lib", ["torch", "chainrule"])
def test_has_torch_function_on_plain_values(lib: str) -> None:
    mod, t = (TF, torch.ones(2)) if lib == "torch" else (F, cr.ones(2))
    p = (torch.nn.Parameter if lib == "torch" else cr.nn.Parameter)(t.clone())
    for args in [(t,), (t, p), (1, None, 2.0), ()]:
        assert mod.has_torch_function(args) is False
        assert mod.has_torch_function_variadic(*args) is False
    assert mod.has_torch_function_unary(t) is False
    assert mod.has_torch_function((t, _Overrides())) is True
    assert mod.has_torch_function_unary(_Overrides()) is True
    assert mod.has_torch_function_variadic(t, _Overrides()) is True


def _public(a: Any) -> Any:
    return a


@pytest.mark.parametrize("lib", ["torch", "chainrule"])
def test_handle_torch_function_order_and_error(lib: str) -> None:
    mod = TF if lib == "torch" else F
    _Overrides.calls = []
    base, sub = _Overrides(), _Sub()
    # Subclasses first (NEP-18), whatever the argument order.
    assert mod.handle_torch_function(_public, (base, sub), base) == ("handled", "_Sub")
    func, types = _Overrides.calls[-1]
    assert func is _public and types == (_Sub, _Overrides)
    assert mod.handle_torch_function(_public, (_Declines(), base), 1) == ("handled", "_Overrides")
    with pytest.raises(TypeError) as e:
        mod.handle_torch_function(_public, (_Declines(),), 1)
    assert str(e.value).startswith("no implementation found for '") and "_public'" in str(e.value)


def test_handle_torch_function_error_text_matches_torch() -> None:
    with pytest.raises(TypeError) as te:
        TF.handle_torch_function(_public, (_Declines(),), 1)
    with pytest.raises(TypeError) as ce:
        F.handle_torch_function(_public, (_Declines(),), 1)
    assert str(ce.value) == str(te.value)


def test_boolean_dispatch() -> None:
    def yes(x: Any, flag: bool = False) -> str:
        """Doc of yes."""
        return f"yes {x}"

    def no(x: Any, flag: bool = False) -> str:
        return f"no {x}"

    for mod in (TF, F):
        fn = mod.boolean_dispatch("flag", 1, False, yes, no, "mymod", "fn")
        assert fn(1) == "no 1" and fn(1, True) == "yes 1" and fn(1, flag=True) == "yes 1"
        assert fn.__doc__ == "Doc of yes." and no.__doc__ == "Doc of yes."
        assert fn.__module__ == "mymod" and fn.__name__ == "fn"
        no.__doc__ = None

    def a() -> None:
        """A."""

    def b() -> None:
        """B."""

    for mod in (TF, F):
        with pytest.raises(RuntimeError, match="only one function can have a docstring"):
            mod.boolean_dispatch("f", 0, False, a, b, None, None)


def test_assert_int_or_pair() -> None:
    for mod in (TF, F):
        mod.assert_int_or_pair(3, "k", "{} bad")
        mod.assert_int_or_pair((1, 2), "k", "{} bad")
        with pytest.raises(AssertionError, match="^k bad$"):
            mod.assert_int_or_pair((1, 2, 3), "k", "{} bad")


def test_typing_names_and_notes() -> None:
    assert F.DType is TF.DType is int
    assert F.Optional is TF.Optional
    for n in ("BroadcastingList1", "BroadcastingList2", "BroadcastingList3"):
        assert getattr(F, n)[int] is None and getattr(TF, n)[int] is None
    assert F.reproducibility_notes == TF.reproducibility_notes
    assert F.tf32_notes == TF.tf32_notes
    assert F.sparse_support_notes == TF.sparse_support_notes


def test_lr_scheduler_reexports() -> None:
    C, T = cr.optim.lr_scheduler, torch.optim.lr_scheduler
    assert C.EPOCH_DEPRECATION_WARNING == T.EPOCH_DEPRECATION_WARNING
    assert C.inf == T.inf == math.inf
    assert C.Literal is T.Literal and C.Self is T.Self
    assert C.Tensor is cr.Tensor
    # The scheduler's own warning is that text.
    opt = cr.optim.SGD([cr.nn.Parameter(cr.zeros(1))], lr=0.1)
    sched = C.StepLR(opt, 2)
    with pytest.warns(UserWarning) as rec:
        sched.step(1)
    assert any(str(w.message) == C.EPOCH_DEPRECATION_WARNING for w in rec)


# grouped_mm ---------------------------------------------------------------------------------

OFFS = [3, 8]
LAYOUTS = {
    "2d-3d": ((10, 16), (2, 16, 8), OFFS),
    "3d-2d": ((2, 4, 16), (16, 16), OFFS),
    "2d-2d": ((4, 16), (16, 8), [8, 16]),
    "3d-3d": ((2, 4, 16), (2, 16, 8), None),
}


def _group_inputs(layout: str, dtype: str) -> tuple:
    sa, sb, offs = LAYOUTS[layout]
    g = torch.Generator().manual_seed(0)
    a = torch.randn(*sa, generator=g).to(getattr(torch, dtype)).requires_grad_(True)
    b = torch.randn(*sb, generator=g).to(getattr(torch, dtype)).requires_grad_(True)
    to = None if offs is None else torch.tensor(offs, dtype=torch.int32)
    ca = cr.tensor(a.detach().float().numpy()).to(getattr(cr, dtype)).requires_grad_(True)
    cb = cr.tensor(b.detach().float().numpy()).to(getattr(cr, dtype)).requires_grad_(True)
    co = None if offs is None else cr.tensor(offs, dtype=cr.int32)
    return a, b, to, ca, cb, co


def _valid(layout: str, out: Any) -> Any:
    """The part of the output PyTorch defines (its CPU kernel leaves what lies past offs[-1]
    uninitialised)."""
    if layout == "2d-3d":
        return out[:8]
    if layout == "3d-2d":
        return out[:, :8]
    return out


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_grouped_mm_matches_torch(layout: str, dtype: str) -> None:
    a, b, to, ca, cb, co = _group_inputs(layout, dtype)
    t = TF.grouped_mm(a, b, offs=to)
    c = F.grouped_mm(ca, cb, offs=co).detach()
    assert tuple(c.shape) == tuple(t.shape) and c.dtype == getattr(cr, dtype)
    tol = 1e-5 if dtype == "float32" else 2e-2
    np.testing.assert_allclose(
        _valid(layout, c).float().numpy(),
        _valid(layout, t).detach().float().numpy(),
        rtol=tol,
        atol=tol,
    )
    if layout in ("2d-3d", "3d-2d"):
        np.testing.assert_array_equal(
            c.float().numpy()[8:] if layout == "2d-3d" else c.float().numpy()[:, 8:], 0
        )


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_grouped_mm_gradients(layout: str) -> None:
    """Gradients against the per-group products written out in float64 torch."""
    a, b, _, ca, cb, co = _group_inputs(layout, "float32")
    c = F.grouped_mm(ca, cb, offs=co)
    w = np.random.default_rng(1).standard_normal(tuple(c.shape))
    (c * cr.tensor(w.astype(np.float32))).sum().backward()
    a64, b64 = a.detach().double().requires_grad_(True), b.detach().double().requires_grad_(True)
    ends = LAYOUTS[layout][2]
    starts = None if ends is None else [0, *ends[:-1]]
    if layout == "3d-3d":
        ref = a64 @ b64
    elif layout == "2d-2d":
        ref = torch.stack([a64[:, s:e] @ b64[s:e] for s, e in zip(starts, ends)])
    elif layout == "2d-3d":
        ref = torch.cat([a64[s:e] @ b64[g] for g, (s, e) in enumerate(zip(starts, ends))])
        ref = torch.cat([ref, torch.zeros(2, 8, dtype=torch.float64)])
    else:
        ref = torch.cat([a64[g] @ b64[:, s:e] for g, (s, e) in enumerate(zip(starts, ends))], 1)
        ref = torch.cat([ref, torch.zeros(4, 8, dtype=torch.float64)], 1)
    (ref * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ca.grad.numpy(), a64.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(cb.grad.numpy(), b64.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_grouped_mm_errors_match_torch() -> None:
    def r(lib: Any, *s: int, dt: str = "float32") -> Any:
        t = torch.randn(*s).to(getattr(torch, dt))
        return t if lib is torch else cr.tensor(t.float().numpy()).to(getattr(cr, dt))

    def offs(lib: Any, v: Any = (3, 8), dt: str = "int32") -> Any:
        return lib.tensor(list(v) if not isinstance(v, list) else v, dtype=getattr(lib, dt))

    cases = [
        lambda L, f: f(r(L, 8, 16, dt="float64"), r(L, 2, 16, 8, dt="float64"), offs=offs(L)),
        lambda L, f: f(r(L, 8, 16), r(L, 2, 16, 8, dt="bfloat16"), offs=offs(L)),
        lambda L, f: f(r(L, 16), r(L, 2, 16, 8), offs=offs(L)),
        lambda L, f: f(r(L, 8, 16), r(L, 2, 16, 8)),
        lambda L, f: f(r(L, 2, 4, 16), r(L, 2, 16, 8), offs=offs(L)),
        lambda L, f: f(r(L, 8, 16), r(L, 2, 8, 8), offs=offs(L)),
        lambda L, f: f(r(L, 8, 16), r(L, 2, 16, 6), offs=offs(L)),
        lambda L, f: f(r(L, 8, 16), r(L, 2, 16, 8), offs=offs(L, dt="int64")),
        lambda L, f: f(r(L, 8, 16), r(L, 2, 16, 8), offs=offs(L, [[3, 8]])),
        lambda L, f: f(r(L, 8, 16), r(L, 3, 16, 8), offs=offs(L)),
        lambda L, f: f(r(L, 2, 4, 16), r(L, 3, 16, 8)),
        lambda L, f: f(r(L, 8, 16), r(L, 2, 16, 8), offs=offs(L), bias=r(L, 2, 8)),
        lambda L, f: f(r(L, 8, 16), r(L, 2, 16, 8), offs=offs(L), out_dtype=L.bfloat16),
    ]
    for case in cases:
        with pytest.raises(RuntimeError) as te:
            case(torch, TF.grouped_mm)
        with pytest.raises(RuntimeError) as ce:
            case(cr, F.grouped_mm)
        assert str(ce.value) == str(te.value)
