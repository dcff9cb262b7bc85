"""Property-based tests (Hypothesis): broadcasting arithmetic over random shapes, and random
graphs (reuse, branching, detach, no_grad, in-place, views) checked against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, rule

import chainrule as cr

torch = pytest.importorskip("torch")

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci")

BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b * b + 1),
    "max": lambda a, b: (a + b).tanh() * a,
}


@given(
    shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
    op=st.sampled_from(sorted(BINARY)),
    seed=st.integers(0, 2**16),
)
def test_broadcasting_binary_ops_match_torch(shapes, op, seed):
    rng = np.random.default_rng(seed)
    a, b = (rng.uniform(-2, 2, s) for s in shapes.input_shapes)
    f = BINARY[op]
    ca, cb = cr.tensor(a, requires_grad=True), cr.tensor(b, requires_grad=True)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    co, to = f(ca, cb), f(ta, tb)
    assert tuple(co.shape) == tuple(to.shape) == shapes.result_shape
    np.testing.assert_allclose(co.detach().numpy(), to.detach().numpy(), rtol=1e-12)
    g = rng.uniform(-1, 1, shapes.result_shape)
    co.backward(cr.tensor(g))
    to.backward(torch.tensor(g))
    np.testing.assert_allclose(ca.grad.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cb.grad.numpy(), tb.grad.numpy(), rtol=1e-10, atol=1e-12)


UNARY = {
    "tanh": lambda m, x: x.tanh(),
    "sin": lambda m, x: x.sin(),
    "sigmoid": lambda m, x: x.sigmoid(),
    "square": lambda m, x: x * x,
    "softplus": lambda m, x: (x.exp() + 1).log(),
    "sum0": lambda m, x: x.sum(0, keepdim=True).expand(2, 3),
    "transpose2": lambda m, x: x.t().t(),
    "index": lambda m, x: x[m.tensor([1, 0])],
}


class GraphMachine(RuleBasedStateMachine):
    """Builds the same random graph in chainrule and torch; gradients must agree."""

    nodes = Bundle("nodes")

    def __init__(self) -> None:
        super().__init__()
        self.leaves: list[tuple[cr.Tensor, torch.Tensor]] = []
        self.made: list[tuple[cr.Tensor, torch.Tensor]] = []
        self.rng = np.random.default_rng(0)

    @initialize(target=nodes)
    def first_leaf(self):
        return self._leaf()

    @rule(target=nodes)
    def leaf(self):
        return self._leaf()

    def _leaf(self):
        a = self.rng.uniform(-1, 1, (2, 3))
        pair = (cr.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True))
        self.leaves.append(pair)
        return self._keep(pair)

    @rule(target=nodes, x=nodes, op=st.sampled_from(sorted(UNARY)))
    def unary(self, x, op):
        return self._keep((UNARY[op](cr, x[0]), UNARY[op](torch, x[1])))

    @rule(target=nodes, a=nodes, b=nodes, op=st.sampled_from(sorted(BINARY)))
    def binary(self, a, b, op):
        return self._keep((BINARY[op](a[0], b[0]), BINARY[op](a[1], b[1])))

    @rule(target=nodes, x=nodes)
    def detach(self, x):
        return self._keep((x[0].detach(), x[1].detach()))

    @rule(target=nodes, x=nodes)
    def no_grad_op(self, x):
        with cr.no_grad():
            c = x[0] * 2
        with torch.no_grad():
            t = x[1] * 2
        return self._keep((c, t))

    @rule(target=nodes, x=nodes, y=nodes)
    def inplace_on_copy(self, x, y):
        c, t = x[0] * 1, x[1] * 1
        c.mul_(y[0].tanh())
        t.mul_(y[1].tanh())
        return self._keep((c, t))

    @rule(target=nodes, x=nodes, y=nodes)
    def write_through_view(self, x, y):
        c, t = x[0] * 1, x[1] * 1
        c[0] = y[0][1] * 3
        t[0] = y[1][1] * 3
        c.t()[1].add_(y[0][0, :2].sum())
        t.t()[1].add_(y[1][0, :2].sum())
        return self._keep((c, t))

    def _keep(self, pair):
        self.made.append(pair)
        return pair

    @invariant()
    def values_agree(self):
        for c, t in self.made:
            np.testing.assert_allclose(
                c.detach().numpy(), t.detach().numpy(), rtol=1e-9, atol=1e-12
            )

    def teardown(self):
        # Backward from the sum of every leaf's uses: gradients must agree with torch's.
        assert all(c.requires_grad == t.requires_grad for c, t in self.made)
        roots = [(c, t) for c, t in self.made if c.requires_grad]
        if not roots:
            return
        cs = sum((c * (i + 1)).sum() for i, (c, _) in enumerate(roots))
        ts = sum((t * (i + 1)).sum() for i, (_, t) in enumerate(roots))
        np.testing.assert_allclose(cs.item(), ts.item(), rtol=1e-9)
        cs.backward()
        ts.backward()
        for c, t in self.leaves:
            if t.grad is None:
                assert c.grad is None or not np.any(c.grad.numpy())
            else:
                np.testing.assert_allclose(c.grad.numpy(), t.grad.numpy(), rtol=1e-8, atol=1e-10)


TestRandomGraphs = GraphMachine.TestCase
TestRandomGraphs.settings = settings(max_examples=30, stateful_step_count=12, deadline=None)
