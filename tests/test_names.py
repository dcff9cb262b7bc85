"""The torch and Tensor names added for issue 15's coverage (ops/numeric.py, ops/scattering.py,
ops/aliases.py, _methods/names.py, _layout.py, _switches.py ..., _nn_forms.py,
_linalg_legacy.py): values, gradients, dtypes and errors against PyTorch. The registered ops
and the main composites also have op-table rows (tests/opinfo/numeric.py, scattering.py)."""

from __future__ import annotations

import pickle
import warnings
from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _to(m: Any, a: Any, rg: bool) -> Any:
    if isinstance(a, np.ndarray):
        t = m.tensor(a)
        if rg and a.dtype.kind == "f":
            t.requires_grad_(True)
        return t
    return a


def _flat(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _flat(o)]
    return [out]


def _np(t: Any) -> np.ndarray:
    return np.asarray(t._data) if hasattr(t, "_data") else t.detach().numpy()


def both(
    fn: Callable[..., Any], *arrays: Any, grad: bool = True, rtol: float = 1e-6, atol: float = 1e-7
) -> None:
    """Run ``fn(m, *tensors)`` with m = chainrule and torch; compare outputs, dtypes and the
    gradients of a weighted sum of the float outputs."""
    c_in = [_to(cr, a, grad) for a in arrays]
    t_in = [_to(torch, a, grad) for a in arrays]
    c_out, t_out = _flat(fn(cr, *c_in)), _flat(fn(torch, *t_in))
    assert len(c_out) == len(t_out)
    for c, t in zip(c_out, t_out):
        if not hasattr(t, "dtype"):
            assert c == t
            continue
        assert tuple(c.shape) == tuple(t.shape)
        assert str(c.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(_np(c), _np(t), rtol=rtol, atol=atol)
    if not grad:
        return
    pairs = [
        (c, t) for c, t in zip(c_out, t_out) if hasattr(t, "requires_grad") and t.requires_grad
    ]
    leaves = [i for i, a in enumerate(arrays) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    if not pairs or not leaves:
        return
    ws = [RNG.uniform(-1, 1, tuple(t.shape)) for _, t in pairs]
    cs = sum((c * cr.tensor(w, dtype=c.dtype)).sum() for (c, _), w in zip(pairs, ws))
    ts = sum((t * torch.tensor(w, dtype=t.dtype)).sum() for (_, t), w in zip(pairs, ws))
    cg = cr.autograd.grad(cs, [c_in[i] for i in leaves], allow_unused=True)
    tg = torch.autograd.grad(ts, [t_in[i] for i in leaves], allow_unused=True)
    for i, a, b in zip(leaves, cg, tg):
        if b is None:
            assert a is None or not np.any(_np(a)), f"input {i}"
            continue
        np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, err_msg=f"input {i}")


def same_error(fn: Callable[..., Any], *arrays: Any) -> None:
    """``fn`` raises the same exception type and message under both libraries."""
    arrays = tuple(
        a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
        for a in arrays
    )
    with pytest.raises(Exception) as te:
        fn(torch, *[_to(torch, a, False) for a in arrays])
    with pytest.raises(type(te.value)) as ce:
        fn(cr, *[_to(cr, a, False) for a in arrays])
    assert str(ce.value) == str(te.value)


def u(*shape: int, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return RNG.uniform(lo, hi, shape)


def idx(*v: Any) -> np.ndarray:
    return np.array(v, dtype=np.int64)


# Aliases, copies, predicates -------------------------------------------------------------

ALIAS_CASES = [
    ("swapaxes", lambda m, x: m.swapaxes(x, 0, 2), (u(2, 3, 4),)),
    ("swapdims", lambda m, x: x.swapdims(-1, 0), (u(2, 3),)),
    ("ravel", lambda m, x: m.ravel(x.mT), (u(2, 3),)),
    ("split_with_sizes", lambda m, x: m.split_with_sizes(x, [1, 3], 1), (u(2, 4),)),
    ("unsafe_split", lambda m, x: x.unsafe_split(2, 1), (u(2, 5),)),
    ("unsafe_chunk", lambda m, x: m.unsafe_chunk(x, 3), (u(5, 2),)),
    ("unsafe_split_with_sizes", lambda m, x: x.unsafe_split_with_sizes([2, 1]), (u(3, 2),)),
    ("alias_copy", lambda m, x: m.alias_copy(x), (u(2, 2),)),
    ("diagonal_copy", lambda m, x: m.diagonal_copy(x, 1), (u(3, 4),)),
    ("expand_copy", lambda m, x: m.expand_copy(x, (2, 3)), (u(1, 3),)),
    ("permute_copy", lambda m, x: m.permute_copy(x, (1, 0, 2)), (u(2, 3, 2),)),
    ("select_copy", lambda m, x: m.select_copy(x, 1, -1), (u(2, 3),)),
    ("slice_copy", lambda m, x: m.slice_copy(x, 1, 0, 3, 2), (u(2, 4),)),
    ("split_copy", lambda m, x: m.split_copy(x, 2), (u(3, 2),)),
    ("split_with_sizes_copy", lambda m, x: m.split_with_sizes_copy(x, [1, 1], 1), (u(3, 2),)),
    ("squeeze_copy", lambda m, x: m.squeeze_copy(x, 1), (u(2, 1, 3),)),
    ("t_copy", lambda m, x: m.t_copy(x), (u(2, 3),)),
    ("transpose_copy", lambda m, x: m.transpose_copy(x, 0, 1), (u(2, 3),)),
    ("unbind_copy", lambda m, x: m.unbind_copy(x, 1), (u(2, 3),)),
    ("unfold_copy", lambda m, x: m.unfold_copy(x, 0, 2, 1), (u(4, 2),)),
    ("unsqueeze_copy", lambda m, x: m.unsqueeze_copy(x, -1), (u(2, 3),)),
    ("view_copy", lambda m, x: m.view_copy(x, (3, 2)), (u(2, 3),)),
    ("as_strided_copy", lambda m, x: m.as_strided_copy(x, (2, 2), (1, 2)), (u(2, 3),)),
    ("narrow_copy", lambda m, x: x.narrow_copy(1, 1, 2), (u(2, 3),)),
    ("unfold", lambda m, x: x.unfold(1, 3, 2), (u(2, 7),)),
    ("unfold_0d", lambda m, x: x.unfold(0, 1, 1), (u(),)),
    ("conj_physical", lambda m, x: m.conj_physical(x), (u(2, 2),)),
    ("adjoint", lambda m, x: x.adjoint(), (u(2, 3, 4),)),
    ("H", lambda m, x: x.H, (u(2, 3),)),
    ("mH", lambda m, x: x.mH, (u(2, 3, 4),)),
    ("detach", lambda m, x: m.detach(x), (u(2),)),
    ("as_strided", lambda m, x: m.as_strided(x, (2,), (2,), 1), (u(2, 3),)),
    ("cross_method", lambda m, a, b: a.cross(b, dim=-1), (u(2, 3), u(2, 3))),
    ("vdot_method", lambda m, a, b: a.vdot(b), (u(3), u(3))),
]


@pytest.mark.parametrize("name,fn,arrays", ALIAS_CASES, ids=[c[0] for c in ALIAS_CASES])
def test_alias_matches_torch(name: str, fn: Any, arrays: Any) -> None:
    both(fn, *arrays)


def test_copies_do_not_share_memory_and_views_do() -> None:
    x = cr.arange(12.0).reshape(3, 4)
    for c in (
        cr.t_copy(x),
        cr.diagonal_copy(x),
        cr.view_copy(x, (4, 3)),
        x.narrow_copy(0, 0, 1),
        cr.unfold_copy(x, 1, 2, 2),
    ):
        assert not np.shares_memory(c._data, x._data)
    for v in (x.swapaxes(0, 1), x.ravel(), x.unfold(1, 2, 2), cr.conj(x), x.resolve_conj()):
        assert np.shares_memory(v._data, x._data)
    assert x.unfold(1, 2, 2).stride() == torch.arange(12.0).reshape(3, 4).unfold(1, 2, 2).stride()
    assert cr.conj(x) is x and x.resolve_conj() is x and cr.resolve_neg(x) is x


def test_unfold_grad_node_and_errors() -> None:
    same_error(lambda m, x: x.unfold(1, 5, 1), u(3, 4))
    same_error(lambda m, x: x.unfold(1, 2, 0), u(3, 4))
    same_error(lambda m, x: m.split_with_sizes(x, [1, 1], 1), u(2, 3))
    same_error(lambda m, x: x.adjoint(), u(3))
    same_error(lambda m, x: x.H, u(2, 2, 2))
    same_error(lambda m, x: x.H, u(3))
    with pytest.warns(UserWarning, match="Tensor.H is deprecated on 0-D tensors"):
        z = cr.tensor(2.0)
        assert z.H is z
    # detach_copy: a copy cut from the graph (PyTorch's has a grad_fn whose backward fails)
    x = cr.ones(2, requires_grad=True)
    d = cr.detach_copy(x)
    assert not d.requires_grad and not np.shares_memory(d._data, x._data)
    same_error(lambda m, x: x.mH, u(2))


def test_predicates_match_torch() -> None:
    for m_dtype in ("float32", "float64", "int64", "int8", "uint8", "bool"):
        c = cr.zeros(2, dtype=getattr(cr, m_dtype))
        t = torch.zeros(2, dtype=getattr(torch, m_dtype))
        assert c.is_signed() == t.is_signed()
        assert cr.is_complex(c) is torch.is_complex(t) is False
        assert c.is_conj() is t.is_conj() and c.is_neg() is t.is_neg()
        assert cr.is_conj(c) is False and cr.is_neg(c) is False
    for v in ([2.0], [0.0], [[0]], 3):
        assert cr.tensor(v).is_nonzero() == torch.tensor(v).is_nonzero()
        assert cr.is_nonzero(cr.tensor(v)) == torch.is_nonzero(torch.tensor(v))
    same_error(lambda m, x: x.is_nonzero(), u(2))
    same_error(lambda m, x: m.is_nonzero(x), u(0))
    a, b = cr.zeros(2, 3), cr.ones(2, 3)
    assert a.is_same_size(b) and not a.is_same_size(cr.zeros(3, 2))
    assert cr.is_same_size(a, b)
    assert cr.is_inference(a) is False
    with cr.inference_mode():
        assert cr.is_inference(cr.zeros(1))
    assert cr.get_device(a) == torch.get_device(torch.zeros(1)) == -1


def test_unravel_index() -> None:
    for ind, shape in (
        (idx(4, -1, 7, 12), (3, 4)),
        (idx([1, 5], [0, 23]), (2, 3, 4)),
        (np.array(5), 8),
    ):
        c = cr.unravel_index(cr.tensor(ind), shape)
        t = torch.unravel_index(torch.tensor(ind), shape)
        assert len(c) == len(t)
        for a, b in zip(c, t):
            assert a.dtype == cr.int64
            np.testing.assert_array_equal(_np(a), _np(b))
    same_error(lambda m, x: m.unravel_index(x, (3, 4)), u(2))
    same_error(lambda m, x: m.unravel_index(x, (3, -4)), idx(1))


# The torch-level in-place functions --------------------------------------------------------

INPLACE_ARGS = {
    "acosh_": (lambda: u(4, lo=1.2, hi=3), ()),
    "arccosh_": (lambda: u(4, lo=1.2, hi=3), ()),
    "atanh_": (lambda: u(4, lo=-0.9, hi=0.9), ()),
    "arctanh_": (lambda: u(4, lo=-0.9, hi=0.9), ()),
    "acos_": (lambda: u(4, lo=-1, hi=1), ()),
    "arccos_": (lambda: u(4, lo=-1, hi=1), ()),
    "asin_": (lambda: u(4, lo=-1, hi=1), ()),
    "arcsin_": (lambda: u(4, lo=-1, hi=1), ()),
    "log10_": (lambda: u(4, lo=0.1), ()),
    "log1p_": (lambda: u(4, lo=0.1), ()),
    "log2_": (lambda: u(4, lo=0.1), ()),
    "rsqrt_": (lambda: u(4, lo=0.1), ()),
    "logit_": (lambda: u(4, lo=0.1, hi=0.9), ()),
    "xlogy_": (lambda: u(4), (lambda m, _o=u(4, lo=0.1): m.tensor(_o),)),
    "addmv_": (
        lambda: u(2),
        (lambda m: m.tensor(np.ones((2, 3))), lambda m: m.tensor(np.arange(3.0))),
    ),
    "nan_to_num_": (lambda: np.array([np.nan, np.inf, -np.inf, 1.0]), ()),
    "gcd_": (lambda: idx(4, 6, 9), (lambda m: m.tensor(idx(2, 4, 6)),)),
    "lcm_": (lambda: idx(4, 6, 9), (lambda m: m.tensor(idx(2, 4, 6)),)),
    "ldexp_": (lambda: u(3), (lambda m: m.tensor(idx(1, 2, 3)),)),
    "as_strided_": (lambda: u(6), (lambda m: (2, 2), lambda m: (1, 2), lambda m: 1)),
    "resize_as_": (lambda: u(6), (lambda m: m.ones(2, 3),)),
}


@pytest.mark.parametrize("name", cr.ops.aliases._INPLACE_FUNCTIONS)
def test_torch_inplace_function_matches_torch(name: str) -> None:
    make, others = INPLACE_ARGS.get(name, (lambda: u(4, lo=-0.9, hi=0.9), ()))
    a = make()
    c, t = cr.tensor(a), torch.tensor(a)
    rc = getattr(cr, name)(c, *[o(cr) for o in others])
    rt = getattr(torch, name)(t, *[o(torch) for o in others])
    assert rc is c and rt is t
    np.testing.assert_allclose(_np(c), _np(t), rtol=1e-6, atol=1e-7)


INPLACE_METHODS = [
    ("asinh_", u(3), ()),
    ("arcsinh_", u(3), ()),
    ("acosh_", u(3, lo=1.2, hi=3), ()),
    ("atanh_", u(3, lo=-0.9, hi=0.9), ()),
    ("arctanh_", u(3, lo=-0.9, hi=0.9), ()),
    ("i0_", u(3), ()),
    ("lgamma_", u(3, lo=0.5, hi=3), ()),
    ("digamma_", u(3, lo=0.5, hi=3), ()),
    ("erfinv_", u(3, lo=-0.9, hi=0.9), ()),
    ("logit_", u(3, lo=0.1, hi=0.9), (0.05,)),
    ("xlogy_", u(3), (u(3, lo=0.1),)),
    ("igamma_", u(3, lo=0.5, hi=2), (u(3, lo=0.5, hi=2),)),
    ("igammac_", u(3, lo=0.5, hi=2), (u(3, lo=0.5, hi=2),)),
    ("mvlgamma_", u(3, lo=2, hi=3), (2,)),
    ("polygamma_", u(3, lo=0.5, hi=3), (1,)),
    ("ldexp_", u(3), (u(3),)),
    ("scatter_reduce_", u(3, 2), (0, idx([0, 2], [0, 0]), u(2, 2), "amax")),
    ("index_reduce_", u(3, 2), (0, idx(0, 2), u(2, 2), "prod")),
    ("index_copy_", u(3, 2), (1, idx(1), u(3, 1))),
    ("index_fill_", u(3, 2), (0, idx(0, 2), -1.0)),
    ("put_", u(3, 2), (idx(1, 4), u(2), True)),
    ("masked_scatter_", u(2, 3), (np.array([True, False, True]), u(6))),
]

# In-place ops whose PyTorch backward raises "not implemented" (chainrule's are
# differentiable): their gradients are compared with the out-of-place forms'.
_NO_TORCH_GRAD = {"asinh_", "arcsinh_", "acosh_", "atanh_", "arctanh_"}
# Ops with no derivative in their first argument (in both libraries).
_NO_SELF_GRAD = {"igamma_", "igammac_"}


@pytest.mark.parametrize("name,a,args", INPLACE_METHODS, ids=[c[0] for c in INPLACE_METHODS])
def test_inplace_method_matches_torch(name: str, a: np.ndarray, args: tuple[Any, ...]) -> None:
    def run(m: Any) -> tuple[Any, Any, list[Any]]:
        leaf = m.tensor(a, requires_grad=name not in _NO_SELF_GRAD)
        margs = [_to(m, x, True) for x in args]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # index_reduce is in beta
            x = leaf * 1
            out = getattr(x, name)(*margs)
        assert out is x
        return leaf, x, margs

    cl, cx, cargs = run(cr)
    tl, tx, targs = run(torch)
    np.testing.assert_allclose(_np(cx), _np(tx), rtol=1e-6, atol=1e-7)
    assert cx._version == tx._version
    w = RNG.uniform(-1, 1, tuple(tx.shape))
    first = [] if name in _NO_SELF_GRAD else [cl]
    c_in = first + [t for t in cargs if hasattr(t, "requires_grad") and t.requires_grad]
    cg = cr.autograd.grad((cx * cr.tensor(w)).sum(), c_in, allow_unused=True)
    if name in _NO_TORCH_GRAD:
        tl2 = torch.tensor(a, requires_grad=True)
        targs2 = [_to(torch, x, True) for x in args]
        base = name[:-1].replace("arc", "a") if name.startswith("arc") else name[:-1]
        ty = getattr(tl2 * 1, base)(*targs2)
        t_in = [tl2] + [t for t in targs2 if hasattr(t, "requires_grad") and t.requires_grad]
    else:
        ty = tx
        t_in = ([] if name in _NO_SELF_GRAD else [tl]) + [
            t for t in targs if hasattr(t, "requires_grad") and t.requires_grad
        ]
    tg = torch.autograd.grad((ty * torch.tensor(w)).sum(), t_in, allow_unused=True)
    for a_, b_ in zip(cg, tg):
        if b_ is None:
            assert a_ is None or not np.any(_np(a_))
            continue
        np.testing.assert_allclose(_np(a_), _np(b_), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    "name,other",
    [
        ("gcd_", idx(2, 4)),
        ("lcm_", idx(3, 5)),
        ("bitwise_left_shift_", idx(1, 2)),
        ("bitwise_right_shift_", idx(1, 0)),
    ],
)
def test_integer_inplace_methods(name: str, other: np.ndarray) -> None:
    c, t = cr.tensor(idx(12, -7)), torch.tensor(idx(12, -7))
    getattr(c, name)(cr.tensor(other))
    getattr(t, name)(torch.tensor(other))
    np.testing.assert_array_equal(_np(c), _np(t))
    c <<= 1
    t <<= 1
    c >>= 2
    t >>= 2
    np.testing.assert_array_equal(_np(c), _np(t))
    x = cr.tensor([1.0, 2.0])
    x.nextafter_(cr.tensor([2.0, 0.0]))
    np.testing.assert_array_equal(_np(x), np.nextafter(np.float32([1, 2]), np.float32([2, 0])))


NUMERIC_ERRORS = [
    lambda m, a: m.gcd(a, a),  # float
    lambda m, a: m.lcm(m.tensor([1, 2]), 3),
    lambda m, a: m.tensor([1, 2]).gcd(2),
    lambda m, a: m.tensor([1, 2]).lcm_(2),
    lambda m, a: m.bitwise_left_shift(a, 1),
    lambda m, a: m.nextafter(a, 1.0),
    lambda m, a: m.nextafter(m.tensor([1, 2]), m.tensor([1, 2])),
    lambda m, a: m.frexp(m.tensor([1, 2])),
    lambda m, a: m.gcd(m.tensor([True]), m.tensor([True])),
    lambda m, a: m.gcd(m.tensor([1, 2]), m.tensor([1, 2, 3])),
    lambda m, a: m.cross(a, m.ones(3), dim=0),
    lambda m, a: m.cross(m.ones(2, 3), m.ones(2, 4), dim=1),
]


@pytest.mark.parametrize("k", range(len(NUMERIC_ERRORS)))
def test_numeric_errors_match_torch(k: int) -> None:
    same_error(NUMERIC_ERRORS[k], u(2, 3))


def test_cross_without_dim_warns_and_picks_first_dim_of_size_3() -> None:
    a, b = u(3, 3), u(3, 3)
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        c = cr.cross(cr.tensor(a), cr.tensor(b))
    # torch warns once per process (TORCH_WARN_ONCE): another test may have had its warning.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        t = torch.cross(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(_np(c), _np(t), rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        same_error(lambda m, x: m.cross(x, x), u(2, 2))


def test_ldexp_negative_integer_exponent_gradient() -> None:
    # Differs from torch (documented): PyTorch's gradient is 0 for negative integer exponents.
    x = cr.tensor([1.0, 3.0], requires_grad=True)
    y = cr.ldexp(x, cr.tensor([-3, 2]))
    np.testing.assert_allclose(_np(y), [0.125, 12.0])
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [0.125, 4.0])
    assert cr.ldexp(cr.tensor([1, 2]), cr.tensor([1, 1])).dtype == cr.float32
    assert cr.ldexp(cr.tensor([1.0], dtype=cr.float64), cr.tensor([1])).dtype == cr.float64


def test_frexp_result_type() -> None:
    r = cr.frexp(cr.tensor([8.0, 0.3]))
    assert r.mantissa is r[0] and r.exponent is r[1] and r.exponent.dtype == cr.int32
    assert repr(r).startswith("torch.return_types.frexp(")
    h = cr.histogram(cr.tensor([1.0, 2.0]), 2)
    assert h.hist is h[0] and h.bin_edges is h[1]


# Scatter and index errors ------------------------------------------------------------------

SCATTER_ERRORS = [
    lambda m, x: x.scatter_reduce(0, m.tensor([[0, 1]]), m.ones(1, 2), "foo"),
    lambda m, x: x.scatter_reduce(0, m.tensor([[0, 5]]), m.ones(1, 2), "sum"),
    lambda m, x: x.scatter_reduce(0, m.tensor([0, 1]), m.ones(1, 2), "sum"),
    lambda m, x: x.scatter_reduce(0, m.tensor([[0, 1]]), m.ones(1, 2, dtype=m.float64), "sum"),
    lambda m, x: x.scatter_reduce(0, m.tensor([[0, 1, 1, 1, 1]]), m.ones(1, 5), "sum"),
    lambda m, x: x.index_copy(0, m.tensor([0, 2]), m.ones(2, 3)),
    lambda m, x: x.index_copy(0, m.tensor([0, 2]).int(), m.ones(2, 4)),
    lambda m, x: x.index_copy(0, m.tensor([[0, 2]]), m.ones(2, 4)),
    lambda m, x: x.index_copy(0, m.tensor([0, 5]), m.ones(2, 4)),
    lambda m, x: x.index_copy(0, m.tensor([0, 2]), m.ones(2, 4, dtype=m.float64)),
    lambda m, x: x.index_copy(0, m.tensor([0, 2, 1]), m.ones(2, 4)),
    lambda m, x: x.index_fill(1, m.tensor([0, 2]), m.tensor([1.0])),
    lambda m, x: x.index_fill(1, m.tensor([0, 5]), 2),
    lambda m, x: x.index_fill(1, m.tensor([0.0, 1.0]), 2),
    lambda m, x: (
        x.masked_scatter(x > 100, m.ones(2))
        if False
        else x.masked_scatter(m.ones(3, 4, dtype=m.bool), m.ones(2))
    ),
    lambda m, x: x.masked_scatter(m.ones(3, 4).int(), m.ones(12)),
    lambda m, x: x.masked_scatter(m.ones(3, 4, dtype=m.bool), m.ones(12, dtype=m.float64)),
    lambda m, x: x.slice_scatter(m.ones(3, 3), 1, 0, 4, 2),
    lambda m, x: x.select_scatter(m.ones(4), 1, 0),
    lambda m, x: x.diagonal_scatter(m.ones(4)),
    lambda m, x: x.put(m.tensor([0, 13]), m.ones(2)),
    lambda m, x: x.put(m.tensor([0, -1]), m.ones(3)),
    lambda m, x: x.put(m.tensor([0, -1]).int(), m.ones(2)),
    lambda m, x: m.put(x, m.tensor([0, -1]), m.ones(2, dtype=m.float64)),
    lambda m, x: x.index_reduce(0, m.tensor([0, 0]), m.ones(2, 4), "sum"),
    lambda m, x: x.quantile(m.tensor([0.1, 1.5])),
    lambda m, x: x.quantile(0.5, interpolation="foo"),
    lambda m, x: x.int().quantile(0.5),
    lambda m, x: m.histogram(x.int(), 3),
    lambda m, x: m.histogram(x, 3, range=(1.0, 0.0)),
    lambda m, x: m.ones(3).fill_diagonal_(1),
    lambda m, x: m.ones(2, 3, 4).fill_diagonal_(1),
]


@pytest.mark.parametrize("k", range(len(SCATTER_ERRORS)))
def test_scatter_errors_match_torch(k: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # index_reduce is in beta
        same_error(SCATTER_ERRORS[k], u(3, 4))


def test_scatter_reduce_src_larger_than_index_values_match_torch() -> None:
    # PyTorch's backward fails here; its forward is the reference (gradients: the op table).
    x, s, i = u(3, 4), u(3, 3), idx([0, 0], [3, 1], [2, 2])
    for r in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            both(
                lambda m, a, b, r=r, inc=inc: a.scatter_reduce(
                    1, m.tensor(i), b, r, include_self=inc
                ),
                x,
                s,
                grad=False,
            )


def test_scatter_reduce_integer_mean_rounds_down_and_0d() -> None:
    for inc in (True, False):
        both(
            lambda m, inc=inc: m.tensor([[-5, 7]]).scatter_reduce(
                0, m.tensor([[0, 0]]), m.tensor([[2, 2]]), "mean", include_self=inc
            ),
            grad=False,
        )
    both(lambda m, a, b: a.scatter_reduce(0, m.tensor(0), b, "sum"), u(), u(), grad=True)


def test_index_reduce_warns_like_torch() -> None:
    with pytest.warns(UserWarning, match="index_reduce\\(\\) is in beta"):
        cr.ones(2).index_reduce(0, cr.tensor([0]), cr.ones(1), "prod")


def test_masked_scatter_inplace_mask_must_broadcast_to_self() -> None:
    same_error(lambda m, x: x.masked_scatter_(m.ones(2, 3, 4, dtype=m.bool), m.ones(24)), u(3, 4))
    same_error(lambda m, x: x.masked_scatter_(m.ones(2, 4, dtype=m.bool), m.ones(24)), u(3, 4))


def test_quantile_value_shapes_match_torch() -> None:
    for kw in ({}, {"dim": 0}, {"dim": -1, "keepdim": True}, {"keepdim": True}):
        both(lambda m, x, kw=kw: x.quantile(0.25, **kw), u(3, 4))
        both(
            lambda m, x, kw=kw: m.quantile(x, m.tensor([0.2, 0.5], dtype=x.dtype), **kw),
            u(3, 4),
            grad=True,
        )
    nan = u(3, 4)
    nan[1] = np.nan
    nan[0, 2] = np.nan
    for f in ("quantile", "nanquantile"):
        both(lambda m, x, f=f: getattr(x, f)(0.5, dim=1), nan, grad=False)


# Shape-changing in-place ops ---------------------------------------------------------------

RESHAPE_INPLACE = [
    ("t_", ()),
    ("transpose_", (0, 2)),
    ("swapaxes_", (1, 2)),
    ("swapdims_", (0, 1)),
    ("squeeze_", ()),
    ("squeeze_", (1,)),
    ("unsqueeze_", (-1,)),
]


@pytest.mark.parametrize("name,args", RESHAPE_INPLACE)
def test_shape_changing_inplace_matches_torch(name: str, args: tuple[Any, ...]) -> None:
    a = u(2, 1, 3) if name != "t_" else u(2, 3)
    cl, tl = cr.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    cx, tx = cl * 2, tl * 2
    assert getattr(cx, name)(*args) is cx
    getattr(tx, name)(*args)
    assert tuple(cx.shape) == tuple(tx.shape) and cx.stride() == tx.stride()
    assert cx._version == tx._version == 1
    w = RNG.uniform(-1, 1, tuple(tx.shape))
    (cx * cr.tensor(w)).sum().backward()
    (tx * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(_np(cl.grad), _np(tl.grad))
    # on a leaf: PyTorch's error, and allowed under no_grad (same storage, new shape)
    same_error(lambda m, x: getattr(x.requires_grad_(), name)(*args), a)
    c = cr.tensor(a)
    with cr.no_grad():
        getattr(c, name)(*args)
    assert tuple(c.shape) == tuple(tx.shape)


def test_shape_changing_inplace_on_views_is_refused() -> None:
    x = cr.ones(2, 3)
    with pytest.raises(RuntimeError, match="view or has views"):
        x[0].unsqueeze_(0)
    _ = x[0]
    v = x.view(3, 2)
    with pytest.raises(RuntimeError, match="view or has views"):
        x.t_()
    del v


def test_resize_matches_torch() -> None:
    for sizes in ((2, 2), (6,), (3, 2)):
        c, t = cr.arange(6.0), torch.arange(6.0)
        c.resize_(*sizes)
        t.resize_(*sizes)
        np.testing.assert_array_equal(_np(c), _np(t))
    c = cr.arange(4.0)
    c.resize_(2, 3)
    assert tuple(c.shape) == (2, 3)
    np.testing.assert_array_equal(_np(c).reshape(-1)[:4], np.arange(4.0))
    c.resize_as_(cr.zeros(5))
    assert tuple(c.shape) == (5,)
    same_error(lambda m, x: x.requires_grad_().resize_(2), u(4))
    with pytest.raises(RuntimeError):  # PyTorch: "numel: integer multiplication overflow"
        cr.ones(4).resize_(-1, 2)


# Layouts, constructors and attributes ------------------------------------------------------


def test_layouts_and_memory_formats() -> None:
    x = cr.zeros(2)
    assert x.layout is cr.strided and repr(cr.strided) == repr(torch.strided) == "torch.strided"
    for n in (
        "contiguous_format",
        "preserve_format",
        "channels_last",
        "channels_last_3d",
        "legacy_contiguous_format",
    ):
        assert repr(getattr(cr, n)) == repr(getattr(torch, n))
        assert isinstance(getattr(cr, n), cr.memory_format)
        assert pickle.loads(pickle.dumps(getattr(cr, n))) is getattr(cr, n)
    assert isinstance(cr.strided, cr.layout)
    with pytest.raises(TypeError, match="cannot create 'torch.layout' instances"):
        cr.layout()
    assert x.is_sparse is x.is_sparse_csr is False and x.name is None
    assert x.char().dtype == cr.int8


def test_empty_strided_and_new() -> None:
    for size, stride in (((2, 3), (1, 2)), ((2, 3), (3, 1)), ((0, 2), (2, 1)), ((), ())):
        c, t = cr.empty_strided(size, stride), torch.empty_strided(size, stride)
        assert tuple(c.shape) == tuple(t.shape) and c.dtype == cr.float32
        if 0 not in size:
            assert c.stride() == t.stride()
    same_error(lambda m: m.empty_strided((2, 3), (1,)))
    y = cr.zeros(2, dtype=cr.float64).new_empty_strided((2, 2), (1, 2))
    assert y.dtype == cr.float64 and y.stride() == (1, 2)
    x = cr.zeros(2, 3, dtype=cr.float64)
    tx = torch.zeros(2, 3, dtype=torch.float64)
    for args in ((2, 3), ([1, 2],), (), (cr.Size([4]),)):
        targs = tuple(torch.Size(a) if isinstance(a, cr.Size) else a for a in args)
        c, t = x.new(*args), tx.new(*targs)
        assert tuple(c.shape) == tuple(t.shape) and str(c.dtype)[-7:] == str(t.dtype)[-7:]
    np.testing.assert_array_equal(_np(x.new([1, 2])), [1.0, 2.0])


# Windows, ranges, conversions --------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]
)
def test_windows_match_torch(name: str) -> None:
    for n in (0, 1, 2, 5, 8):
        for periodic in (True, False):
            c = getattr(cr, name)(n, periodic)
            t = getattr(torch, name)(n, periodic)
            assert c.dtype == cr.float32
            np.testing.assert_allclose(_np(c), _np(t), rtol=1e-5, atol=1e-6)
    c = getattr(cr, name)(6, dtype=cr.float64, requires_grad=True)
    assert c.dtype == cr.float64 and c.requires_grad
    same_error(lambda m: getattr(m, name)(-1))
    with pytest.raises(RuntimeError, match="expects floating point dtypes"):
        getattr(cr, name)(3, dtype=cr.int64)
    np.testing.assert_allclose(
        _np(cr.hamming_window(5, True, 0.5, 0.5)),
        _np(torch.hamming_window(5, True, 0.5, 0.5)),
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        _np(cr.kaiser_window(5, False, 3.0)), _np(torch.kaiser_window(5, False, 3.0)), rtol=1e-5
    )


def test_logspace_and_range_match_torch() -> None:
    for args, kw in (((0, 2, 3), {}), ((-1, 1, 5), {"base": 2.0}), ((0, 3, 4), {"dtype": "i"})):
        if kw.get("dtype") == "i":
            c, t = cr.logspace(*args, dtype=cr.int64), torch.logspace(*args, dtype=torch.int64)
        else:
            c, t = cr.logspace(*args, **kw), torch.logspace(*args, **kw)
        assert str(c.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(_np(c), _np(t), rtol=1e-6)
    for args in ((0, 3), (1, 2, 0.25), (3, 0, -1)):
        with pytest.warns(UserWarning, match="torch.range is deprecated"):
            c = cr.range(*args)
        with pytest.warns(UserWarning):
            t = torch.range(*args)
        np.testing.assert_allclose(_np(c), _np(t))
        assert c.dtype == cr.float32


def test_asarray_and_frombuffer() -> None:
    a = np.arange(4.0)
    c = cr.asarray(a)
    assert np.shares_memory(c._data, a) and c.dtype == cr.float64
    assert not np.shares_memory(cr.asarray(a, copy=True)._data, a)
    t = cr.ones(2)
    assert cr.asarray(t) is t and cr.asarray(t, dtype=cr.float64).dtype == cr.float64
    assert cr.asarray([1, 2]).dtype == cr.int64
    with pytest.raises(ValueError):
        cr.asarray([1, 2], copy=False)
    assert cr.asarray(a, requires_grad=True).requires_grad
    buf = bytearray(np.arange(6, dtype=np.float32).tobytes())
    c = cr.frombuffer(buf, dtype=cr.float32, count=3, offset=4)
    t = torch.frombuffer(bytearray(buf), dtype=torch.float32, count=3, offset=4)
    np.testing.assert_array_equal(_np(c), _np(t))
    c[0] = 100.0  # shares the buffer's memory
    assert np.frombuffer(buf, dtype=np.float32)[1] == 100.0
    with pytest.warns(UserWarning, match="not writable"):
        cr.frombuffer(b"\x00\x00\x80\x3f", dtype=cr.float32)
    for kw in ({"count": 10}, {"offset": 100}):
        with pytest.raises(ValueError):
            cr.frombuffer(bytearray(8), dtype=cr.float32, **kw)
        with pytest.raises(ValueError):
            torch.frombuffer(bytearray(8), dtype=torch.float32, **kw)


# State, switches and queries ---------------------------------------------------------------


def test_rng_state_round_trip() -> None:
    s = cr.get_rng_state()
    assert s.dtype == cr.uint8 and s.ndim == 1
    a = cr.randn(3)
    cr.set_rng_state(s)
    np.testing.assert_array_equal(_np(cr.randn(3)), _np(a))
    with pytest.raises(TypeError):
        cr.set_rng_state(cr.zeros(3))
    with pytest.raises(RuntimeError, match="Invalid RNG state"):
        cr.set_rng_state(cr.zeros(3, dtype=cr.uint8))


def test_queries_and_switches() -> None:
    for n in ("pi", "e", "inf", "newaxis", "has_lapack", "has_spectral"):
        assert getattr(cr, n) == getattr(torch, n)
    assert np.isnan(cr.nan)
    assert cr.typename(cr.zeros(2)) == torch.typename(torch.zeros(2)) == "torch.FloatTensor"
    assert cr.typename(3) == torch.typename(3) == "int"
    assert cr.typename(cr.nn.Linear) == torch.typename(torch.nn.Linear)
    assert cr.is_storage(cr.zeros(1)) is torch.is_storage(torch.zeros(1)) is False
    assert cr.is_distributed(cr.zeros(1)) is False and cr.is_vulkan_available() is False
    assert cr.compiled_with_cxx11_abi() is True and cr.set_flush_denormal(False) is False
    assert cr.is_autocast_enabled() is False and cr.is_autocast_enabled("cpu") is False
    assert cr.is_autocast_cache_enabled()
    cr.set_autocast_cache_enabled(False)
    assert not cr.is_autocast_cache_enabled()
    cr.set_autocast_cache_enabled(True)
    cr.clear_autocast_cache()
    assert not cr.is_warn_always_enabled()
    cr.set_warn_always(True)
    assert cr.is_warn_always_enabled()
    cr.set_warn_always(False)
    assert not cr.is_anomaly_enabled() and cr.is_anomaly_check_nan_enabled()
    cr.set_anomaly_enabled(True, check_nan=False)
    try:
        assert cr.is_anomaly_enabled() and cr.autograd.is_anomaly_enabled()
        assert not cr.is_anomaly_check_nan_enabled()
    finally:
        cr.set_anomaly_enabled(False)
    assert not cr.is_anomaly_enabled()


def test_set_default_tensor_type() -> None:
    try:
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            cr.set_default_tensor_type(cr.DoubleTensor)
        assert cr.get_default_dtype() == cr.float64 and cr.zeros(1).dtype == cr.float64
        with pytest.warns(UserWarning):
            cr.set_default_tensor_type("torch.FloatTensor")
        assert cr.get_default_dtype() == cr.float32
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            with pytest.raises(TypeError, match="only floating-point types"):
                cr.set_default_tensor_type(cr.LongTensor)
            with pytest.raises(ModuleNotFoundError):
                cr.set_default_tensor_type("foo.FloatTensor")
    finally:
        cr.set_default_dtype(cr.float32)


# torch-level nn forms ----------------------------------------------------------------------

NN_CASES = [
    ("prelu", lambda m, x, w: m.prelu(x, w), (u(2, 3, 4), u(3))),
    ("prelu_method", lambda m, x, w: x.prelu(w), (u(2, 3), u(1))),
    ("hardshrink", lambda m, x: m.hardshrink(x, 0.7), (u(3, 4),)),
    ("hardshrink_method", lambda m, x: x.hardshrink(), (u(3, 4),)),
    ("threshold", lambda m, x: m.threshold(x, 0.1, -2.0), (u(3, 4),)),
    ("threshold_", lambda m, x: m.threshold_(x * 1, 0.1, -2.0), (u(3, 4),)),
    ("celu_", lambda m, x: m.celu_(x * 1, 0.5), (u(3, 4),)),
    ("selu_", lambda m, x: m.selu_(x * 1), (u(3, 4),)),
    ("rrelu_eval", lambda m, x: m.rrelu(x), (u(3, 4),)),
    ("rrelu__eval", lambda m, x: m.rrelu_(x * 1, 0.1, 0.3), (u(3, 4),)),
    ("alpha_dropout_eval", lambda m, x: m.alpha_dropout(x, 0.5, False), (u(3, 4),)),
    ("alpha_dropout__eval", lambda m, x: m.alpha_dropout_(x * 1, 0.5, False), (u(3, 4),)),
    (
        "feature_alpha_dropout_eval",
        lambda m, x: m.feature_alpha_dropout(x, 0.5, False),
        (u(2, 3, 4),),
    ),
    ("feature_dropout_eval", lambda m, x: m.feature_dropout(x, 0.5, False), (u(2, 3, 4),)),
    ("feature_dropout__eval", lambda m, x: m.feature_dropout_(x * 1, 0.5, False), (u(2, 3, 4),)),
    ("dropout__eval", lambda m, x: m.dropout_(x * 1, 0.5, False), (u(3, 4),)),
    ("pairwise_distance", lambda m, a, b: m.pairwise_distance(a, b, 1.5), (u(3, 4), u(3, 4))),
    ("pdist", lambda m, x: m.pdist(x), (u(4, 3),)),
    (
        "bce_with_logits",
        lambda m, x, y: m.binary_cross_entropy_with_logits(x, y, None, None, 2),
        (u(3, 4), u(3, 4, lo=0, hi=1)),
    ),
    ("kl_div_default", lambda m, x, y: m.kl_div(x, y), (u(3, 4, lo=-3, hi=-0.1), u(3, 4, lo=0.1))),
    ("kl_div_mean", lambda m, x, y: m.kl_div(x, y, 1), (u(3, 4, lo=-3, hi=-0.1), u(3, 4, lo=0.1))),
    ("kl_div_sum", lambda m, x, y: m.kl_div(x, y, 2), (u(3, 4), u(3, 4, lo=0.1))),
    ("kl_div_none_log", lambda m, x, y: m.kl_div(x, y, 0, log_target=True), (u(3, 4), u(3, 4))),
    (
        "cosine_embedding_loss",
        lambda m, a, b: m.cosine_embedding_loss(a, b, m.tensor([1, -1, 1]), 0.1, 2),
        (u(3, 4), u(3, 4)),
    ),
    (
        "hinge_embedding_loss",
        lambda m, x: m.hinge_embedding_loss(x, m.tensor([1.0, -1.0, 1.0]), 0.5, 0),
        (u(3),),
    ),
    (
        "margin_ranking_loss",
        lambda m, a, b: m.margin_ranking_loss(a, b, m.tensor([1.0, -1.0, 1.0])),
        (u(3), u(3)),
    ),
    (
        "poisson_nll_loss",
        lambda m, x, y: m.poisson_nll_loss(x, y, True, True, 1e-8, 1),
        (u(3, 4), u(3, 4, lo=0, hi=3)),
    ),
    (
        "triplet_margin_loss",
        lambda m, a, b, c: m.triplet_margin_loss(a, b, c, 0.5),
        (u(3, 4), u(3, 4), u(3, 4)),
    ),
    ("max_pool1d", lambda m, x: m.max_pool1d(x, 2), (u(2, 3, 6),)),
    ("max_pool1d_stride", lambda m, x: m.max_pool1d(x, 3, 1, 1), (u(2, 3, 6),)),
    ("max_pool1d_with_indices", lambda m, x: m.max_pool1d_with_indices(x, 2), (u(2, 3, 6),)),
    ("max_pool3d", lambda m, x: m.max_pool3d(x, 2), (u(1, 2, 4, 4, 4),)),
    ("adaptive_max_pool1d", lambda m, x: m.adaptive_max_pool1d(x, 3), (u(2, 3, 7),)),
    ("adaptive_avg_pool1d", lambda m, x: m.adaptive_avg_pool1d(x, 3), (u(2, 3, 7),)),
    ("avg_pool1d", lambda m, x: m.avg_pool1d(x, 3, 2, 1), (u(2, 3, 7),)),
    ("conv3d", lambda m, x, w: m.conv3d(x, w, None, 1, 1), (u(1, 2, 4, 4, 4), u(3, 2, 3, 3, 3))),
    (
        "conv_transpose1d",
        lambda m, x, w, b: m.conv_transpose1d(x, w, b, 2),
        (u(1, 2, 5), u(2, 3, 3), u(3)),
    ),
    (
        "conv_transpose3d",
        lambda m, x, w: m.conv_transpose3d(x, w),
        (u(1, 2, 3, 3, 3), u(2, 1, 2, 2, 2)),
    ),
    ("channel_shuffle", lambda m, x: m.channel_shuffle(x, 2), (u(1, 4, 2, 2),)),
    ("native_channel_shuffle", lambda m, x: m.native_channel_shuffle(x, 2), (u(1, 4, 3),)),
    (
        "instance_norm",
        lambda m, x, w, b: m.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
        (u(2, 3, 5), u(3), u(3)),
    ),
    ("rms_norm", lambda m, x, w: m.rms_norm(x, [4], w, 1e-6), (u(3, 4), u(4))),
    (
        "ctc_loss",
        lambda m, x: m.ctc_loss(
            x.log_softmax(2), m.tensor([[1, 2], [1, 3]]), m.tensor([5, 4]), m.tensor([2, 1])
        ),
        (u(5, 2, 4),),
    ),
    (
        "ctc_loss_mean",
        lambda m, x: m.ctc_loss(x.log_softmax(2), m.tensor([[1, 2], [1, 3]]), [5, 5], [2, 2], 0, 1),
        (u(5, 2, 4),),
    ),
]


@pytest.mark.parametrize("name,fn,arrays", NN_CASES, ids=[c[0] for c in NN_CASES])
def test_nn_form_matches_torch(name: str, fn: Any, arrays: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        # PyTorch has no derivative for native_channel_shuffle; chainrule's is channel_shuffle's
        both(fn, *arrays, rtol=1e-5, atol=1e-6, grad=name != "native_channel_shuffle")


def test_nn_form_reduction_enum() -> None:
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        cr.kl_div(cr.zeros(2), cr.zeros(2), 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the native kl_div does not warn about 'mean'
        cr.kl_div(cr.zeros(2), cr.ones(2), 1)


# Older linear algebra ----------------------------------------------------------------------


def _spd(n: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    a = RNG.uniform(-1, 1, batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


LINALG_CASES = [
    ("cholesky", lambda m, a: m.cholesky(a), (_spd(3),)),
    ("cholesky_upper", lambda m, a: a.cholesky(upper=True), (_spd(3, (2,)),)),
    (
        "cholesky_solve",
        lambda m, b, a: m.cholesky_solve(b, m.linalg.cholesky(a)),
        (u(3, 2), _spd(3)),
    ),
    (
        "cholesky_solve_upper",
        lambda m, b, a: b.cholesky_solve(m.linalg.cholesky(a).mT, True),
        (u(2, 3, 2), _spd(3, (2,))),
    ),
    ("cholesky_inverse", lambda m, a: m.cholesky_inverse(m.linalg.cholesky(a)), (_spd(3),)),
    (
        "cholesky_inverse_upper",
        lambda m, a: m.linalg.cholesky(a).mT.cholesky_inverse(True),
        (_spd(3),),
    ),
    ("pinverse", lambda m, a: m.pinverse(a), (u(4, 3),)),
    ("pinverse_wide_batch", lambda m, a: a.pinverse(), (u(2, 2, 3),)),
    ("svd_values", lambda m, a: m.svd(a).S, (u(4, 3),)),
    (
        "svd_reconstruct",
        lambda m, a: (lambda r: r.U @ m.diag_embed(r.S) @ r.V.mT)(m.svd(a)),
        (u(3, 4),),
    ),
    (
        "svd_some_false",
        lambda m, a: tuple(x.shape for x in m.svd(a, some=False)) and m.svd(a, some=False).S,
        (u(4, 2),),
    ),
    ("svd_no_uv", lambda m, a: m.svd(a, compute_uv=False), (u(3, 2),)),
    (
        "triangular_solve",
        lambda m, b, a: m.triangular_solve(b, a),
        (u(3, 2), u(3, 3) + 3 * np.eye(3)),
    ),
    (
        "triangular_solve_lower_t",
        lambda m, b, a: b.triangular_solve(a, False, True),
        (u(3, 2), u(3, 3) + 3 * np.eye(3)),
    ),
    (
        "triangular_solve_unit",
        lambda m, b, a: m.triangular_solve(b, a, unitriangular=True),
        (u(3, 2), u(3, 3)),
    ),
]


@pytest.mark.parametrize("name,fn,arrays", LINALG_CASES, ids=[c[0] for c in LINALG_CASES])
def test_legacy_linalg_matches_torch(name: str, fn: Any, arrays: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        both(fn, *arrays, rtol=1e-5, atol=1e-6, grad=name not in ("svd_no_uv",))


def test_legacy_linalg_gradcheck() -> None:
    # The factor itself is the input (only its lower triangle is read, so the numerical
    # Jacobian agrees with the analytic one); A is symmetrised before its factorisation.
    L = cr.tensor(np.tril(u(3, 3)) + 2 * np.eye(3), requires_grad=True)
    a = cr.tensor(_spd(3), requires_grad=True)
    b = cr.tensor(u(3, 2), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert cr.autograd.gradcheck(lambda b, L: cr.cholesky_solve(b, L), [b, L])
        assert cr.autograd.gradcheck(lambda L: cr.cholesky_inverse(L, upper=False), [L])
        assert cr.autograd.gradcheck(
            lambda a: cr.pinverse(a), [cr.tensor(u(4, 3), requires_grad=True)]
        )
        assert cr.autograd.gradgradcheck(
            lambda a: cr.cholesky_inverse(cr.linalg.cholesky((a + a.mT) / 2)), [a]
        )


def test_legacy_linalg_warnings_and_errors() -> None:
    with pytest.warns(UserWarning, match="torch.cholesky is deprecated"):
        cr.cholesky(cr.eye(2))
    with pytest.warns(UserWarning, match="torch.triangular_solve is deprecated"):
        r = cr.triangular_solve(cr.ones(2, 1), cr.eye(2))
    assert r.solution is r[0] and r.cloned_coefficient is r[1]
    same_error(lambda m, x: m.pinverse(x), u(3))
    same_error(lambda m, x: m.pinverse(m.tensor([[1, 2]])), u(1))
    same_error(lambda m, x: m.cholesky_solve(x, m.eye(3)), u(3))
    for name, args in (
        ("solve", (u(3, 3), u(3, 3))),
        ("lstsq", (u(3, 3), u(3, 3))),
        ("symeig", (u(3, 3),)),
        ("eig", (u(3, 3),)),
        ("matrix_rank", (u(3, 3),)),
    ):
        same_error(lambda m, *a, name=name: getattr(m, name)(*a), *args)
        if name != "matrix_rank":
            same_error(lambda m, x, *a, name=name: getattr(x, name)(*a), *args)


# Second batch: complex parts of real tensors, devices, older API, control flow, vmap -------


def test_real_imag_angle() -> None:
    x = cr.tensor([-1.0, 0.0, 2.0])
    assert x.real is x and cr.real(x) is x
    same_error(lambda m, a: a.imag, u(2))
    same_error(lambda m, a: m.imag(a), u(2))
    both(lambda m, a: m.angle(a), u(5), grad=True)
    both(lambda m: m.angle(m.tensor([-3, 0, 4])), grad=False)


SMALL_CASES = [
    ("fill", lambda m, x, v: m.fill(x, v), (u(2, 3), np.array(1.5))),
    ("fill_number", lambda m, x: m.fill(x, 2.0), (u(2, 3),)),
    ("constant_pad_nd", lambda m, x: m.constant_pad_nd(x, [1, 2, 0, 1], 0.5), (u(2, 3),)),
    ("frobenius_norm", lambda m, x: m.frobenius_norm(x, [0, 1], True), (u(2, 3),)),
    ("nuclear_norm", lambda m, x: m.nuclear_norm(x), (u(3, 3),)),
    ("nuclear_norm_dim", lambda m, x: m.nuclear_norm(x, [1, 2]), (u(2, 3, 4),)),
    ("norm_except_dim", lambda m, x: m.norm_except_dim(x, 2, 1), (u(2, 3, 4),)),
    ("norm_except_dim_all", lambda m, x: m.norm_except_dim(x, 3, -1), (u(2, 3),)),
    (
        "nonzero_static",
        lambda m: m.nonzero_static(m.tensor([[0, 1], [1, 1]]), size=5, fill_value=-2),
        (),
    ),
    ("nonzero_static_cut", lambda m: m.tensor([0, 3, 4, 0]).nonzero_static(size=1), ()),
    (
        "convolution",
        lambda m, x, w, b: m.convolution(x, w, b, [2], [1], [1], False, [0], 1),
        (u(1, 2, 7), u(3, 2, 3), u(3)),
    ),
    (
        "convolution_t",
        lambda m, x, w: m.convolution(x, w, None, [2, 1], [0, 1], [1, 1], True, [1, 0], 1),
        (u(1, 2, 4, 4), u(2, 3, 3, 3)),
    ),
    ("resize", lambda m, x: x.resize(3, 2), (u(2, 3),)),
    ("resize_as", lambda m, x: x.resize_as(m.ones(6)), (u(2, 3),)),
]


@pytest.mark.parametrize("name,fn,arrays", SMALL_CASES, ids=[c[0] for c in SMALL_CASES])
def test_small_functions_match_torch(name: str, fn: Any, arrays: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # resize's deprecation
        both(fn, *arrays, rtol=1e-5, atol=1e-6)


def test_deprecations_and_errors_of_the_older_api() -> None:
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        cr.ones(2, 3).resize(6)
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        cr.ones(2, 3).resize_as(cr.ones(6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        same_error(lambda m, x: x.resize(4), u(2, 3))
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert cr.ones(1).volatile is False
    same_error(lambda m, x: m.fill(x, m.ones(2)), u(2))
    same_error(lambda m, x: m.matrix_exp(x), u(3))
    same_error(lambda m, x: m.matrix_exp(x), u(2, 3))
    same_error(lambda m: m.matrix_exp(m.tensor([[1, 2], [3, 4]])))


def test_device_queries_and_copies() -> None:
    x, t = cr.ones(2), torch.ones(2)
    for n in ("is_ipu", "is_maia", "is_mtia", "is_vulkan", "is_xla"):
        assert getattr(x, n) is getattr(t, n) is False
    assert x.is_distributed() is t.is_distributed() is False
    for n in ("xpu", "ipu", "mtia"):
        same_error(lambda m, a, n=n: getattr(a, n)(), u(2))


def test_is_set_to_map2_module_load_grad_dtype_as_strided_() -> None:
    x = cr.randn(2, 3)
    assert x.is_set_to(x) and not x.is_set_to(x.clone()) and not x.is_set_to(x.view(3, 2))
    a, t = cr.ones(2, 3), torch.ones(2, 3)
    f = lambda p, q, r: p + 2 * q - r  # noqa: E731
    a.map2_(cr.tensor([1.0, 2.0, 3.0]), cr.tensor(5.0), f)
    t.map2_(torch.tensor([1.0, 2.0, 3.0]), torch.tensor(5.0), f)
    np.testing.assert_array_equal(_np(a), _np(t))
    same_error(lambda m, p: m.ones(2).map2_(m.ones(2), m.ones(3), f), u(1))
    p = cr.ones(2, 3)
    r = p.module_load(cr.zeros(2, 3))
    assert not r.requires_grad and float(p.sum()) == 0.0
    o = cr.full((2,), 3.0)
    assert p.module_load(o, assign=True) is not o and float(o[0]) == 3.0
    assert cr.ones(2).grad_dtype == cr.float32 and cr.ones(2, dtype=cr.int64).grad_dtype == cr.int64
    z = cr.ones(2)
    z.grad_dtype = cr.float64
    assert z.grad_dtype == cr.float64
    c, t = cr.arange(6.0), torch.arange(6.0)
    cr.as_strided_(c, (2, 2), (1, 2), 1)
    t.as_strided_((2, 2), (1, 2), 1)
    np.testing.assert_array_equal(_np(c), _np(t))
    c = cr.arange(4.0)
    cr.resize_as_(c, cr.ones(2, 2))
    assert tuple(c.shape) == (2, 2)
    c = cr.ones(2)
    assert cr.conj_physical_(c) is c


def test_empty_permuted_and_histogramdd() -> None:
    for size, order in (((2, 3, 4), (0, 2, 1)), ((2, 3), (1, 0)), ((), ())):
        c, t = cr.empty_permuted(size, order), torch.empty_permuted(size, order)
        assert tuple(c.shape) == tuple(t.shape) and c.stride() == t.stride()
    a = RNG.uniform(0, 1, (12, 2)).astype(np.float32)
    for kw in (
        {"bins": [2, 3]},
        {"bins": 3, "range": [0.0, 1.0, 0.0, 2.0], "density": True},
        {"bins": [torch.tensor([0.0, 0.5, 1.0]), torch.tensor([0.0, 1.0])]},
    ):
        ckw = dict(kw)
        if isinstance(kw["bins"], list) and hasattr(kw["bins"][0], "numpy"):
            ckw["bins"] = [cr.tensor(b.numpy()) for b in kw["bins"]]
        c, t = cr.histogramdd(cr.tensor(a), **ckw), torch.histogramdd(torch.tensor(a), **kw)
        np.testing.assert_allclose(_np(c.hist), _np(t.hist), rtol=1e-5)
        for e, f in zip(c.bin_edges, t.bin_edges):
            np.testing.assert_allclose(_np(e), _np(f), rtol=1e-6)
    same_error(lambda m, x: m.histogramdd(x.int(), 2), u(3, 2))


def test_control_flow_and_binomial() -> None:
    for pred in (True, False, cr.tensor(True), cr.tensor([0])):
        tp = torch.tensor(pred.numpy()) if hasattr(pred, "_data") else pred
        c = cr.cond(pred, lambda x: x + 1, lambda x: x - 1, (cr.ones(2),))
        t = torch.cond(tp, lambda x: x + 1, lambda x: x - 1, (torch.ones(2),))
        np.testing.assert_array_equal(_np(c), _np(t))
    c = cr.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (cr.tensor(0), cr.ones(2)))
    assert int(c[0]) == 3 and _np(c[1]).tolist() == [8.0, 8.0]
    x = cr.tensor([0.5, 2.0], requires_grad=True)
    y = cr.while_loop(lambda v: v.sum() < 10, lambda v: v * 2, (x,))[0]
    y.sum().backward()  # the loop body is recorded like any code
    np.testing.assert_array_equal(_np(x.grad), [4.0, 4.0])
    cr.manual_seed(0)
    b = cr.binomial(cr.tensor([10.0, 0.0, 7.0]), cr.tensor([0.5, 0.3, 1.0]))
    assert b.dtype == cr.float32 and float(b[1]) == 0.0 and float(b[2]) == 7.0
    assert 0 <= float(b[0]) <= 10
    same_error(lambda m: m.binomial(m.tensor([10, 5]), m.tensor([0.5, 0.2])))


def test_vmap_matches_torch() -> None:
    cases = [
        (lambda m: m.vmap(lambda x, y: (x * y).sum()), (u(3, 2), u(3, 2))),
        (lambda m: m.vmap(lambda x, w: x @ w, in_dims=(0, None)), (u(4, 3), u(3, 2))),
        (lambda m: m.vmap(lambda x: (x.exp(), x.sum()), in_dims=1, out_dims=(1, 0)), (u(2, 5),)),
        (lambda m: m.vmap(m.vmap(lambda x: x * 2)), (u(2, 3, 4),)),
    ]
    for make, arrays in cases:
        both(lambda m, *a, make=make: make(m)(*a), *arrays)
    d = cr.vmap(lambda t: {"a": t["x"] * 2}, in_dims=({"x": 0},))({"x": cr.ones(2, 3)})
    assert tuple(d["a"].shape) == (2, 3)
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        cr.vmap(lambda x, y: x + y)(cr.ones(3), cr.ones(4))
    with pytest.raises(ValueError, match="must only return Tensors"):
        cr.vmap(lambda x: 3)(cr.ones(3))
    with pytest.raises(ValueError, match="expected `in_dims` to be int"):
        cr.vmap(lambda x: x, in_dims=None)(cr.ones(3))


def test_misc_torch_names() -> None:
    assert issubclass(cr.OutOfMemoryError, RuntimeError)
    assert issubclass(cr.AcceleratorError, RuntimeError)
    assert cr.init_num_threads() is None
    x = cr.arange(3.0)
    back = cr.from_dlpack(cr.to_dlpack(x))
    assert np.shares_memory(back._data, x._data)
    assert cr.GradScaler is cr.amp.GradScaler
    for n in ("is_autocast_cpu_enabled", "is_autocast_ipu_enabled", "is_autocast_xla_enabled"):
        with pytest.warns(DeprecationWarning, match=f"torch.{n}\\(\\) is deprecated"):
            assert getattr(cr, n)() is False


def test_qr_like_torch() -> None:
    with pytest.warns(UserWarning, match="torch.qr is deprecated"):
        r = cr.qr(cr.eye(2))
    assert r.Q is r[0] and r.R is r[1] and repr(r).startswith("torch.return_types.qr(")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        same_error(lambda m, x: m.qr(x), u(3))
        same_error(lambda m: m.qr(m.tensor([[1, 2], [3, 4]])))
        # complete mode of a tall matrix has no derivative, in both
        same_error(
            lambda m, x: m.autograd.grad(m.qr(x.requires_grad_(), some=False)[0].sum(), x), u(4, 2)
        )
        both(lambda m, x: tuple(x.qr()), u(3, 2))
