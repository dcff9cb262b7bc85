"""OpInfo rows for chainrule/ops/special_functions.py (references: scipy.special). None is
differentiable in PyTorch 2.13 but zeta, in its second argument."""

from __future__ import annotations

import numpy as np
import scipy.special as sc

from tests.opinfo.core import OpInfo, Sample, elementwise


def _unary(name: str, ref, low: float = -6.0, high: float = 6.0) -> OpInfo:  # noqa: ANN001
    return OpInfo(
        name,
        lambda m, x: getattr(m.special, name)(x),
        ref=ref,
        differentiable=False,
        samples=elementwise(low=low, high=high),
    )


def _poly_samples(low: float, high: float):  # noqa: ANN202
    def gen(rng: np.random.Generator) -> list[Sample]:
        return [
            Sample((rng.uniform(low, high, (2, 3)), n), name=f"n={n}") for n in (0, 1, 2, 5, 12)
        ] + [Sample((rng.uniform(low, high, (2, 3)), np.array([0, 3, 7])), name="n tensor")]

    return gen


def _poly(name: str, ref, low: float = -1.0, high: float = 1.0) -> OpInfo:  # noqa: ANN001
    return OpInfo(
        name,
        lambda m, x, n: getattr(m.special, name)(
            x, m.tensor(n) if isinstance(n, np.ndarray) else n
        ),
        ref=None if ref is None else (lambda x, n: ref(n, x).astype(x.dtype)),
        differentiable=False,
        samples=_poly_samples(low, high),
    )


OPS = [
    # Ai, J and Y are PyTorch's kernels, some 1e-8 from SciPy's in float64: torch is their
    # reference (the differential test of every row)
    _unary("airy_ai", None),
    _unary("bessel_j0", None),
    _unary("bessel_j1", None),
    _unary("bessel_y0", None, low=0.1),
    _unary("bessel_y1", None, low=0.1),
    _unary("modified_bessel_i0", sc.i0),
    _unary("modified_bessel_i1", sc.i1),
    _unary("modified_bessel_k0", sc.k0, low=0.1),
    _unary("modified_bessel_k1", sc.k1, low=0.1),
    _unary("scaled_modified_bessel_k0", sc.k0e, low=0.1),
    _unary("scaled_modified_bessel_k1", sc.k1e, low=0.1),
    _unary("spherical_bessel_j0", lambda x: sc.spherical_jn(0, x)),
    _poly("chebyshev_polynomial_t", sc.eval_chebyt),
    _poly("chebyshev_polynomial_u", sc.eval_chebyu),
    _poly("chebyshev_polynomial_v", None),
    _poly("chebyshev_polynomial_w", None),
    _poly("shifted_chebyshev_polynomial_t", sc.eval_sh_chebyt, 0.0),
    _poly("shifted_chebyshev_polynomial_u", sc.eval_sh_chebyu, 0.0),
    _poly("shifted_chebyshev_polynomial_v", None, 0.0),
    _poly("shifted_chebyshev_polynomial_w", None, 0.0),
    _poly("hermite_polynomial_h", sc.eval_hermite, -2.0, 2.0),
    _poly("hermite_polynomial_he", sc.eval_hermitenorm, -2.0, 2.0),
    _poly("laguerre_polynomial_l", sc.eval_laguerre, 0.0, 4.0),
    _poly("legendre_polynomial_p", sc.eval_legendre),
    OpInfo(
        "special_zeta",
        lambda m, x, q: m.special.zeta(x, q),
        ref=sc.zeta,
        covers=("special_zeta",),
        samples=lambda rng: [
            Sample((rng.uniform(1.5, 5, (2, 3)), rng.uniform(0.5, 3, (2, 3))), no_grad=(0,)),
            Sample((rng.uniform(1.5, 5, (3,)), rng.uniform(0.5, 3, (2, 3))), no_grad=(0,)),
        ],
    ),
    OpInfo(
        "special_zeta_scalar_self",
        lambda m, q: m.special.zeta(2.5, q),
        ref=lambda q: sc.zeta(2.5, q).astype(q.dtype),
        samples=lambda rng: [Sample((rng.uniform(0.5, 3, (2, 3)),))],
    ),
    OpInfo(
        "special_zeta_scalar_other",
        lambda m, x: m.special.zeta(x, 1.5),
        ref=lambda x: sc.zeta(x, 1.5).astype(x.dtype),
        # PyTorch has no derivative in x (the backward raises: tests/test_special_more.py)
        samples=lambda rng: [Sample((rng.uniform(1.5, 5, (2, 3)),), no_grad=(0,))],
    ),
]
