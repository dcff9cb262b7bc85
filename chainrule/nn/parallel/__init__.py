"""``chainrule.nn.parallel`` (``torch.nn.parallel``): ``DataParallel`` (a pass-through on the
CPU) and ``DistributedDataParallel`` (over ``chainrule.distributed``)."""

from __future__ import annotations

from chainrule.nn.modules.misc import DataParallel
from chainrule.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
