"""nn.functional's helper names (chainrule/nn/_functional_helpers.py) and lr_scheduler's
re-exports, against PyTorch's: the ``__torch_function__`` helpers on plain tensors and on
overriding objects, boolean_dispatch, assert_int_or_pair, the typing names and note tables."""

from __future__ import annotations

import math
from typing import Any

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
