"""Module, Parameter and containers, checked against torch.nn."""

from __future__ import annotations

import copy
from collections import OrderedDict

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn as nn


def build(m):
    """The same small model in chainrule (m=chainrule) or torch (m=torch)."""

    class Block(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = m.nn.Linear(3, 4)
            self.act = m.nn.ReLU()
            self.register_buffer("count", m.zeros(2))
            self.register_buffer("scratch", m.ones(1), persistent=False)

        def forward(self, x):
            return self.act(self.fc(x))

    class Net(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.seq = m.nn.Sequential(
                m.nn.Linear(4, 4), m.nn.Tanh(), m.nn.Linear(4, 2, bias=False)
            )
            self.layers = m.nn.ModuleList([m.nn.Linear(2, 2) for _ in range(3)])
            self.heads = m.nn.ModuleDict({"a": m.nn.Identity(), "b": m.nn.Flatten()})
            self.scale = m.nn.Parameter(m.ones(1))
            self.plist = m.nn.ParameterList([m.nn.Parameter(m.zeros(2, 3))])

    return Net()


def _norm(s):
    # dtypes print as chainrule.float32 here (the project's dtype repr).
    return s.replace("chainrule.", "torch.")


def test_repr_matches_torch():
    assert _norm(repr(build(chainrule))) == repr(build(torch))


def test_traversal_names_match_torch():
    a, b = build(chainrule), build(torch)
    assert [n for n, _ in a.named_parameters()] == [n for n, _ in b.named_parameters()]
    assert [n for n, _ in a.named_buffers()] == [n for n, _ in b.named_buffers()]
    assert [n for n, _ in a.named_modules()] == [n for n, _ in b.named_modules()]
    assert [n for n, _ in a.named_children()] == [n for n, _ in b.named_children()]
    assert list(a.state_dict()) == list(b.state_dict())
    assert len(list(a.parameters())) == len(list(b.parameters()))
    assert len(list(a.modules())) == len(list(b.modules()))
    assert [n for n, _ in a.named_parameters(recurse=False)] == ["scale"]


def test_param_name_is_dotted_from_root():
    net = build(chainrule)
    names = [n for n, _ in net.named_parameters()]
    assert [p._param_name for p in net.parameters()] == names
    # A later traversal from a submodule does not shorten the names.
    list(net.block.parameters())
    assert net.block.fc.weight._param_name == "block.fc.weight"
    assert nn.Linear(2, 2).weight._param_name == "weight"


def test_shared_parameter_listed_once():
    for m in (chainrule, torch):
        lin = m.nn.Linear(2, 2)
        seq = m.nn.Sequential(lin, lin)
        assert len(list(seq.parameters())) == 2
        assert list(seq.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]


def _load_error(m, model, sd, strict=True):
    with pytest.raises(Exception) as e:
        model.load_state_dict(sd, strict=strict)
    return type(e.value), _norm(str(e.value))


def _convert(sd, m):
    return OrderedDict((k, m.tensor(np.asarray(v.detach().numpy()))) for k, v in sd.items())


def test_load_state_dict_errors_match_torch():
    a, b = build(chainrule), build(torch)
    sd_a, sd_b = a.state_dict(), b.state_dict()
    for sd, m in ((sd_a, chainrule), (sd_b, torch)):
        del sd["block.fc.bias"]
        sd["extra.weight"] = m.zeros(1)
        sd["seq.0.weight"] = m.zeros(5, 5)
    ea = _load_error(chainrule, a, sd_a)
    eb = _load_error(torch, b, sd_b)
    assert ea == eb
    assert ea[1].startswith("Error(s) in loading state_dict for Net:\n\tMissing key(s)")
    # strict=False still rejects a size mismatch.
    assert _load_error(chainrule, a, sd_a, False) == _load_error(torch, b, sd_b, False)


def test_load_state_dict_non_strict_report_matches_torch():
    a, b = build(chainrule), build(torch)
    sd_a = {k: v for k, v in a.state_dict().items() if k != "scale"}
    sd_b = {k: v for k, v in b.state_dict().items() if k != "scale"}
    sd_a["bogus"] = chainrule.zeros(1)
    sd_b["bogus"] = torch.zeros(1)
    ra = a.load_state_dict(sd_a, strict=False)
    rb = b.load_state_dict(sd_b, strict=False)
    assert repr(ra) == repr(rb)
    assert ra.missing_keys == ["scale"] and ra.unexpected_keys == ["bogus"]
    assert repr(a.load_state_dict(a.state_dict())) == "<All keys matched successfully>"


def test_load_state_dict_failure_leaves_module_untouched():
    net = build(chainrule)
    before = {k: v.clone() for k, v in net.state_dict().items()}
    sd = {k: chainrule.full_like(v, 7.0) for k, v in net.state_dict().items()}
    sd["seq.2.weight"] = chainrule.zeros(3, 3)  # wrong shape, after other keys
    with pytest.raises(RuntimeError, match="size mismatch for seq.2.weight"):
        net.load_state_dict(sd)
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k].numpy())


