"""OpInfo rows for chainrule/nn/_resample_more.py: ``grid_sample`` on 5-d inputs and with
``mode="bicubic"``, and ``interpolate(antialias=True)``."""

from __future__ import annotations

from tests.opinfo.core import OpInfo, Sample


def _gs(m, x, g, **kw):
    return m.nn.functional.grid_sample(x, g, **kw)


def _grid_samples(rng):
    out = []
    for pad, ac in (("zeros", False), ("border", True), ("reflection", False)):
        kw = {"padding_mode": pad, "align_corners": ac}
        out.append(
            Sample(
                (rng.uniform(-1, 1, (1, 2, 3, 2, 2)), rng.uniform(-1.2, 1.2, (1, 1, 2, 2, 3))),
                {"mode": "bilinear", **kw},
                name=f"3d_{pad}",
            )
        )
    for pad, ac in (("zeros", True), ("border", False), ("reflection", True)):
        kw = {"padding_mode": pad, "align_corners": ac}
        out.append(
            Sample(
                (rng.uniform(-1, 1, (1, 2, 4, 3)), rng.uniform(-1.3, 1.3, (1, 2, 2, 2))),
                {"mode": "bicubic", **kw},
                name=f"bicubic_{pad}",
            )
        )
    # Nearest is piecewise constant in the grid: only the input is differentiated.
    out.append(
        Sample(
            (rng.uniform(-1, 1, (1, 2, 3, 2, 2)), rng.uniform(-1.2, 1.2, (1, 1, 2, 2, 3))),
            {"mode": "nearest", "padding_mode": "reflection", "align_corners": False},
            no_grad=(1,),
            name="3d_nearest",
        )
    )
    return out


def _grid_samples_small(rng):
    return [
        Sample(
            (rng.uniform(-1, 1, (1, 1, 2, 3, 2)), rng.uniform(-1.1, 1.1, (1, 1, 1, 2, 3))),
            {"padding_mode": "reflection", "align_corners": False},
            name="3d",
        ),
        Sample(
            (rng.uniform(-1, 1, (1, 1, 3, 3)), rng.uniform(-1.1, 1.1, (1, 1, 2, 2))),
            {"mode": "bicubic", "padding_mode": "border", "align_corners": True},
            name="bicubic",
        ),
    ]


def _aa(m, x, **kw):
    return m.nn.functional.interpolate(x, antialias=True, **kw)


def _aa_samples(rng):
    out = []
    for mode in ("bilinear", "bicubic"):
        for name, kw in (
            ("down", {"size": (3, 2)}),
            ("up", {"size": (7, 5)}),
            ("scale", {"scale_factor": (0.4, 1.7)}),
            ("corners", {"size": (3, 4), "align_corners": True}),
        ):
            out.append(
                Sample(
                    (rng.uniform(-1, 1, (1, 2, 6, 5)),), {"mode": mode, **kw}, name=f"{mode}_{name}"
                )
            )
    return out


OPS = [
    # gradgradcheck on the tiny samples of the next row only: it is slow on these graphs.
    OpInfo("grid_sample_more", _gs, samples=_grid_samples, covers=(), gradgradcheck=False),
    OpInfo("grid_sample_more_small", _gs, samples=_grid_samples_small, covers=()),
    OpInfo("interpolate_antialias", _aa, samples=_aa_samples, covers=()),
]
