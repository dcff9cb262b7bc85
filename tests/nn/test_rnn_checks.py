"""RNNBase's public check methods (check_input, get_expected_hidden_size, check_hidden_size,
check_forward_args, permute_hidden, LSTM's cell-size variants) against PyTorch's."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import nn


def _pair(kind, *args, **kwargs):
    return getattr(nn, kind)(*args, **kwargs), getattr(torch.nn, kind)(*args, **kwargs)


def _both(shape):
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return cr.tensor(a), torch.tensor(a)


def _err(fn_c, fn_t):
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(type(et.value)) as ec:
        fn_c()
    # dtypes print as chainrule.float32 where torch prints torch.float32
    assert str(ec.value).replace("chainrule.", "torch.") == str(et.value)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_expected_hidden_size(kind, batch_first, bidirectional):
    m, t = _pair(kind, 4, 5, num_layers=2, batch_first=batch_first, bidirectional=bidirectional)
    xc, xt = _both((3, 2, 4))
    assert m.get_expected_hidden_size(xc, None) == t.get_expected_hidden_size(xt, None)
    bs = [3, 2]
    assert m.get_expected_hidden_size(xc, cr.tensor(bs)) == t.get_expected_hidden_size(
        xt, torch.tensor(bs)
    )


def test_lstm_proj_sizes():
    m, t = _pair("LSTM", 4, 5, proj_size=3, num_layers=2)
    xc, xt = _both((3, 2, 4))
    assert m.get_expected_hidden_size(xc, None) == t.get_expected_hidden_size(xt, None) == (2, 2, 3)
    assert m.get_expected_cell_size(xc, None) == t.get_expected_cell_size(xt, None) == (2, 2, 5)
    hc, ht = _both((2, 2, 3))
    cc, ct = _both((2, 2, 5))
    m.check_forward_args(xc, (hc, cc), None)
    t.check_forward_args(xt, (ht, ct), None)
    _err(
        lambda: m.check_forward_args(xc, (cc, cc), None),
        lambda: t.check_forward_args(xt, (ct, ct), None),
    )
    _err(
        lambda: m.check_forward_args(xc, (hc, hc), None),
        lambda: t.check_forward_args(xt, (ht, ht), None),
    )


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize(
    "shape,bs",
    [
        ((3, 2, 3), None),
        ((3, 4), None),
        ((2, 3, 2, 4), None),
        ((3, 2, 4), [2, 1]),
        ((6, 3), [2, 1]),
    ],
)
def test_check_input_errors(kind, shape, bs):
    m, t = _pair(kind, 4, 5)
    xc, xt = _both(shape)
    bc = None if bs is None else cr.tensor(bs)
    btt = None if bs is None else torch.tensor(bs)
    _err(lambda: m.check_input(xc, bc), lambda: t.check_input(xt, btt))


def test_check_input_dtype():
    m, t = _pair("GRU", 4, 5)
    _err(
        lambda: m.check_input(cr.zeros((3, 2, 4), dtype=cr.float64), None),
        lambda: t.check_input(torch.zeros((3, 2, 4), dtype=torch.float64), None),
    )


def test_check_hidden_size_msg():
    m, t = _pair("RNN", 4, 5)
    hc, ht = _both((1, 3, 5))
    _err(lambda: m.check_hidden_size(hc, (1, 2, 5)), lambda: t.check_hidden_size(ht, (1, 2, 5)))
    _err(
        lambda: m.check_hidden_size(hc, (1, 2, 5), msg="bad {} vs {}"),
        lambda: t.check_hidden_size(ht, (1, 2, 5), msg="bad {} vs {}"),
    )
    m.check_hidden_size(hc, (1, 3, 5))
    _err(
        lambda: m.check_forward_args(_both((7, 2, 4))[0], hc, None),
        lambda: t.check_forward_args(_both((7, 2, 4))[1], ht, None),
    )


def test_forward_errors_are_torchs():
    m, t = _pair("RNN", 4, 5)
    xc, xt = _both((7, 2, 3))
    _err(lambda: m(xc), lambda: t(xt))
    xc, xt = _both((7, 2, 4))
    hc, ht = _both((1, 3, 5))
    _err(lambda: m(xc, hc), lambda: t(xt, ht))
    m, t = _pair("LSTM", 4, 5, proj_size=2)
    hc, ht = _both((1, 2, 2))
    _err(lambda: m(xc, (hc, hc)), lambda: t(xt, (ht, ht)))


@pytest.mark.parametrize("kind", ["RNN", "LSTM"])
def test_permute_hidden(kind):
    m, t = _pair(kind, 4, 5)
    hc, ht = _both((2, 3, 5))
    perm = [2, 0, 1]
    if kind == "LSTM":
        gc = m.permute_hidden((hc, hc * 2), cr.tensor(perm))
        gt = t.permute_hidden((ht, ht * 2), torch.tensor(perm))
        for a, b in zip(gc, gt):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert m.permute_hidden((hc, hc), None)[0] is hc
    else:
        np.testing.assert_array_equal(
            m.permute_hidden(hc, cr.tensor(perm)).numpy(),
            t.permute_hidden(ht, torch.tensor(perm)).numpy(),
        )
        assert m.permute_hidden(hc, None) is hc


def test_surface():
    m, t = _pair("LSTM", 4, 5, num_layers=2, bidirectional=True, proj_size=3)
    assert m._flat_weights_names == t._flat_weights_names
    assert [[tuple(p.shape) for p in ws] for ws in m.all_weights] == [
        [tuple(p.shape) for p in ws] for ws in t.all_weights
    ]
    assert m.flatten_parameters() is None


def _recording(lib, kind):
    """A subclass of ``lib.nn.<kind>`` whose check_forward_args and permute_hidden record
    what forward passes them (shapes, and the permutation as a list or None)."""
    base = getattr(lib.nn, kind)

    def shapes(h):
        return [tuple(s.shape) for s in h] if isinstance(h, tuple) else tuple(h.shape)

    class Recorded(base):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.calls = []

        def check_forward_args(self, input, hidden, batch_sizes):
            bs = None if batch_sizes is None else [int(b) for b in batch_sizes]
            self.calls.append(("check", tuple(input.shape), shapes(hidden), bs))
            super().check_forward_args(input, hidden, batch_sizes)

        def permute_hidden(self, hx, permutation):
            perm = None if permutation is None else [int(i) for i in permutation]
            self.calls.append(("permute", shapes(hx), perm))
            return super().permute_hidden(hx, permutation)

    return Recorded


def _hidden(lib, kind, shape):
    if kind == "LSTM":
        return (lib.zeros(shape), lib.ones(shape))
    return lib.zeros(shape)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("layout", ["batched", "unbatched", "packed"])
@pytest.mark.parametrize("given", [False, True])
def test_forward_calls_overridden_check_and_permute(kind, batch_first, layout, given):
    """forward reaches a subclass's check_forward_args and permute_hidden with the same
    arguments, in the same order, as PyTorch's forward."""
    records = []
    for lib in (cr, torch):
        lib.manual_seed(0)
        m = _recording(lib, kind)(4, 3, batch_first=batch_first)
        x = lib.tensor(np.random.default_rng(1).standard_normal((2, 5, 4)).astype(np.float32))
        if not batch_first:
            x = x.transpose(0, 1).contiguous()
        if layout == "unbatched":
            x = x[0] if batch_first else x[:, 0]
        hshape = (1, 3) if layout == "unbatched" else (1, 2, 3)
        if layout == "packed":
            x = lib.nn.utils.rnn.pack_padded_sequence(
                x, lib.tensor([3, 5]), batch_first=batch_first, enforce_sorted=False
            )
        hx = _hidden(lib, kind, hshape) if given else None
        m(x, hx)
        records.append(m.calls)
    assert records[0] == records[1]
    assert records[0], "forward called neither method"


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_overridden_check_forward_args_governs_forward(kind):
    """A subclass that relaxes the checks is obeyed: forward raises the override's own error."""
    for lib in (cr, torch):
        base = getattr(lib.nn, kind)

        class Strict(base):
            def check_forward_args(self, input, hidden, batch_sizes):
                raise ValueError("refused by the subclass")

        with pytest.raises(ValueError, match="refused by the subclass"):
            Strict(4, 3)(lib.zeros(5, 2, 4))


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_unbatched_forward_values(kind, batch_first):
    """The rewritten forward keeps PyTorch's values for unbatched input with batch_first."""
    cr.manual_seed(0)
    m, t = _pair(kind, 4, 3, batch_first=batch_first)
    t.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
    xc, xt = _both((5, 4))
    hc, ht = _hidden(cr, kind, (1, 3)), _hidden(torch, kind, (1, 3))
    oc, fc = m(xc, hc)
    ot, ft = t(xt, ht)
    np.testing.assert_allclose(oc.detach().numpy(), ot.detach().numpy(), rtol=1e-5, atol=1e-6)
    fc = fc if isinstance(fc, tuple) else (fc,)
    ft = ft if isinstance(ft, tuple) else (ft,)
    for a, b in zip(fc, ft):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
