"""OpInfo rows for chainrule/ops/linalg/ and chainrule/linalg.py."""

from __future__ import annotations

import math

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def _u(rng, *s):
    return rng.uniform(-1, 1, s)


def _mm_samples(rng):
    u = lambda *s: _u(rng, *s)  # noqa: E731
    return [
        Sample((u(2, 3), u(3, 4)), name="2d"),
        Sample((u(3), u(3)), name="dot"),
        Sample((u(2, 3), u(3)), name="mv"),
        Sample((u(3), u(3, 2)), name="vm"),
        Sample((u(2, 2, 3), u(3, 4)), name="batch_a"),
        Sample((u(3), u(2, 3, 4)), name="v_batch"),
        Sample((u(2, 1, 2, 3), u(3, 3, 2)), name="bcast"),
        Sample((u(4, 2).T, u(4, 6)[:, ::2]), name="noncontig"),
        Sample((u(0, 3), u(3, 2)), name="empty"),
    ]


def _wellcond(rng, *shape):
    """Random square matrices, diagonally dominated so they are far from singular."""
    n = shape[-1]
    return rng.uniform(-1, 1, shape) + 3 * np.eye(n)


def _square_samples(rng):
    return [
        Sample((_wellcond(rng, 3, 3),), name="3x3"),
        Sample((_wellcond(rng, 2, 3, 3),), name="batch"),
        Sample((_wellcond(rng, 1, 1),), name="1x1"),
        Sample((_wellcond(rng, 3, 3).T,), name="noncontig"),
        Sample((_wellcond(rng, 3, 3) - 6 * np.eye(3),), name="neg_det"),
    ]


def _spd(rng, *shape):
    a = rng.uniform(-1, 1, shape)
    return a @ np.swapaxes(a, -1, -2) + np.eye(shape[-1])


def _solve_samples(rng):
    return [
        Sample((_wellcond(rng, 3, 3), _u(rng, 3)), name="vec"),
        Sample((_wellcond(rng, 3, 3), _u(rng, 3, 2)), name="mat"),
        Sample((_wellcond(rng, 2, 3, 3), _u(rng, 2, 3)), name="batch_vec"),
        Sample((_wellcond(rng, 2, 3, 3), _u(rng, 2, 3, 4)), name="batch_mat"),
        Sample((_wellcond(rng, 2, 3, 3), _u(rng, 3, 4)), name="bcast_b"),
        Sample((_wellcond(rng, 3, 3), _u(rng, 2, 3, 1)), name="bcast_a"),
        Sample((_wellcond(rng, 3, 3), _u(rng, 2, 3)), {"left": False}, name="right"),
    ]


def _einsum_samples(rng):
    u = lambda *s: _u(rng, *s)  # noqa: E731
    return [
        Sample(("ij,jk->ik", u(2, 3), u(3, 4)), name="mm"),
        Sample(("ij,jk", u(2, 3), u(3, 4)), name="implicit"),
        Sample(("bij,bjk->bik", u(2, 2, 3), u(2, 3, 2)), name="bmm"),
        Sample(("...ij,...jk->...ik", u(2, 2, 3), u(3, 2)), name="ellipsis"),
        Sample(("i,j->ij", u(3), u(4)), name="outer"),
        Sample(("ij->", u(2, 3)), name="sum_all"),
        Sample(("ij->j", u(2, 3)), name="sum_dim"),
        Sample(("ij->ji", u(2, 3)), name="transpose"),
        Sample(("ii->i", u(3, 3)), name="diag"),
        Sample(("ii", u(3, 3)), name="trace"),
        Sample(("iij,jk->ik", u(2, 2, 3), u(3, 2)), name="diag_contract"),
        Sample(("ij,jk,kl->il", u(2, 3), u(3, 4), u(4, 2)), name="chain3"),
        Sample(("ij,jk,kl,lm->im", u(2, 2), u(2, 3), u(3, 2), u(2, 2)), name="chain4"),
        Sample(("a,b,c,d,e->abcde", u(2), u(1), u(2), u(2), u(1)), name="outer5"),
        Sample(("a,a,a,a,a,a->", u(3), u(3), u(3), u(3), u(3), u(3)), name="dot6"),
        Sample(("i j , j k -> i k", u(2, 3), u(3, 2)), name="spaces"),
        Sample(("bi,bi->b", u(4, 3).T, u(3, 4)), name="noncontig"),
        Sample(("ij,j->i", u(2, 3), u(1)), name="bcast_size1"),
    ]


