"""swa_utils against torch.optim.swa_utils: AveragedModel (SWA, EMA, custom averages, with and
without buffers), update_bn and SWALR."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule

RNG = np.random.default_rng(3)
XS = [RNG.standard_normal((8, 3)) for _ in range(6)]
YS = [RNG.standard_normal((8, 2)) for _ in range(6)]


def _model(m):
    m.manual_seed(0)
    return m.nn.Sequential(
        m.nn.Linear(3, 4), m.nn.BatchNorm1d(4), m.nn.ReLU(), m.nn.Linear(4, 2)
    ).double()


def _pair():
    mt = _model(torch)
    mc = _model(chainrule)
    mc.load_state_dict({k: chainrule.tensor(v.numpy().copy()) for k, v in mt.state_dict().items()})
    return mc, mt


def _np(t):
    return t.detach().numpy()


def _avg_fns(m, kind):
    su = m.optim.swa_utils
    if kind == "swa":
        return {}
    if kind == "ema-multi":
        return dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.9))
    if kind == "swa-multi":
        return dict(multi_avg_fn=su.get_swa_multi_avg_fn())
    if kind == "ema":
        return dict(avg_fn=su.get_ema_avg_fn(0.8))
    if kind == "swa-fn":
        return dict(avg_fn=su.get_swa_avg_fn())
    return dict(avg_fn=lambda avg, p, n: 0.5 * avg + 0.5 * p + 0.01 * n)


def _train_and_average(m, model, kind, use_buffers, steps=12):
    avg = m.optim.swa_utils.AveragedModel(model, use_buffers=use_buffers, **_avg_fns(m, kind))
    opt = m.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for i in range(steps):
        x, y = m.tensor(XS[i % 6]), m.tensor(YS[i % 6])
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
        avg.update_parameters(model)
    return avg


KINDS = ["swa", "ema-multi", "swa-multi", "ema", "swa-fn", "custom"]


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_averaged_model_matches_torch(kind, use_buffers):
    if kind == "swa-multi" and use_buffers:
        # torch's get_swa_multi_avg_fn raises for the integer num_batches_tracked buffer;
        # chainrule averages it (see test_swa_multi_avg_fn_with_integer_buffers).
        mt = _model(torch)
        with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
            _train_and_average(torch, mt, kind, use_buffers)
        return
    mc, mt = _pair()
    ac = _train_and_average(chainrule, mc, kind, use_buffers)
    at = _train_and_average(torch, mt, kind, use_buffers)
    sc, st = ac.state_dict(), at.state_dict()
    assert list(sc) == list(st)
    for key in st:
        assert _np(sc[key]).dtype == _np(st[key]).dtype, key
        np.testing.assert_allclose(_np(sc[key]), _np(st[key]), rtol=1e-10, atol=1e-12, err_msg=key)
    assert int(sc["n_averaged"]) == 12
    # The average differs from the last model (it really averages).
    w_avg, w_last = _np(sc["module.0.weight"]), _np(mc.state_dict()["0.weight"])
    assert np.abs(w_avg - w_last).max() > 1e-3
    ac.eval()
    at.eval()
    x = XS[0]
    np.testing.assert_allclose(
        _np(ac(chainrule.tensor(x))), _np(at(torch.tensor(x))), rtol=1e-10, atol=1e-12
    )


def test_swa_multi_avg_fn_with_integer_buffers():
    mc, mt = _pair()
    ac = _train_and_average(chainrule, mc, "swa-multi", True)
    # It matches the default (per-tensor) SWA of torch, integer buffers included (copy_
    # truncates there too), up to the float32 weight 1 / (n + 1) of the multi-tensor form.
    at = _train_and_average(torch, mt, "swa", True)
    for key, value in at.state_dict().items():
        np.testing.assert_allclose(
            _np(ac.state_dict()[key]), _np(value), rtol=1e-6, atol=1e-8, err_msg=key
        )


def test_swa_is_the_mean_of_the_iterates():
    model = chainrule.nn.Linear(2, 1).double()
    avg = chainrule.optim.swa_utils.AveragedModel(model)
    seen = []
    for k in range(5):
        with chainrule.no_grad():
            model.weight.fill_(float(k * k))
        seen.append(k * k)
        avg.update_parameters(model)
    np.testing.assert_allclose(_np(avg.module.weight), np.mean(seen), rtol=1e-12)
    assert model.weight.requires_grad and avg.module.weight.requires_grad


def _loader(m, kind):
    if kind == "tuples":
        return [(m.tensor(x), m.tensor(y)) for x, y in zip(XS, YS)]
    return [m.tensor(x) for x in XS]


@pytest.mark.parametrize("kind", ["tensors", "tuples"])
def test_update_bn_matches_torch(kind):
    mc, mt = _pair()
    for model in (mc, mt):
        model[1].momentum = 0.3
        model.eval()
    chainrule.optim.swa_utils.update_bn(_loader(chainrule, kind), mc)
    torch.optim.swa_utils.update_bn(_loader(torch, kind), mt)
    for key, value in mt.state_dict().items():
        np.testing.assert_allclose(_np(mc.state_dict()[key]), _np(value), rtol=1e-10, err_msg=key)
    # The running mean is the plain mean of the per-batch means (cumulative average).
    h = [XS[i] @ _np(mt[0].weight).T + _np(mt[0].bias) for i in range(6)]
    np.testing.assert_allclose(
        _np(mc[1].running_mean), np.mean([a.mean(0) for a in h], 0), rtol=1e-10
    )
    assert mc[1].momentum == 0.3 and not mc.training and int(mc[1].num_batches_tracked) == 6


def test_update_bn_without_batch_norm_is_a_no_op():
    model = chainrule.nn.Linear(3, 2)
    calls = []
    chainrule.optim.swa_utils.update_bn(calls, model)  # the loader is not even iterated
    assert calls == []


SWALR_CASES = [
    dict(swa_lr=0.01),
    dict(swa_lr=[0.01, 0.2], anneal_epochs=5, anneal_strategy="linear"),
    dict(swa_lr=0.05, anneal_epochs=0),
    dict(swa_lr=0.05, anneal_epochs=1, anneal_strategy="cos"),
]


def _swalr_run(m, kwargs, reload_at=None, steps=30):
    a = m.nn.Parameter(m.tensor(np.ones(2)))
    b = m.nn.Parameter(m.tensor(np.ones(2)))

    def build():
        opt = m.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
        cos = m.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=20)
        return opt, cos

    opt, cos = build()
    swa = None
    lrs = []
    for i in range(steps):
        if i == reload_at:
            saved = opt.state_dict(), swa.state_dict()
            opt, cos = build()
            swa = m.optim.swa_utils.SWALR(opt, **kwargs)
            opt.load_state_dict(saved[0])
            swa.load_state_dict(saved[1])
        opt.step()
        if i < 8:
            cos.step()
        else:
            if swa is None:
                swa = m.optim.swa_utils.SWALR(opt, **kwargs)
            swa.step()
        lrs.append([g["lr"] for g in opt.param_groups])
    return np.array(lrs), swa.get_last_lr()


@pytest.mark.parametrize("kwargs", SWALR_CASES, ids=[str(k) for k in SWALR_CASES])
def test_swalr_matches_torch(kwargs):
    la, lasta = _swalr_run(chainrule, kwargs)
    lb, lastb = _swalr_run(torch, kwargs)
    np.testing.assert_allclose(la, lb, rtol=1e-12)
    np.testing.assert_allclose(lasta, lastb, rtol=1e-12)
    swa_lrs = kwargs["swa_lr"] if isinstance(kwargs["swa_lr"], list) else [kwargs["swa_lr"]] * 2
    np.testing.assert_allclose(la[-1], swa_lrs, rtol=1e-12)  # annealed to swa_lr and held
    lr_mid, _ = _swalr_run(chainrule, kwargs, reload_at=10)
    np.testing.assert_array_equal(lr_mid, la)


def test_errors_match_torch():
    for m in (chainrule, torch):
        su = m.optim.swa_utils
        model = m.nn.Linear(2, 2)
        opt = m.optim.SGD([{"params": [model.weight]}, {"params": [model.bias]}], lr=0.1)
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided"):
            su.get_ema_multi_avg_fn(1.5)
        with pytest.raises(ValueError, match=r"Invalid decay value -0.1 provided"):
            su.get_ema_avg_fn(-0.1)
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
            su.AveragedModel(
                model, avg_fn=su.get_swa_avg_fn(), multi_avg_fn=su.get_swa_multi_avg_fn()
            )
        with pytest.raises(ValueError, match="swa_lr must have the same length"):
            su.SWALR(opt, swa_lr=[0.1])
        with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
            su.SWALR(opt, swa_lr=0.1, anneal_strategy="exp")
        with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
            su.SWALR(opt, swa_lr=0.1, anneal_epochs=-1)


def test_swa_utils_loads_on_first_use():
    import subprocess
    import sys

    code = (
        "import sys, chainrule.optim as o; assert 'chainrule.optim.swa_utils' not in sys.modules;"
        " assert o.swa_utils.SWALR.__name__ == 'SWALR'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
