"""The thread-local autocast state (``torch.autocast``): which devices have an enabled
region, their lower-precision dtypes, and the nesting count, below the ops that read it.

Note [autocast]
    PyTorch's autocast casts the inputs of a listed op, inside an enabled region, to the
    region's dtype. chainrule follows PyTorch's CPU lists: the ops of ``LOWER_PRECISION``
    (matrix products and convolutions) cast their floating inputs other than float64 to the
    CPU autocast dtype (bfloat16 unless set); the ops of ``FP32`` (losses, ``prod``, ``cdist``,
    ``trace``, the inverses) cast them to float32; every other op runs in the dtypes it is
    given. Each listed op's public function starts with ``if _state.cpu:`` and the casts of
    ops/_autocast.py, so that outside a region the cost is one attribute test. Only the CPU has
    regions that run: a CUDA region on a machine without a GPU is disabled with PyTorch's
    warning. The state is per thread, as in PyTorch; a new thread starts with autocast off and
    the default dtypes.
"""

from __future__ import annotations

import threading
from typing import Any

from chainrule import _dtype

__all__ = ["state", "LOWER_PRECISION", "FP32", "DEVICE_TYPES"]

DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu", "hpu", "xla", "mtia", "maia", "ipu", "privateuseone")

# PyTorch's CPU autocast lists (aten/src/ATen/autocast_mode.cpp), as chainrule names the ops.
LOWER_PRECISION = frozenset(
    {
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "bmm",
        "mm",
        "linalg_vecdot",
        "baddbmm",
        "addmm",
        "addbmm",
        "linear",
        "matmul",
        "einsum",
        "prelu",
        "scaled_dot_product_attention",
    }
)
FP32 = frozenset(
    {
        "prod",
        "cdist",
        "trace",
        "inverse",
        "pinverse",
        "cholesky",
        "linalg_inv",
        "linalg_solve",
        "linalg_svd",
        "linalg_svdvals",
        "mse_loss",
        "l1_loss",
        "smooth_l1_loss",
        "huber_loss",
        "nll_loss",
        "cross_entropy",
        "binary_cross_entropy",
        "binary_cross_entropy_with_logits",
        "kl_div",
        "margin_ranking_loss",
        "hinge_embedding_loss",
        "soft_margin_loss",
        "triplet_margin_loss",
        "multi_margin_loss",
        "multilabel_margin_loss",
        "cosine_embedding_loss",
        "poisson_nll_loss",
        "ctc_loss",
    }
)


class _State(threading.local):
    """Per-thread autocast flags; class attributes are a new thread's defaults."""

    cpu = False  # an enabled CPU region is active: the listed ops cast (Note [autocast])
    nesting = 0
    cache_enabled = True

    def __init__(self) -> None:
        self.enabled: dict[str, bool] = {d: False for d in DEVICE_TYPES}
        self.dtypes: dict[str, Any] = {d: _dtype.float16 for d in DEVICE_TYPES}
        self.dtypes["cpu"] = _dtype.bfloat16
        self.dtypes["ipu"] = _dtype.float16
        self.dtypes["xla"] = _dtype.bfloat16
        self.dtypes["hpu"] = _dtype.bfloat16

    def set_enabled(self, device_type: str, enabled: bool) -> None:
        self.enabled[device_type] = bool(enabled)
        if device_type == "cpu":
            self.cpu = bool(enabled)


state = _State()