def test_load_state_dict_copies_values_and_bumps_version():
    a, b = build(chainrule), build(torch)
    a.load_state_dict(_convert(b.state_dict(), chainrule))
    for (k, va), vb in zip(a.state_dict().items(), b.state_dict().values()):
        np.testing.assert_array_equal(va.numpy(), vb.numpy(), err_msg=k)
    w = a.block.fc.weight
    v0 = w._version
    a.load_state_dict(a.state_dict())
    assert w._version > v0
    assert a.block.fc.weight is w


def test_load_state_dict_assign():
    lin = nn.Linear(2, 2)
    new = {"weight": chainrule.ones(2, 2), "bias": chainrule.zeros(2)}
    lin.load_state_dict(new, assign=True)
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.requires_grad
    np.testing.assert_array_equal(lin.weight.detach().numpy(), np.ones((2, 2), np.float32))


def test_train_eval_and_requires_grad():
    net = build(chainrule)
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_zero_grad():
    lin = nn.Linear(2, 1)
    lin(chainrule.ones(1, 2)).sum().backward()
    assert lin.weight.grad is not None
    lin.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(lin.weight.grad.numpy(), np.zeros((1, 2), np.float32))
    lin.zero_grad()
    assert lin.weight.grad is None and lin.bias.grad is None


def test_register_buffer_and_setattr_rules():
    for m in (chainrule, torch):
        mod = m.nn.Module()
        mod.register_buffer("b", m.zeros(2))
        mod.register_buffer("tmp", m.zeros(1), persistent=False)
        assert list(mod.state_dict()) == ["b"]
        assert [n for n, _ in mod.named_buffers()] == ["b", "tmp"]
        mod.b = m.ones(2)
        assert mod.b.sum().item() == 2
        with pytest.raises(TypeError) as ea:
            mod.b = 3
        mod.w = m.nn.Parameter(m.zeros(1))
        with pytest.raises(TypeError) as eb:
            mod.w = m.zeros(1)
        with pytest.raises(KeyError):
            mod.register_buffer("a.b", m.zeros(1))
        with pytest.raises(KeyError):
            mod.register_parameter("b", None)
        del mod.w
        assert not hasattr(mod, "w")
        if m is chainrule:
            msgs = (str(ea.value), str(eb.value))
        else:
            assert msgs == (str(ea.value), str(eb.value))


def test_getattr_error_matches_torch():
    msgs = []
    for m in (chainrule, torch):
        with pytest.raises(AttributeError) as e:
            m.nn.Linear(1, 1).nope
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_apply_order_and_add_module():
    seen = []
    net = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU()))
    net.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "ReLU", "Sequential", "Sequential"]
    net.add_module("extra", nn.Identity())
    assert net.extra is net[2]


def test_to_dtype_keeps_parameter_identity():
    net = build(chainrule)
    w = net.block.fc.weight
    net.to(chainrule.float64)
    assert net.block.fc.weight is w and w.dtype == chainrule.float64
    assert net.block.count.dtype == chainrule.float64
    net.float()
    assert w.dtype == chainrule.float32
    with pytest.raises(TypeError, match="floating point"):
        net.to(chainrule.int64)


def test_forward_hooks():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda mod, args, out: calls.append(out.shape))
    h3 = lin.register_forward_hook(lambda mod, args, out: out + 1)
    out = lin(chainrule.ones(1, 2))
    np.testing.assert_allclose(out.detach().numpy(), lin.bias.detach().numpy()[None] + 1)
    assert calls == [chainrule.Size([1, 2])]
    for h in (h1, h2, h3):
        h.remove()
    out = lin(chainrule.ones(1, 2))
    expected = np.ones((1, 2)) @ lin.weight.detach().numpy().T + lin.bias.detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-6)
    assert len(calls) == 1
    order = []
    lin.register_forward_pre_hook(lambda *a: order.append("second"))
    lin.register_forward_pre_hook(lambda *a: order.append("first"), prepend=True)
    lin.register_forward_pre_hook(
        lambda mod, args, kwargs: order.append(sorted(kwargs)), with_kwargs=True
    )
    lin(chainrule.ones(1, 2))
    assert order == ["first", "second", []]


