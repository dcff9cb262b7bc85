"""``Conv1d``, ``Conv2d`` and ``ConvTranspose2d``: weights and settings around
``functional.conv1d`` / ``conv2d`` / ``conv_transpose2d``."""

from __future__ import annotations

from typing import Any, Callable

from chainrule._tensor import Tensor
from chainrule.nn import functional as F
from chainrule.nn.modules._params import add_weight_and_bias, reset_fan_in_uniform
from chainrule.nn.modules._utils import _pair, _single
from chainrule.nn.modules.module import Module

__all__ = ["Conv1d", "Conv2d", "ConvTranspose2d"]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    """Shared state of the convolutions.

    Weight shape: (out, in / groups, *kernel) for a convolution, (in, out / groups, *kernel)
    for a transposed one. Initialisation (PyTorch's): ``kaiming_uniform_(a=sqrt(5))`` on the
    weight and U(-1/sqrt(fan_in), 1/sqrt(fan_in)) on the bias, fan_in taken from the weight.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: tuple[int, ...],
        stride: tuple[int, ...],
        padding: Any,
        dilation: tuple[int, ...],
        transposed: bool,
        output_padding: tuple[int, ...],
        groups: int,
        bias: bool,
        padding_mode: str,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}"
                )
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {_PADDING_MODES}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad takes the last dim first, each dim as (left, right).
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in range(2)]
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        add_weight_and_bias(self, shape, out_channels, dtype, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_fan_in_uniform(self.weight, self.bias)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _Conv(_ConvNd):
    """``Conv1d`` and ``Conv2d``: one constructor and forward; a subclass names how to widen
    a per-dim argument to its dims (``_dims``) and which functional runs (``_conv``).
    A ``padding_mode`` other than zeros pads explicitly, then convolves without padding."""

    _dims: Callable[[Any], tuple[Any, ...]]
    _conv: Callable[..., Tensor]

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        dims = self._dims
        super().__init__(
            in_channels,
            out_channels,
            dims(kernel_size),
            dims(stride),
            padding if isinstance(padding, str) else dims(padding),
            dims(dilation),
            False,
            dims(0),
            groups,
            bias,
            padding_mode,
            dtype,
        )

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            return self._conv(
                F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                self.weight,
                self.bias,
                self.stride,
                self._dims(0),
                self.dilation,
                self.groups,
            )
        return self._conv(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L) (or unbatched (C_in, L)) inputs."""

    _dims = staticmethod(_single)
    _conv = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-D convolution over (N, C_in, H, W) (or unbatched (C_in, H, W)) inputs."""

    _dims = staticmethod(_pair)
    _conv = staticmethod(F.conv2d)


class ConvTranspose2d(_ConvNd):
    """2-D transposed convolution (the gradient of ``Conv2d`` with respect to its input).

    Output size per spatial dim: (in - 1) * stride - 2 * padding + dilation * (k - 1) +
    output_padding + 1; ``forward(input, output_size)`` picks ``output_padding`` to reach
    ``output_size``.
    """

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
        super().__init__(
            in_channels,
            out_channels,
            _pair(kernel_size),
            _pair(stride),
            _pair(padding),
            _pair(dilation),
            True,
            _pair(output_padding),
            groups,
            bias,
            padding_mode,
            dtype,
        )

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple[int, ...]:
        if output_size is None:
            return self.output_padding
        n = len(self.kernel_size)
        output_size = list(output_size)[-n:]
        if len(output_size) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or "
                f"{n + 2} elements (got {len(output_size)})"
            )
        res = []
        for d in range(n):
            dim_size = input.size(d + input.dim() - n)
            min_size = (
                (dim_size - 1) * self.stride[d]
                - 2 * self.padding[d]
                + self.dilation[d] * (self.kernel_size[d] - 1)
                + 1
            )
            max_size = min_size + self.stride[d] - 1
            if not min_size <= output_size[d] <= max_size:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{min_size} to {max_size} (for an input of {list(input.size())[2:]})"
                )
            res.append(output_size[d] - min_size)
        return tuple(res)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose2d(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )
