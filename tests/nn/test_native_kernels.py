"""The torch-level normalisation, dropout, sync-BN, sampling, embedding and conv_tbc kernels
(chainrule/_nn_native.py, chainrule/_nn_native_norm.py) against PyTorch: values, gradients
(gradcheck in float64) and error texts. The sync-BN kernels run in PyTorch only on CUDA; here
they are checked against an unsplit ``torch.batch_norm`` by running SyncBatchNorm's algorithm
over a batch split into "processes"."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck

torch = pytest.importorskip("torch")

TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-10, atol=1e-12)}


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _cr(t: Any, rg: bool | None = None) -> Any:
    if t is None:
        return None
    return cr.tensor(_np(t).copy(), requires_grad=t.requires_grad if rg is None else rg)


def _rand(*shape: int, dtype: Any = torch.float64, rg: bool = True, seed: int = 0) -> Any:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype).requires_grad_(rg)


def _close(c: Any, t: Any, dtype: str = "float64") -> None:
    assert tuple(c.shape) == tuple(t.shape)
    assert str(c.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(c), _np(t), **TOL[dtype])


def _grads_match(t_out: Any, c_out: Any, t_in: list, c_in: list, dtype: str = "float64") -> None:
    w = np.random.default_rng(0).standard_normal(tuple(t_out.shape))
    (t_out * torch.tensor(w, dtype=t_out.dtype)).sum().backward()
    (c_out * cr.tensor(w.astype(_np(c_out).dtype))).sum().backward()
    for t, c in zip(t_in, c_in):
        np.testing.assert_allclose(_np(c.grad), _np(t.grad), **TOL[dtype])


# Normalisation and dropout ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", [True, False])
def test_native_layer_norm(dtype: str, affine: bool) -> None:
    tdt = getattr(torch, dtype)
    x = _rand(2, 3, 4, 5, dtype=tdt)
    w, b = (
        (_rand(4, 5, dtype=tdt, seed=1), _rand(4, 5, dtype=tdt, seed=2)) if affine else (None, None)
    )
    t = torch.native_layer_norm(x, [4, 5], w, b, 1e-5)
    cx, cw, cb = _cr(x), _cr(w), _cr(b)
    c = cr.native_layer_norm(cx, [4, 5], cw, cb, 1e-5)
    for ci, ti in zip(c, t):
        _close(ci, ti, dtype)
    assert not c[1].requires_grad and not c[2].requires_grad
    leaves = [x] + ([w, b] if affine else [])
    cleaves = [cx] + ([cw, cb] if affine else [])
    _grads_match(t[0], c[0], leaves, cleaves, dtype)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 5)])
def test_native_batch_norm(shape: tuple, training: bool) -> None:
    x = _rand(*shape)
    w, b = _rand(3, seed=1), _rand(3, seed=2)
    rm_t, rv_t = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64) * 2
    rm_c, rv_c = _cr(rm_t), _cr(rv_t)
    t = torch.native_batch_norm(x, w, b, rm_t, rv_t, training, 0.1, 1e-5)
    cx, cw, cb = _cr(x), _cr(w), _cr(b)
    c = cr.native_batch_norm(cx, cw, cb, rm_c, rv_c, training, 0.1, 1e-5)
    for ci, ti in zip(c, t):
        _close(ci, ti)
    _close(rm_c, rm_t)
    _close(rv_c, rv_t)
    _grads_match(t[0], c[0], [x, w, b], [cx, cw, cb])


def test_native_group_norm_all_outputs_differentiable() -> None:
    x = _rand(2, 6, 4)
    w, b = _rand(6, seed=1), _rand(6, seed=2)
    t = torch.native_group_norm(x, w, b, 2, 6, 4, 3, 1e-5)
    cx, cw, cb = _cr(x), _cr(w), _cr(b)
    c = cr.native_group_norm(cx, cw, cb, 2, 6, 4, 3, 1e-5)
    for ci, ti in zip(c, t):
        _close(ci, ti)
    tl = t[0].sum() + (t[1] * 2).sum() + (t[2] * 3).sum()
    cl = c[0].sum() + (c[1] * 2).sum() + (c[2] * 3).sum()
    tl.backward()
    cl.backward()
    for ti, ci in zip((x, w, b), (cx, cw, cb)):
        np.testing.assert_allclose(_np(ci.grad), _np(ti.grad), **TOL["float64"])
    assert gradcheck(
        lambda x, w, b: cr.native_group_norm(x, w, b, 2, 6, 4, 3, 1e-5)[2], (_cr(x), _cr(w), _cr(b))
    )
    with pytest.raises(RuntimeError, match=r"Expected X.numel\(\) == N \* C \* HxW"):
        cr.native_group_norm(cx, None, None, 2, 6, 5, 3, 1e-5)


def test_native_dropout() -> None:
    x = _rand(50, 40)
    cx = _cr(x)
    cr.manual_seed(0)
    out, mask = cr.native_dropout(cx, 0.3, True)
    m = _np(mask)
    assert m.dtype == np.bool_ and 0.6 < m.mean() < 0.8
    np.testing.assert_allclose(_np(out), _np(x) * m / 0.7, rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(_np(cx.grad), m / 0.7, rtol=1e-12)
    # None counts as training, as in torch; p = 1 zeroes all with an all-False mask.
    out1, mask1 = cr.native_dropout(cx, 1.0, None)
    t1, tm1 = torch.native_dropout(x, 1.0, None)
    np.testing.assert_array_equal(_np(out1), _np(t1))
    np.testing.assert_array_equal(_np(mask1), _np(tm1))
    out0, mask0 = cr.native_dropout(cx, 0.3, False)
    t0, tm0 = torch.native_dropout(x, 0.3, False)
    np.testing.assert_array_equal(_np(out0), _np(t0))
    np.testing.assert_array_equal(_np(mask0), _np(tm0))
    with pytest.raises(RuntimeError) as te:
        torch.native_dropout(x, 1.5, True)
    with pytest.raises(RuntimeError, match=str(te.value).replace("[", r"\[").replace("]", r"\]")):
        cr.native_dropout(cx, 1.5, True)


@pytest.mark.parametrize("p", [2, 1, 3.5, float("inf")])
def test_native_norm_matches_torch_sparse_kernel(p: float) -> None:
    x = _rand(3, 4)
    t = torch.native_norm(x.detach().to_sparse(), p)
    c = cr.native_norm(_cr(x, False), p)
    _close(c, t)
    td = torch.native_norm(x.detach().to_sparse(), p, [-1, 0], False, None)
    _close(cr.native_norm(_cr(x, False), p, [-1, 0], False, None), td)
    for keepdim, dt in ((True, None), (False, "float32")):
        with pytest.raises(RuntimeError) as te:
            torch.native_norm(x.detach().to_sparse(), p, [], keepdim, dt and torch.float32)
        with pytest.raises(RuntimeError) as ce:
            cr.native_norm(_cr(x, False), p, [], keepdim, dt and cr.float32)
        assert str(ce.value) == str(te.value)
    cx = _cr(x)
    cr.native_norm(cx, p).backward()
    torch.linalg.vector_norm(x, p).backward()
    np.testing.assert_allclose(_np(cx.grad), _np(x.grad), **TOL["float64"])
    with pytest.raises(RuntimeError) as te:
        torch.native_norm(x.detach().to_sparse(), p, [1], False, None)
    with pytest.raises(RuntimeError) as ce:
        cr.native_norm(cx, p, [1], False, None)
    assert str(ce.value) == str(te.value)


# Sync-BN kernels ----------------------------------------------------------------------------


def test_sync_batch_norm_kernels_equal_one_batch_norm() -> None:
    """SyncBatchNorm's algorithm (torch/nn/modules/_functions.py) over three uneven parts of a
    batch gives torch.batch_norm's output, running stats and gradients on the whole batch."""
    eps, mom = 1e-5, 0.1
    x = _rand(9, 3, 4)
    w, b = _rand(3, seed=1), _rand(3, seed=2)
    rm_t, rv_t = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    t_out = torch.batch_norm(x, w, b, rm_t, rv_t, True, mom, eps, False)
    gy = _rand(9, 3, 4, seed=5, rg=False)
    t_out.backward(gy)

    cx, cw, cb, cgy = _cr(x, False), _cr(w, False), _cr(b, False), _cr(gy, False)
    parts = [cx[0:2], cx[2:7], cx[7:9]]
    gparts = [cgy[0:2], cgy[2:7], cgy[7:9]]
    stats = [cr.batch_norm_stats(p, eps) for p in parts]
    for (m, s), p in zip(stats, parts):  # each part's own moments
        tp = torch.tensor(_np(p))
        np.testing.assert_allclose(_np(m), _np(tp.mean((0, 2))), rtol=1e-12)
        v = tp.var((0, 2), unbiased=False)
        np.testing.assert_allclose(_np(s), _np(1 / torch.sqrt(v + eps)), rtol=1e-12)
    means = cr.stack([m for m, _ in stats])
    invstds = cr.stack([s for _, s in stats])
    counts = cr.tensor([p.numel() // 3 for p in parts], dtype=cr.float64)
    rm_c, rv_c = cr.zeros(3, dtype=cr.float64), cr.ones(3, dtype=cr.float64)
    mean, invstd = cr.batch_norm_gather_stats_with_counts(
        cx, means, invstds, rm_c, rv_c, mom, eps, counts
    )
    _close(rm_c, rm_t)
    _close(rv_c, rv_t)
    out = cr.cat([cr.batch_norm_elemt(p, cw, cb, mean, invstd, eps) for p in parts], 0)
    _close(out, t_out.detach())

    red = [
        cr.batch_norm_backward_reduce(g, p, mean, invstd, cw, True, True, True)
        for g, p in zip(gparts, parts)
    ]
    sum_dy = sum(r[0] for r in red)
    sum_dy_xmu = sum(r[1] for r in red)
    _close(sum(r[2] for r in red), w.grad)
    _close(sum(r[3] for r in red), b.grad)
    count_i = cr.tensor([2 * 4, 5 * 4, 2 * 4], dtype=cr.int32)
    gx = cr.cat(
        [
            cr.batch_norm_backward_elemt(g, p, mean, invstd, cw, sum_dy, sum_dy_xmu, count_i)
            for g, p in zip(gparts, parts)
        ],
        0,
    )
    _close(gx, x.grad)
    # The flags leave out what was not asked for.
    r = cr.batch_norm_backward_reduce(gparts[0], parts[0], mean, invstd, cw, False, True, False)
    assert r[0] is None and r[1] is None and r[3] is None and r[2] is not None


def test_batch_norm_gather_stats_equal_counts() -> None:
    x = _cr(_rand(8, 3, 2), False)
    parts = [x[:4], x[4:]]
    ms, ss = zip(*[cr.batch_norm_stats(p, 1e-5) for p in parts])
    a = cr.batch_norm_gather_stats(x, cr.stack(ms), cr.stack(ss), None, None, 0.1, 1e-5, 8)
    b = cr.batch_norm_stats(x, 1e-5)
    for ai, bi in zip(a, b):
        np.testing.assert_allclose(_np(ai), _np(bi), rtol=1e-12)


@pytest.mark.parametrize("running", [True, False])
def test_batch_norm_update_stats(running: bool) -> None:
    x = _rand(4, 3, 5, rg=False)
    rm_t = torch.zeros(3, dtype=torch.float64) if running else None
    rv_t = torch.ones(3, dtype=torch.float64) if running else None
    rm_c, rv_c = _cr(rm_t, False), _cr(rv_t, False)
    t = torch.batch_norm_update_stats(x, rm_t, rv_t, 0.1)
    c = cr.batch_norm_update_stats(_cr(x), rm_c, rv_c, 0.1)
    for ci, ti in zip(c, t):
        _close(ci, ti)
    if running:
        _close(rm_c, rm_t)
        _close(rv_c, rv_t)


# Sampling -----------------------------------------------------------------------------------


@pytest.mark.parametrize("ac", [False, True])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("interp", [0, 1, 2])
def test_grid_sampler_2d(interp: int, padding: int, ac: bool) -> None:
    x = _rand(2, 3, 5, 6)
    g = (
        torch.rand(2, 4, 3, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
        * 2.4
        - 1.2
    )
    g.requires_grad_(True)
    for name in ("grid_sampler", "grid_sampler_2d"):
        t = getattr(torch, name)(x, g, interp, padding, ac)
        c = getattr(cr, name)(_cr(x), _cr(g), interp, padding, ac)
        _close(c, t)
    cx, cg = _cr(x), _cr(g)
    t = torch.grid_sampler_2d(x, g, interp, padding, ac)
    c = cr.grid_sampler_2d(cx, cg, interp, padding, ac)
    _grads_match(t, c, [x] if interp == 1 else [x, g], [cx] if interp == 1 else [cx, cg])


@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("interp", [0, 1])
def test_grid_sampler_3d(interp: int, padding: int) -> None:
    x = _rand(1, 2, 3, 4, 5)
    g = torch.rand(1, 2, 3, 2, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    g = (g * 2.2 - 1.1).requires_grad_(True)
    cx, cg = _cr(x), _cr(g)
    t = torch.grid_sampler_3d(x, g, interp, padding, False)
    c = cr.grid_sampler_3d(cx, cg, interp, padding, False)
    _close(c, t)
    _close(cr.grid_sampler(cx, cg, interp, padding, False), t)
    _grads_match(t, c, [x], [cx])


def test_grid_sampler_errors_match_torch() -> None:
    x4, g4 = _rand(1, 2, 4, 4, rg=False), _rand(1, 3, 3, 2, rg=False)
    x5, g5 = _rand(1, 2, 4, 4, 4, rg=False), _rand(1, 3, 3, 3, 3, rg=False)
    cases = [
        ("grid_sampler_2d", x5, g5, 0),
        ("grid_sampler_3d", x4, g4, 0),
        ("grid_sampler_3d", x5, g5, 2),
        ("grid_sampler", x5, g5, 2),
    ]
    for name, x, g, mode in cases:
        with pytest.raises(RuntimeError) as te:
            getattr(torch, name)(x, g, mode, 0, False)
        with pytest.raises(RuntimeError) as ce:
            getattr(cr, name)(_cr(x), _cr(g), mode, 0, False)
        assert str(ce.value) == str(te.value)


@pytest.mark.parametrize("ac", [False, True])
@pytest.mark.parametrize("size", [[2, 1, 4, 5], [2, 3, 2, 3, 4]])
def test_affine_grid_generator(size: list, ac: bool) -> None:
    theta = _rand(2, *((2, 3) if len(size) == 4 else (3, 4)))
    ct = _cr(theta)
    t = torch.affine_grid_generator(theta, size, ac)
    c = cr.affine_grid_generator(ct, size, ac)
    _close(c, t)
    _grads_match(t, c, [theta], [ct])
    assert gradcheck(lambda th: cr.affine_grid_generator(th, size, ac), (_cr(theta),))
    with pytest.raises(RuntimeError, match="AffineGridGenerator needs 4d"):
        cr.affine_grid_generator(ct, size[:3], ac)


# Embedding and conv_tbc ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("padding_idx", ["absent", None, -1, 2])
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_embedding_bag_four_outputs(mode: int, padding_idx: Any, dtype: str) -> None:
    w = _rand(10, 3, dtype=getattr(torch, dtype))
    idx = torch.tensor([1, 2, 3, 4, 5, 2])
    off = torch.tensor([0, 2, 2, 5])
    extra = () if padding_idx == "absent" else (padding_idx,)
    t = torch.embedding_bag(w, idx, off, False, mode, False, None, False, *extra)
    cw = _cr(w)
    c = cr.embedding_bag(cw, _cr(idx), _cr(off), False, mode, False, None, False, *extra)
    assert len(c) == 4
    _close(c[0], t[0], dtype)
    for ci, ti in zip(c[1:], t[1:]):
        np.testing.assert_array_equal(_np(ci), _np(ti))
        assert _np(ci).dtype == np.int64
    _grads_match(t[0], c[0], [w], [cw], dtype)


def test_embedding_bag_weighted_and_last_offset() -> None:
    w = _rand(10, 3)
    idx, off = torch.tensor([1, 2, 3, 4, 5]), torch.tensor([0, 2, 5])
    psw = _rand(5, seed=3)
    t = torch.embedding_bag(w, idx, off, False, 0, False, psw, True)
    cw, cp = _cr(w), _cr(psw)
    c = cr.embedding_bag(cw, _cr(idx), _cr(off), False, 0, False, cp, True)
    _close(c[0], t[0])
    for ci, ti in zip(c[1:], t[1:]):
        np.testing.assert_array_equal(_np(ci), _np(ti))
    _grads_match(t[0], c[0], [w, psw], [cw, cp])


def test_embedding_renorm_() -> None:
    for norm_type in (2.0, 1.0, float("inf")):
        w = _rand(6, 4, rg=False) * 3
        cw = _cr(w)
        idx = torch.tensor([0, 2, 2, 5])
        r = torch.embedding_renorm_(w, idx, 1.5, norm_type)
        cr_r = cr.embedding_renorm_(cw, _cr(idx), 1.5, norm_type)
        assert cr_r is cw and r is w
        np.testing.assert_allclose(_np(cw), _np(w), rtol=1e-12)
    leaf = cr.ones(3, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        cr.embedding_renorm_(leaf, cr.tensor([0]), 1.0, 2.0)
    with pytest.raises(RuntimeError, match="argument #2 'indices'"):
        cr.embedding_renorm_(cr.ones(3, 2), cr.tensor([0.0]), 1.0, 2.0)
    with pytest.raises(IndexError) as te:
        torch.embedding_renorm_(torch.ones(3, 2), torch.tensor([7]), 1.0, 2.0)
    with pytest.raises(IndexError) as ce:
        cr.embedding_renorm_(cr.ones(3, 2), cr.tensor([7]), 1.0, 2.0)
    assert str(ce.value) == str(te.value)


@pytest.mark.parametrize("pad", [0, 1, 2])
def test_conv_tbc(pad: int) -> None:
    x, w, b = _rand(7, 2, 3), _rand(3, 3, 4, seed=1), _rand(4, seed=2)
    cx, cw, cb = _cr(x), _cr(w), _cr(b)
    t = torch.conv_tbc(x, w, b, pad)
    c = cr.conv_tbc(cx, cw, cb, pad)
    _close(c, t)
    _close(cr.nn.functional.conv_tbc(cx, cw, cb, pad), torch.nn.functional.conv_tbc(x, w, b, pad))
    _grads_match(t, c, [x, w, b], [cx, cw, cb])
    assert gradcheck(lambda x, w, b: cr.conv_tbc(x, w, b, pad), (_cr(x), _cr(w), _cr(b)))


def test_conv_tbc_errors_match_torch() -> None:
    cases = [
        ((7, 2, 3), (3, 3, 4), (5,)),
        ((7, 2), (3, 3, 4), (4,)),
        ((7, 2, 3), (3, 4), (4,)),
        ((7, 2, 3), (3, 2, 4), (4,)),
        ((2, 2, 3), (5, 3, 4), (4,)),
    ]
    for xs, ws, bs in cases:
        args = [torch.randn(*s) for s in (xs, ws, bs)]
        with pytest.raises(RuntimeError) as te:
            torch.conv_tbc(*args, 0)
        with pytest.raises(RuntimeError) as ce:
            cr.conv_tbc(*[_cr(a, False) for a in args], 0)
        assert str(ce.value) == str(te.value)