def _addmm_samples(rng):
    return [
        Sample((_u(rng, 2, 4), _u(rng, 2, 3), _u(rng, 3, 4)), name="plain"),
        Sample(
            (_u(rng, 4), _u(rng, 2, 3), _u(rng, 3, 4)),
            {"beta": 0.5, "alpha": 2.0},
            name="bcast_scaled",
        ),
        Sample((_u(rng, 1, 1), _u(rng, 3, 2).T, _u(rng, 3, 4)), {"alpha": -1.0}, name="noncontig"),
    ]


def _matrix_norm_samples(rng):
    out = []
    for o in ("fro", math.inf, -math.inf, 1, -1, "nuc", 2, -2):
        out.append(Sample((_u(rng, 3, 4),), {"ord": o}, name=f"ord={o}"))
        out.append(
            Sample(
                (_u(rng, 2, 3, 4),),
                {"ord": o, "dim": (0, 2), "keepdim": True},
                name=f"ord={o},dims",
            )
        )
    return out


def _linalg_norm_samples(rng):
    return [
        Sample((_u(rng, 3, 4),), {}, name="default"),
        Sample((_u(rng, 2, 3, 4),), {}, name="3d_default"),
        Sample((_u(rng, 5),), {"ord": 3}, name="vec_ord3"),
        Sample((_u(rng, 5),), {"ord": math.inf}, name="vec_inf"),
        Sample((_u(rng, 3, 4),), {"ord": "fro"}, name="fro"),
        Sample((_u(rng, 3, 4),), {"ord": math.inf}, name="mat_inf"),
        Sample((_u(rng, 3, 4),), {"ord": 1, "dim": 1}, name="dim_int"),
        Sample((_u(rng, 2, 3, 4),), {"ord": -1, "dim": (2, 1)}, name="mat_dims"),
        Sample((_u(rng, 3, 4),), {"dim": (0, 1), "keepdim": True}, name="keepdim"),
    ]


def _vector_norm_samples(rng):
    out = []
    for o in (2, 1, 0.5, 3, math.inf, -math.inf, 0):
        out.append(Sample((_u(rng, 3, 4),), {"ord": o}, name=f"ord={o}"))
        out.append(
            Sample(
                (_u(rng, 2, 3, 4),),
                {"ord": o, "dim": (-1, 0), "keepdim": True},
                name=f"ord={o},dims",
            )
        )
    out.append(Sample((_u(rng, 4, 3).T,), {"dim": 1}, name="noncontig"))
    out.append(Sample((_u(rng, 0, 3),), {"dim": 0}, name="empty"))
    return out


def _svd_invariants(r):
    """Sign-independent functions of (U, S, Vh): S, U Vh and the leading rank-1 term."""
    k = r.S.shape[-1]
    u, vh = r.U[..., :, :k], r.Vh[..., :k, :]
    # S is cloned: autograd.grad with one root's node below another root's fails in the
    # engine today (KeyError in run_backward's discovery; reported to the lead).
    return r.S.clone(), u @ vh, u[..., :, :1] * vh[..., :1, :]


def _svd_samples_plain(rng):
    return [
        Sample((_u(rng, 3, 2),), name="tall"),
        Sample((_u(rng, 2, 4),), name="wide"),
        Sample((_u(rng, 3, 3),), name="square"),
        Sample((_u(rng, 2, 3, 2),), name="batch"),
        Sample((_u(rng, 4, 3).T,), name="noncontig"),
    ]


def _svd_samples(rng):
    out = [Sample(s.args, {"full_matrices": False}, name=s.name) for s in _svd_samples_plain(rng)]
    out += [Sample((_u(rng, 3, 2),), name="full_tall"), Sample((_u(rng, 2, 3),), name="full_wide")]
    return out


