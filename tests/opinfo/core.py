"""OpInfo rows and sample generators.

A row's ``call(m, *args, **kwargs)`` is written once against the PyTorch API and is run with
``m = chainrule`` and ``m = torch``: the differential test compares the two. Samples hold NumPy
arrays; floating arrays become inputs that require grad, other arrays (indices, masks) do not.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable

import numpy as np


@dataclasses.dataclass
class Sample:
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    name: str = ""
    # Indices of float array args that should NOT require grad (e.g. a target).
    no_grad: tuple[int, ...] = ()


@dataclasses.dataclass
class OpInfo:
    name: str
    call: Callable[..., Any]
    samples: Callable[[np.random.Generator], Iterable[Sample]]
    ref: Callable[..., Any] | None = None
    covers: tuple[str, ...] = ()
    gradcheck: bool = True
    gradgradcheck: bool = True
    torch: bool = True
    differentiable: bool = True
    atol: float = 1e-5
    rtol: float = 1.3e-4
    gc_atol: float = 1e-5
    gc_rtol: float = 1e-3
    dtypes: tuple[str, ...] = ("float32", "float64")

    def __post_init__(self) -> None:
        if not self.covers:
            self.covers = (self.name,)


def elementwise(
    low: float = -3.0,
    high: float = 3.0,
    avoid: tuple[float, ...] = (),
    shapes: tuple[tuple[int, ...], ...] = ((5,), (2, 3), ()),
    transposed: bool = True,
) -> Callable[[np.random.Generator], list[Sample]]:
    """Samples for a unary elementwise op: several shapes, a 0-d, a transposed input."""

    def gen(rng: np.random.Generator) -> list[Sample]:
        out = []
        for s in shapes:
            out.append(Sample((_uniform(rng, s, low, high, avoid),), name=str(s)))
        if transposed:
            out.append(Sample((_uniform(rng, (3, 4), low, high, avoid).T,), name="transposed"))
        out.append(Sample((_uniform(rng, (0, 3), low, high, avoid),), name="empty"))
        return out

    return gen


def binary_samples(
    low: float = -3.0,
    high: float = 3.0,
    low_b: float | None = None,
    high_b: float | None = None,
    avoid_b: tuple[float, ...] = (),
    scalar: float | None = 1.5,
) -> Callable[[np.random.Generator], list[Sample]]:
    """Samples for a binary op: same shape, broadcasting both ways, a scalar operand."""
    lb = low if low_b is None else low_b
    hb = high if high_b is None else high_b

    def gen(rng: np.random.Generator) -> list[Sample]:
        out = [
            Sample(
                (_uniform(rng, (2, 3), low, high), _uniform(rng, (2, 3), lb, hb, avoid_b)),
                name="same",
            ),
            Sample(
                (_uniform(rng, (2, 3), low, high), _uniform(rng, (3,), lb, hb, avoid_b)),
                name="bcast_b",
            ),
            Sample(
                (_uniform(rng, (4, 1), low, high), _uniform(rng, (1, 3), lb, hb, avoid_b)),
                name="bcast_both",
            ),
            Sample((_uniform(rng, (), low, high), _uniform(rng, (2,), lb, hb, avoid_b)), name="0d"),
        ]
        if scalar is not None:
            out.append(Sample((_uniform(rng, (2, 3), low, high), scalar), name="scalar"))
        return out

    return gen


def reductions(
    shape: tuple[int, ...] = (3, 4),
    dims: tuple[Any, ...] = (None, 0, -1, (0, 1)),
    keepdim: tuple[bool, ...] = (False, True),
    low: float = -3.0,
    high: float = 3.0,
) -> Callable[[np.random.Generator], list[Sample]]:
    """Samples for a reduction over ``dim`` with ``keepdim``."""

    def gen(rng: np.random.Generator) -> list[Sample]:
        out = []
        for d in dims:
            for k in keepdim:
                if d is None and k:
                    continue
                kw: dict[str, Any] = {} if d is None else {"dim": d, "keepdim": k}
                out.append(Sample((_uniform(rng, shape, low, high),), kw, name=f"dim={d},k={k}"))
        return out

    return gen


def _uniform(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    low: float,
    high: float,
    avoid: tuple[float, ...] = (),
) -> np.ndarray:
    a = rng.uniform(low, high, shape)
    for v in avoid:
        near = np.abs(a - v) < 0.1
        a[near] = v + 0.25
    return a


def samples_of(*samples: Sample) -> Callable[[np.random.Generator], list[Sample]]:
    """Fixed samples (arrays are used as given)."""
    return lambda rng: list(samples)
