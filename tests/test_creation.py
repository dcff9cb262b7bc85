"""Factory functions whose values must agree with PyTorch's to the bit."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")

CASES = [
    (-1, 1, 40),
    (0, 1, 7),
    (0.3, 7.1, 101),
    (-5, 3.3, 1000),
    (2, -2, 9),
    (0, 1, 2),
    (1e-3, 1e3, 33),
    (0, 1, 1),
    (0, 1, 0),
    (-7.7, 1e5, 1234),
]


# float16 cannot hold 1e5 (torch raises, chainrule gives inf): that end is left out there.
PAIRS = [
    (c, d)
    for c in CASES
    for d in ("float32", "float64", "float16", "int64", "int32")
    if not (d == "float16" and max(abs(c[0]), abs(c[1])) > 65504)
]


@pytest.mark.parametrize("case,dtype", PAIRS)
def test_linspace_bitwise_as_torch(case, dtype):
    start, end, steps = case
    ours = cr.linspace(start, end, steps, dtype=getattr(cr, dtype)).numpy()
    theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


def test_linspace_errors_as_torch():
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        cr.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="linspace"):
        cr.linspace(0, 1, 2.5)
