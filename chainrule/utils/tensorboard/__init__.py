"""``torch.utils.tensorboard``: ``SummaryWriter`` through the ``tensorboard`` package.

``tensorboard`` is an optional dependency (``pip install chainrule[tensorboard]``); without it
importing this module raises PyTorch's ImportError.
"""

from __future__ import annotations

try:
    import tensorboard  # noqa: F401
except ImportError as e:
    raise ImportError(
        "TensorBoard logging requires TensorBoard version 1.15 or above (chainrule: install the "
        "tensorboard package, e.g. pip install 'chainrule[tensorboard]')"
    ) from e

from chainrule.utils.tensorboard.writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "SummaryWriter"]
