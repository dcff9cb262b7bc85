"""``torch.optim.lr_scheduler``: the learning-rate schedulers, gathered from three files.

The base class and the simple schedules live in _lr_base.py, the chained and composed ones in
lr_scheduler_chain.py, the cyclic ones in lr_scheduler_cyclic.py; the latter two build on
_lr_base.py, so this module only re-exports (no file imports it back).
"""

from __future__ import annotations

# Names torch.optim.lr_scheduler has from its imports, kept for code that reaches them there.
from math import inf as inf
from typing import Literal as Literal
from typing import Self as Self

from chainrule._tensor import Tensor as Tensor
from chainrule.optim._lr_base import (
    _EPOCH_DEPRECATION_WARNING,
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LRScheduler,
    MultiStepLR,
    ReduceLROnPlateau,
    StepLR,
)
from chainrule.optim._lr_base import (
    _LRScheduler as _LRScheduler,
)
from chainrule.optim.lr_scheduler_chain import (
    ChainedScheduler,
    ConstantLR,
    LinearLR,
    MultiplicativeLR,
    PolynomialLR,
    SequentialLR,
)
from chainrule.optim.lr_scheduler_cyclic import (
    CosineAnnealingWarmRestarts,
    CyclicLR,
    OneCycleLR,
)
from chainrule.optim.optimizer import Optimizer as Optimizer  # as torch's module has it

EPOCH_DEPRECATION_WARNING = _EPOCH_DEPRECATION_WARNING

__all__ = [
    "LRScheduler",
    "LambdaLR",
    "StepLR",
    "MultiStepLR",
    "ExponentialLR",
    "CosineAnnealingLR",
    "ReduceLROnPlateau",
    "ChainedScheduler",
    "ConstantLR",
    "LinearLR",
    "MultiplicativeLR",
    "PolynomialLR",
    "SequentialLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "OneCycleLR",
]

# They are torch.optim.lr_scheduler's classes: their __module__ says so, as before the split
# (and as pickles and reprs name them).
for _cls in (
    LRScheduler,
    LambdaLR,
    StepLR,
    MultiStepLR,
    ExponentialLR,
    CosineAnnealingLR,
    ReduceLROnPlateau,
    _LRScheduler,
):
    _cls.__module__ = __name__
del _cls