OPS = [
    OpInfo("matmul", lambda m, a, b: a @ b, ref=np.matmul, samples=_mm_samples),
    OpInfo(
        "mm",
        lambda m, a, b: m.mm(a, b),
        ref=np.matmul,
        samples=lambda rng: [
            Sample((_u(rng, 2, 3), _u(rng, 3, 4)), name="2d"),
            Sample((_u(rng, 3, 2).T, _u(rng, 3, 5)[:, ::2]), name="noncontig"),
            Sample((_u(rng, 1, 3), _u(rng, 3, 1)), name="size1"),
            Sample((_u(rng, 0, 3), _u(rng, 3, 2)), name="empty"),
            Sample((_u(rng, 2, 0), _u(rng, 0, 2)), name="empty_inner"),
        ],
    ),
    OpInfo(
        "bmm",
        lambda m, a, b: a.bmm(b),
        ref=np.matmul,
        samples=lambda rng: [
            Sample((_u(rng, 2, 2, 3), _u(rng, 2, 3, 4)), name="3d"),
            Sample((_u(rng, 2, 3, 2).transpose(0, 2, 1), _u(rng, 2, 3, 1)), name="noncontig"),
            Sample((_u(rng, 0, 2, 3), _u(rng, 0, 3, 4)), name="empty"),
        ],
    ),
    OpInfo(
        "mv",
        lambda m, a, b: m.mv(a, b),
        ref=np.matmul,
        samples=lambda rng: [
            Sample((_u(rng, 2, 3), _u(rng, 3)), name="2d"),
            Sample((_u(rng, 3, 2).T, _u(rng, 6)[::2]), name="noncontig"),
        ],
    ),
    OpInfo(
        "dot",
        lambda m, a, b: a.dot(b),
        ref=np.dot,
        samples=lambda rng: [
            Sample((_u(rng, 3), _u(rng, 3)), name="1d"),
            Sample((_u(rng, 6)[::2], _u(rng, 3)), name="noncontig"),
            Sample((_u(rng, 0), _u(rng, 0)), name="empty"),
        ],
    ),
    OpInfo(
        "outer",
        lambda m, a, b: m.outer(a, b),
        ref=np.outer,
        covers=("mul", "unsqueeze"),
        samples=lambda rng: [
            Sample((_u(rng, 3), _u(rng, 4)), name="1d"),
            Sample((_u(rng, 6)[::2], _u(rng, 1)), name="noncontig"),
        ],
    ),
    OpInfo(
        "einsum",
        lambda m, eq, *xs: m.einsum(eq, *xs),
        samples=_einsum_samples,
        covers=("einsum1", "einsum", "einsum3", "einsum4", "einsum5", "einsum6", "einsum_diag"),
        ref=lambda eq, *xs: np.einsum(eq.replace(" ", ""), *xs),
    ),
    OpInfo(
        "einsum_list",
        lambda m, a, b: m.einsum("ij,jk->ik", [a, b]),
        covers=("einsum",),
        samples=lambda rng: [Sample((_u(rng, 2, 3), _u(rng, 3, 2)))],
    ),
    OpInfo("addmm", lambda m, x, a, b, **kw: m.addmm(x, a, b, **kw), samples=_addmm_samples),
    OpInfo(
        "addmv",
        lambda m, x, a, b, **kw: x.addmv(a, b, **kw),
        samples=lambda rng: [
            Sample((_u(rng, 2), _u(rng, 2, 3), _u(rng, 3)), name="plain"),
            Sample(
                (_u(rng, 1), _u(rng, 3, 2).T, _u(rng, 3)),
                {"beta": 2.0, "alpha": 0.5},
                name="scaled",
            ),
        ],
    ),
    OpInfo(
        "baddbmm",
        lambda m, x, a, b, **kw: m.baddbmm(x, a, b, **kw),
        samples=lambda rng: [
            Sample((_u(rng, 2, 2, 4), _u(rng, 2, 2, 3), _u(rng, 2, 3, 4)), name="plain"),
            Sample(
                (_u(rng, 4), _u(rng, 2, 2, 3), _u(rng, 2, 3, 4)),
                {"beta": -1.0, "alpha": 3.0},
                name="bcast_scaled",
            ),
        ],
    ),
    OpInfo("linalg_inv", lambda m, a: m.linalg.inv(a), ref=np.linalg.inv, samples=_square_samples),
    OpInfo(
        "inverse",
        lambda m, a: (m.inverse(a), a.inverse()),
        covers=("linalg_inv",),
        samples=lambda rng: [Sample((_wellcond(rng, 3, 3),))],
    ),
    OpInfo("linalg_det", lambda m, a: m.linalg.det(a), ref=np.linalg.det, samples=_square_samples),
    OpInfo(
        "det",
        lambda m, a: (m.det(a), a.det()),
        covers=("linalg_det",),
        samples=lambda rng: [Sample((_wellcond(rng, 2, 3, 3),))],
    ),
    OpInfo("linalg_slogdet", lambda m, a: tuple(m.linalg.slogdet(a)), samples=_square_samples),
    OpInfo(
        "slogdet_logdet",
        lambda m, a: (*m.slogdet(a), a.logdet(), m.logdet(a)),
        covers=("linalg_slogdet",),
        samples=lambda rng: [
            Sample((_spd(rng, 3, 3),), name="spd"),
            Sample((_spd(rng, 2, 3, 3),), name="batch"),
        ],
    ),
    OpInfo(
        "linalg_solve", lambda m, a, b, **kw: m.linalg.solve(a, b, **kw), samples=_solve_samples
    ),
    OpInfo(
        "linalg_norm",
        lambda m, a, **kw: m.linalg.norm(a, **kw),
        covers=("vector_norm",),
        samples=_linalg_norm_samples,
    ),
    OpInfo(
        "linalg_vector_norm",
        lambda m, a, **kw: m.linalg.vector_norm(a, **kw),
        covers=("vector_norm",),
        samples=_vector_norm_samples,
    ),
    OpInfo(
        "linalg_matrix_norm",
        lambda m, a, **kw: m.linalg.matrix_norm(a, **kw),
        covers=("vector_norm", "amax", "amin"),
        samples=_matrix_norm_samples,
    ),
    OpInfo(
        "linalg_vecdot",
        lambda m, a, b, **kw: m.linalg.vecdot(a, b, **kw),
        covers=("mul", "sum"),
        samples=lambda rng: [
            Sample((_u(rng, 2, 3), _u(rng, 3)), name="bcast"),
            Sample((_u(rng, 2, 3), _u(rng, 2, 3)), {"dim": 0}, name="dim0"),
        ],
    ),
    OpInfo(
        "linalg_multi_dot",
        lambda m, *xs: m.linalg.multi_dot(xs),
        samples=lambda rng: [
            Sample((_u(rng, 2, 3), _u(rng, 3, 4), _u(rng, 4, 2)), name="mats"),
            Sample((_u(rng, 3), _u(rng, 3, 4), _u(rng, 4)), name="vecs"),
            Sample((_u(rng, 3), _u(rng, 3, 2)), name="two"),
        ],
    ),
    OpInfo(
        "linalg_matmul", lambda m, a, b: m.linalg.matmul(a, b), ref=np.matmul, samples=_mm_samples
    ),
    OpInfo(
        "linalg_svd",
        lambda m, a, **kw: _svd_invariants(m.linalg.svd(a, **kw)),
        samples=_svd_samples,
    ),
    OpInfo(
        "linalg_svdvals",
        lambda m, a: m.linalg.svdvals(a),
        covers=("linalg_svd",),
        ref=lambda a: np.linalg.svd(a, compute_uv=False),
        samples=_svd_samples_plain,
    ),
    OpInfo(
        "norm_nuc",
        lambda m, a, **kw: m.norm(a, "nuc", **kw),
        covers=("linalg_svd",),
        samples=lambda rng: [
            Sample((_u(rng, 3, 2),), name="2d"),
            Sample((_u(rng, 2, 3, 4),), {"dim": (0, 2), "keepdim": True}, name="dims"),
        ],
    ),
]
