"""Anomaly detection: ``detect_anomaly`` / ``set_detect_anomaly``.

While enabled, every recorded node keeps the Python traceback of the forward call that created
it (``ops._registry._record`` calls ``record_trace``), and the engine calls ``check_nan`` on the
gradients each such node returns: a NaN raises an error that names the node and includes that
forward traceback. Differs from torch: the traceback is part of the error message instead of a
separate warning, and entering the mode does not warn. With the mode off, the only cost on the
hot path is one list-element test in ``_record``.
"""

from __future__ import annotations

import traceback
from typing import Any

from chainrule import _kinds
from chainrule.autograd.graph import Node

__all__ = [
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
]

_check_nan = [True]


# Whether anomaly detection is on: a one-element list that the ops' records read on every
# call (ops/_record.py and ops/_record_gen.py import it).
_anomaly_enabled = [False]


def _flag() -> list[bool]:
    return _anomaly_enabled


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return _flag()[0]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks backward outputs for NaN."""
    return _check_nan[0]


def record_trace(node: Node, drop: int = 2) -> None:
    """Remember where ``node`` was created (called by ``_record`` while the mode is on;
    ``drop``: the innermost frames to leave out, this function's and the recorder's)."""
    stack = traceback.format_stack()[:-drop]
    md = node.metadata
    if md is None:
        md = node.metadata = {}
    node._fast = None  # the engine's full path checks anomaly metadata
    md["_anomaly"] = True
    md["traceback_"] = "".join(stack)


def check_nan(node: Node, outs: Any, create_graph: bool) -> None:
    """Raise if any gradient ``node`` returned holds a NaN (anomaly mode only)."""
    if not _check_nan[0]:
        return
    import numpy as np

    for i, g in enumerate(outs):
        if g is None:
            continue
        a = g._data if create_graph and hasattr(g, "_data") else g
        if _kinds.is_inexact(a) and np.isnan(a).any():
            md = node.metadata or {}
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {i}th output. "
                "Traceback of the forward call that created it:\n" + md.get("traceback_", "")
            )


class set_detect_anomaly:
    """Turn anomaly detection on or off; as a context manager, restore the old state on exit.

    ``check_nan``: also check backward outputs for NaN (the default).
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        f = _flag()
        self.prev = (f[0], _check_nan[0])
        f[0] = bool(mode)
        _check_nan[0] = bool(check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _flag()[0], _check_nan[0] = self.prev


class detect_anomaly:
    """Context manager (or decorator) enabling anomaly detection inside its block.

    Example:
        >>> import chainrule as torch
        >>> x = torch.tensor([0.0], requires_grad=True)
        >>> with torch.autograd.detect_anomaly():
        ...     y = (x.sqrt() * 0).sum()   # d sqrt(x)/dx at 0 is inf; inf * 0 = nan
        ...     y.backward()               # doctest: +SKIP
        Traceback (most recent call last):
        RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output. ...
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self.prev: list[tuple[bool, bool]] = []

    def __enter__(self) -> None:
        f = _flag()
        self.prev.append((f[0], _check_nan[0]))
        f[0] = True
        _check_nan[0] = self.check_nan

    def __exit__(self, *exc: object) -> None:
        _flag()[0], _check_nan[0] = self.prev.pop()

    def __call__(self, func: Any) -> Any:
        import functools

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(self.check_nan):
                return func(*args, **kwargs)

        return wrapper
