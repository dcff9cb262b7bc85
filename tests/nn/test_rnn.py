"""RNN, LSTM, GRU and their cells against PyTorch from identical weights: outputs, final states
and the gradients of the input, the initial states and every parameter; plus gradcheck of the
functional forms, parameter names/shapes/init, attributes and error texts."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from chainrule.nn import _rnn_functional as RF

torch = pytest.importorskip("torch")

# torch's own notice that it falls back from oneDNN for LSTMs with projections.
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")

TOL = {"float32": dict(rtol=2e-4, atol=2e-5), "float64": dict(rtol=1e-9, atol=1e-11)}
MODES = [("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("LSTM", {}), ("GRU", {})]
CONFIGS = [
    {},
    {"num_layers": 2, "bidirectional": True},
    {"num_layers": 2, "batch_first": True, "bias": False},
    {"bidirectional": True, "batch_first": True},
]


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(a: Any, b: Any, dtype: str, what: str = "") -> None:
    np.testing.assert_allclose(_np(a), _np(b), err_msg=what, **TOL[dtype])


def make_pair(cls: str, *args: Any, dtype: str = "float64", **kw: Any) -> tuple[Any, Any]:
    """The torch module and a chainrule module loaded with its state dict (via NumPy)."""
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(*args, **kw).to(getattr(torch, dtype))
    cm = getattr(cr.nn, cls)(*args, **kw).to(getattr(cr, dtype))
    assert list(cm.state_dict()) == list(tm.state_dict())
    for (kc, vc), (kt, vt) in zip(cm.state_dict().items(), tm.state_dict().items()):
        assert tuple(vc.shape) == tuple(vt.shape), kc
    cm.load_state_dict({k: cr.tensor(_np(v)) for k, v in tm.state_dict().items()})
    return tm, cm


def _leaf(m: Any, a: np.ndarray) -> Any:
    return m.tensor(a, requires_grad=True)


def _flat_states(h: Any) -> list[Any]:
    return list(h) if isinstance(h, tuple) else [h]


def _run_both(
    tm: Any, cm: Any, x: np.ndarray, hx: list[np.ndarray] | None, dtype: str, seed: int = 0
) -> None:
    """Forward both, compare, then backward a random weighting of every output and compare
    the gradients of x, hx and all parameters."""
    lstm = isinstance(tm, torch.nn.LSTM)
    res = {}
    for m, mod in ((torch, tm), (cr, cm)):
        xt = _leaf(m, x.astype(dtype))
        hs = None if hx is None else [_leaf(m, h.astype(dtype)) for h in hx]
        arg = None if hs is None else (tuple(hs) if lstm else hs[0])
        out, h = mod(xt, arg)
        outs = [out] + _flat_states(h)
        rng = np.random.default_rng(seed)
        loss = sum(
            (o * m.tensor(rng.standard_normal(tuple(o.shape)).astype(dtype))).sum() for o in outs
        )
        loss.backward()
        res[m] = (
            outs,
            xt.grad,
            [] if hs is None else [s.grad for s in hs],
            [p.grad for p in mod.parameters()],
        )
    (to, tgx, tgh, tgp), (co, cgx, cgh, cgp) = res[torch], res[cr]
    assert len(to) == len(co)
    for a, b in zip(to, co):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b, dtype, "outputs")
    _close(tgx, cgx, dtype, "grad input")
    for a, b in zip(tgh, cgh):
        _close(a, b, dtype, "grad hx")
    names = [n for n, _ in tm.named_parameters()]
    for n, a, b in zip(names, tgp, cgp):
        _close(a, b, dtype, f"grad {n}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "cfg", CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default"
)
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m[0] + "".join(m[1].values()))
def test_layers_match_torch(mode: Any, cfg: dict, dtype: str) -> None:
    cls, extra = mode
    tm, cm = make_pair(cls, 3, 5, dtype=dtype, **extra, **cfg)
    rng = np.random.default_rng(1)
    shape = (2, 4, 3) if cfg.get("batch_first") else (4, 2, 3)
    x = rng.standard_normal(shape)
    n = cfg.get("num_layers", 1) * (2 if cfg.get("bidirectional") else 1)
    hx = [rng.standard_normal((n, 2, 5)) for _ in range(2 if cls == "LSTM" else 1)]
    _run_both(tm, cm, x, hx, dtype)
    _run_both(tm, cm, x, None, dtype, seed=2)  # zero initial states


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "cfg", [{}, {"num_layers": 2, "bidirectional": True}, {"batch_first": True, "bias": False}]
)
def test_lstm_proj_size(cfg: dict, dtype: str) -> None:
    tm, cm = make_pair("LSTM", 3, 5, proj_size=2, dtype=dtype, **cfg)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 3))
    n = cfg.get("num_layers", 1) * (2 if cfg.get("bidirectional") else 1)
    _run_both(
        tm,
        cm,
        x,
        [
            rng.standard_normal((n, 3 if cfg.get("batch_first") else 4, 2)),
            rng.standard_normal((n, 3 if cfg.get("batch_first") else 4, 5)),
        ],
        dtype,
    )
    assert [tuple(p.shape) for p in cm.all_weights[0]] == [
        (20, 3),
        (20, 2),
        *([(20,), (20,)] if cfg.get("bias", True) else []),
        (2, 5),
    ]


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("with_hx", [False, True])
def test_unbatched(cls: str, with_hx: bool) -> None:
    tm, cm = make_pair(cls, 3, 4, num_layers=2, bidirectional=True, batch_first=True)
    rng = np.random.default_rng(4)
    hx = [rng.standard_normal((4, 4)) for _ in range(2 if cls == "LSTM" else 1)]
    _run_both(tm, cm, rng.standard_normal((5, 3)), hx if with_hx else None, "float64")


def _packed_both(cls: str, lengths: list[int], enforce_sorted: bool, dtype: str, **kw: Any) -> None:
    tm, cm = make_pair(cls, 3, 4, dtype=dtype, **kw)
    lstm = cls == "LSTM"
    rng = np.random.default_rng(5)
    T, B = max(lengths), len(lengths)
    x = rng.standard_normal((T, B, 3)).astype(dtype)
    n = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    sizes = [kw.get("proj_size") or 4, 4][: 2 if lstm else 1]
    hx = [rng.standard_normal((n, B, k)).astype(dtype) for k in sizes]
    res = {}
    for m, mod in ((torch, tm), (cr, cm)):
        R = m.nn.utils.rnn
        xt = _leaf(m, x)
        hs = [_leaf(m, h) for h in hx]
        packed = R.pack_padded_sequence(xt, m.tensor(lengths), enforce_sorted=enforce_sorted)
        out, h = mod(packed, tuple(hs) if lstm else hs[0])
        assert isinstance(out, R.PackedSequence)
        padded, lens = R.pad_packed_sequence(out)
        outs = [out.data, padded] + _flat_states(h)
        g = np.random.default_rng(6)
        loss = sum(
            (o * m.tensor(g.standard_normal(tuple(o.shape)).astype(dtype))).sum() for o in outs
        )
        loss.backward()
        res[m] = (
            outs,
            _np(lens),
            _np(out.batch_sizes),
            xt.grad,
            [s.grad for s in hs],
            [p.grad for p in mod.parameters()],
        )
    t, c = res[torch], res[cr]
    for a, b in zip(t[0], c[0]):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b, dtype, "outputs")
    np.testing.assert_array_equal(t[1], c[1])
    np.testing.assert_array_equal(t[2], c[2])
    _close(t[3], c[3], dtype, "grad input")
    for a, b in zip(t[4] + t[5], c[4] + c[5]):
        _close(a, b, dtype, "grad hx / params")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_packed_unsorted(cls: str, dtype: str) -> None:
    _packed_both(cls, [2, 5, 1, 5, 3], False, dtype, num_layers=2, bidirectional=True)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_packed_sorted(cls: str) -> None:
    _packed_both(cls, [4, 4, 2, 1], True, "float64", bidirectional=True)
    _packed_both(cls, [3, 1], True, "float64", num_layers=2, bias=False)


def test_packed_lstm_proj() -> None:
    _packed_both("LSTM", [3, 4, 1], False, "float64", proj_size=2, num_layers=2, bidirectional=True)


def test_packed_without_hx_and_batch_first() -> None:
    tm, cm = make_pair("GRU", 3, 4, batch_first=True)
    x = np.random.default_rng(7).standard_normal((3, 4, 3))
    outs = []
    for m, mod in ((torch, tm), (cr, cm)):
        R = m.nn.utils.rnn
        p = R.pack_padded_sequence(m.tensor(x), [2, 4, 3], batch_first=True, enforce_sorted=False)
        out, h = mod(p)
        outs.append((R.pad_packed_sequence(out, batch_first=True, total_length=5)[0], h))
    for a, b in zip(*outs):
        _close(a, b, "float64")


# Cells ---------------------------------------------------------------------------------------

CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {}), ("GRUCell", {})]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_hx", [True, False])
@pytest.mark.parametrize("cell", CELLS, ids=lambda c: c[0] + "".join(c[1].values()))
def test_cells_match_torch(cell: Any, with_hx: bool, batched: bool, bias: bool, dtype: str) -> None:
    cls, extra = cell
    tm, cm = make_pair(cls, 3, 4, bias=bias, dtype=dtype, **extra)
    rng = np.random.default_rng(8)
    lead = (5,) if batched else ()
    x = rng.standard_normal(lead + (3,)).astype(dtype)
    hx = [
        rng.standard_normal(lead + (4,)).astype(dtype) for _ in range(2 if cls == "LSTMCell" else 1)
    ]
    res = {}
    for m, mod in ((torch, tm), (cr, cm)):
        xt = _leaf(m, x)
        hs = [_leaf(m, h) for h in hx]
        arg = None if not with_hx else (tuple(hs) if cls == "LSTMCell" else hs[0])
        outs = _flat_states(mod(xt, arg))
        g = np.random.default_rng(9)
        sum(
            (o * m.tensor(g.standard_normal(tuple(o.shape)).astype(dtype))).sum() for o in outs
        ).backward()
        res[m] = (
            outs,
            [xt.grad] + ([s.grad for s in hs] if with_hx else []),
            [p.grad for p in mod.parameters()],
        )
    for a, b in zip(
        res[torch][0] + res[torch][1] + res[torch][2], res[cr][0] + res[cr][1] + res[cr][2]
    ):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b, dtype)


# Functional forms: gradcheck and double backward ------------------------------------------


def _t(rng: np.random.Generator, *shape: int) -> Any:
    return cr.tensor(rng.standard_normal(shape) * 0.7, requires_grad=True)


@pytest.mark.parametrize("fn", [RF.rnn_tanh_cell, RF.rnn_relu_cell, RF.gru_cell, RF.lstm_cell])
def test_cell_functions_gradcheck(fn: Any) -> None:
    rng = np.random.default_rng(10)
    g = {RF.gru_cell: 3, RF.lstm_cell: 4}.get(fn, 1)
    x, h, c = _t(rng, 2, 3), _t(rng, 2, 2), _t(rng, 2, 2)
    w = (_t(rng, g * 2, 3), _t(rng, g * 2, 2), _t(rng, g * 2), _t(rng, g * 2))
    if fn is RF.lstm_cell:

        def f(x, h, c, *w):
            return fn(x, (h, c), *w)

        args = (x, h, c, *w)
    else:

        def f(x, h, *w):
            return fn(x, h, *w)

        args = (x, h, *w)
    assert gradcheck(f, args)
    assert gradgradcheck(f, args)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH"])
def test_rnn_function_gradcheck_packed(mode: str) -> None:
    """Two layers, both directions, batch sizes [3, 2, 2, 1] (sequences ending early)."""
    rng = np.random.default_rng(11)
    g = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    batch_sizes = [3, 2, 2, 1]
    data = _t(rng, sum(batch_sizes), 2)
    hx = [_t(rng, 4, 3, 2) for _ in range(2 if mode == "LSTM" else 1)]
    weights = []
    for layer in range(2):
        for _ in range(2):
            weights += [
                _t(rng, g * 2, 2 if layer == 0 else 4),
                _t(rng, g * 2, 2),
                _t(rng, g * 2),
                _t(rng, g * 2),
                None,
            ]
    params = [w for w in weights if w is not None]

    def f(data: Any, *rest: Any) -> Any:
        hs, ps = list(rest[: len(hx)]), iter(rest[len(hx) :])
        ws = [None if w is None else next(ps) for w in weights]
        out, finals = RF.rnn(mode, data, batch_sizes, hs, ws, 2, True)
        return (out, *finals)

    assert gradcheck(f, (data, *hx, *params))


def test_lstm_double_backward_matches_torch() -> None:
    """A gradient penalty through an LSTM: d/dW of ||d loss / d x||^2 (create_graph)."""
    tm, cm = make_pair("LSTM", 3, 4, num_layers=2)
    x = np.random.default_rng(12).standard_normal((3, 2, 3))
    grads = []
    for m, mod in ((torch, tm), (cr, cm)):
        xt = _leaf(m, x)
        out, (h, c) = mod(xt)
        (gx,) = m.autograd.grad((out**2).sum() + c.sum(), xt, create_graph=True)
        (gx**2).sum().backward()
        grads.append([p.grad for p in mod.parameters()])
    for a, b in zip(*grads):
        _close(a, b, "float64")


# Module attributes, init, dropout ------------------------------------------------------------


def test_attributes_match_torch() -> None:
    for cls, kw in [
        ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2)),
        ("GRU", dict(num_layers=3, bias=False)),
        ("RNN", dict(bidirectional=True)),
    ]:
        tm, cm = make_pair(cls, 3, 4, **kw)
        assert cm._flat_weights_names == tm._flat_weights_names
        assert cm._all_weights == tm._all_weights
        assert [n for n, _ in cm.named_parameters()] == [n for n, _ in tm.named_parameters()]
        assert [[tuple(p.shape) for p in ws] for ws in cm.all_weights] == [
            [tuple(p.shape) for p in ws] for ws in tm.all_weights
        ]
        assert [w is getattr(cm, n) for w, n in zip(cm._flat_weights, cm._flat_weights_names)]
        assert repr(cm) == repr(tm)
        assert cm.flatten_parameters() is None
        for a in (
            "mode",
            "input_size",
            "hidden_size",
            "num_layers",
            "bias",
            "batch_first",
            "dropout",
            "bidirectional",
            "proj_size",
        ):
            assert getattr(cm, a) == getattr(tm, a), a
    for cls, kw in [
        ("RNNCell", {"nonlinearity": "relu"}),
        ("LSTMCell", {"bias": False}),
        ("GRUCell", {}),
    ]:
        tm, cm = make_pair(cls, 3, 4, **kw)
        assert repr(cm) == repr(tm)
        assert [n for n, _ in cm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert cr.nn.RNN(2, 3, 1, "relu").nonlinearity == "relu"


def test_state_dict_round_trip_to_torch() -> None:
    cm = cr.nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2).double()
    tm = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2).double()
    tm.load_state_dict({k: torch.tensor(_np(v)) for k, v in cm.state_dict().items()})
    x = np.random.default_rng(13).standard_normal((4, 2, 3))
    _close(tm(torch.tensor(x))[0], cm(cr.tensor(x))[0], "float64")


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"])
def test_init_is_uniform_in_bound(cls: str) -> None:
    cr.manual_seed(0)
    m = getattr(cr.nn, cls)(30, 40)
    bound = 1 / math.sqrt(40)
    vals = np.concatenate([_np(p).ravel() for p in m.parameters()])
    assert vals.min() >= -bound and vals.max() <= bound
    # U(-b, b) has standard deviation b / sqrt(3).
    assert abs(vals.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert m.weight_ih_l0.dtype == cr.float32 if cls[-4:] != "Cell" else True


def test_dropout_between_layers() -> None:
    rng = np.random.default_rng(14)
    x = rng.standard_normal((4, 2, 3))
    # p = 1 zeroes the first layer's output: deterministic, so comparable with torch.
    tm, cm = make_pair("LSTM", 3, 4, num_layers=2, dropout=1.0)
    _close(tm(torch.tensor(x))[0], cm(cr.tensor(x))[0], "float64")
    tm, cm = make_pair("GRU", 3, 4, num_layers=2, dropout=0.5)
    tm.eval()
    cm.eval()
    _close(tm(torch.tensor(x))[0], cm(cr.tensor(x))[0], "float64")
    cm.train()
    cr.manual_seed(1)
    a = _np(cm(cr.tensor(x))[0])
    cr.manual_seed(1)
    b = _np(cm(cr.tensor(x))[0])
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, _np(tm(torch.tensor(x))[0]))


def test_gradients_reach_every_parameter_once() -> None:
    """Shared-array gradients (both gate inputs of the fused op get the same array) must not
    be corrupted by in-place accumulation: two backward passes give twice the gradient."""
    m = cr.nn.LSTM(3, 4, num_layers=2).double()
    x = cr.tensor(np.random.default_rng(15).standard_normal((5, 2, 3)))
    m(x)[0].sum().backward()
    first = [_np(p.grad).copy() for p in m.parameters()]
    m(x)[0].sum().backward()
    for a, p in zip(first, m.parameters()):
        np.testing.assert_allclose(_np(p.grad), 2 * a, rtol=1e-12)


# Errors: same types and texts as torch ---------------------------------------------------


def _err(fn: Any) -> tuple[type, str] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001  (comparing whatever each library raises)
        return type(e).__name__, str(e)
    return None


def _same_error(build: Any) -> None:
    t, c = _err(lambda: build(torch)), _err(lambda: build(cr))
    if c is not None:  # dtypes print as chainrule.float32 here
        c = (c[0], c[1].replace("chainrule.", "torch."))
    assert t is not None and c == t, (t, c)


@pytest.mark.parametrize(
    "case",
    [
        lambda m: m.nn.LSTM(10, 20, 2)(m.randn(3, 4, 5)),
        lambda m: m.nn.LSTM(10, 20, 2)(m.randn(3, 4, 5, 6)),
        lambda m: m.nn.GRU(10, 20)(m.randn(3)),
        lambda m: m.nn.RNN(10, 20)(m.randn(3, 4, 5, 6)),
        lambda m: m.nn.LSTM(10, 20, 2)(m.randn(3, 4, 10), (m.randn(1, 4, 20), m.randn(2, 4, 20))),
        lambda m: m.nn.LSTM(10, 20, 2)(m.randn(3, 4, 10), (m.randn(2, 4, 20), m.randn(2, 3, 20))),
        lambda m: m.nn.LSTM(10, 20)(m.randn(3, 4, 10), (m.randn(2, 20), m.randn(2, 20))),
        lambda m: m.nn.LSTM(10, 20)(m.randn(3, 10), (m.randn(1, 1, 20), m.randn(1, 1, 20))),
        lambda m: m.nn.GRU(10, 20, 2)(m.randn(3, 4, 10), m.randn(1, 4, 20)),
        lambda m: m.nn.GRU(10, 20)(m.randn(3, 4, 10), m.randn(2, 20)),
        lambda m: m.nn.RNN(10, 20)(m.randn(3, 10), m.randn(1, 1, 20)),
        lambda m: m.nn.RNN(10, 20)(m.randn(0, 2, 10)),
        lambda m: m.nn.LSTM(10, 20)(m.randn(3, 2, 10, dtype=m.float64)),
        lambda m: m.nn.RNN(10, 20, nonlinearity="foo"),
        lambda m: m.nn.RNN(10, 20, proj_size=3),
        lambda m: m.nn.GRU(10, 20, proj_size=3),
        lambda m: m.nn.LSTM(10, 20, proj_size=20),
        lambda m: m.nn.LSTM(10, 20, proj_size=-1),
        lambda m: m.nn.LSTM(10, 20, dropout=1.5),
        lambda m: m.nn.LSTM(10, 20, dropout=True),
        lambda m: m.nn.LSTM(10, 0),
        lambda m: m.nn.LSTM(10, 20, num_layers=0),
        lambda m: m.nn.LSTM(10, 2.0),
        lambda m: m.nn.LSTM(10.0, 20),
        lambda m: m.nn.RNNBase("FOO", 10, 20),
        lambda m: m.nn.RNNCell(10, 20)(m.randn(3, 4, 10)),
        lambda m: m.nn.GRUCell(10, 20)(m.randn(3, 5)),
        lambda m: m.nn.LSTMCell(10, 20)(m.randn(3, 10), (m.randn(4, 20), m.randn(4, 20))),
        lambda m: m.nn.LSTMCell(10, 20)(m.randn(3, 10), (m.randn(3, 20), m.randn(3, 21))),
        lambda m: m.nn.LSTMCell(10, 20)(m.randn(3, 10), (m.randn(3, 20),)),
        lambda m: m.nn.GRUCell(10, 20)(m.randn(3, 10), m.randn(3, 21)),
        lambda m: m.nn.RNNCell(10, 20)(m.randn(10), m.randn(3, 20)),
        lambda m: m.nn.RNNCell(10, 20)(m.randn(3, 10), m.randn(20)),
        lambda m: m.nn.RNNCell(10, 20)(m.randn(3, 10), m.randn(1, 3, 20)),
        lambda m: m.nn.RNNCell(10, 20, nonlinearity="x")(m.randn(3, 10)),
    ],
)
def test_errors_match_torch(case: Any) -> None:
    _same_error(case)


def test_dropout_warning_matches_torch() -> None:
    with pytest.warns(
        UserWarning,
        match="non-zero dropout expects num_layers greater than 1, "
        "but got dropout=0.5 and num_layers=1",
    ):
        cr.nn.LSTM(3, 4, dropout=0.5)
