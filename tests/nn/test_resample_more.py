"""grid_sample on 5-d inputs and in bicubic mode, interpolate(antialias=True): errors against
torch, and a larger case of each against torch (the op-table rows in
tests/opinfo/nn_resample.py compare small cases in both dtypes and run gradcheck)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule
from tests.nn._compare import close
from tests.nn.test_parametrize import same_err

ERRORS = {
    "bicubic_5d": lambda lib: lib.nn.functional.grid_sample(
        lib.ones(1, 2, 3, 4, 5), lib.zeros(1, 2, 2, 2, 3), mode="bicubic", align_corners=False
    ),
    "grid_last_dim": lambda lib: lib.nn.functional.grid_sample(
        lib.ones(1, 2, 3, 4, 5), lib.zeros(1, 2, 2, 2), align_corners=False
    ),
    "batch": lambda lib: lib.nn.functional.grid_sample(
        lib.ones(2, 2, 3, 3), lib.zeros(1, 2, 2, 2), mode="bicubic", align_corners=False
    ),
    "mode": lambda lib: lib.nn.functional.grid_sample(
        lib.ones(1, 2, 3, 4, 5), lib.zeros(1, 2, 2, 2, 3), mode="cubic", align_corners=False
    ),
    "aa_nearest": lambda lib: lib.nn.functional.interpolate(
        lib.ones(1, 2, 8, 8), size=4, mode="nearest", antialias=True
    ),
    "aa_3d": lambda lib: lib.nn.functional.interpolate(
        lib.ones(1, 2, 8), size=4, mode="linear", antialias=True
    ),
    "aa_trilinear": lambda lib: lib.nn.functional.interpolate(
        lib.ones(1, 2, 4, 4, 4), size=2, mode="trilinear", antialias=True
    ),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_torch(case):
    same_err(ERRORS[case])


CASES = {
    "trilinear": lambda F, x, g: F.grid_sample(x, g, padding_mode="border", align_corners=True),
    "bicubic": lambda F, x, g: F.grid_sample(
        x[:, :, 0],
        g[:, 0, :, :, :2],
        mode="bicubic",
        padding_mode="reflection",
        align_corners=False,
    ),
    "aa_bilinear": lambda F, x, g: F.interpolate(
        x[:, :, 1], scale_factor=0.3, mode="bilinear", antialias=True
    ),
    "aa_bicubic": lambda F, x, g: F.interpolate(
        x[:, :, 2], size=(5, 2), mode="bicubic", antialias=True
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_larger_cases_match_torch(case):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 11, 9)).astype(np.float32)
    g = rng.uniform(-1.1, 1.1, (2, 4, 5, 3, 3)).astype(np.float32)
    tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)
    cx, cg = chainrule.tensor(x, requires_grad=True), chainrule.tensor(g, requires_grad=True)
    to = CASES[case](torch.nn.functional, tx, tg)
    co = CASES[case](chainrule.nn.functional, cx, cg)
    close(co, to, "float32", "output")
    w = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    (to * torch.tensor(w)).sum().backward()
    (co * chainrule.tensor(w)).sum().backward()
    close(cx.grad, tx.grad, "float32", "grad input")
    if tg.grad is not None:
        close(cg.grad, tg.grad, "float32", "grad grid")
