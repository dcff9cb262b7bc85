"""Rows for ops/spectral.py (the three DFT primitives), through chainrule.fft's functions.

Complex inputs and outputs travel as (..., 2) real arrays (tests/opinfo/complex_numbers.py),
so gradcheck runs the VJPs in complex128 and the PyTorch test compares Wirtinger gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.opinfo.complex_numbers import c, r
from tests.opinfo.core import OpInfo, Sample


def _fn(name: str, complex_in: bool, **kw: Any) -> Any:
    def call(m: Any, x: Any) -> Any:
        return r(m, getattr(m.fft, name)(c(m, x) if complex_in else x, **kw))

    return call


def _real(*shapes: tuple[int, ...]) -> Any:
    def gen(rng: np.random.Generator) -> list[Sample]:
        return [Sample((rng.uniform(-1, 1, s),), name="x".join(map(str, s))) for s in shapes]

    return gen


def _cplx(*shapes: tuple[int, ...]) -> Any:
    def gen(rng: np.random.Generator) -> list[Sample]:
        return [Sample((rng.uniform(-1, 1, s + (2,)),), name="x".join(map(str, s))) for s in shapes]

    return gen


def _rows() -> list[OpInfo]:
    rows = []
    specs: list[tuple[str, str, bool, dict[str, Any], Any]] = [
        ("fft_c2c", "fft", True, {}, _cplx((5,), (2, 4))),
        ("fft_c2c_n_ortho", "fft", True, {"n": 7, "norm": "ortho"}, _cplx((2, 5))),
        ("fft_c2c_real_in", "fft", False, {"n": 3, "dim": 0}, _real((4, 3))),
        ("ifft", "ifft", True, {"norm": "forward"}, _cplx((6,))),
        ("fft2", "fft2", True, {"s": (3, 5)}, _cplx((2, 4, 4))),
        ("ifftn", "ifftn", True, {"dim": (0, 2), "norm": "ortho"}, _cplx((3, 2, 4))),
        ("fft_r2c", "rfft", False, {}, _real((6,), (3, 5))),
        ("rfft_n_forward", "rfft", False, {"n": 9, "norm": "forward"}, _real((2, 6))),
        ("rfft2", "rfft2", False, {"norm": "ortho"}, _real((3, 4))),
        ("rfftn", "rfftn", False, {"s": (3, 4), "dim": (1, 0)}, _real((4, 5))),
        ("ihfft", "ihfft", False, {}, _real((7,))),
        ("ihfftn", "ihfftn", False, {"norm": "ortho"}, _real((3, 4))),
        ("fft_c2r", "irfft", True, {}, _cplx((5,), (2, 4))),
        ("irfft_n_odd", "irfft", True, {"n": 7, "norm": "ortho"}, _cplx((3, 4))),
        ("irfft_n_trim", "irfft", True, {"n": 4, "norm": "forward"}, _cplx((6,))),
        ("irfft2", "irfft2", True, {}, _cplx((3, 4))),
        ("irfftn", "irfftn", True, {"s": (4, 5)}, _cplx((3, 3))),
        ("hfft", "hfft", True, {}, _cplx((5,))),
        ("hfft_n_ortho", "hfft", True, {"n": 6, "norm": "ortho"}, _cplx((2, 4))),
        ("hfftn", "hfftn", True, {"s": (3, 6)}, _cplx((2, 4))),
        ("hfft2", "hfft2", True, {"norm": "forward"}, _cplx((3, 3))),
    ]
    for row, fname, cin, kw, samples in specs:
        covers = (row,) if row.startswith("fft_") and row.count("_") == 1 else ()
        rows.append(OpInfo(row, _fn(fname, cin, **kw), samples=samples, covers=covers))
    rows += [
        OpInfo("fftshift", lambda m, x: m.fft.fftshift(x), covers=(), samples=_real((4, 5))),
        OpInfo(
            "ifftshift", lambda m, x: m.fft.ifftshift(x, dim=1), covers=(), samples=_real((3, 5))
        ),
        OpInfo(
            "fftshift_complex",
            lambda m, x: r(m, m.fft.fftshift(c(m, x), dim=(0,))),
            covers=(),
            samples=_cplx((5, 2)),
        ),
    ]
    return rows


OPS = _rows()
