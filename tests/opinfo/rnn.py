"""OpInfo rows for chainrule/ops/rnn.py (the fused LSTM/GRU pointwise ops) and the cell
functions of chainrule/nn/_rnn_functional.py, against PyTorch's ``torch.lstm_cell``,
``torch.gru_cell``, ``torch.rnn_tanh_cell`` and ``torch.rnn_relu_cell`` (the pointwise ops
against the same equations written with torch ops)."""

from __future__ import annotations

from tests.opinfo.core import OpInfo, Sample


def _torch(m):
    return m.__name__ == "torch"


def _lstm_pw(m, xg, hg, c):
    if not _torch(m):
        from chainrule.ops.rnn import lstm_pointwise

        return lstm_pointwise(xg, hg, c)
    i, f, g, o = (xg + hg).chunk(4, -1)
    c2 = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c2.tanh(), c2


def _gru_pw(m, gi, gh, h, b=None):
    if not _torch(m):
        from chainrule.ops.rnn import gru_pointwise

        return gru_pointwise(gi, gh, h, b)
    if b is not None:
        gh = gh + b
    ir, iz, inn = gi.chunk(3, -1)
    hr, hz, hn = gh.chunk(3, -1)
    r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
    n = (inn + r * hn).tanh()
    return (1 - z) * n + z * h


def _layer_steps(m, a, b, c):
    if not _torch(m):
        from chainrule.ops.rnn import lstm_layer_steps

        return lstm_layer_steps([a, b, c])
    return m.stack([a, b, c])


def _u(rng, shape, scale=1.0):
    return rng.standard_normal(shape) * scale


def _lstm_samples(rng):
    return [
        Sample((_u(rng, (3, 8)), _u(rng, (3, 8)), _u(rng, (3, 2))), name="batched"),
        Sample((_u(rng, (8,)), _u(rng, (8,)), _u(rng, (2,))), name="unbatched"),
        Sample((_u(rng, (2, 12), 4), _u(rng, (2, 12), 4), _u(rng, (2, 3))), name="saturating"),
    ]


def _gru_samples(rng):
    return [
        Sample((_u(rng, (3, 6)), _u(rng, (3, 6)), _u(rng, (3, 2)), _u(rng, (6,))), name="bias"),
        Sample((_u(rng, (2, 9)), _u(rng, (2, 9)), _u(rng, (2, 3))), name="nobias"),
        Sample(
            (_u(rng, (6,), 4), _u(rng, (6,), 4), _u(rng, (2,)), _u(rng, (6,))), name="unbatched"
        ),
    ]


def _cell(name):
    def call(m, x, h, *rest):
        if _torch(m):
            return getattr(m, name)(x, h, *rest)
        from chainrule.nn import _rnn_functional as RF

        return getattr(RF, name)(x, h, *rest)

    return call


def _lstm_cell(m, x, h, c, *w):
    if _torch(m):
        return m.lstm_cell(x, (h, c), *w)
    from chainrule.nn import _rnn_functional as RF

    return RF.lstm_cell(x, (h, c), *w)


def _cell_samples(gates):
    def gen(rng):
        g = 2 * gates
        return [
            Sample(
                (
                    _u(rng, (3, 4)),
                    _u(rng, (3, 2)),
                    _u(rng, (g, 4)),
                    _u(rng, (g, 2)),
                    _u(rng, (g,)),
                    _u(rng, (g,)),
                ),
                name="bias",
            ),
            Sample(
                (_u(rng, (1, 4)), _u(rng, (1, 2)), _u(rng, (g, 4)), _u(rng, (g, 2))), name="nobias"
            ),
        ]

    return gen


def _lstm_cell_samples(rng):
    return [
        Sample(
            (
                _u(rng, (3, 4)),
                _u(rng, (3, 2)),
                _u(rng, (3, 2)),
                _u(rng, (8, 4)),
                _u(rng, (8, 2)),
                _u(rng, (8,)),
                _u(rng, (8,)),
            ),
            name="bias",
        ),
        Sample(
            (_u(rng, (2, 4)), _u(rng, (2, 2)), _u(rng, (2, 2)), _u(rng, (8, 4)), _u(rng, (8, 2))),
            name="nobias",
        ),
    ]


OPS = [
    OpInfo("lstm_pointwise", _lstm_pw, samples=_lstm_samples),
    OpInfo("gru_pointwise", _gru_pw, samples=_gru_samples),
    OpInfo(
        "lstm_layer_steps",
        _layer_steps,
        samples=lambda rng: [Sample(tuple(_u(rng, (2, 3)) for _ in range(3)))],
    ),
    OpInfo("rnn_tanh_cell", _cell("rnn_tanh_cell"), samples=_cell_samples(1), covers=()),
    OpInfo("rnn_relu_cell", _cell("rnn_relu_cell"), samples=_cell_samples(1), covers=()),
    OpInfo("gru_cell", _cell("gru_cell"), samples=_cell_samples(3), covers=()),
    OpInfo("lstm_cell", _lstm_cell, samples=_lstm_cell_samples, covers=()),
]
