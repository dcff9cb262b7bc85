"""``chainrule.optim``: optimisers (see Note [optimizer updates]) and ``lr_scheduler``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chainrule.optim import lr_scheduler
from chainrule.optim.adagrad import Adagrad
from chainrule.optim.adam import Adam, AdamW
from chainrule.optim.optimizer import Optimizer
from chainrule.optim.rmsprop import RMSprop
from chainrule.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]

from chainrule.optim._swap import swap_in_optimizer_params_and_state  # noqa: E402
from chainrule.optim.adadelta import Adadelta  # noqa: E402
from chainrule.optim.adafactor import Adafactor  # noqa: E402
from chainrule.optim.adamax import Adamax  # noqa: E402
from chainrule.optim.asgd import ASGD  # noqa: E402
from chainrule.optim.lbfgs import LBFGS  # noqa: E402
from chainrule.optim.muon import Muon  # noqa: E402
from chainrule.optim.nadam import NAdam  # noqa: E402
from chainrule.optim.radam import RAdam  # noqa: E402
from chainrule.optim.rprop import Rprop  # noqa: E402
from chainrule.optim.sparse_adam import SparseAdam  # noqa: E402

__all__ += [
    "Adadelta",
    "Adafactor",
    "Adamax",
    "ASGD",
    "LBFGS",
    "Muon",
    "NAdam",
    "RAdam",
    "Rprop",
    "SparseAdam",
    "swa_utils",
    "swap_in_optimizer_params_and_state",
]


if TYPE_CHECKING:
    from chainrule.optim import swa_utils as swa_utils  # loaded on first use (__getattr__)


def __getattr__(name: str) -> object:
    # swa_utils imports chainrule.nn (AveragedModel is a Module): load it on first use only.
    if name == "swa_utils":
        import importlib

        return importlib.import_module("chainrule.optim.swa_utils")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# PyTorch exposes these in torch.optim.optimizer; reachable here too, as there.
from chainrule.optim.optimizer import (  # noqa: E402,F401
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)
