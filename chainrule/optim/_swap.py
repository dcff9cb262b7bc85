"""``swap_in_optimizer_params_and_state``: run an optimizer on other tensors for a while."""

from __future__ import annotations

from collections import defaultdict
from contextlib import contextmanager
from typing import Any, Iterator

from chainrule._tensor import Tensor
from chainrule.optim.optimizer import Optimizer

__all__ = ["swap_in_optimizer_params_and_state"]


@contextmanager
def swap_in_optimizer_params_and_state(
    optimizer: Optimizer,
    swapin_parameters: dict[str, Tensor],
    swapin_optim_state: dict[str, Any],
) -> Iterator[None]:
    """Within the ``with`` block, ``optimizer`` works on ``swapin_parameters`` (in the order
    of its own parameters) with the state and hyper-parameters of ``swapin_optim_state`` (a
    ``state_dict()``-shaped dict); on exit its own parameters, state and groups come back.

    The swapped-in state tensors are used, not copied, so in-place updates (``step()``)
    reach the caller's dict; new entries or reassigned values do not, as in PyTorch.

    Raises:
        RuntimeError: the optimizer has no state yet (it has never stepped).
    """
    if not optimizer.state:
        raise RuntimeError(
            "swap_in_optimizer_params_and_state requires initialized optimizer state."
        )
    params = list(swapin_parameters.values())
    by_id: dict[Any, Tensor] = {}
    groups = []
    for group in swapin_optim_state["param_groups"]:
        for packed in group["params"]:
            if packed not in by_id and len(by_id) < len(params):
                by_id[packed] = params[len(by_id)]
        swapped = {k: v for k, v in group.items() if k != "params"}
        swapped["params"] = [by_id[i] for i in group["params"] if i in by_id]
        groups.append(swapped)
    state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
    for packed, values in swapin_optim_state.get("state", {}).items():
        if packed in by_id:
            state[by_id[packed]] = dict(values)
    saved = optimizer.param_groups, optimizer.state
    optimizer.param_groups, optimizer.state = groups, state
    try:
        yield
    finally:
        optimizer.param_groups, optimizer.state = saved