def test_forward_not_implemented():
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)


def test_parameter_basics():
    p = nn.Parameter(chainrule.tensor([1.0, 2.0]))
    assert isinstance(p, chainrule.Tensor) and p.requires_grad and p.is_leaf
    assert repr(p) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))
    q = nn.Parameter(chainrule.tensor([1.0]), requires_grad=False)
    assert not q.requires_grad
    d = copy.deepcopy(p)
    assert isinstance(d, nn.Parameter) and d.requires_grad
    assert repr(nn.Parameter()) == repr(torch.nn.Parameter())


def test_deepcopy_module():
    net = build(chainrule)
    net2 = copy.deepcopy(net)
    assert net2.block.fc.weight is not net.block.fc.weight
    np.testing.assert_array_equal(
        net2.block.fc.weight.detach().numpy(), net.block.fc.weight.detach().numpy()
    )


def test_sequential_indexing():
    for m in (chainrule, torch):
        seq = m.nn.Sequential(m.nn.ReLU(), m.nn.Tanh(), m.nn.Sigmoid())
        assert len(seq) == 3
        assert isinstance(seq[-1], m.nn.Sigmoid)
        sub = seq[1:]
        assert isinstance(sub, m.nn.Sequential) and len(sub) == 2
        assert repr(sub) == repr(m.nn.Sequential(m.nn.Tanh(), m.nn.Sigmoid())).replace(
            "(0)", "(1)"
        ).replace("(1): Sig", "(2): Sig")
        seq.append(m.nn.Identity())
        assert len(seq) == 4
        del seq[0]
        assert [type(x).__name__ for x in seq] == ["Tanh", "Sigmoid", "Identity"]
        assert list(seq._modules) == ["0", "1", "2"]
        with pytest.raises(IndexError, match="index 5 is out of range"):
            seq[5]
    od = nn.Sequential(OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh())]))
    assert list(od._modules) == ["a", "b"]


def test_sequential_forward():
    seq = nn.Sequential(nn.Linear(3, 2), nn.Identity())
    x = chainrule.ones(4, 3)
    np.testing.assert_allclose(seq(x).detach().numpy(), seq[0](x).detach().numpy())


def test_modulelist_repr_compresses_repeats_like_torch():
    for n in (0, 1, 3):
        a = nn.ModuleList([nn.Linear(2, 2) for _ in range(n)] + [nn.ReLU()])
        b = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(n)] + [torch.nn.ReLU()])
        assert repr(a) == repr(b)
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList())


def test_modulelist_and_dict_ops():
    ml = nn.ModuleList([nn.ReLU()])
    ml.append(nn.Tanh())
    ml.extend([nn.Sigmoid()])
    ml.insert(0, nn.Identity())
    assert [type(x).__name__ for x in ml] == ["Identity", "ReLU", "Tanh", "Sigmoid"]
    assert isinstance(ml[1:], nn.ModuleList) and len(ml[1:]) == 3
    md = nn.ModuleDict({"x": nn.ReLU()})
    md["y"] = nn.Tanh()
    assert list(md.keys()) == ["x", "y"] and "y" in md and len(md) == 2
    assert md.pop("x").__class__ is nn.ReLU and list(md) == ["y"]


def test_parameterlist():
    pl = nn.ParameterList([chainrule.zeros(2, 3), nn.Parameter(chainrule.ones(1))])
    assert all(isinstance(p, nn.Parameter) for p in pl)
    assert len(pl) == 2 and len(list(pl.parameters())) == 2
    tl = torch.nn.ParameterList([torch.zeros(2, 3), torch.nn.Parameter(torch.ones(1))])
    assert _norm(repr(pl)) == repr(tl)
    assert list(pl.state_dict()) == list(tl.state_dict())


def test_state_dict_options_match_torch():
    a, b = build(chainrule), build(torch)
    sa, sb = a.state_dict(keep_vars=True), b.state_dict(keep_vars=True)
    assert sa["scale"] is a.scale and sb["scale"] is b.scale
    assert not a.state_dict()["scale"].requires_grad
    # The detached tensors share memory with the module, as in PyTorch.
    a.state_dict()["scale"].fill_(5.0)
    assert float(a.scale.detach()) == 5.0
    assert list(a.state_dict(prefix="net.")) == list(b.state_dict(prefix="net."))
    assert [n for n, _ in a.named_parameters(prefix="root")] == [
        n for n, _ in b.named_parameters(prefix="root")
    ]
    assert a.get_submodule("seq.0") is a.seq[0]
    assert a.get_parameter("block.fc.bias") is a.block.fc.bias
    assert a.get_buffer("block.count") is a.block.count
