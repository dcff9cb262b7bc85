"""Argument and sample validation: PyTorch's error types and messages (with chainrule's names
for its types), set_default_validate_args, validate_args=False, and the Distribution API."""

from __future__ import annotations

from typing import Any, Callable

import pytest

import chainrule as cr
import chainrule.distributions as CD

torch = pytest.importorskip("torch")
TD = torch.distributions


def _msg(f: Callable[[Any, Any], Any], m: Any) -> tuple[type, str]:
    D = CD if m is cr else TD
    with pytest.raises(Exception) as e:
        f(D, m)
    return e.type, str(e.value).replace("torch.", "chainrule.")


CASES = [
    ("bad_scale", lambda D, m: D.Normal(m.tensor([0.0, 1.0]), m.tensor([-1.0, 1.0]))),
    ("bad_rate", lambda D, m: D.Exponential(m.tensor([-1.0]))),
    ("bad_probs", lambda D, m: D.Bernoulli(m.tensor([1.5]))),
    ("bad_simplex", lambda D, m: D.Categorical(m.tensor([-0.5, 1.0]))),
    ("both_params", lambda D, m: D.Bernoulli(0.3, logits=1.0)),
    ("no_params", lambda D, m: D.Categorical()),
    ("scalar_probs", lambda D, m: D.Categorical(m.tensor(0.3))),
    ("not_tensor", lambda D, m: D.Normal(0.0, 1.0).log_prob(3)),
    ("not_broadcastable", lambda D, m: D.Normal(m.zeros(2), 1.0).log_prob(m.zeros(3))),
    ("event_shape", lambda D, m: D.Dirichlet(m.ones(3)).log_prob(m.ones(2) / 2)),
    ("outside_support", lambda D, m: D.Exponential(1.0).log_prob(m.tensor([-1.0]))),
    ("not_integer", lambda D, m: D.Poisson(2.0).log_prob(m.tensor([1.5]))),
    ("uniform_order", lambda D, m: D.Uniform(m.tensor([1.0]), m.tensor([0.0]))),
    ("dirichlet_0d", lambda D, m: D.Dirichlet(m.tensor(1.0))),
    ("independent_ndims", lambda D, m: D.Independent(D.Normal(m.zeros(2), 1.0), 2)),
    ("multinomial_count", lambda D, m: D.Multinomial(2.5, m.ones(3))),
    ("transforms_type", lambda D, m: D.TransformedDistribution(D.Normal(0.0, 1.0), 3)),
    ("geometric_zero", lambda D, m: D.Geometric(m.tensor([0.0, 0.5]))),
    (
        "binomial_entropy",
        lambda D, m: D.Binomial(m.tensor([2.0, 3.0]), m.tensor([0.5, 0.5])).entropy(),
    ),
    ("mode", lambda D, m: D.Cauchy(0.0, 1.0).expand([2]).enumerate_support()),
]


@pytest.mark.parametrize("name,f", CASES, ids=[c[0] for c in CASES])
def test_errors_match_torch(name: str, f: Callable[[Any, Any], Any]) -> None:
    tt, tm = _msg(f, torch)
    ct, cm = _msg(f, cr)
    assert ct is tt
    assert " ".join(cm.split()) == " ".join(tm.split())


def test_validation_can_be_turned_off() -> None:
    d = CD.Normal(cr.tensor([0.0]), cr.tensor([-1.0]), validate_args=False)
    assert d.log_prob(cr.tensor([0.0])).isnan().all()
    CD.Distribution.set_default_validate_args(False)
    try:
        CD.Exponential(cr.tensor([-1.0]))
        assert CD.Exponential(1.0).log_prob(cr.tensor([-1.0])).item() == -(-1.0) + 0.0
    finally:
        CD.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        CD.Exponential(cr.tensor([-1.0]))
    with pytest.raises(ValueError):
        CD.Distribution.set_default_validate_args("yes")


def test_repr_and_api_surface() -> None:
    assert repr(CD.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert (
        repr(CD.Normal(cr.zeros(2), 1.0)) == "Normal(loc: chainrule.Size([2]), scale: "
        "chainrule.Size([2]))"
    )
    d = CD.Normal(cr.zeros(2), cr.ones(2))
    e = d.expand((3, 2))
    assert tuple(e.batch_shape) == (3, 2) and tuple(e.sample().shape) == (3, 2)
    with pytest.warns(UserWarning, match="sample_n will be deprecated"):
        assert tuple(d.sample_n(4).shape) == (4, 2)
    assert abs(d.perplexity() - d.entropy().exp()).max().item() == 0
    assert d.stddev.tolist() == [1.0, 1.0]
    with pytest.raises(NotImplementedError):
        CD.Distribution(validate_args=False).mean
    with pytest.raises(NotImplementedError, match="does not implement mode"):
        CD.Distribution(validate_args=False).mode
    with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
        CD.Distribution()

    class Custom(CD.Normal):
        def __init__(self) -> None:
            super().__init__(0.0, 1.0)

    with pytest.raises(
        NotImplementedError,
        match="Subclass Custom of Normal that defines a "
        "custom __init__ method must also define a "
        "custom .expand\\(\\) method.",
    ):
        Custom().expand((2,))


def test_lazy_parametrization() -> None:
    d = CD.Bernoulli(logits=cr.tensor([0.0, 2.0]))
    assert "probs" not in d.__dict__
    p = d.probs
    assert "probs" in d.__dict__ and abs(p[1].item() - 0.8807970779778823) < 1e-6
    c = CD.Categorical(probs=cr.tensor([1.0, 3.0]))  # normalized
    assert c.probs.tolist() == [0.25, 0.75]


def test_score_function_gradient_flows_to_the_parameters() -> None:
    logits = cr.tensor([0.5, -0.2, 0.1], requires_grad=True)
    m = CD.Categorical(logits=logits)
    action = m.sample()
    loss = -m.log_prob(action) * 2.0
    loss.backward()
    t = torch.tensor([0.5, -0.2, 0.1], requires_grad=True)
    (-TD.Categorical(logits=t).log_prob(torch.tensor(action.item())) * 2.0).backward()
    assert cr.allclose(logits.grad, cr.tensor(t.grad.numpy()), atol=1e-6)


def test_reinforce_raises_as_torch_with_a_hint() -> None:
    with pytest.raises(RuntimeError) as t:
        torch.ones(2).reinforce(1.0)
    with pytest.raises(RuntimeError) as c:
        cr.ones(2).reinforce(1.0)
    cm = str(c.value)
    assert cm.startswith(str(t.value))
    assert "chainrule.distributions.Categorical(probs)" in cm.splitlines()[-1]
    assert "-(m.log_prob(action) * reward).sum()" in cm


@pytest.mark.parametrize(
    "make",
    [
        lambda: CD.Normal(cr.zeros(2), cr.ones(2)),
        lambda: CD.Gamma(cr.ones(2), cr.ones(2)),
        lambda: CD.Beta(cr.ones(2), cr.ones(2)),
        lambda: CD.Dirichlet(cr.ones(2, 3)),
        lambda: CD.Categorical(logits=cr.zeros(2, 3)),
        lambda: CD.MultivariateNormal(cr.zeros(3), cr.eye(3)),
        lambda: CD.Exponential(1.0),
    ],
)
def test_float32_parameters_give_float32_results(make: Callable[[], Any]) -> None:
    d = make()
    x = d.sample((4,))
    assert x.dtype == (cr.int64 if isinstance(d, CD.Categorical) else cr.float32)
    assert d.log_prob(x).dtype == cr.float32
    if d.has_rsample:
        assert d.rsample().dtype == cr.float32
