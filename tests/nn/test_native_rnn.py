"""torch.lstm, torch.gru, torch.rnn_tanh, torch.rnn_relu (dense and packed overloads) and the
four *_cell kernels (chainrule/_nn_native.py) against PyTorch: outputs, final states and the
gradients of the input, states and every parameter; gradcheck in float64; error texts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")

TOL = {"float32": dict(rtol=2e-4, atol=2e-5), "float64": dict(rtol=1e-9, atol=1e-11)}
KERNELS = {"LSTM": "lstm", "GRU": "gru", "RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu"}


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _cr(t: Any, rg: bool = True) -> Any:
    return cr.tensor(_np(t).copy(), requires_grad=rg)


def _module(mode: str, dtype: str, **kw: Any) -> Any:
    torch.manual_seed(0)
    if mode.startswith("RNN"):
        nl = "tanh" if mode == "RNN_TANH" else "relu"
        m = torch.nn.RNN(3, 4, nonlinearity=nl, **kw)
    else:
        m = getattr(torch.nn, mode)(3, 4, **kw)
    return m.to(getattr(torch, dtype))


def _states(mode: str, m: Any, batch: int, dtype: str) -> list:
    d = 2 if m.bidirectional else 1
    out = m.proj_size if getattr(m, "proj_size", 0) else m.hidden_size
    g = torch.Generator().manual_seed(1)
    tdt = getattr(torch, dtype)
    shapes = [(m.num_layers * d, batch, out)]
    if mode == "LSTM":
        shapes.append((m.num_layers * d, batch, m.hidden_size))
    return [torch.randn(s, generator=g, dtype=tdt, requires_grad=True) for s in shapes]


def _compare(t_outs: Any, c_outs: Any, t_leaves: list, c_leaves: list, dtype: str) -> None:
    assert len(t_outs) == len(c_outs)
    rng = np.random.default_rng(0)
    tl, cl = 0, 0
    for t, c in zip(t_outs, c_outs):
        assert tuple(c.shape) == tuple(t.shape)
        np.testing.assert_allclose(_np(c), _np(t), **TOL[dtype])
        w = rng.standard_normal(tuple(t.shape))
        tl = tl + (t * torch.tensor(w, dtype=t.dtype)).sum()
        cl = cl + (c * cr.tensor(w.astype(_np(c).dtype))).sum()
    tl.backward()
    cl.backward()
    for k, (t, c) in enumerate(zip(t_leaves, c_leaves)):
        np.testing.assert_allclose(_np(c.grad), _np(t.grad), err_msg=f"leaf {k}", **TOL[dtype])


CONFIGS = [
    {},
    {"num_layers": 2, "bidirectional": True},
    {"num_layers": 2, "batch_first": True, "bias": False},
    {"bidirectional": True, "batch_first": True},
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", CONFIGS, ids=str)
@pytest.mark.parametrize("mode", list(KERNELS))
def test_dense_kernel_matches_torch(mode: str, kw: dict, dtype: str) -> None:
    m = _module(mode, dtype, **kw)
    bf = kw.get("batch_first", False)
    g = torch.Generator().manual_seed(2)
    x = torch.randn((2, 5, 3) if bf else (5, 2, 3), generator=g, dtype=m.weight_ih_l0.dtype)
    x.requires_grad_(True)
    states = _states(mode, m, 2, dtype)
    params = [p.detach().clone().requires_grad_(True) for p in m._flat_weights]
    hx_t: Any = tuple(states) if mode == "LSTM" else states[0]
    args = (m.bias, m.num_layers, 0.0, False, m.bidirectional, bf)
    t_out = getattr(torch, KERNELS[mode])(x, hx_t, tuple(params), *args)
    cx, cs, cp = _cr(x), [_cr(s) for s in states], [_cr(p) for p in params]
    hx_c: Any = tuple(cs) if mode == "LSTM" else cs[0]
    c_out = getattr(cr, KERNELS[mode])(cx, hx_c, tuple(cp), *args)
    assert isinstance(c_out, tuple) and len(c_out) == (3 if mode == "LSTM" else 2)
    _compare(t_out, c_out, [x, *states, *params], [cx, *cs, *cp], dtype)


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("mode", list(KERNELS))
def test_packed_kernel_matches_torch(mode: str, bidirectional: bool) -> None:
    dtype = "float64"
    m = _module(mode, dtype, num_layers=2, bidirectional=bidirectional)
    g = torch.Generator().manual_seed(3)
    seqs = [torch.randn(n, 3, generator=g, dtype=torch.float64) for n in (5, 3, 2)]
    packed = torch.nn.utils.rnn.pack_sequence(seqs)
    data = packed.data.detach().requires_grad_(True)
    bs = packed.batch_sizes
    states = _states(mode, m, 3, dtype)
    params = [p.detach().clone().requires_grad_(True) for p in m._flat_weights]
    hx_t: Any = tuple(states) if mode == "LSTM" else states[0]
    args = (True, 2, 0.0, False, bidirectional)
    t_out = getattr(torch, KERNELS[mode])(data, bs, hx_t, tuple(params), *args)
    cd, cs, cp = _cr(data), [_cr(s) for s in states], [_cr(p) for p in params]
    hx_c: Any = tuple(cs) if mode == "LSTM" else cs[0]
    cbs = cr.tensor(bs.numpy())
    c_out = getattr(cr, KERNELS[mode])(cd, cbs, hx_c, tuple(cp), *args)
    _compare(t_out, c_out, [data, *states, *params], [cd, *cs, *cp], dtype)


def test_lstm_with_projection_and_keywords() -> None:
    m = _module("LSTM", "float64", proj_size=2, num_layers=2)
    x = torch.randn(4, 2, 3, dtype=torch.float64, requires_grad=True)
    states = _states("LSTM", m, 2, "float64")
    params = [p.detach().clone().requires_grad_(True) for p in m._flat_weights]
    kw = dict(has_biases=True, num_layers=2, dropout=0.0, train=False, bidirectional=False)
    t_out = torch.lstm(x, tuple(states), tuple(params), batch_first=False, **kw)
    cx, cs, cp = _cr(x), [_cr(s) for s in states], [_cr(p) for p in params]
    c_out = cr.lstm(cx, tuple(cs), tuple(cp), batch_first=False, **kw)
    assert tuple(c_out[1].shape) == (2, 2, 2) and tuple(c_out[2].shape) == (2, 2, 4)
    _compare(t_out, c_out, [x, *states, *params], [cx, *cs, *cp], "float64")


def test_dense_kernel_gradcheck() -> None:
    m = _module("GRU", "float64", bidirectional=True)
    x = _cr(torch.randn(3, 2, 3, dtype=torch.float64))
    h = _cr(torch.randn(2, 2, 4, dtype=torch.float64))
    ps = [_cr(p) for p in m._flat_weights]

    def f(x: Any, h: Any, *ps: Any) -> Any:
        return cr.gru(x, h, ps, True, 1, 0.0, False, True, False)

    assert gradcheck(f, (x, h, *ps))


def test_lstm_dropout_in_training() -> None:
    m = _module("LSTM", "float32", num_layers=2)
    x = _cr(torch.randn(4, 2, 3), False)
    h = cr.zeros(2, 2, 4)
    ps = tuple(_cr(p, False) for p in m._flat_weights)
    base = cr.lstm(x, (h, h), ps, True, 2, 0.0, True, False, False)[0]
    cr.manual_seed(0)
    dropped = cr.lstm(x, (h, h), ps, True, 2, 1.0, True, False, False)[0]
    # p = 1 zeroes every input of the second layer: its output is that of a zero input.
    zero_in = cr.lstm(cr.zeros(4, 2, 4), (h[1:], h[1:]), ps[4:], True, 1, 0.0, False, False, False)
    np.testing.assert_allclose(_np(dropped), _np(zero_in[0]), rtol=1e-6)
    assert not np.allclose(_np(dropped), _np(base))
    # Not training: dropout is ignored.
    same = cr.lstm(x, (h, h), ps, True, 2, 1.0, False, False, False)[0]
    np.testing.assert_array_equal(_np(same), _np(base))


def test_kernel_errors_match_torch() -> None:
    m = _module("LSTM", "float32", num_layers=2)
    ps = tuple(m._flat_weights)
    x, h = torch.randn(5, 2, 3), torch.zeros(2, 2, 4)
    cps = tuple(_cr(p, False) for p in ps)
    cx, ch = _cr(x, False), _cr(h, False)
    cases = [
        (lambda L, x, h, p: L.lstm(x, (h, h), p[:-1], True, 2, 0.0, False, False, False)),
        (lambda L, x, h, p: L.lstm(x, (h,), p, True, 2, 0.0, False, False, False)),
        (
            lambda L, x, h, p: L.lstm(
                x[:, 0], (h[:, 0], h[:, 0]), p, True, 2, 0.0, False, False, False
            )
        ),
        (lambda L, x, h, p: L.lstm(x, (h, h), p, True, 2, 0.0, False, False)),
    ]
    for f in cases:
        with pytest.raises(Exception) as te:
            f(torch, x, h, ps)
        with pytest.raises(te.type) as ce:
            f(cr, cx, ch, cps)
        assert str(ce.value).split("\n")[0] == str(te.value).split("\n")[0]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("cell", ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"])
def test_cells_match_torch(cell: str, bias: bool) -> None:
    gates = {"lstm_cell": 4, "gru_cell": 3}.get(cell, 1)
    g = torch.Generator().manual_seed(4)

    def r(*s: int) -> Any:
        return torch.randn(*s, generator=g, dtype=torch.float64, requires_grad=True)

    x, h, c = r(3, 5), r(3, 4), r(3, 4)
    ws = [r(gates * 4, 5), r(gates * 4, 4)] + ([r(gates * 4), r(gates * 4)] if bias else [])
    hx_t: Any = (h, c) if cell == "lstm_cell" else h
    t_out = getattr(torch, cell)(x, hx_t, *ws)
    cx, chh, cc, cws = _cr(x), _cr(h), _cr(c), [_cr(w) for w in ws]
    hx_c: Any = (chh, cc) if cell == "lstm_cell" else chh
    c_out = getattr(cr, cell)(cx, hx_c, *cws)
    t_outs = t_out if isinstance(t_out, tuple) else (t_out,)
    c_outs = c_out if isinstance(c_out, tuple) else (c_out,)
    leaves_t = [x, h] + ([c] if cell == "lstm_cell" else []) + ws
    leaves_c = [cx, chh] + ([cc] if cell == "lstm_cell" else []) + cws
    _compare(t_outs, c_outs, leaves_t, leaves_c, "float64")
    inputs = tuple(_cr(t) for t in leaves_t)
    if cell == "lstm_cell":
        assert gradcheck(lambda x, h, c, *w: cr.lstm_cell(x, (h, c), *w), inputs)
    else:
        assert gradcheck(getattr(cr, cell), inputs)
