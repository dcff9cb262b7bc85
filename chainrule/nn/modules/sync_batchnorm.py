"""``SyncBatchNorm``: batch normalisation whose statistics span every rank of a process group.

With R ranks holding batches x_r, the mean and biased variance are those of the whole batch:
mean = sum_r sum(x_r) / n and var = sum_r sum((x_r - mean)^2) / n, with n the total count per
channel, both summed over the ranks by a differentiable all-reduce (two passes, so that the
variance is as accurate as single-process BatchNorm's). Gradients therefore flow through the
statistics of every rank's batch, as in PyTorch. Outside training, or without an initialised
process group of more than one rank, it is plain batch normalisation.
"""

from __future__ import annotations

from typing import Any

import chainrule.distributed as dist
from chainrule import _creation
from chainrule import ops as _ops
from chainrule._tensor import Tensor
from chainrule.autograd import grad_mode as _grad_mode
from chainrule.distributed.nn.functional import all_reduce as _all_reduce_sum
from chainrule.nn.modules.module import Module
from chainrule.nn.modules.normalization import BatchNorm1d, BatchNorm2d, _BatchNorm
from chainrule.nn.modules.normalization_more import BatchNorm3d

__all__ = ["SyncBatchNorm"]


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation of (N, C, ...) inputs with statistics over the whole
    ``process_group`` (default: the default group). Parameters, buffers and the running-stats
    update are BatchNorm's.

    Differs from torch: runs on the CPU (PyTorch's needs CUDA inputs when syncing).
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any = None,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _need_sync(self) -> bool:
        if not (self.training and dist.is_initialized()):
            return False
        return dist.get_world_size(self.process_group) > 1

    def forward(self, input: Tensor) -> Tensor:
        if not self._need_sync():
            return super().forward(input)
        self._check_input_dim(input)
        c = input.shape[1]
        dims = tuple(i for i in range(input.dim()) if i != 1)
        shape = [1] * input.dim()
        shape[1] = c
        local = input.numel() // max(c, 1)
        counts = _creation.full((c,), float(local), dtype=input.dtype)
        s = _all_reduce_sum(_ops.stack([input.sum(dims), counts]), group=self.process_group)
        n = float(s[1, 0].item())
        if n <= 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size "
                f"{tuple(input.shape)} on each of the ranks"
            )
        mean = s[0] / n
        xc = input - mean.reshape(shape)
        var = _all_reduce_sum((xc * xc).sum(dims), group=self.process_group) / n
        y = xc * (var.reshape(shape) + self.eps) ** -0.5
        if self.weight is not None:
            y = y * self.weight.reshape(shape)
        if self.bias is not None:
            y = y + self.bias.reshape(shape)
        if self.track_running_stats and self.running_mean is not None:
            with _grad_mode.no_grad():
                self.num_batches_tracked.add_(1)
                m = (
                    1.0 / float(self.num_batches_tracked)
                    if self.momentum is None
                    else self.momentum
                )
                self.running_mean.mul_(1 - m).add_(mean.detach() * m)
                self.running_var.mul_(1 - m).add_(var.detach() * (m * n / (n - 1)))
        return y

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every BatchNorm layer replaced by a SyncBatchNorm sharing its
        parameters and buffers (the module itself when it is a BatchNorm layer)."""
        out = module
        # InstanceNorm shares _BatchNorm's code here but is no batch norm.
        if isinstance(module, (BatchNorm1d, BatchNorm2d, BatchNorm3d)):
            out = SyncBatchNorm(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
            )
            if module.affine:
                with _grad_mode.no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
