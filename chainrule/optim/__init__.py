"""``chainrule.optim``: optimisers (see Note [optimizer updates]) and ``lr_scheduler``."""

from __future__ import annotations

from chainrule.optim import lr_scheduler
from chainrule.optim.adagrad import Adagrad
from chainrule.optim.adam import Adam, AdamW
from chainrule.optim.optimizer import Optimizer
from chainrule.optim.rmsprop import RMSprop
from chainrule.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]

from chainrule.optim.adadelta import Adadelta  # noqa: E402
from chainrule.optim.adafactor import Adafactor  # noqa: E402
from chainrule.optim.adamax import Adamax  # noqa: E402
from chainrule.optim.asgd import ASGD  # noqa: E402
from chainrule.optim.muon import Muon  # noqa: E402
from chainrule.optim.nadam import NAdam  # noqa: E402
from chainrule.optim.radam import RAdam  # noqa: E402
from chainrule.optim.rprop import Rprop  # noqa: E402
from chainrule.optim.sparse_adam import SparseAdam  # noqa: E402

__all__ += [
    "Adadelta", "Adafactor", "Adamax", "ASGD", "Muon", "NAdam", "RAdam", "Rprop", "SparseAdam",
]

from chainrule.optim.lbfgs import LBFGS  # noqa: E402

__all__ += ["LBFGS"]
from chainrule.optim import swa_utils  # noqa: E402

__all__ += ["swa_utils"]
from chainrule.optim._swap import swap_in_optimizer_params_and_state  # noqa: E402

__all__ += ["swap_in_optimizer_params_and_state"]
