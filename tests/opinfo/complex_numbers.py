"""Rows for ops/complex_numbers.py and the Wirtinger VJPs of the core ops on complex tensors.

The op table's samples are real arrays, so each row builds its complex tensor inside the call:
an input of shape (..., 2) is viewed as complex (``view_as_complex``), and a complex result
is viewed back as real (``view_as_real``). gradcheck in float64 then runs every VJP on
complex128 tensors, and the PyTorch comparison checks the Wirtinger gradients as PyTorch
defines them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def c(m: Any, x: Any) -> Any:
    """The complex view of a (..., 2) real tensor."""
    return m.view_as_complex(x)


def r(m: Any, y: Any) -> Any:
    """A complex result viewed as real (..., 2); a real one as it is."""
    return m.view_as_real(y.resolve_conj()) if y.is_complex() else y


def cplx(*shapes: tuple[int, ...], low: float = -2.0, high: float = 2.0, name: str = "") -> Any:
    """Samples of complex inputs (as (..., 2) real arrays) of the given shapes."""

    def gen(rng: np.random.Generator) -> list[Sample]:
        args = tuple(rng.uniform(low, high, s + (2,)) for s in shapes)
        return [Sample(args, name=name or "x".join(map(str, shapes[0])) or "scalar")]

    return gen


def _away_from_zero(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    mag = rng.uniform(0.5, 2.0, shape)
    ang = rng.uniform(-3.0, 3.0, shape)
    return np.stack([mag * np.cos(ang), mag * np.sin(ang)], -1)


def nonzero(*shapes: tuple[int, ...]) -> Any:
    def gen(rng: np.random.Generator) -> list[Sample]:
        return [Sample(tuple(_away_from_zero(rng, s) for s in shapes))]

    return gen


OPS = [
    OpInfo("real", lambda m, x: r(m, c(m, x).real * 1.0), samples=cplx((3, 2))),
    OpInfo("imag", lambda m, x: r(m, c(m, x).imag * 1.0), samples=cplx((3, 2))),
    OpInfo(
        "view_as_real",
        lambda m, x: m.view_as_real(c(m, x) * 2.0),
        covers=("view_as_real", "view_as_complex"),
        samples=cplx((2, 3)),
    ),
    OpInfo(
        "view_as_real_copy",
        lambda m, x: m.view_as_real_copy(c(m, x) * (1 + 1j)),
        covers=(),
        samples=cplx((3,)),
    ),
    OpInfo(
        "complex",
        lambda m, a, b: r(m, m.complex(a, b)),
        samples=lambda rng: [
            Sample((rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, (2, 3)))),
            Sample((rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, (3,))), name="bcast"),
        ],
    ),
    OpInfo(
        "polar",
        lambda m, a, b: r(m, m.polar(a, b)),
        covers=(),
        samples=lambda rng: [Sample((rng.uniform(0.5, 2, (2, 3)), rng.uniform(-3, 3, (2, 3))))],
    ),
    OpInfo("conj", lambda m, x: r(m, c(m, x).conj() * 1.0), samples=cplx((4,))),
    OpInfo("conj_physical", lambda m, x: r(m, m.conj_physical(c(m, x))), samples=cplx((4,))),
    # The core ops on complex tensors (Note [Wirtinger gradients]).
    OpInfo(
        "complex_mul", lambda m, a, b: r(m, c(m, a) * c(m, b)), covers=(), samples=cplx((3,), (3,))
    ),
    OpInfo(
        "complex_mul_real",
        lambda m, a, b: r(m, c(m, a) * b),
        covers=(),
        samples=lambda rng: [Sample((rng.uniform(-2, 2, (3, 2)), rng.uniform(-2, 2, (3,))))],
    ),
    OpInfo(
        "complex_add",
        lambda m, a, b: r(m, c(m, a) + c(m, b) - 1j),
        covers=(),
        samples=cplx((3,), (3,)),
    ),
    OpInfo(
        "complex_div",
        lambda m, a, b: r(m, c(m, a) / c(m, b)),
        covers=(),
        samples=nonzero((3,), (3,)),
    ),
    OpInfo("complex_rdiv", lambda m, a: r(m, (2 - 1j) / c(m, a)), covers=(), samples=nonzero((3,))),
    OpInfo("complex_exp", lambda m, a: r(m, m.exp(c(m, a))), covers=(), samples=cplx((3,))),
    OpInfo("complex_log", lambda m, a: r(m, m.log(c(m, a))), covers=(), samples=nonzero((3,))),
    OpInfo("complex_sqrt", lambda m, a: r(m, m.sqrt(c(m, a))), covers=(), samples=nonzero((3,))),
    OpInfo(
        "complex_reciprocal",
        lambda m, a: r(m, m.reciprocal(c(m, a))),
        covers=(),
        samples=nonzero((3,)),
    ),
    OpInfo("complex_abs", lambda m, a: m.abs(c(m, a)), covers=(), samples=nonzero((2, 3))),
    OpInfo("complex_angle", lambda m, a: m.angle(c(m, a)), covers=(), samples=nonzero((2, 3))),
    OpInfo(
        "complex_trig",
        lambda m, a: r(m, m.sin(c(m, a)) + m.cos(c(m, a)) * m.tanh(c(m, a))),
        covers=(),
        samples=cplx((3,), low=-1, high=1),
    ),
    OpInfo(
        "complex_more_unary",
        lambda m, a: r(
            m,
            m.expm1(c(m, a))
            + m.log1p(c(m, a))
            + m.log2(c(m, a))
            + m.log10(c(m, a))
            + m.rsqrt(c(m, a))
            + m.tan(c(m, a))
            + m.sinh(c(m, a))
            + m.cosh(c(m, a))
            + m.asin(c(m, a) * 0.5)
            + m.acos(c(m, a) * 0.5)
            + m.atan(c(m, a) * 0.5),
        ),
        covers=(),
        samples=nonzero((3,)),
    ),
    OpInfo(
        "complex_pow",
        lambda m, a, b: r(m, c(m, a) ** 3 + c(m, a) ** (0.5 + 1j) + c(m, a) ** c(m, b)),
        covers=(),
        samples=nonzero((3,), (3,)),
    ),
    OpInfo(
        "complex_sum_mean",
        lambda m, a: r(m, c(m, a).sum(0) * c(m, a).mean()),
        covers=(),
        samples=cplx((3, 2)),
    ),
    OpInfo(
        "complex_matmul",
        lambda m, a, b: r(m, c(m, a) @ c(m, b)),
        covers=(),
        samples=lambda rng: [
            Sample((rng.uniform(-1, 1, (2, 3, 2)), rng.uniform(-1, 1, (3, 4, 2))), name="mm"),
            Sample((rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (2, 3, 2, 2))), name="vec_bmm"),
            Sample((rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (3, 2))), name="dot"),
        ],
    ),
    OpInfo(
        "complex_matmul_t",
        lambda m, a, b: r(m, c(m, a) @ c(m, b).transpose(0, 1)),
        covers=(),
        samples=lambda rng: [
            Sample((rng.uniform(-1, 1, (2, 3, 2)), rng.uniform(-1, 1, (4, 3, 2))))
        ],
    ),
    OpInfo(
        "complex_sgn_adjoint",
        lambda m, a: r(m, m.sgn(c(m, a)).adjoint()),
        covers=(),
        samples=nonzero((2, 3)),
    ),
]

# Complex gradients of the activations, inverse hyperbolic functions and products
# (docs/complex.md, "Gradients").
OPS += [
    OpInfo(
        "complex_sigmoid_exp2_sinc",
        lambda m, a: r(m, m.sigmoid(c(m, a)) + m.exp2(c(m, a)) * m.sinc(c(m, a) * 0.5)),
        covers=(),
        samples=cplx((3,), low=-1, high=1),
    ),
    OpInfo(
        "complex_inverse_hyperbolic",
        lambda m, a: r(m, m.asinh(c(m, a)) + m.acosh(c(m, a) + 2.0) * m.atanh(c(m, a) * 0.5)),
        covers=(),
        samples=nonzero((3,)),
    ),
    OpInfo(
        "complex_prod",
        lambda m, a: r(m, m.prod(c(m, a)) + m.prod(c(m, a), 0).sum() * m.prod(c(m, a), 1)),
        covers=(),
        samples=nonzero((3, 4)),
    ),
    OpInfo(
        "complex_prod_zeros",
        # one zero in column 0, two in column 1, none elsewhere: every branch of the VJP
        lambda m, a: r(
            m,
            m.prod(
                c(m, a)
                * m.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 1.0]], device=a.device),
                0,
            ),
        ),
        covers=(),
        samples=nonzero((3, 3)),
    ),
    OpInfo(
        "complex_cumprod",
        lambda m, a: r(
            m,
            m.cumprod(c(m, a), 1)
            + m.cumprod(
                c(m, a) * m.tensor([[1.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]], device=a.device), 1
            ),
        ),
        covers=(),
        samples=nonzero((2, 4)),
    ),
    OpInfo(
        "complex_logsumexp",
        lambda m, a: r(m, m.logsumexp(c(m, a), 1)),
        covers=(),
        samples=cplx((2, 3), low=-1, high=1),
    ),
    OpInfo(
        # imaginary parts up to 6: the shift is the max of the real parts (PyTorch's), so the
        # result's imaginary part is the principal log's, not off by 2 pi
        "complex_logsumexp_wide_phase",
        lambda m, a: r(m, m.logsumexp(c(m, a), 0)),
        covers=(),
        samples=cplx((4, 3), low=-6, high=6),
    ),
    OpInfo(
        # weights on both sides of |w| = 0.5 (lerp's two formulas); VJPs conjugate each partial
        "complex_lerp",
        lambda m, a, b, w: r(m, m.lerp(c(m, a), c(m, b), c(m, w))),
        covers=(),
        samples=cplx((2, 3), (2, 3), (2, 3), low=-0.8, high=0.8),
    ),
    OpInfo(
        # complex beta and alpha: their conjugates scale the gradients
        "complex_addmm_scalars",
        lambda m, x, a, b: (
            r(m, m.addmm(c(m, x), c(m, a), c(m, b), beta=0.5 + 1j, alpha=2 - 1j)),
            r(m, m.baddbmm(c(m, x), c(m, a)[None], c(m, b)[None], beta=-1j, alpha=0.5j)),
            r(m, m.addmv(c(m, x)[:, 0], c(m, a), c(m, b)[:, 0], beta=1 + 1j, alpha=1j)),
        ),
        covers=(),
        samples=cplx((2, 3), (2, 4), (4, 3)),
    ),
    OpInfo(
        "complex_lerp_scalar_weight",
        lambda m, a, b: (
            r(m, m.lerp(c(m, a), c(m, b), 0.3 - 0.2j)),
            r(m, m.lerp(c(m, a), c(m, b), 0.6 + 0.4j)),
        ),
        covers=(),
        samples=cplx((3,), (3,)),
    ),
    OpInfo(
        "complex_logcumsumexp",
        lambda m, a: r(m, m.logcumsumexp(c(m, a), 1)),
        covers=("logcumsumexp_complex",),
        samples=cplx((2, 4), low=-2, high=2),
    ),
]


def _sq(rng: np.random.Generator, n: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    """A well-conditioned complex n x n matrix as a (..., n, n, 2) real array."""
    a = rng.uniform(-1, 1, batch + (n, n, 2))
    a[..., np.arange(n), np.arange(n), 0] += 3.0
    return a


def _svd_inv(m: Any, a: Any) -> Any:
    # phase-invariant functions of the singular vectors: U diag(S) Vh, |U|^2, |Vh|^2, S
    U, S, Vh = m.linalg.svd(c(m, a), full_matrices=False)  # noqa: N806
    return (
        r(m, (U * S.unsqueeze(-2)) @ Vh),
        (U * U.conj()).real,
        (Vh * Vh.conj()).real,
        S,
        m.linalg.svdvals(c(m, a)),
    )


# Complex gradients of the linalg primitives (PyTorch's formulas with conjugate transposes).
OPS += [
    OpInfo(
        "complex_inv_det",
        lambda m, a: (
            r(m, m.linalg.inv(c(m, a))),
            r(m, m.linalg.det(c(m, a))),
            r(m, m.linalg.slogdet(c(m, a))[0]),
            m.linalg.slogdet(c(m, a))[1],
        ),
        covers=(),
        samples=lambda rng: [
            Sample((_sq(rng, 3),), name="3x3"),
            Sample((_sq(rng, 2, (2,)),), name="batch"),
        ],
    ),
    OpInfo(
        "complex_solve",
        lambda m, a, b, v: (
            r(m, m.linalg.solve(c(m, a), c(m, b))),
            r(m, m.linalg.solve(c(m, a), c(m, v))),
        ),
        covers=(),
        samples=lambda rng: [
            Sample((_sq(rng, 3), rng.uniform(-1, 1, (3, 2, 2)), rng.uniform(-1, 1, (3, 2))))
        ],
    ),
    OpInfo(
        "complex_svd",
        _svd_inv,
        covers=(),
        samples=lambda rng: [
            Sample((rng.uniform(-1, 1, (3, 3, 2)),), name="square"),
            Sample((rng.uniform(-1, 1, (4, 2, 2)),), name="tall"),
            Sample((rng.uniform(-1, 1, (2, 2, 4, 2)),), name="wide_batch"),
        ],
    ),
    OpInfo(
        "complex_pinv_lstsq",
        lambda m, a, b: (
            r(m, m.linalg.pinv(c(m, a))),
            r(m, m.pinverse(c(m, a))),
            r(m, m.linalg.lstsq(c(m, a), c(m, b)).solution),
            r(m, m.linalg.lstsq(c(m, a).mT, c(m, b)[:2]).solution),
        ),
        covers=(),
        samples=lambda rng: [
            Sample((rng.uniform(-1, 1, (4, 2, 2)), rng.uniform(-1, 1, (4, 3, 2))), name="tall")
        ],
    ),
    OpInfo(
        "complex_cholesky_triangular",
        lambda m, a, b: (
            r(m, m.linalg.cholesky(c(m, a) @ c(m, a).mH + m.eye(3, device=a.device))),
            r(m, m.linalg.solve_triangular(c(m, a), c(m, b), upper=True)),
            r(m, m.linalg.solve_triangular(c(m, a), c(m, b).mT, upper=False, left=False)),
            r(m, m.linalg.solve_triangular(c(m, a), c(m, b), upper=False, unitriangular=True)),
            r(
                m,
                m.cholesky_solve(
                    c(m, b), m.linalg.cholesky(c(m, a) @ c(m, a).mH + m.eye(3, device=a.device))
                ),
            ),
        ),
        covers=(),
        samples=lambda rng: [Sample((_sq(rng, 3), rng.uniform(-1, 1, (3, 2, 2))))],
    ),
    OpInfo(
        "complex_vdot",
        lambda m, a, b: r(m, m.vdot(c(m, a), c(m, b))),
        covers=(),
        samples=cplx((3,), (3,)),
    ),
]


def _eig_c(m: Any, a: Any) -> Any:
    # eigenvalues and the phase-invariant |V|^2 of a complex matrix (first and second order)
    L, V = m.linalg.eig(c(m, a))  # noqa: N806
    return r(m, L), (V * V.conj()).real, r(m, m.linalg.eigvals(c(m, a)))


OPS.append(
    OpInfo(
        "complex_eig",
        _eig_c,
        covers=(),
        samples=lambda rng: [
            Sample((rng.uniform(-1, 1, (3, 3, 2)),), name="3x3"),
            Sample((rng.uniform(-1, 1, (2, 2, 2, 2)),), name="batch"),
        ],
    )
)

# var/std (real results), vector norms of every ord and logdet of complex input.
OPS += [
    OpInfo(
        "complex_var_std",
        lambda m, a: (
            m.var(c(m, a)),
            m.std(c(m, a), 1),
            m.var(c(m, a), 0, correction=0, keepdim=True),
        ),
        covers=(),
        samples=cplx((3, 4)),
    ),
    OpInfo(
        "complex_vector_norm",
        lambda m, a: tuple(
            m.linalg.vector_norm(c(m, a), ord, dim=1) for ord in (1, 2, 3, 0.5, float("inf"))
        ),
        covers=(),
        samples=nonzero((2, 3)),
    ),
    OpInfo(
        "complex_logdet",
        lambda m, a: r(m, m.logdet(c(m, a))),
        covers=(),
        # a batch: a 0-d complex result meets NumPy scalar arithmetic in eager mode, whose
        # division can differ by an ulp from the compiled replay's 0-d arrays
        samples=lambda rng: [Sample((_sq(rng, 3, (2,)),), name="batch")],
    ),
]

OPS.append(
    OpInfo(
        "complex_matrix_exp",
        # the second term's norm passes theta_13: the scaling-and-squaring branch
        lambda m, a: (r(m, m.linalg.matrix_exp(c(m, a))), r(m, m.matrix_exp(c(m, a) * 3.0))),
        covers=(),
        samples=lambda rng: [
            Sample((rng.uniform(-1, 1, (3, 3, 2)),), name="3x3"),
            Sample((rng.uniform(-1, 1, (2, 2, 2, 2)),), name="batch"),
        ],
    )
)

OPS += [
    OpInfo(
        "complex_qr",
        # LAPACK's R has a real diagonal, so Q and R are unique: both outputs are compared
        lambda m, a: tuple(r(m, t) for t in m.linalg.qr(c(m, a))),
        covers=(),
        samples=lambda rng: [
            Sample((rng.uniform(-1, 1, (4, 3, 2)),), name="tall"),
            Sample((rng.uniform(-1, 1, (3, 3, 2)),), name="square"),
            Sample((rng.uniform(-1, 1, (2, 3, 4, 2)),), name="wide_batch"),
        ],
    ),
    OpInfo(
        "complex_lu_rectangular",
        lambda m, a: tuple(r(m, t) for t in m.linalg.lu(c(m, a))[1:]),
        covers=(),
        samples=lambda rng: [
            Sample((rng.uniform(-1, 1, (3, 5, 2)),), name="wide"),
            Sample((rng.uniform(-1, 1, (2, 5, 3, 2)),), name="tall_batch"),
        ],
    ),
    OpInfo(
        "complex_lu_factor",
        lambda m, a, b: (
            r(m, m.linalg.lu_factor(c(m, a)).LU),
            r(m, m.linalg.lu_solve(*m.linalg.lu_factor(c(m, a)), c(m, b))),
        ),
        covers=(),
        samples=lambda rng: [
            Sample((_sq(rng, 3), rng.uniform(-1, 1, (3, 2, 2))), name="3x3"),
            Sample((_sq(rng, 2, (2,)), rng.uniform(-1, 1, (2, 2, 1, 2))), name="batch"),
        ],
    ),
]
