"""``Conv3d``, ``ConvTranspose1d`` and ``ConvTranspose3d`` over ``functional.conv3d`` /
``conv_transpose1d`` / ``conv_transpose3d`` (state and init as ``Conv2d``)."""

from __future__ import annotations

from typing import Any, Callable

from chainrule._tensor import Tensor
from chainrule.nn import functional as F
from chainrule.nn.modules._utils import _ntuple, _single
from chainrule.nn.modules.conv import ConvTranspose2d, _Conv, _ConvNd

__all__ = ["Conv3d", "ConvTranspose1d", "ConvTranspose3d"]

_triple = _ntuple(3, "_triple")


class Conv3d(_Conv):
    """3-D convolution over (N, C_in, D, H, W) (or unbatched (C_in, D, H, W)) inputs."""

    _dims = staticmethod(_triple)
    _conv = staticmethod(F.conv3d)


class _ConvTransposeNd(ConvTranspose2d):
    """A transposed convolution of ``_dims`` spatial dims, running ``_conv``."""

    _dims: Callable[[Any], tuple[Any, ...]]
    _conv: Callable[..., Tensor]

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        dims = self._dims
        _ConvNd.__init__(
            self,
            in_channels,
            out_channels,
            dims(kernel_size),
            dims(stride),
            dims(padding),
            dims(dilation),
            True,
            dims(output_padding),
            groups,
            bias,
            padding_mode,
            dtype,
        )

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        return self._conv(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution (the gradient of ``Conv1d`` in its input)."""

    _dims = staticmethod(_single)
    _conv = staticmethod(F.conv_transpose1d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution (the gradient of ``Conv3d`` in its input)."""

    _dims = staticmethod(_triple)
    _conv = staticmethod(F.conv_transpose3d)
