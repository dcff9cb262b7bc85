"""The legacy stochastic-function method of Tensor (see chainrule/_methods/__init__.py)."""

from __future__ import annotations

from typing import Any

# PyTorch's text, word for word, then how to write it with chainrule.
_REINFORCE_REMOVED = """reinforce() was removed.
Use torch.distributions instead.
See https://pytorch.org/docs/main/distributions.html

Instead of:

probs = policy_network(state)
action = probs.multinomial()
next_state, reward = env.step(action)
action.reinforce(reward)
action.backward()

Use:

probs = policy_network(state)
# NOTE: categorical is equivalent to what used to be called multinomial
m = torch.distributions.Categorical(probs)
action = m.sample()
next_state, reward = env.step(action)
loss = -m.log_prob(action) * reward
loss.backward()
"""

_HINT = (
    "In chainrule: m = chainrule.distributions.Categorical(probs); "
    "loss = -(m.log_prob(action) * reward).sum(); loss.backward()\n"
)


class StochasticMethods:
    __slots__ = ()

    def reinforce(self, reward: Any) -> None:
        """Removed in PyTorch 0.4: raises RuntimeError saying how to write the score-function
        estimator with ``chainrule.distributions`` (``-(log_prob(action) * reward)``)."""
        raise RuntimeError(_REINFORCE_REMOVED + _HINT)
