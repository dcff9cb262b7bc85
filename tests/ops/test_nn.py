"""Option grids and edge cases of the nn functions, compared with PyTorch (see also the rows in
tests/opinfo/nn.py)."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def compare(
    call: Callable[..., Any],
    args: list[Any],
    kwargs: dict[str, Any] | None = None,
    dtype: str = "float64",
    grad: tuple[int, ...] | None = None,
    rtol: float = 1e-6,
    atol: float = 1e-8,
) -> tuple[Any, Any]:
    """``call(m, *args, **kwargs)`` with m = chainrule and m = torch; float ndarray args become
    tensors (requiring grad when their index is in ``grad``, default: all float args). Checks
    values, dtypes and the gradients of sum(out * r) for a fixed random r."""

    kwargs = kwargs or {}
    res = []
    for m in (cr, torch):
        ts = []
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                if a.dtype.kind == "f":
                    rg = grad is None or i in grad
                    ts.append(m.tensor(a.astype(dtype), requires_grad=rg))
                else:
                    ts.append(m.tensor(a))
            else:
                ts.append(a)
        out = call(m, *ts, **kwargs)
        res.append((ts, out))
    (cts, cout), (tts, tout) = res
    couts = list(cout) if isinstance(cout, tuple) else [cout]
    touts = list(tout) if isinstance(tout, tuple) else [tout]
    for c, t in zip(couts, touts):
        assert tuple(c.shape) == tuple(t.shape)
        assert c.dtype.name == str(t.dtype).replace("torch.", "")
        np.testing.assert_allclose(np.asarray(c._data), t.detach().numpy(), rtol=rtol, atol=atol)
    c0, t0 = couts[0], touts[0]
    idx = [i for i, a in enumerate(tts) if isinstance(a, torch.Tensor) and a.requires_grad]
    if idx and t0.requires_grad:
        r = np.random.default_rng(5).uniform(-1, 1, tuple(t0.shape)).astype(dtype)
        cg = cr.autograd.grad([(c0 * cr.tensor(r)).sum()], [cts[i] for i in idx], allow_unused=True)
        tg = torch.autograd.grad(
            [(t0 * torch.tensor(r)).sum()], [tts[i] for i in idx], allow_unused=True
        )
        for i, a, b in zip(idx, cg, tg):
            if b is None:
                assert a is None or not np.any(np.asarray(a._data)), i
                continue
            np.testing.assert_allclose(
                np.asarray(a._data),
                b.numpy(),
                rtol=rtol,
                atol=atol,
                err_msg=f"gradient of argument {i}",
            )
    return cout, tout


def F(m: Any) -> Any:
    return m.nn.functional


RNG = np.random.default_rng(0)


def _u(shape: tuple[int, ...], lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return RNG.uniform(lo, hi, shape)


# Softmax ---------------------------------------------------------------------------------------


def test_softmax_is_stable_and_keeps_float32() -> None:
    x = np.array([[1000.0, 1001.0, -1000.0], [-3.0, 0.0, 3.0]], dtype=np.float32)
    for name in ("softmax", "log_softmax"):
        c, t = compare(
            lambda m, a: getattr(F(m), name)(a, dim=1), [x], dtype="float32", rtol=1e-5, atol=1e-6
        )
        assert np.all(np.isfinite(np.asarray(c._data)))


def test_softmax_dtype_argument_and_implicit_dim_warning() -> None:
    x = _u((2, 3))
    compare(lambda m, a: m.softmax(a, 1, dtype=m.float64), [x], dtype="float32")
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = F(cr).softmax(cr.tensor(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = F(torch).softmax(torch.tensor(x))
    np.testing.assert_allclose(np.asarray(out._data), ref.numpy())


def test_softmax_grad_fn_names() -> None:
    x = cr.tensor(_u((2, 3)), requires_grad=True)
    assert x.softmax(1).grad_fn.name() == "SoftmaxBackward0"
    assert x.log_softmax(-1).grad_fn.name() == "LogSoftmaxBackward0"


def test_softmax_double_backward_matches_torch() -> None:
    x = _u((3, 4))
    outs = []
    for m in (cr, torch):
        t = m.tensor(x, requires_grad=True)
        y = (m.softmax(t, 1) * m.tensor(np.arange(4.0))).sum() + m.log_softmax(t, 0)[0, 1]
        (g,) = m.autograd.grad(y, t, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), t)
        outs.append(np.asarray(gg._data) if m is cr else gg.numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-7, atol=1e-10)


# Classification losses ---------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [None, 1])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("spatial", [False, True])
def test_cross_entropy_class_indices(
    reduction: str, weighted: bool, ignore: Any, smoothing: float, spatial: bool
) -> None:
    shape = (3, 4, 2) if spatial else (5, 4)
    x = _u(shape, -2, 2)
    t = RNG.integers(0, 4, (3, 2) if spatial else (5,)).astype(np.int64)
    t.flat[0] = 1
    w = RNG.uniform(0.5, 2, (4,)) if weighted else None
    kw: dict[str, Any] = {"reduction": reduction, "label_smoothing": smoothing}
    if ignore is not None:
        kw["ignore_index"] = ignore
    compare(
        lambda m, a, b, c=None, **k: F(m).cross_entropy(a, b, weight=c, **k),
        [x, t] + ([w] if weighted else []),
        kw,
        grad=(0,),
    )


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
def test_cross_entropy_class_probabilities(
    reduction: str, weighted: bool, smoothing: float
) -> None:
    x = _u((3, 4, 2), -2, 2)
    t = RNG.dirichlet(np.ones(4), (3, 2)).transpose(0, 2, 1).copy()
    w = RNG.uniform(0.5, 2, (4,)) if weighted else None
    compare(
        lambda m, a, b, c=None, **k: F(m).cross_entropy(a, b, weight=c, **k),
        [x, t] + ([w] if weighted else []),
        {"reduction": reduction, "label_smoothing": smoothing},
        grad=(0, 1),
    )


def test_cross_entropy_float32_and_unbatched() -> None:
    compare(
        lambda m, a, b: F(m).cross_entropy(a, b),
        [_u((4,)), np.array(2)],
        dtype="float32",
        rtol=1e-5,
        atol=1e-6,
    )


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_grid(reduction: str, weighted: bool) -> None:
    x = _u((6, 3), -3, 0)
    t = np.array([0, 2, 1, 2, 2, 0])
    w = RNG.uniform(0.5, 2, (3,)) if weighted else None
    compare(
        lambda m, a, b, c=None, **k: F(m).nll_loss(a, b, weight=c, **k),
        [x, t] + ([w] if weighted else []),
        {"reduction": reduction, "ignore_index": 2},
        grad=(0,),
    )


def test_nll_loss_all_ignored_is_nan_and_bad_target_raises() -> None:
    x = cr.tensor(_u((2, 3)), requires_grad=True)
    out = F(cr).nll_loss(x, cr.tensor([1, 1]), ignore_index=1)
    assert np.isnan(float(out._data))
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        F(cr).nll_loss(x, cr.tensor([0, 5]))
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        F(torch).nll_loss(torch.tensor(_u((2, 3))), torch.tensor([0, 5]))


def test_cross_entropy_bad_label_smoothing() -> None:
    for m in (cr, torch):
        with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0"):
            F(m).cross_entropy(m.tensor(_u((2, 3))), m.tensor([0, 1]), label_smoothing=1.5)


# Regression losses ---------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize(
    "name,kw",
    [
        ("mse_loss", {}),
        ("l1_loss", {}),
        ("smooth_l1_loss", {"beta": 0.5}),
        ("smooth_l1_loss", {"beta": 0.0}),
        ("huber_loss", {"delta": 0.3}),
    ],
)
def test_regression_losses(reduction: str, name: str, kw: dict[str, Any]) -> None:
    compare(
        lambda m, a, b, **k: getattr(F(m), name)(a, b, **k),
        [_u((3, 4)), _u((3, 4))],
        {"reduction": reduction, **kw},
    )
    compare(
        lambda m, a, b, **k: getattr(F(m), name)(a, b, **k),
        [_u((3, 4)), _u((3, 4))],
        {"reduction": reduction, **kw},
        dtype="float32",
        rtol=1e-5,
        atol=1e-6,
    )


def test_mse_loss_broadcast_warning() -> None:
    for m in (cr, torch):
        with pytest.warns(
            UserWarning,
            match=r"Using a target size \(torch.Size\(\[4\]\)\) that"
            r" is different to the input size",
        ):
            F(m).mse_loss(m.tensor(_u((3, 4))), m.tensor(_u((4,))))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_binary_cross_entropy(reduction: str) -> None:
    x = _u((3, 4), 0.05, 0.95)
    t = _u((3, 4), 0, 1)
    w = _u((3, 1), 0.5, 2)
    compare(
        lambda m, a, b, c: F(m).binary_cross_entropy(a, b, c, reduction=reduction),
        [x, t, w],
        grad=(0, 1),
    )
    # Exact 0 and 1 inputs: the logs are clamped to -100, as PyTorch.
    x2 = np.array([0.0, 1.0, 0.5])
    t2 = np.array([1.0, 0.0, 1.0])
    compare(lambda m, a, b: F(m).binary_cross_entropy(a, b, reduction=reduction), [x2, t2], grad=())


def test_binary_cross_entropy_errors() -> None:
    for m in (cr, torch):
        with pytest.raises(RuntimeError, match="all elements of input should be between 0"):
            F(m).binary_cross_entropy(m.tensor([1.5]), m.tensor([1.0]))
        with pytest.raises(ValueError, match="Using a target size"):
            F(m).binary_cross_entropy(m.tensor([0.5, 0.5]), m.tensor([1.0]))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_binary_cross_entropy_with_logits(reduction: str) -> None:
    x = np.array([[-200.0, -3.0, 0.0, 0.5], [2.0, 50.0, 300.0, -0.7]])
    t = _u((2, 4), 0, 1)
    compare(
        lambda m, a, b, **k: F(m).binary_cross_entropy_with_logits(a, b, **k),
        [x, t],
        {"reduction": reduction},
    )
    compare(
        lambda m, a, b, w, pw, **k: F(m).binary_cross_entropy_with_logits(
            a, b, weight=w, pos_weight=pw, **k
        ),
        [x, t, _u((4,), 0.5, 2), _u((4,), 0.5, 3)],
        {"reduction": reduction},
        grad=(0, 1),
    )
    compare(
        lambda m, a, b, **k: F(m).binary_cross_entropy_with_logits(a, b, **k),
        [x, t],
        {"reduction": reduction},
        dtype="float32",
        rtol=1e-5,
        atol=1e-5,
    )


@pytest.mark.parametrize("reduction", ["none", "sum", "batchmean", "mean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction: str, log_target: bool) -> None:
    x = np.log(RNG.dirichlet(np.ones(4), 3))
    t = RNG.dirichlet(np.ones(4), 3)
    if log_target:
        t = np.log(t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(
            lambda m, a, b, **k: F(m).kl_div(a, b, **k),
            [x, t],
            {"reduction": reduction, "log_target": log_target},
        )
    if reduction == "mean":
        with pytest.warns(UserWarning, match="reduction: 'mean' divides the total loss"):
            F(cr).kl_div(cr.tensor(x), cr.tensor(t), log_target=log_target)


def test_losses_double_backward_match_torch() -> None:
    x = _u((4, 3), -2, 2)
    t = np.array([0, 2, 1, 2])
    tp = _u((4, 3), 0, 1)
    calls = [
        (lambda m, a: F(m).cross_entropy(a, m.tensor(t), label_smoothing=0.1)),
        (lambda m, a: F(m).binary_cross_entropy_with_logits(a, m.tensor(tp))),
        (lambda m, a: F(m).smooth_l1_loss(a, m.tensor(tp), beta=0.5)),
    ]
    for call in calls:
        outs = []
        for m in (cr, torch):
            a = m.tensor(x, requires_grad=True)
            (g,) = m.autograd.grad(call(m, a), a, create_graph=True)
            (gg,) = m.autograd.grad((g * g).sum(), a)
            outs.append(np.asarray(gg._data) if m is cr else gg.numpy())
        np.testing.assert_allclose(outs[0], outs[1], rtol=1e-7, atol=1e-10)


# Dropout -----------------------------------------------------------------------------------


def test_dropout_statistics_scale_and_gradient() -> None:
    cr.manual_seed(3)
    x = cr.ones(200, 100, requires_grad=True)
    y = F(cr).dropout(x, p=0.3)
    ya = np.asarray(y._data)
    kept = ya != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(ya[kept], 1 / 0.7, rtol=1e-6)
    assert y.dtype == cr.float32
    y.sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad._data), ya)
    cr.manual_seed(3)
    y2 = F(cr).dropout(cr.ones(200, 100), p=0.3)
    np.testing.assert_array_equal(np.asarray(y2._data), ya)


def test_dropout_eval_p0_p1_and_errors() -> None:
    x = cr.tensor(_u((3, 4)))
    assert F(cr).dropout(x, 0.5, training=False) is x
    np.testing.assert_array_equal(np.asarray(F(cr).dropout(x, 1.0)._data), 0.0)
    for m in (cr, torch):
        with pytest.raises(
            ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"
        ):
            F(m).dropout(m.tensor([1.0]), 1.5)


# Normalization -------------------------------------------------------------------------------


@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 5), (2, 3, 2, 2)])
def test_batch_norm_training_updates_running_stats(affine: bool, shape: tuple[int, ...]) -> None:
    x = _u(shape)
    c = shape[1]
    w, b = _u((c,)), _u((c,))
    stats = {}
    for m in (cr, torch):
        rm = m.tensor(_u((c,)) * 0 + 0.2)
        rv = m.tensor(np.full((c,), 1.5))
        args = (w, b) if affine else (None, None)
        xs = m.tensor(x, requires_grad=True)
        ws = [m.tensor(a, requires_grad=True) if a is not None else None for a in args]
        y = F(m).batch_norm(xs, rm, rv, ws[0], ws[1], training=True, momentum=0.3, eps=1e-3)
        stats[m.__name__] = (rm, rv, y)
    for i in range(2):
        np.testing.assert_allclose(
            np.asarray(stats["chainrule"][i]._data), stats["torch"][i].numpy(), rtol=1e-10
        )
    compare(
        lambda m, a, *wb: F(m).batch_norm(a, None, None, *wb, training=True),
        [x] + ([w, b] if affine else []),
    )
    compare(
        lambda m, a, rm, rv: F(m).batch_norm(a, rm, rv, training=False),
        [x, _u((c,)), _u((c,), 0.5, 2)],
        grad=(0,),
    )


def test_batch_norm_needs_more_than_one_value() -> None:
    for m in (cr, torch):
        with pytest.raises(
            ValueError,
            match="Expected more than 1 value per channel when "
            r"training, got input size torch.Size\(\[1, 3\]\)",
        ):
            F(m).batch_norm(m.tensor(_u((1, 3))), None, None, training=True)


@pytest.mark.parametrize("normalized_shape", [(4,), (3, 4)])
def test_layer_norm(normalized_shape: tuple[int, ...]) -> None:
    compare(
        lambda m, a, w, b: F(m).layer_norm(a, normalized_shape, w, b, eps=1e-3),
        [_u((2, 3, 4)), _u(normalized_shape), _u(normalized_shape)],
    )
    compare(
        lambda m, a: F(m).layer_norm(a, normalized_shape),
        [_u((2, 3, 4))],
        dtype="float32",
        rtol=1e-5,
        atol=1e-5,
    )


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_group_norm(groups: int) -> None:
    compare(
        lambda m, a, w, b: F(m).group_norm(a, groups, w, b), [_u((2, 4, 3, 2)), _u((4,)), _u((4,))]
    )


def test_embedding_padding_idx_gets_no_gradient() -> None:
    idx = np.array([[0, 2, 2], [1, 3, 2]])
    for p in (None, 2, -2):
        compare(lambda m, i, w: F(m).embedding(i, w, padding_idx=p), [idx, _u((4, 3))])


@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, 0), (3.0, -1)])
def test_normalize_with_zero_row(p: float, dim: int) -> None:
    x = _u((3, 4))
    x[1] = 1e-14
    compare(lambda m, a: F(m).normalize(a, p=p, dim=dim), [x], grad=())
    compare(lambda m, a: F(m).normalize(a, p=p, dim=dim), [_u((3, 4))])


def test_cosine_similarity_eps_and_broadcast() -> None:
    a = _u((3, 4))
    a[0] = 1e-10
    compare(lambda m, x, y: F(m).cosine_similarity(x, y), [a, _u((3, 4))])
    compare(lambda m, x, y: F(m).cosine_similarity(x, y, dim=0, eps=0.5), [_u((3, 4)), _u((3, 1))])


def test_linear_bilinear_float32() -> None:
    compare(
        lambda m, x, w, b: F(m).linear(x, w, b),
        [_u((2, 3)), _u((4, 3)), _u((4,))],
        dtype="float32",
        rtol=1e-5,
        atol=1e-6,
    )
    compare(
        lambda m, x, y, w: F(m).bilinear(x, y, w), [_u((2, 5, 3)), _u((2, 5, 2)), _u((4, 3, 2))]
    )


# Re-exported activations ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,kw",
    [
        ("relu", {}),
        ("relu6", {}),
        ("leaky_relu", {"negative_slope": 0.2}),
        ("elu", {}),
        ("selu", {}),
        ("celu", {"alpha": 0.5}),
        ("gelu", {"approximate": "tanh"}),
        ("gelu", {}),
        ("silu", {}),
        ("mish", {}),
        ("hardtanh", {"min_val": -0.5}),
        ("hardsigmoid", {}),
        ("hardswish", {}),
        ("softplus", {"beta": 2.0}),
        ("logsigmoid", {}),
        ("sigmoid", {}),
        ("tanh", {}),
    ],
)
def test_reexported_activations(name: str, kw: dict[str, Any]) -> None:
    compare(lambda m, a: getattr(F(m), name)(a, **kw), [_u((3, 4), -4, 4)])


def test_reexported_pad_and_one_hot() -> None:
    compare(lambda m, a: F(m).pad(a, (1, 2, 0, 1), value=0.5), [_u((2, 3))])
    c = F(cr).one_hot(cr.tensor([0, 2, 1]), 4)
    t = F(torch).one_hot(torch.tensor([0, 2, 1]), 4)
    np.testing.assert_array_equal(np.asarray(c._data), t.numpy())


def test_toplevel_forms() -> None:
    x = _u((4, 3, 2))
    compare(
        lambda m, a, w, b: m.batch_norm(a, w, b, None, None, True, 0.1, 1e-5, False),
        [x, _u((3,)), _u((3,))],
    )
    compare(lambda m, a: m.layer_norm(a, (2,)), [x])
    compare(lambda m, a: m.group_norm(a, 3), [x])
    compare(lambda m, w: m.embedding(w, m.tensor([[0, 2], [1, 1]]), 1), [_u((3, 2))])
    compare(lambda m, a, b: m.cosine_similarity(a, b, 0), [x, x[::-1].copy()])
    compare(lambda m, a: m.pixel_unshuffle(m.pixel_shuffle(a, 2), 2) * 2, [_u((1, 4, 2, 3))])
    compare(lambda m, a, b, w: m.bilinear(a, b, w), [_u((2, 3)), _u((2, 2)), _u((4, 3, 2))])
    compare(lambda m, a: m.dropout(a, 0.3, False), [x])


def test_dropout_inplace() -> None:
    cr.manual_seed(0)
    x = cr.ones(6, 7, requires_grad=True)
    y = x * 2
    z = F(cr).dropout(y, 0.5, inplace=True)
    assert z is y
    ya = np.asarray(y._data).copy()
    assert set(np.unique(ya)) <= {0.0, 4.0}
    y.sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad._data), ya)


@pytest.mark.parametrize(
    "shape,target,exc",
    [
        ((3, 4), np.array([[0, 1], [1, 1], [0, 0]]), RuntimeError),
        ((3, 4), np.array([0, 1]), ValueError),
        ((3, 4), np.array([0.5, 0.1, 0.2]), RuntimeError),
        ((3, 4, 2), np.array([[0, 1, 1], [1, 1, 0], [0, 0, 0]]), RuntimeError),
    ],
)
def test_loss_target_errors_match_torch(
    shape: tuple[int, ...], target: np.ndarray, exc: type
) -> None:
    msgs = []
    for m in (cr, torch):
        for fn in ("nll_loss", "cross_entropy"):
            with pytest.raises(exc) as info:
                getattr(F(m), fn)(m.tensor(_u(shape)), m.tensor(target))
            msgs.append(str(info.value))
    assert msgs[:2] == msgs[2:]


@pytest.mark.parametrize(
    "shape,wshape", [((2, 3, 4), (3,)), ((2, 3), (1,)), ((4,), (1,)), ((2, 3, 2, 2), (3,))]
)
def test_prelu(shape: tuple[int, ...], wshape: tuple[int, ...]) -> None:
    compare(lambda m, x, w: F(m).prelu(x, w), [_u(shape), _u(wshape, 0, 0.5)])
    for m in (cr, torch):
        with pytest.raises(
            RuntimeError,
            match="Mismatch of parameter numbers and input channel "
            "size. Found parameter numbers = 4 and channel "
            "size = 3.",
        ):
            F(m).prelu(m.tensor(_u((2, 3))), m.tensor(_u((4,))))


@pytest.mark.parametrize(
    "name,shape",
    [
        ("dropout1d", (4, 6, 5)),
        ("dropout1d", (6, 5)),
        ("dropout2d", (4, 6, 3, 3)),
        ("dropout3d", (4, 6, 2, 2, 2)),
        ("dropout3d", (6, 2, 2, 2)),
    ],
)
def test_channel_dropout(name: str, shape: tuple[int, ...]) -> None:
    cr.manual_seed(1)
    x = cr.ones(*shape, requires_grad=True)
    y = getattr(F(cr), name)(x, 0.5)
    ya = np.asarray(y._data)
    # Each channel is all zeros or all 1 / (1 - p).
    nspatial = {"dropout1d": 1, "dropout2d": 2, "dropout3d": 3}[name]
    per_channel = ya.reshape(-1, int(np.prod(shape[-nspatial:])))
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert np.all((per_channel == per_channel[:, :1]))
    assert 0 < (per_channel[:, 0] == 0).sum() < per_channel.shape[0]
    y.sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad._data), ya)
    assert getattr(F(cr), name)(x, 0.5, training=False) is x


def test_channel_dropout_errors_and_warnings() -> None:
    for m in (cr, torch):
        with pytest.raises(
            RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"
        ):
            F(m).dropout1d(m.ones(2, 3, 4, 5))
        with pytest.warns(UserWarning, match="dropout2d: Received a 3D input to dropout2d"):
            F(m).dropout2d(m.ones(2, 3, 4))
        with pytest.warns(UserWarning, match="dropout2d: Received a 2-D input to dropout2d"):
            F(m).dropout2d(m.ones(2, 3))


def test_relu_nan_zero_inf_and_double_backward_match_torch() -> None:
    # PyTorch's ReLU backward is threshold_backward: 0 where out <= 0, else g, so a NaN input
    # passes its gradient and 0 (or -0.0, -inf) blocks it; float32 and int keep their dtype.
    x = np.array([np.nan, 0.0, -0.0, 1.5, -2.0, np.inf, -np.inf])
    compare(lambda m, a: m.relu(a), [x])
    compare(lambda m, a: F(m).relu(a), [x], dtype="float32")
    compare(lambda m, a: m.relu(a), [np.array([-3, 0, 2])])
    outs = []
    for m in (cr, torch):
        a = m.tensor([-1.0, 0.5, 2.0], dtype=m.float64, requires_grad=True)
        (ga,) = m.autograd.grad((m.relu(a) ** 3).sum(), [a], create_graph=True)
        (gga,) = m.autograd.grad((ga * ga).sum(), [a])
        outs.append(np.asarray(gga._data) if m is cr else gga.numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)


def test_relu_rejects_bool_like_torch() -> None:
    msgs = []
    for m in (cr, torch):
        t = m.tensor([True, False])
        for f in (m.relu, m.nn.functional.relu, lambda x: x.relu_(), m.nn.ReLU()):
            with pytest.raises(RuntimeError) as e:
                f(t)
            msgs.append(str(e.value))
        assert t.tolist() == [True, False]
    assert set(msgs) == {"Boolean inputs not supported for relu"}
