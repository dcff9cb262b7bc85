"""Neural-network building blocks: ``functional`` (the maths), ``Module`` and the layers,
``Parameter``, ``init`` and ``utils``."""

from __future__ import annotations

from chainrule.nn import functional, init, modules, parallel, utils
from chainrule.nn.modules import *  # noqa: F403
from chainrule.nn.modules.sync_batchnorm import SyncBatchNorm
from chainrule.nn.parameter import Parameter

__all__ = ["functional", "init", "utils", "Parameter"]
__all__ += modules.__all__

from chainrule.nn._uninitialized import UninitializedBuffer, UninitializedParameter  # noqa: E402

__all__ += ["UninitializedBuffer", "UninitializedParameter"]

from chainrule.nn._factory import factory_kwargs  # noqa: E402

__all__ += ["factory_kwargs"]
__all__ += ["parallel", "SyncBatchNorm"]
