"""Module backward hooks (register_full_backward_hook / _pre_hook): each scenario runs with torch
then chainrule, and the log of what the hooks received, the gradients and the node names must be
the same."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import pytest
import torch

import chainrule


def _val(g: Any) -> Any:
    return None if g is None else g.tolist()


def _both(scenario: Callable[[Any], Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = scenario(torch)
        got = scenario(chainrule)
    assert got == expected


class _Two:
    """A module with three positional inputs (two Tensors, one int) and two outputs."""

    @staticmethod
    def make(lib: Any) -> Any:
        class M(lib.nn.Module):
            def forward(self, x: Any, y: Any, k: int) -> Any:
                return x * k, x * y

        return M()


def test_full_hook_args_order_and_replacement() -> None:
    def scenario(lib: Any) -> Any:
        log: list[Any] = []
        m = _Two.make(lib)
        m.register_full_backward_pre_hook(
            lambda mod, go: log.append(("pre1", [_val(g) for g in go]))
        )

        def pre2(mod: Any, go: Any) -> Any:
            log.append(("pre2", [_val(g) for g in go]))
            return (go[0] * 3, go[1])

        m.register_full_backward_pre_hook(pre2)

        def full(mod: Any, gi: Any, go: Any) -> Any:
            log.append(("full", mod is m, [_val(g) for g in gi], [_val(g) for g in go]))
            return (gi[0] * 10, gi[1], gi[2])

        m.register_full_backward_hook(full)
        m.register_full_backward_hook(
            lambda mod, gi, go: log.append(("first", [_val(g) for g in gi])), prepend=True
        )
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0])
        a, b = m(x, y, 2)
        log.append((a.grad_fn.name(), b.grad_fn.name()))
        (a.sum() + (b * 2).sum()).backward()
        log.append(_val(x.grad))
        return log

    _both(scenario)


def test_fires_once_and_handles_remove() -> None:
    def scenario(lib: Any) -> Any:
        log: list[Any] = []
        m = lib.nn.Linear(2, 3)
        with lib.no_grad():
            m.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
            m.bias.zero_()
        h = m.register_full_backward_hook(
            lambda mod, gi, go: log.append(("full", [_val(g) for g in gi], [_val(g) for g in go]))
        )
        x = lib.tensor([[1.0, -1.0]], requires_grad=True)
        out = m(x)
        (out * lib.tensor([[1.0, 2.0, 3.0]])).sum().backward()
        h.remove()
        m(x).sum().backward()
        log.append(_val(x.grad))
        return log

    _both(scenario)


def test_no_input_requires_grad() -> None:
    def scenario(lib: Any) -> Any:
        log: list[Any] = []
        m = lib.nn.Linear(2, 1)
        m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, [_val(g) for g in go])))
        m(lib.ones(1, 2)).sum().backward()
        return log

    _both(scenario)
    m = chainrule.nn.Linear(2, 1)
    m.register_full_backward_hook(lambda mod, gi, go: None)
    with pytest.warns(UserWarning, match="Full backward hook is firing when gradients"):
        m(chainrule.ones(1, 2)).sum().backward()


@pytest.mark.parametrize("pre", [False, True])
def test_wrong_number_of_grads(pre: bool) -> None:
    def scenario(lib: Any) -> Any:
        m = lib.nn.Linear(2, 1)
        if pre:
            m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
        else:
            m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        try:
            m(lib.ones(1, 2, requires_grad=True)).sum().backward()
        except RuntimeError as e:
            return str(e)
        return None

    _both(scenario)


def test_forward_hooks_run_inside_and_output_node() -> None:
    def scenario(lib: Any) -> Any:
        log: list[Any] = []
        m = lib.nn.ReLU()
        m.register_forward_hook(lambda mod, args, out: out * 2)
        m.register_full_backward_hook(
            lambda mod, gi, go: log.append(([_val(g) for g in gi], [_val(g) for g in go]))
        )
        x = lib.tensor([-1.0, 2.0], requires_grad=True)
        out = m(x)
        log.append(out.grad_fn.name())
        out.sum().backward()
        log.append(_val(x.grad))
        return log

    _both(scenario)


def test_unhooked_module_has_plain_grad_fn() -> None:
    m = chainrule.nn.Linear(2, 2)
    out = m(chainrule.ones(1, 2, requires_grad=True))
    assert out.grad_fn.name() == torch.nn.Linear(2, 2)(torch.ones(1, 2)).grad_fn.name()


def test_non_tensor_output_warns() -> None:
    class M(chainrule.nn.Module):
        def forward(self, x: Any) -> Any:
            return [x]

    m = M()
    m.register_full_backward_hook(lambda *a: None)
    with pytest.warns(UserWarning, match="module output should be a Tensor or a tuple"):
        m(chainrule.ones(1, requires_grad=True))


def test_deprecated_backward_hook_and_mixing() -> None:
    def scenario(lib: Any) -> Any:
        log: list[Any] = []
        m = lib.nn.Linear(2, 1)
        with lib.no_grad():
            m.weight.copy_(lib.tensor([[2.0, 3.0]]))
        m.register_backward_hook(
            lambda mod, gi, go: log.append(
                (
                    mod is m,
                    len(gi),
                    [None if g is None else g.shape[-1] for g in gi],
                    [_val(g) for g in go],
                )
            )
        )
        x = lib.tensor([[1.0, 1.0]], requires_grad=True)
        (m(x) * 4).sum().backward()
        log.append(_val(x.grad))
        try:
            m.register_full_backward_hook(lambda *a: None)
        except RuntimeError as e:
            log.append(str(e))
        f = lib.nn.ReLU()
        f.register_full_backward_hook(lambda *a: None)
        try:
            f.register_backward_hook(lambda *a: None)
        except RuntimeError as e:
            log.append(str(e))
        return log

    _both(scenario)
