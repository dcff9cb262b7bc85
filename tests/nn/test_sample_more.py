"""interpolate's bicubic / trilinear / area modes, grid_sample and affine_grid against torch
(values and gradients of the input and the grid, float32 and float64) and gradcheck in
float64."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn.functional as CF
from chainrule.autograd import gradcheck, gradgradcheck
from tests.nn._compare import DT, close, compare_backward, error_of, to_cr

TF = torch.nn.functional
DTYPES = ["float32", "float64"]


def _pair(shape: tuple[int, ...], dtype: str, seed: int, lo: float | None = None) -> Any:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) if lo is None else rng.uniform(lo, -lo, shape)
    t = torch.tensor(a.astype(DT[dtype][0]), requires_grad=True)
    return t, to_cr(t)


INTERP = [
    ((2, 3, 5, 6), dict(size=(7, 4), mode="bicubic")),
    ((2, 3, 5, 6), dict(size=(3, 9), mode="bicubic", align_corners=True)),
    ((1, 2, 4, 5), dict(scale_factor=1.7, mode="bicubic")),
    ((1, 2, 4, 5), dict(scale_factor=(0.6, 2.5), mode="bicubic", recompute_scale_factor=True)),
    ((2, 2, 3, 4, 5), dict(size=(5, 3, 7), mode="trilinear")),
    ((1, 2, 3, 4, 2), dict(scale_factor=2, mode="trilinear", align_corners=True)),
    ((2, 3, 9), dict(size=4, mode="area")),
    ((2, 3, 7, 9), dict(size=(3, 4), mode="area")),
    ((1, 2, 5, 6, 7), dict(scale_factor=0.5, mode="area")),
    ((2, 3, 7), dict(size=11, mode="linear")),
    ((2, 3, 4, 5), dict(scale_factor=1.5, mode="nearest")),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(INTERP)))
def test_interpolate_modes_match_torch(case: int, dtype: str) -> None:
    shape, kw = INTERP[case]
    tx, cx = _pair(shape, dtype, case)
    to, co = TF.interpolate(tx, **kw), CF.interpolate(cx, **kw)
    close(co, to, dtype, "output")
    compare_backward([co], [to], {"x": cx}, {"x": tx}, dtype, case)


def test_interpolate_mode_errors_match_torch() -> None:
    x4, x5 = torch.zeros(1, 1, 3, 3), torch.zeros(1, 1, 2, 2, 2)
    for x, kw in (
        (x5, dict(mode="bicubic")),
        (x4, dict(mode="trilinear")),
        (x4, dict(mode="area", align_corners=True)),
    ):
        te = error_of(lambda: TF.interpolate(x, size=2, **kw))
        ce = error_of(lambda: CF.interpolate(to_cr(x), size=2, **kw))
        assert te is not None and ce is not None and te[0] is ce[0]
        assert ce[1].split(" input")[0] == te[1].split(" input")[0]
    up = chainrule.nn.Upsample(scale_factor=2, mode="bicubic")
    x = np.random.default_rng(0).standard_normal((1, 1, 3, 4))
    close(
        up(chainrule.tensor(x)),
        torch.nn.Upsample(scale_factor=2, mode="bicubic")(torch.tensor(x)),
        "float64",
    )


GRID = [
    (m, p, ac)
    for m in ("bilinear", "nearest")
    for p in ("zeros", "border", "reflection")
    for ac in (False, True)
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode,padding_mode,align_corners", GRID)
def test_grid_sample_matches_torch(
    mode: str, padding_mode: str, align_corners: bool, dtype: str
) -> None:
    tx, cx = _pair((2, 3, 5, 6), dtype, 1)
    tg, cg = _pair((2, 4, 3, 2), dtype, 2, lo=-1.6)  # points outside [-1, 1] too
    to = TF.grid_sample(tx, tg, mode, padding_mode, align_corners)
    co = CF.grid_sample(cx, cg, mode, padding_mode, align_corners)
    close(co, to, dtype, "output")
    if mode == "nearest":
        compare_backward([co], [to], {"x": cx}, {"x": tx}, dtype)
        assert cg.grad is None and not tg.grad.any()  # torch: zeros, chainrule: no path
        return
    compare_backward([co], [to], {"x": cx, "grid": cg}, {"x": tx, "grid": tg}, dtype)


def test_grid_sample_gradcheck() -> None:
    rng = np.random.default_rng(5)
    x = chainrule.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
    # Away from integer pixel positions, where bilinear sampling is smooth.
    g = chainrule.tensor(rng.uniform(-1.2, 1.2, (1, 2, 3, 2)), requires_grad=True)
    for pm in ("zeros", "border", "reflection"):

        def f(a: Any, b: Any, pm: str = pm) -> Any:
            return CF.grid_sample(a, b, "bilinear", pm, False)

        assert gradcheck(f, (x, g))
        assert gradgradcheck(lambda a: f(a, g), (x,))


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_matches_torch(align_corners: bool) -> None:
    for shape, size in (((2, 2, 3), (2, 3, 4, 5)), ((2, 3, 4), (2, 1, 3, 2, 4))):
        tt, ct = _pair(shape, "float64", 3)
        to = TF.affine_grid(tt, size, align_corners)
        co = CF.affine_grid(ct, size, align_corners)
        close(co, to, "float64")
        compare_backward([co], [to], {"t": ct}, {"t": tt}, "float64")
    ct = chainrule.tensor(np.random.default_rng(0).standard_normal((1, 2, 3)), requires_grad=True)
    assert gradcheck(lambda t: CF.affine_grid(t, (1, 1, 2, 3), align_corners), (ct,))
    te = error_of(lambda: TF.affine_grid(torch.zeros(1, 3, 4), (1, 1, 2, 2), False))
    ce = error_of(lambda: CF.affine_grid(chainrule.zeros(1, 3, 4), (1, 1, 2, 2), False))
    assert ce is not None and te is not None and ce[0] is te[0]
    assert ce[1].split(" Got")[0] == te[1].split(" Got")[0]
