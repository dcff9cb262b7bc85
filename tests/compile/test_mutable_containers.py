"""chainrule.compile and mutable containers (Note [mutable containers] in
chainrule/_compile/guards.py): a list, dict or set that a call reads as Python values, changed
in place or replaced between calls, re-captures instead of replaying a stale program; a
container the call itself changes is changed on every call, as eagerly."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn

SHAPE = [2, 8]
CFG: dict[str, Any] = {"k": 2.0}
HISTORY: list[Any] = []


class _Reads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        cr.manual_seed(0)
        self.lin = nn.Linear(4, 4)
        self.shape = [2, 8]
        self.cfg = {"k": 2.0, "neg": False}
        self.drop = {1}

    def forward(self, x: Any) -> Any:
        y = self.lin(x).reshape(self.shape) * self.cfg["k"]
        if self.cfg["neg"]:
            y = -y
        return y[:, sorted(self.drop)]


def _arr(t: Any) -> np.ndarray:
    return t.detach().numpy()


CHANGES: dict[str, Callable[[Any], None]] = {
    "list item": lambda m: m.shape.__setitem__(0, 8) or m.shape.__setitem__(1, 2),
    "list replaced": lambda m: setattr(m, "shape", [4, 4]),
    "dict value": lambda m: m.cfg.__setitem__("k", 5.0),
    "dict flag": lambda m: m.cfg.__setitem__("neg", True),
    "dict key added": lambda m: m.cfg.__setitem__("extra", 1),
    "set item": lambda m: m.drop.add(0),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_module_container_changed_between_calls(change: str) -> None:
    a, b = _Reads(), _Reads()
    f = cr.compile(a)
    x = cr.randn(4, 4)
    for _ in range(3):
        np.testing.assert_array_equal(_arr(f(x)), _arr(b(x)))
    assert f.stats["replays"] == 1
    CHANGES[change](a)
    CHANGES[change](b)
    for _ in range(3):
        np.testing.assert_array_equal(_arr(f(x)), _arr(b(x)))
    # the change is a new signature: captured twice, then replayed
    assert f.stats["captures"] == 4 and f.stats["replays"] == 2


def _uses_globals(x: Any) -> Any:
    return x.reshape(SHAPE) * CFG["k"]


def test_a_global_container_changed_in_place() -> None:
    f = cr.compile(_uses_globals)
    x = cr.randn(4, 4)
    try:
        for shape, k in (([2, 8], 2.0), ([8, 2], 2.0), ([8, 2], 3.0), ([2, 8], 2.0)):
            SHAPE[:] = shape
            CFG["k"] = k
            for _ in range(3):
                np.testing.assert_array_equal(_arr(f(x)), _arr(_uses_globals(x)))
    finally:
        SHAPE[:] = [2, 8]
        CFG["k"] = 2.0
    # three signatures, each captured twice; the fourth setting is the first's again
    assert f.stats["captures"] == 6 and f.stats["replays"] == 6


def _records(x: Any) -> Any:
    y = (x * 2).sum()
    HISTORY.append(y)
    return y


def test_a_container_the_call_appends_to_is_appended_to_on_every_call() -> None:
    from chainrule._compile.api import RECOMPILE_LIMIT

    HISTORY.clear()
    f = cr.compile(_records)
    x = cr.ones(3)
    n = RECOMPILE_LIMIT + 4
    outs = [float(f(x)) for _ in range(n)]
    assert outs == [6.0] * n
    assert len(HISTORY) == n and all(float(h) == 6.0 for h in HISTORY)
    assert f.stats["replays"] == 0  # a replay would skip the append
    assert f.stats["limited"] == 4
    HISTORY.clear()


class _Config:
    def __init__(self) -> None:
        self.k = 2.0
        self.calls = 0
        self.name = "a"


CONF = _Config()


def _uses_config(x: Any) -> Any:
    return x * CONF.k if CONF.name == "a" else x - CONF.k


def _counts(x: Any) -> Any:
    CONF.calls += 1
    return x * 3


def test_a_plain_objects_attributes_are_guarded() -> None:
    import argparse

    args = argparse.Namespace(scale=2.0, shift=(1, 2))

    def step(x: Any) -> Any:
        return x * args.scale + args.shift[1]

    f, g = cr.compile(step), cr.compile(_uses_config)
    x = cr.randn(3)
    try:
        for scale, k, name in ((2.0, 2.0, "a"), (0.5, 3.0, "a"), (0.5, 3.0, "b")):
            args.scale, CONF.k, CONF.name = scale, k, name
            for _ in range(3):
                np.testing.assert_array_equal(_arr(f(x)), _arr(step(x)))
                np.testing.assert_array_equal(_arr(g(x)), _arr(_uses_config(x)))
    finally:
        CONF.k, CONF.name = 2.0, "a"
    assert f.stats["captures"] == 4 and f.stats["replays"] == 5  # the third setting: same args
    assert g.stats["captures"] == 6 and g.stats["replays"] == 3


def test_a_counter_the_call_increments_counts_every_call() -> None:
    CONF.calls = 0
    f = cr.compile(_counts)
    for _ in range(12):
        f(cr.ones(2))
    assert CONF.calls == 12 and f.stats["replays"] == 0
