"""Issue 15: grid_sample, affine_grid and channel_shuffle record PyTorch's one node
(GridSampler2D/3DBackward0, AffineGridGeneratorBackward0, ChannelShuffleBackward0), with
torch's values and gradients (Note [composite nodes])."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(15)


def _arr(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def _np(t: Any) -> np.ndarray | None:
    if t is None:
        return None
    return np.asarray(t._data) if isinstance(t, cr.Tensor) else t.detach().numpy()


def _compare(
    build: Callable[..., Any], arrays: list[np.ndarray], grads: list[bool], node: str
) -> None:
    outs = {}
    for m in (cr, torch):
        ts = [m.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
        y = build(m, *ts)
        assert type(y.grad_fn).__name__ == node, (m.__name__, type(y.grad_fn).__name__)
        assert y.grad_fn.name() == node
        (y * m.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))).sum().backward()
        outs[m.__name__] = (_np(y), [_np(t.grad) for t, g in zip(ts, grads) if g])
    (yc, gc), (yt, gt) = outs["chainrule"], outs["torch"]
    np.testing.assert_allclose(yc, yt, rtol=1e-10, atol=1e-12)
    for a, b in zip(gc, gt):
        if a is None:  # nearest sampling: torch returns zeros for the grid
            assert b is not None and not b.any()
            continue
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def _grid(*shape: int) -> np.ndarray:
    return np.tanh(_arr(*shape)) * 1.1  # some points outside [-1, 1]


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)])
def test_grid_sample_2d(
    mode: str, padding_mode: str, align_corners: bool, grads: tuple[bool, bool]
) -> None:
    if mode == "nearest" and grads == (False, True):
        pytest.skip("no gradient reaches the grid")
    _compare(
        lambda m, x, g: m.nn.functional.grid_sample(
            x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners
        ),
        [_arr(2, 3, 5, 6), _grid(2, 4, 3, 2)],
        list(grads),
        "GridSampler2DBackward0",
    )


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_3d(mode: str, padding_mode: str) -> None:
    _compare(
        lambda m, x, g: m.nn.functional.grid_sample(
            x, g, mode=mode, padding_mode=padding_mode, align_corners=False
        ),
        [_arr(2, 3, 4, 5, 6), _grid(2, 2, 3, 4, 3)],
        [True, True],
        "GridSampler3DBackward0",
    )


def test_grid_sample_gradcheck() -> None:
    x = cr.tensor(_arr(1, 2, 4, 5), requires_grad=True)
    g = cr.tensor(_grid(1, 3, 2, 2) * 0.9, requires_grad=True)
    for mode in ("bilinear", "bicubic"):
        assert cr.autograd.gradcheck(
            lambda x, g: cr.nn.functional.grid_sample(x, g, mode=mode, align_corners=True),
            (x, g),
        )


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dims", [2, 3])
def test_affine_grid(align_corners: bool, dims: int) -> None:
    theta, size = (_arr(2, 2, 3), [2, 3, 4, 5]) if dims == 2 else (_arr(2, 3, 4), [2, 3, 4, 5, 6])
    _compare(
        lambda m, t: m.nn.functional.affine_grid(t, size, align_corners=align_corners),
        [theta],
        [True],
        "AffineGridGeneratorBackward0",
    )
    t = cr.tensor(theta, requires_grad=True)
    fn = lambda t: cr.nn.functional.affine_grid(t, size, align_corners=align_corners)  # noqa: E731
    assert cr.autograd.gradcheck(fn, (t,)) and cr.autograd.gradgradcheck(fn, (t,))


@pytest.mark.parametrize("layer", [False, True])
def test_channel_shuffle(layer: bool) -> None:
    def build(m: Any, x: Any) -> Any:
        return m.nn.ChannelShuffle(3)(x) if layer else m.nn.functional.channel_shuffle(x, 3)

    _compare(build, [_arr(2, 6, 3, 3)], [True], "ChannelShuffleBackward0")
    x = cr.tensor(_arr(2, 6, 2), requires_grad=True)
    fn = lambda x: cr.nn.functional.channel_shuffle(x, 2)  # noqa: E731
    assert cr.autograd.gradcheck(fn, (x,)) and cr.autograd.gradgradcheck(fn, (x,))


def test_double_backward_through_grid_sample_input() -> None:
    # Linear in the input: the second derivative through the input path is torch's (zero).
    xa = _arr(1, 2, 3, 3)

    def run(m: Any) -> np.ndarray:
        x = m.tensor(xa, requires_grad=True)
        g = m.tensor(np.zeros((1, 2, 2, 2)) + 0.3)
        y = m.nn.functional.grid_sample(x, g, align_corners=False)
        (gx,) = m.autograd.grad((y * y).sum(), (x,), create_graph=True)
        (gx * gx).sum().backward()
        return _np(x.grad)

    np.testing.assert_allclose(run(cr), run(torch), rtol=1e-10)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("psw", [False, True])
def test_embedding_bag_max_norm(mode: str, psw: bool) -> None:
    if psw and mode != "sum":
        pytest.skip("per_sample_weights is for mode='sum' only")
    table, idx, off, p = (
        _arr(10, 3) * 2,
        np.array([1, 2, 4, 5, 4, 3, 2, 9]),
        np.array([0, 4]),
        _arr(8),
    )
    got = {}
    for m in (cr, torch):
        w = m.tensor(table, requires_grad=True)
        pt = m.tensor(p, requires_grad=True) if psw else None
        y = m.nn.functional.embedding_bag(
            m.tensor(idx), w, m.tensor(off), max_norm=1.0, mode=mode, per_sample_weights=pt
        )
        assert type(y.grad_fn).__name__ == "EmbeddingBagBackward0"
        (y * y.detach()).sum().backward()
        got[m.__name__] = [_np(y), _np(w), _np(w.grad)] + ([_np(pt.grad)] if psw else [])
    for a, b in zip(got["chainrule"], got["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def _chain(fn: Any) -> list[str]:
    out: list[str] = []

    def walk(f: Any) -> None:
        if f is None or type(f).__name__ == "AccumulateGrad":
            return
        out.append(type(f).__name__)
        for n, _ in f.next_functions:
            walk(n)

    walk(fn)
    return out


@pytest.mark.parametrize("lead", [(4,), (2, 3)])
@pytest.mark.parametrize("bias", [False, True])
def test_bilinear(lead: tuple[int, ...], bias: bool) -> None:
    arrays = [_arr(*lead, 3), _arr(*lead, 5), _arr(2, 3, 5), _arr(2)]
    res = {}
    for m in (cr, torch):
        ts = [m.tensor(a, requires_grad=True) for a in arrays]
        y = m.nn.functional.bilinear(ts[0], ts[1], ts[2], ts[3] if bias else None)
        chain = _chain(y.grad_fn)
        gs = m.autograd.grad((y * y).sum(), ts[:3], create_graph=True)
        sum((g * g).sum() for g in gs).backward()
        res[m.__name__] = (chain, _np(y), [_np(g) for g in gs], [_np(t.grad) for t in ts[:3]])
    c, t = res["chainrule"], res["torch"]
    assert c[0] == t[0] and "TrilinearBackward0" in c[0]
    np.testing.assert_allclose(c[1], t[1], rtol=1e-10, atol=1e-12)
    for a, b in zip(c[2] + c[3], t[2] + t[3]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def test_bilinear_gradgradcheck() -> None:
    ts = [
        cr.tensor(a, requires_grad=True) for a in (_arr(3, 2), _arr(3, 4), _arr(2, 2, 4), _arr(2))
    ]
    assert cr.autograd.gradcheck(cr.nn.functional.bilinear, ts)
    assert cr.autograd.gradgradcheck(cr.nn.functional.bilinear, ts)


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("track", [False, True])
@pytest.mark.parametrize("train", [True, False])
def test_instance_norm_modules(dims: int, affine: bool, track: bool, train: bool) -> None:
    xa = _arr(2, 3, *(4,) * dims)
    res = {}
    for m in (cr, torch):
        mod = getattr(m.nn, f"InstanceNorm{dims}d")(
            3, affine=affine, track_running_stats=track
        ).double()
        if affine:
            with m.no_grad():
                mod.weight.copy_(m.tensor([0.5, -1.0, 2.0]))
                mod.bias.copy_(m.tensor([0.1, 0.2, -0.3]))
        mod.train(train)
        x = m.tensor(xa, requires_grad=True)
        y = mod(x)
        chain = _chain(y.grad_fn)
        ps = [x] + ([mod.weight, mod.bias] if affine else [])
        gs = m.autograd.grad((y * y.detach() * 0.5 + y).sum() + (y**3).sum(), ps, create_graph=True)
        sum((g * g).sum() for g in gs).backward()
        stats = [_np(mod.running_mean), _np(mod.running_var)] if track else []
        res[m.__name__] = (
            chain,
            [_np(y)] + [_np(g) for g in gs] + [_np(p.grad) for p in ps] + stats,
        )
    c, t = res["chainrule"], res["torch"]
    assert c[0] == t[0] and "NativeBatchNormBackward0" in c[0], (c[0], t[0])
    for a, b in zip(c[1], t[1]):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


def test_instance_norm_gradgradcheck() -> None:
    x = cr.tensor(_arr(2, 2, 5), requires_grad=True)
    w, b = cr.tensor(_arr(2), requires_grad=True), cr.tensor(_arr(2), requires_grad=True)
    fn = lambda x, w, b: cr.nn.functional.instance_norm(x, weight=w, bias=b)  # noqa: E731
    assert cr.autograd.gradcheck(fn, (x, w, b)) and cr.autograd.gradgradcheck(fn, (x, w, b))
    rm, rv = cr.zeros(2, dtype=cr.float64), cr.ones(2, dtype=cr.float64) * 2
    ev = lambda x, w, b: cr.nn.functional.instance_norm(  # noqa: E731
        x, rm, rv, w, b, use_input_stats=False
    )
    assert cr.autograd.gradcheck(ev, (x, w, b)) and cr.autograd.gradgradcheck(ev, (x, w, b))
