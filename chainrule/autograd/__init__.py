"""Reverse-mode automatic differentiation: ``backward``, ``grad``, grad modes, ``Variable``,
``gradcheck``.

``backward`` accumulates vector-Jacobian products into leaves' ``.grad``; ``grad`` returns them
instead. Both call ``engine.run_backward``.
"""

from __future__ import annotations

from chainrule import _dispatch
from chainrule.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

__all__ = [
    "backward",
    "grad",
    "Variable",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "gradcheck",
    "gradgradcheck",
    "Function",
    "FunctionCtx",
    "once_differentiable",
    "functional",
    "graph",
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "set_record_sites",
    "is_record_sites_enabled",
]


from chainrule.autograd import (
    functional,  # noqa: E402,F401
    graph,  # noqa: E402,F401
)
from chainrule.autograd._backward import Variable, backward, grad  # noqa: E402
from chainrule.autograd._tensor_hooks import HOOKS as _HOOKS  # noqa: E402
from chainrule.autograd.anomaly import (  # noqa: E402
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from chainrule.autograd.engine import (  # noqa: E402,F401  (PyTorch's private name)
    checkpoint_valid as _is_checkpoint_valid,
)
from chainrule.autograd.function import (  # noqa: E402
    Function,
    FunctionCtx,
    once_differentiable,
)
from chainrule.autograd.gradcheck import gradcheck, gradgradcheck  # noqa: E402
from chainrule.autograd.graph import is_record_sites_enabled, set_record_sites  # noqa: E402

# Tensor reaches the graph and the engine through these (chainrule/_dispatch.py).
_dispatch.register(_dispatch.autograd, {**_HOOKS, "backward": backward})
