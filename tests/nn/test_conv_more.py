"""Convolutions (3-d, 1-d / 3-d transposed), pooling, unpooling, padding layers, instance and
local response normalization, fold / unfold: every layer and functional against torch from
identical weights (outputs, gradients of inputs and parameters, float32 and float64), and
gradcheck / gradgradcheck in float64 on small sizes."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn.functional as CF
from chainrule.autograd import gradcheck, gradgradcheck
from tests.nn._compare import DT, build_pair, close, compare_backward, error_of, leaves, to_cr

DTYPES = ["float32", "float64"]


def _inputs(shape: tuple[int, ...], dtype: str, seed: int = 0) -> tuple[Any, Any]:
    a = np.random.default_rng(seed).standard_normal(shape).astype(DT[dtype][0])
    t = torch.tensor(a, requires_grad=True)
    return t, to_cr(t)


def _run_module(
    make: Callable[[Any], Any],
    shape: tuple[int, ...],
    dtype: str,
    call: Callable[[Any, Any], Any] | None = None,
    seed: int = 0,
) -> None:
    tm, cm = build_pair(lambda lib: make(lib.nn), dtype)
    tx, cx = _inputs(shape, dtype, seed)
    call = call or (lambda m, x: m(x))
    to, co = call(tm, tx), call(cm, cx)
    tos = list(to) if isinstance(to, tuple) else [to]
    cos = list(co) if isinstance(co, tuple) else [co]
    for c, t in zip(cos, tos):
        if t.dtype == torch.int64:
            np.testing.assert_array_equal(c.numpy(), t.numpy())
        else:
            close(c, t, dtype, "output")
    fl = [(c, t) for c, t in zip(cos, tos) if t.dtype != torch.int64]
    compare_backward(
        [c for c, _ in fl],
        [t for _, t in fl],
        {**leaves(cm), "x": cx},
        {**leaves(tm), "x": tx},
        dtype,
        seed,
    )


CONVS = [
    (
        lambda nn: nn.Conv3d(
            4, 6, 3, stride=(1, 2, 1), padding=(1, 0, 2), dilation=(2, 1, 1), groups=2
        ),
        (2, 4, 7, 6, 5),
    ),
    (lambda nn: nn.Conv3d(3, 4, (2, 3, 1), padding="same", bias=False), (1, 3, 5, 4, 6)),
    (lambda nn: nn.Conv3d(2, 2, 2, padding="valid"), (2, 4, 4, 3)),
    (lambda nn: nn.Conv3d(2, 3, 3, padding=1, padding_mode="circular"), (1, 2, 4, 5, 4)),
    (lambda nn: nn.Conv3d(2, 3, 3, padding=(1, 2, 1), padding_mode="reflect"), (1, 2, 4, 5, 4)),
    (lambda nn: nn.Conv3d(2, 3, 2, stride=2, padding=1, padding_mode="replicate"), (2, 2, 5, 5, 3)),
    (
        lambda nn: nn.ConvTranspose1d(
            4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=1
        ),
        (2, 4, 7),
    ),
    (lambda nn: nn.ConvTranspose1d(3, 2, 4, dilation=2, bias=False), (3, 5)),
    (
        lambda nn: nn.ConvTranspose3d(
            4, 6, 3, stride=(2, 1, 3), padding=(1, 0, 1), output_padding=(1, 0, 2), groups=2
        ),
        (2, 4, 3, 4, 3),
    ),
    (
        lambda nn: nn.ConvTranspose3d(2, 3, (2, 3, 2), dilation=(2, 1, 2), padding=(2, 1, 0)),
        (1, 2, 4, 3, 3),
    ),
    (lambda nn: nn.ConvTranspose3d(2, 2, 3, stride=3, bias=False), (2, 3, 2, 2)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(CONVS)))
def test_conv_modules_match_torch(case: int, dtype: str) -> None:
    make, shape = CONVS[case]
    if case == 1:  # an even kernel with padding='same': both libraries warn
        with pytest.warns(UserWarning, match="padding='same' with even kernel"):
            _run_module(make, shape, dtype, seed=case)
        return
    _run_module(make, shape, dtype, seed=case)


def test_conv_transpose_output_size_and_params() -> None:
    tm, cm = build_pair(lambda lib: lib.nn.ConvTranspose3d(2, 3, 3, stride=2), "float64")
    tx, cx = _inputs((1, 2, 3, 3, 3), "float64")
    close(cm(cx, output_size=[8, 7, 8]), tm(tx, output_size=[8, 7, 8]), "float64")
    te = error_of(lambda: tm(tx, output_size=[8, 7]))
    ce = error_of(lambda: cm(cx, output_size=[8, 7]))
    assert ce == te and te is not None
    te = error_of(lambda: tm(tx, output_size=[8, 7, 11]))
    ce = error_of(lambda: cm(cx, output_size=[8, 7, 11]))
    assert te is not None and ce is not None and ce[0] is te[0]
    assert tuple(cm.weight.shape) == (2, 3, 3, 3, 3)
    assert cm.output_padding == (0, 0, 0) and cm.kernel_size == (3, 3, 3)
    m = chainrule.nn.Conv3d(4, 8, (1, 2, 3), groups=2)
    assert tuple(m.weight.shape) == (8, 2, 1, 2, 3) and tuple(m.bias.shape) == (8,)
    bound = 1 / np.sqrt(2 * 1 * 2 * 3)
    assert np.abs(m.weight.detach().numpy()).max() <= bound
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        chainrule.nn.ConvTranspose1d(2, 2, 3, padding_mode="reflect")
    assert repr(chainrule.nn.ConvTranspose1d(2, 4, 3, stride=2)) == repr(
        torch.nn.ConvTranspose1d(2, 4, 3, stride=2)
    )


def test_conv_functional_errors_match_torch() -> None:
    x, w = torch.zeros(1, 3, 4, 4, 4), torch.zeros(2, 2, 3, 3, 3)
    for args in ((x, w), (x[0, 0], w)):
        te = error_of(lambda: torch.nn.functional.conv3d(*args))
        ce = error_of(lambda: CF.conv3d(*(to_cr(a) for a in args)))
        assert te is not None and ce is not None and te[0] is ce[0]
    with pytest.raises(RuntimeError, match="padding='same' is not supported"):
        CF.conv3d(to_cr(x), to_cr(torch.zeros(2, 3, 3, 3, 3)), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="output padding must be smaller"):
        CF.conv_transpose3d(to_cr(x), to_cr(torch.zeros(3, 2, 3, 3, 3)), output_padding=1)


FUNCS = [
    (
        "conv3d",
        lambda F, x, w: F.conv3d(x, w, None, (2, 1, 1), (1, 0, 1), (1, 2, 1), 1),
        (1, 2, 3, 4, 3),
        (2, 2, 2, 2, 2),
    ),
    (
        "conv_transpose3d",
        lambda F, x, w: F.conv_transpose3d(x, w, None, 2, 1, 1, 1, 1),
        (1, 2, 2, 2, 2),
        (2, 1, 2, 2, 2),
    ),
    (
        "conv_transpose1d",
        lambda F, x, w: F.conv_transpose1d(x, w, None, 2, 0, 1, 2, 1),
        (2, 4, 3),
        (4, 1, 3),
    ),
]


@pytest.mark.parametrize("name,fn,xs,ws", FUNCS, ids=[f[0] for f in FUNCS])
def test_conv_functionals_gradcheck(name: str, fn: Any, xs: Any, ws: Any) -> None:
    rng = np.random.default_rng(1)
    x = chainrule.tensor(rng.standard_normal(xs), requires_grad=True)
    w = chainrule.tensor(rng.standard_normal(ws), requires_grad=True)
    assert gradcheck(lambda a, b: fn(CF, a, b), (x, w))
    assert gradgradcheck(lambda a, b: fn(CF, a, b), (x, w))
    tx, tw = torch.tensor(x.detach().numpy()), torch.tensor(w.detach().numpy())
    close(fn(CF, x, w), fn(torch.nn.functional, tx, tw), "float64")


POOLS = [
    (lambda nn: nn.MaxPool1d(3, 2, 1, return_indices=True), (2, 3, 9)),
    (lambda nn: nn.MaxPool1d(2, dilation=2, ceil_mode=True), (3, 8)),
    (
        lambda nn: nn.MaxPool3d((2, 3, 2), (1, 2, 2), (1, 1, 0), return_indices=True),
        (2, 2, 5, 6, 5),
    ),
    (lambda nn: nn.MaxPool3d(2, ceil_mode=True, dilation=(1, 2, 1)), (2, 5, 7, 5)),
    (lambda nn: nn.AvgPool1d(3, 2, 1, count_include_pad=False), (2, 3, 8)),
    (lambda nn: nn.AvgPool1d(2, ceil_mode=True), (3, 7)),
    (lambda nn: nn.AvgPool3d((3, 2, 2), (2, 1, 2), (1, 0, 1)), (2, 2, 6, 5, 5)),
    (lambda nn: nn.AvgPool3d(2, 2, 1, ceil_mode=True, count_include_pad=False), (2, 5, 4, 5)),
    (lambda nn: nn.AvgPool3d(2, divisor_override=3), (1, 2, 4, 4, 5)),
    (lambda nn: nn.AdaptiveAvgPool1d(4), (2, 3, 7)),
    (lambda nn: nn.AdaptiveAvgPool3d((2, None, 3)), (2, 2, 5, 4, 7)),
    (lambda nn: nn.AdaptiveMaxPool1d(3, return_indices=True), (2, 3, 8)),
    (lambda nn: nn.AdaptiveMaxPool2d((3, 2), return_indices=True), (2, 3, 7, 5)),
    (lambda nn: nn.AdaptiveMaxPool3d((2, 3, 2), return_indices=True), (2, 2, 5, 7, 4)),
    (lambda nn: nn.AdaptiveMaxPool3d(2), (2, 3, 4, 5)),
    (lambda nn: nn.LPPool1d(2, 3, 2), (2, 3, 8)),
    (lambda nn: nn.LPPool2d(3, (2, 3), ceil_mode=True), (2, 2, 5, 7)),
    (lambda nn: nn.LPPool3d(2, 2), (1, 2, 4, 4, 6)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(POOLS)))
def test_pool_modules_match_torch(case: int, dtype: str) -> None:
    make, shape = POOLS[case]
    seed = case
    if "LPPool" in repr(make(torch.nn)):
        # Positive inputs: a fractional power of a negative sum is NaN in both libraries.
        def call(m: Any, x: Any) -> Any:
            return m(x * x + 0.5)

        _run_module(make, shape, dtype, call, seed)
    else:
        _run_module(make, shape, dtype, seed=seed)


def test_max_pool3d_ties_pick_torchs_index() -> None:
    a = np.zeros((1, 1, 4, 4, 4))
    a[0, 0, 1, 2, 3] = a[0, 0, 0, 3, 1] = 1.0
    t = torch.tensor(a)
    to, ti = torch.nn.functional.max_pool3d(t, 2, 1, return_indices=True)
    co, ci = CF.max_pool3d(chainrule.tensor(a), 2, 1, return_indices=True)
    np.testing.assert_array_equal(ci.numpy(), ti.numpy())
    close(co, to, "float64")


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_roundtrip_matches_torch(nd: int) -> None:
    shape = (2, 3) + (6, 7, 5)[:nd]
    tx, cx = _inputs(shape, "float64", nd)
    tp = getattr(torch.nn, f"MaxPool{nd}d")(2, return_indices=True)
    cp = getattr(chainrule.nn, f"MaxPool{nd}d")(2, return_indices=True)
    tu = getattr(torch.nn, f"MaxUnpool{nd}d")(2)
    cu = getattr(chainrule.nn, f"MaxUnpool{nd}d")(2)
    (to, ti), (co, ci) = tp(tx), cp(cx)
    size = list(shape)
    tout, cout = tu(to, ti, output_size=size), cu(co, ci, output_size=size)
    close(cout, tout, "float64")
    te, ce = error_of(lambda: tu(to, ti)), error_of(lambda: cu(co, ci))  # 7 wide, not 6
    if nd == 1:
        close(cu(co, ci), tu(to, ti), "float64")
    else:
        # Which bad index is reported first depends on torch's loop order: compare the rest.
        assert ce is not None and te is not None and ce[0] is te[0]
        assert (
            ce[1].split(":")[0] == te[1].split(":")[0]
            and ce[1].split("(")[1] == te[1].split("(")[1]
        )
    compare_backward([cout], [tout], {"x": cx}, {"x": tx}, "float64")


def test_pool_functionals_gradcheck() -> None:
    rng = np.random.default_rng(3)
    x = chainrule.tensor(rng.standard_normal((1, 1, 3, 4, 3)), requires_grad=True)
    for f in (
        lambda a: CF.max_pool3d(a, 2, 1, 1),
        lambda a: CF.avg_pool3d(a, 3, 2, 1),
        lambda a: CF.adaptive_max_pool3d(a, (2, 3, 2)),
        lambda a: CF.adaptive_avg_pool3d(a, (2, 3, 2)),
        lambda a: CF.lp_pool3d(a * a + 1.0, 2.0, 2),
    ):
        assert gradcheck(f, (x,))
        assert gradgradcheck(f, (x,))
    y = chainrule.tensor(rng.standard_normal((2, 3, 7)), requires_grad=True)
    for f in (
        lambda a: CF.max_pool1d(a, 3, 2, 1),
        lambda a: CF.avg_pool1d(a, 3, 2, 1),
        lambda a: CF.adaptive_max_pool1d(a, 3),
        lambda a: CF.adaptive_avg_pool1d(a, 4),
    ):
        assert gradcheck(f, (y,))


PADS = [
    (lambda nn: nn.ZeroPad1d((1, 2)), (2, 3, 4)),
    (lambda nn: nn.ZeroPad2d(2), (2, 3, 4)),
    (lambda nn: nn.ZeroPad3d((1, 0, 2, 1, 0, 3)), (1, 2, 3, 2, 2)),
    (lambda nn: nn.ConstantPad1d(2, 3.5), (2, 4)),
    (lambda nn: nn.ConstantPad2d((1, 2, -1, 1), -1.0), (1, 2, 4, 3)),
    (lambda nn: nn.ConstantPad3d(1, 2.0), (2, 2, 2, 3)),
    (lambda nn: nn.ReflectionPad1d((2, 1)), (2, 3, 4)),
    (lambda nn: nn.ReflectionPad2d(2), (1, 2, 4, 3)),
    (lambda nn: nn.ReflectionPad3d((1, 2, 0, 1, 2, 1)), (1, 2, 3, 3, 4)),
    (lambda nn: nn.ReplicationPad1d(3), (3, 4)),
    (lambda nn: nn.ReplicationPad2d((1, 0, 3, 2)), (1, 2, 3, 3)),
    (lambda nn: nn.ReplicationPad3d(2), (2, 2, 3, 2)),
    (lambda nn: nn.CircularPad1d((2, 3)), (2, 3, 4)),
    (lambda nn: nn.CircularPad2d(1), (1, 2, 3, 3)),
    (lambda nn: nn.CircularPad3d((1, 2, 1, 0, 2, 1)), (1, 1, 3, 3, 4)),
]


@pytest.mark.parametrize("case", range(len(PADS)))
def test_padding_modules_match_torch(case: int) -> None:
    make, shape = PADS[case]
    _run_module(make, shape, "float64", seed=case)
    assert repr(make(chainrule.nn)) == repr(make(torch.nn))


NORMS = [
    (lambda nn: nn.InstanceNorm1d(3), (2, 3, 6)),
    (lambda nn: nn.InstanceNorm1d(3, affine=True), (3, 5)),
    (
        lambda nn: nn.InstanceNorm2d(4, affine=True, track_running_stats=True, momentum=0.3),
        (2, 4, 3, 5),
    ),
    (lambda nn: nn.InstanceNorm3d(2, eps=1e-3, affine=True), (2, 2, 3, 4, 3)),
    (lambda nn: nn.BatchNorm3d(3), (2, 3, 2, 3, 4)),
    (lambda nn: nn.LocalResponseNorm(3, alpha=0.1, beta=0.6, k=2.0), (2, 5, 3, 4)),
    (lambda nn: nn.LocalResponseNorm(4), (2, 6, 7)),
    (lambda nn: nn.LocalResponseNorm(2, alpha=0.5), (1, 3, 2, 3, 2)),
    (lambda nn: nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), (2, 3, 5, 6)),
    (lambda nn: nn.Unfold(2), (3, 4, 4)),
    (lambda nn: nn.Fold((5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), (2, 18, 3 * 4)),
    (lambda nn: nn.Fold(4, 2, stride=2), (8, 4)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(NORMS)))
def test_norm_fold_modules_match_torch(case: int, dtype: str) -> None:
    make, shape = NORMS[case]
    _run_module(make, shape, dtype, seed=case)


def test_instance_norm_running_stats_and_eval() -> None:
    tm, cm = build_pair(
        lambda lib: lib.nn.InstanceNorm2d(3, affine=True, track_running_stats=True), "float64"
    )
    for seed in range(2):
        tx, cx = _inputs((2, 3, 4, 4), "float64", seed)
        tm(tx)
        cm(cx)
    close(cm.running_mean, tm.running_mean, "float64")
    close(cm.running_var, tm.running_var, "float64")
    tm.eval()
    cm.eval()
    tx, cx = _inputs((2, 3, 4, 4), "float64", 5)
    close(cm(cx), tm(tx), "float64")
    assert list(cm.state_dict()) == list(tm.state_dict())


def test_norm_functionals_gradcheck() -> None:
    rng = np.random.default_rng(4)
    x = chainrule.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    w = chainrule.tensor(rng.standard_normal(3), requires_grad=True)
    b = chainrule.tensor(rng.standard_normal(3), requires_grad=True)
    assert gradcheck(lambda a, c, d: CF.instance_norm(a, weight=c, bias=d), (x, w, b))
    assert gradgradcheck(lambda a, c, d: CF.instance_norm(a, weight=c, bias=d), (x, w, b))
    assert gradcheck(lambda a: CF.local_response_norm(a, 2, 0.3, 0.7, 1.5), (x,))
    assert gradgradcheck(lambda a: CF.local_response_norm(a, 2, 0.3, 0.7, 1.5), (x,))
    y = chainrule.tensor(rng.standard_normal((1, 2, 4, 5)), requires_grad=True)
    assert gradcheck(lambda a: CF.unfold(a, (2, 3), 1, 1, (2, 1)), (y,))
    c = chainrule.tensor(rng.standard_normal((1, 8, 18)), requires_grad=True)
    assert gradcheck(lambda a: CF.fold(a, (4, 5), 2, 1, 1, (2, 1)), (c,))


FRAC = [
    (2, (2, 3, 9, 11), (2, 3), dict(output_size=(5, 4))),
    (2, (3, 10, 10), 3, dict(output_ratio=0.5)),
    (3, (2, 2, 9, 8, 10), (2, 3, 2), dict(output_size=(4, 3, 5))),
    (3, (2, 7, 6, 8), 2, dict(output_ratio=(0.5, 0.6, 0.7))),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(FRAC)))
def test_fractional_max_pool_matches_torch(case: int, dtype: str) -> None:
    nd, shape, k, kw = FRAC[case]
    lead = (shape[0], shape[1]) if len(shape) == nd + 2 else (1, shape[0])
    u = np.random.default_rng(case).random(lead + (nd,)).astype(DT[dtype][0])
    tm = getattr(torch.nn, f"FractionalMaxPool{nd}d")(
        k, return_indices=True, _random_samples=torch.tensor(u), **kw
    )
    cm = getattr(chainrule.nn, f"FractionalMaxPool{nd}d")(
        k, return_indices=True, _random_samples=chainrule.tensor(u), **kw
    )
    tx, cx = _inputs(shape, dtype, case)
    (to, ti), (co, ci) = tm(tx), cm(cx)
    close(co, to, dtype, "output")
    np.testing.assert_array_equal(ci.numpy(), ti.numpy())
    compare_backward([co], [to], {"x": cx}, {"x": tx}, dtype, case)


def test_fractional_max_pool_random_and_errors() -> None:
    chainrule.manual_seed(0)
    x = chainrule.tensor(np.random.default_rng(0).standard_normal((2, 3, 8, 8)), requires_grad=True)
    out = chainrule.nn.FractionalMaxPool2d(2, output_ratio=0.5)(x)
    assert tuple(out.shape) == (2, 3, 4, 4)
    assert gradcheck(
        lambda a: CF.fractional_max_pool2d(
            a, 2, (3, 3), _random_samples=chainrule.tensor(np.full((2, 3, 2), 0.3))
        ),
        (x,),
    )
    for kw in ({}, dict(output_size=2, output_ratio=0.5), dict(output_ratio=1.5)):
        te = error_of(lambda: torch.nn.FractionalMaxPool2d(2, **kw))
        ce = error_of(lambda: chainrule.nn.FractionalMaxPool2d(2, **kw))
        assert te is not None and ce is not None and ce[0] is te[0]


ERRORS = [
    lambda L: L.nn.functional.conv_transpose3d(
        L.zeros(1, 2, 3, 3, 3), L.zeros(2, 2, 2, 2, 2), output_padding=(1, 0, 2), stride=(1, 2, 2)
    ),
    lambda L: L.nn.functional.conv_transpose1d(
        L.zeros(1, 2, 3), L.zeros(2, 2, 2), output_padding=1
    ),
    lambda L: L.nn.functional.max_pool1d(L.zeros(1, 2, 5), 0),
    lambda L: L.nn.functional.max_pool1d(L.zeros(1, 2, 5, 3, 3), 2),
    lambda L: L.nn.functional.avg_pool3d(L.zeros(2, 5, 3), 2),
    lambda L: L.nn.functional.max_pool3d(L.zeros(2, 5, 3), 2),
    lambda L: L.nn.functional.unfold(L.zeros(1, 2, 3, 3), 4),
    lambda L: L.nn.functional.adaptive_avg_pool3d(L.zeros(1, 2, 3, 3, 3), -1),
    lambda L: L.nn.InstanceNorm1d(3)(L.zeros(1, 3, 4, 4)),
    lambda L: L.nn.functional.local_response_norm(L.zeros(2, 3), 2),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(case: int) -> None:
    te = error_of(lambda: ERRORS[case](torch))
    ce = error_of(lambda: ERRORS[case](chainrule))
    assert te is not None and ce is not None and ce[0] is te[0]
    assert " ".join(ce[1].split()) == " ".join(te[1].split())  # torch's text has a run of spaces
