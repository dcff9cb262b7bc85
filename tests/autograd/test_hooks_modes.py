"""Hooks (tensor, node, post-accumulate, saved-tensor), grad/inference modes and anomaly mode,
with PyTorch as the oracle."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def test_tensor_node_and_accumulate_hooks() -> None:
    res = []
    for m in (cr, torch):
        log: list[Any] = []
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.retain_grad()
        hy = y.register_hook(lambda g: g * 2)
        x.register_hook(lambda g: log.append(("x", g.tolist())))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("acc", t.grad.tolist())))
        z = (y * y).sum()
        z.grad_fn.register_prehook(lambda gout: log.append(("pre", gout[0].tolist())))
        y.grad_fn.register_hook(lambda gin, gout: (gin[0] + 1,) + tuple(gin[1:]))
        z.backward(retain_graph=True)
        res.append((log[:], x.grad.tolist(), y.grad.tolist()))
        hy.remove()
        x.grad = None
        z.backward()
        res.append((x.grad.tolist(),))
    assert res[0] == res[2] and res[1] == res[3]


def test_retain_grad_follows_inplace() -> None:
    res = []
    for m in (cr, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.mul_(3)
        (y * y).sum().backward()
        res.append((y.grad.tolist(), x.grad.tolist()))
    assert res[0] == res[1]


def test_saved_tensors_hooks_pack_unpack() -> None:
    res = []
    for m in (cr, torch):
        packed: list[Any] = []

        def pack(t: Any) -> Any:
            packed.append(tuple(t.shape))
            return t.detach().numpy().astype(np.float32).copy()  # "offload/compress"

        def unpack(a: Any) -> Any:
            return m.from_numpy(a).to(m.float64)

        x = m.tensor([0.5, 1.5, -2.0], dtype=m.float64, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x * x).sin().exp()
        assert len(packed) == 4  # x twice for mul, x*x for sin, the exp output
        y.sum().backward()
        with m.autograd.graph.save_on_cpu():
            w = (x.tanh() * x).sum()
        (g,) = m.autograd.grad(w, x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        res.append([x.grad.numpy(), g.detach().numpy(), gg.numpy()])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_saved_tensors_hooks_drop_the_original_arrays() -> None:
    import weakref

    store: dict[int, Any] = {}

    def pack(t: Any) -> int:
        store[len(store)] = t.detach().numpy().copy()  # e.g. written to disk
        return len(store) - 1

    def unpack(k: int) -> Any:
        return cr.from_numpy(store[k])

    x = cr.tensor([0.5, 1.5, -2.0], dtype=cr.float64, requires_grad=True)
    h = x * 3
    ref = weakref.ref(h._data)
    with cr.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (h * h).sum()
    del h
    assert ref() is None  # the graph kept only the packed key, not the activation
    (g,) = cr.autograd.grad(y, x, create_graph=True)
    (gg,) = cr.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), 18 * np.array([0.5, 1.5, -2.0]))
    np.testing.assert_allclose(gg.numpy(), [18.0, 18.0, 18.0])


def test_inference_mode() -> None:
    msgs = []
    for m in (cr, torch):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        with m.inference_mode():
            assert m.is_inference_mode_enabled() and not m.is_grad_enabled()
            t = m.tensor([3.0, 4.0]) * 2
            u = w * 2
            assert t.is_inference() and t[0].is_inference() and t.detach().is_inference()
        assert not u.requires_grad and not w.is_inference()
        assert m.is_grad_enabled() and not m.is_inference_mode_enabled()
        with pytest.raises(RuntimeError) as ei:
            w * t
        msgs.append(str(ei.value))
        assert (w + t).requires_grad  # not saved: allowed, as in PyTorch
        with m.inference_mode(False):
            assert m.is_grad_enabled()
    assert msgs[0] == msgs[1]


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_anomaly_mode_names_node_and_forward_trace() -> None:
    x = cr.tensor([0.0, 1.0], requires_grad=True)
    with cr.autograd.detect_anomaly():
        assert cr.autograd.is_anomaly_enabled()
        y = x.sqrt()  # FORWARD-LINE
        z = (y * 0).sum()
        with pytest.raises(RuntimeError) as ei:
            z.backward()
    msg = str(ei.value)
    assert "Function 'SqrtBackward0' returned nan values in its 0th output." in msg
    assert "FORWARD-LINE" in msg and "test_hooks_modes.py" in msg
    assert not cr.autograd.is_anomaly_enabled()
    # torch finds the same node
    tx = torch.tensor([0.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning):
        with torch.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match="'SqrtBackward0' returned nan values"):
                (tx.sqrt() * 0).sum().backward()
    # Mode off: no trace is recorded and NaN gradients pass through silently.
    y = x.sqrt()
    assert y.grad_fn.metadata is None
    (y * 0).sum().backward()
    assert np.isnan(x.grad.numpy()[0])
    cr.autograd.set_detect_anomaly(True)
    try:
        assert cr.autograd.is_anomaly_enabled()
        assert x.sqrt().grad_fn.metadata["traceback_"]
    finally:
        cr.autograd.set_detect_anomaly(False)
