"""``chainrule.optim``: optimisers (see Note [optimizer updates]) and ``lr_scheduler``."""

from __future__ import annotations

from chainrule.optim import lr_scheduler
from chainrule.optim.adagrad import Adagrad
from chainrule.optim.adam import Adam, AdamW
from chainrule.optim.optimizer import Optimizer
from chainrule.optim.rmsprop import RMSprop
from chainrule.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
