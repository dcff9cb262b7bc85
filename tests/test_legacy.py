"""Issue #8: legacy PyTorch surface behaves as PyTorch 2.x does, with clearer messages."""

from __future__ import annotations

import pathlib
import runpy

import pytest

import chainrule as cr

torch = pytest.importorskip("torch")

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_legacy_constructors_match_torch():
    for name in ["FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor"]:
        c = getattr(cr, name)([1, 0, 2])
        t = getattr(torch, name)([1, 0, 2])
        assert c.tolist() == t.tolist() and c.dtype.name == str(t.dtype)[6:]
        assert isinstance(c, cr.Tensor) and isinstance(c, getattr(cr, name))
    assert cr.LongTensor(2, 3).shape == (2, 3) and cr.LongTensor(2, 3).dtype == cr.int64
    assert not isinstance(cr.ones(1, dtype=cr.float64), cr.FloatTensor)
    assert cr.Tensor([0, 0, 0]).tolist() == [0.0, 0.0, 0.0]
    assert cr.Tensor(cr.Size([2, 2])).shape == (2, 2)


def test_cuda_queries_without_gpu():
    assert cr.cuda.is_available() is False and cr.cuda.device_count() == 0


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.zeros(1).cuda(),
        lambda m: m.zeros(1).to("cuda"),
        lambda m: m.zeros(1, device="cuda"),
    ],
)
def test_moving_to_cuda_without_gpu_fails_like_torch(call):
    with pytest.raises(AssertionError) as t:
        call(torch)
    with pytest.raises(AssertionError) as c:
        call(cr)
    assert str(c.value).startswith(str(t.value))
    assert "is_available" in str(c.value)


def test_indexing_a_0dim_tensor_fails_like_torch():
    with pytest.raises(IndexError) as t:
        torch.tensor(1.0).data[0]
    with pytest.raises(IndexError) as c:
        cr.tensor(1.0).data[0]
    assert str(c.value) == str(t.value)


def test_retain_variables_is_rejected_with_a_hint():
    with pytest.raises(TypeError) as t:
        torch.ones(1, requires_grad=True).sum().backward(retain_variables=True)
    with pytest.raises(TypeError) as c:
        cr.ones(1, requires_grad=True).sum().backward(retain_variables=True)
    assert str(c.value).startswith(str(t.value))
    assert "retain_graph=True" in str(c.value)


def test_variable_grad_data_idiom():
    v = cr.autograd.Variable(cr.Tensor([1, 2]), requires_grad=True)
    (v * v).sum().backward()
    assert v.grad.data.tolist() == [2.0, 4.0]


def _run(path: str, capsys) -> str:
    runpy.run_path(str(ROOT / path), run_name="__main__")
    return capsys.readouterr().out


def test_seed_hook_example(capsys):
    out = _run("examples/seeds/hook_doubles_gradient.py", capsys)
    assert "v.grad with the hook: tensor([2., 2., 2.])" in out
    assert "v.grad after h.remove(): tensor([1., 1., 1.])" in out


def test_seed_index_assignment_example(capsys):
    out = _run("examples/seeds/index_assignment.py", capsys)
    assert "Y = tensor([123., 112., 109.], grad_fn=<CopySlices>)" in out
    assert "X.grad after 1 backward: tensor([ 5430., 59220., 16320.])" in out
    assert "X.grad after 3 backwards: tensor([ 16290., 177660.,  48960.])" in out
    assert "X.grad after zero_(): tensor([0., 0., 0.])" in out
    assert "4th backward (graph freed by the 3rd): RuntimeError: Trying to backward" in out


def test_seed_retain_graph_example(capsys):
    out = _run("examples/seeds/retain_graph.py", capsys)
    assert "without retain_graph: RuntimeError: Trying to backward through the graph" in out
    assert "(the gradients add up): tensor([12., 12.])" in out


def test_seed_two_losses_example(capsys):
    out = _run("examples/seeds/two_losses.py", capsys)
    lines = [ln for ln in out.splitlines() if "equals grad of (loss1 + loss2)" in ln]
    assert len(lines) == 4 and all(ln.endswith("True") for ln in lines)
    before = float(out.split("loss1 before step:")[1].split()[0])
    after = float(out.split("loss1 after step:")[1].split()[0])
    assert after < before


def test_seed_srgan_update_order_example(capsys):
    out = _run("examples/seeds/srgan_update_order.py", capsys)
    assert (
        "as written: RuntimeError: one of the variables needed for gradient computation has "
        "been modified by an inplace operation" in out
    )
    assert "(the parameter 'net." in out
    steps = [ln for ln in out.splitlines() if ln.startswith("corrected, step")]
    assert len(steps) == 3
    for ln in steps:
        d, g = float(ln.split("d_loss")[1].split()[0]), float(ln.split("g_loss")[1].split()[0])
        assert 0 < d < 2 and 0 < g < 2
