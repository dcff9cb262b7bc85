"""The output of nn.LSTM / nn.GRU / nn.RNN shows PyTorch's grad_fn (sequence_models_tutorial
prints an LSTM's output): a stack of the steps, the oneDNN LSTM layer's node for a float32 LSTM
on the CPU, a cat when bidirectional, an in-place transpose for a batch-first GRU/RNN (and the
in-place view methods' own node names); values and gradients stay PyTorch's."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import chainrule

torch = pytest.importorskip("torch")


def _pair(kind, dtype, **kw):
    torch.manual_seed(0)
    ref = getattr(torch.nn, kind)(3, 4, **kw).to(getattr(torch, dtype))
    ours = getattr(chainrule.nn, kind)(3, 4, **kw).to(getattr(chainrule, dtype))
    with chainrule.no_grad():
        for (name, p), (name2, q) in zip(ours.named_parameters(), ref.named_parameters()):
            assert name == name2
            p.copy_(chainrule.tensor(q.detach().numpy()))
    return ours, ref


def _name(t):
    return type(t.grad_fn).__name__


CASES = [
    (kind, dtype, bi, layers, bf)
    for kind, dtype, bi, layers, bf in itertools.product(
        ("LSTM", "GRU", "RNN"), ("float32", "float64"), (False, True), (1, 2), (False, True)
    )
]


@pytest.mark.parametrize("kind,dtype,bi,layers,bf", CASES)
def test_output_node_values_and_gradients(kind, dtype, bi, layers, bf):
    ours, ref = _pair(kind, dtype, bidirectional=bi, num_layers=layers, batch_first=bf)
    x = np.random.default_rng(1).standard_normal((5, 2, 3)).astype(dtype)
    out_r, h_r = ref(torch.tensor(x))
    out_o, h_o = ours(chainrule.tensor(x))
    assert _name(out_o) == _name(out_r)
    hs_r = h_r if isinstance(h_r, tuple) else (h_r,)
    hs_o = h_o if isinstance(h_o, tuple) else (h_o,)
    assert [_name(t) for t in hs_o] == [_name(t) for t in hs_r] == ["StackBackward0"] * len(hs_r)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(out_o.detach().numpy(), out_r.detach().numpy(), rtol=tol, atol=tol)
    w = np.random.default_rng(2).standard_normal(tuple(out_r.shape)).astype(dtype)
    (out_r * torch.tensor(w)).sum().backward()
    (out_o * chainrule.tensor(w)).sum().backward()
    for p, q in zip(ours.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=10 * tol, atol=10 * tol)


def test_float32_lstm_node_is_the_onednn_layer_and_follows_the_flag():
    ours, ref = _pair("LSTM", "float32")
    x = np.ones((4, 1, 3), dtype=np.float32)
    assert _name(ours(chainrule.tensor(x))[0]) == _name(ref(torch.tensor(x))[0])
    assert _name(ours(chainrule.tensor(x))[0]) == "MkldnnRnnLayerBackward0"
    torch.backends.mkldnn.enabled = False
    try:
        theirs = _name(ref(torch.tensor(x))[0])
    finally:
        torch.backends.mkldnn.enabled = True
    chainrule.backends.mkldnn.enabled = False
    try:
        mine = _name(ours(chainrule.tensor(x))[0])
    finally:
        chainrule.backends.mkldnn.enabled = True
    assert mine == theirs == "StackBackward0"
    # torch.lstm, the function nn.LSTM's forward calls in PyTorch
    flat = [p for p in ours.parameters()]
    h0 = chainrule.zeros(1, 1, 4)
    out = chainrule.lstm(chainrule.tensor(x), (h0, h0), flat, True, 1, 0.0, False, False, False)[0]
    assert _name(out) == "MkldnnRnnLayerBackward0"


_PROJ_PROBE = """
import sys, warnings
import numpy as np
lib = __import__(sys.argv[1])
x = np.ones((4, 1, 3), dtype=np.float32)
counts = []
for make in (lambda: lib.nn.LSTM(3, 4), lambda: lib.nn.LSTM(3, 4, proj_size=2)):
    m = make()
    for _ in range(2):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            out = m(lib.tensor(x))[0]
        counts.append([(w.category.__name__, str(w.message)) for w in got])
print(repr((counts, type(out.grad_fn).__name__)))
"""


def _proj_probe(lib: str):
    import ast
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    r = subprocess.run(
        [sys.executable, "-c", _PROJ_PROBE, lib],
        capture_output=True, text=True, timeout=120, env=env, check=True,
    )  # fmt: skip
    return ast.literal_eval(r.stdout.strip().splitlines()[-1])


def test_projection_warns_once_per_process_that_onednn_is_not_used():
    """PyTorch's warning is TORCH_WARN_ONCE: the first call of a float32 LSTM with a projection
    in a process warns, later calls (of any module) do not; each library in a fresh process."""
    ours, ref = _proj_probe("chainrule"), _proj_probe("torch")
    msg = "LSTM with projections is not supported with oneDNN. Using default implementation."
    assert ours[1] == ref[1] == "StackBackward0"
    assert [len(c) for c in ours[0]] == [len(c) for c in ref[0]] == [0, 0, 1, 0]
    assert ours[0][2] == [("UserWarning", msg)]
    assert ref[0][2][0][0] == "UserWarning" and ref[0][2][0][1].startswith(msg)


def test_projection_in_float64_does_not_warn():
    ours, _ = _pair("LSTM", "float64", proj_size=2)
    x = np.ones((4, 1, 3), dtype=np.float64)
    with warnings.catch_warnings(record=True) as got_o:
        warnings.simplefilter("always")
        ours(chainrule.tensor(x))
    assert not got_o  # no oneDNN for float64: nothing to warn about


def test_in_place_view_ops_show_pytorch_node_names():
    def names(m, shape, fn):
        x = m.ones(*shape, requires_grad=True) * 1
        fn(x)
        return type(x.grad_fn).__name__

    cases = [
        ((2, 1, 3), lambda x: x.transpose_(0, 2)),
        ((2, 1, 3), lambda x: x.swapaxes_(0, 1)),
        ((2, 1, 3), lambda x: x.swapdims_(1, 2)),
        ((2, 3), lambda x: x.t_()),
        ((2, 1, 3), lambda x: x.squeeze_()),
        ((2, 1, 3), lambda x: x.squeeze_(1)),
        ((2, 1, 3), lambda x: x.squeeze_((1, 0))),
        ((2, 1, 3), lambda x: x.unsqueeze_(-1)),
        ((2, 1, 3), lambda x: x.as_strided_((3,), (2,))),
    ]
    for shape, fn in cases:
        assert names(chainrule, shape, fn) == names(torch, shape, fn)
    # the gradient is the out-of-place op's
    w = np.arange(6.0).reshape(3, 2)
    grads = []
    for m in (chainrule, torch):
        x = m.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        y = x * 2
        y.transpose_(0, 1)
        (y * m.tensor(w)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
