"""Lazy modules: layers whose input size is inferred from the first input.

Note [lazy modules]
A lazy layer is built like its ordinary class with the input size 0, then its shaped tensors
are replaced by ``UninitializedParameter`` / ``UninitializedBuffer``. A forward pre-hook runs
``initialize_parameters(input)`` on the first call: it reads the size from the input,
``materialize``s each tensor (the same objects, now ordinary ones), runs the class's
``reset_parameters`` and turns the module into ``cls_to_become`` (``LazyLinear`` becomes
``Linear``), as PyTorch does. ``load_state_dict`` into a lazy layer materializes its tensors to
the checkpoint's shapes first; the class changes at the next forward.
"""

from __future__ import annotations

from typing import Any, Mapping

from chainrule._creation import tensor
from chainrule._dtype import int64
from chainrule._tensor import Tensor
from chainrule.autograd import no_grad
from chainrule.nn._uninitialized import (
    UninitializedBuffer,
    UninitializedParameter,
    UninitializedTensorMixin,
)
from chainrule.nn.modules.conv import Conv1d, Conv2d, ConvTranspose2d
from chainrule.nn.modules.conv_more import Conv3d, ConvTranspose1d, ConvTranspose3d
from chainrule.nn.modules.linear import Linear
from chainrule.nn.modules.normalization import BatchNorm1d, BatchNorm2d
from chainrule.nn.modules.normalization_more import (
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
)

__all__ = [
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
    "LazyLinear",
    "LazyModuleMixin",
]


def _infer_parameters(module: Any, args: tuple, kwargs: dict) -> None:
    """The forward pre-hook of a lazy module (Note [lazy modules])."""
    module.initialize_parameters(*args, **kwargs)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    del module._initialize_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyModuleMixin:
    """Makes a module lazy: its parameters are shaped on the first forward
    (Note [lazy modules]). Subclasses define ``initialize_parameters(*input)``."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._initialize_hook = self.register_forward_pre_hook(  # type: ignore[attr-defined]
            _infer_parameters, with_kwargs=True
        )

    def has_uninitialized_params(self) -> bool:
        """Whether some parameter or buffer of this module is still uninitialized."""
        tensors = [*self._parameters.values(), *self._buffers.values()]  # type: ignore[attr-defined]
        return any(isinstance(t, UninitializedTensorMixin) for t in tensors)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}"
        )

    def _check_state(
        self, state_dict: Mapping[str, Any], prefix: str, *rest: Any, **kw: Any
    ) -> None:
        # Shape uninitialized tensors after the checkpoint before it is checked and copied.
        for store in (self._parameters, self._buffers):  # type: ignore[attr-defined]
            for name, t in store.items():
                src = state_dict.get(prefix + name)
                if isinstance(t, UninitializedTensorMixin) and isinstance(src, Tensor):
                    with no_grad():
                        t.materialize(tuple(src.shape))
        super()._check_state(state_dict, prefix, *rest, **kw)  # type: ignore[misc]


# Linear ---------------------------------------------------------------------------------------
class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` with ``in_features`` taken from the last axis of the first input."""

    cls_to_become = Linear

    def __init__(
        self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(0, 0, False, device, dtype)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


# Convolutions ---------------------------------------------------------------------------------
class _LazyConvMixin(LazyModuleMixin):
    """In-channels from the first input's channel axis (axis 0 when unbatched)."""

    groups: int
    in_channels: int
    out_channels: int
    kernel_size: tuple[int, ...]
    transposed: bool

    def _lazy_setup(self, out_channels: int, bias: bool, dtype: Any) -> None:
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def _get_in_channels(self, input: Tensor) -> int:
        spatial = len(self.kernel_size)
        if input.dim() not in (spatial + 1, spatial + 2):
            raise RuntimeError(
                f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to "
                f"{self.__class__.__name__}, but got input of size: {input.shape}"
            )
        return input.shape[1] if input.dim() == spatial + 2 else input.shape[0]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            with no_grad():
                self.weight.materialize(shape)
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
            self.reset_parameters()


def _lazy_conv(base: type) -> type:
    """``Lazy<base>``: ``base(0, 0, ...)`` with uninitialized weight and bias."""

    def __init__(
        self: Any,
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
        base.__init__(
            self,
            0,
            0,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            False,
            padding_mode,
            device,
            dtype,
        )
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters, with_kwargs=True)
        self._lazy_setup(out_channels, bias, dtype)

    doc = (
        f"``{base.__name__}`` with ``in_channels`` taken from the first input "
        "(Note [lazy modules])."
    )
    return type(
        f"Lazy{base.__name__}",
        (_LazyConvMixin, base),
        {"__init__": __init__, "cls_to_become": base, "__doc__": doc, "__module__": __name__},
    )


def _lazy_conv_transpose(base: type) -> type:
    """``Lazy<base>`` for a transposed convolution."""

    def __init__(
        self: Any,
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
        base.__init__(
            self,
            0,
            0,
            kernel_size,
            stride,
            padding,
            output_padding,
            groups,
            False,
            dilation,
            padding_mode,
            device,
            dtype,
        )
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters, with_kwargs=True)
        self._lazy_setup(out_channels, bias, dtype)

    doc = (
        f"``{base.__name__}`` with ``in_channels`` taken from the first input "
        "(Note [lazy modules])."
    )
    return type(
        f"Lazy{base.__name__}",
        (_LazyConvMixin, base),
        {"__init__": __init__, "cls_to_become": base, "__doc__": doc, "__module__": __name__},
    )


LazyConv1d = _lazy_conv(Conv1d)
LazyConv2d = _lazy_conv(Conv2d)
LazyConv3d = _lazy_conv(Conv3d)
LazyConvTranspose1d = _lazy_conv_transpose(ConvTranspose1d)
LazyConvTranspose2d = _lazy_conv_transpose(ConvTranspose2d)
LazyConvTranspose3d = _lazy_conv_transpose(ConvTranspose3d)


# Normalization --------------------------------------------------------------------------------
class _LazyNormMixin(LazyModuleMixin):
    """``num_features`` from axis 1 of the first input (as PyTorch, also when unbatched)."""

    affine: bool
    track_running_stats: bool
    num_features: int

    def _lazy_setup(self, affine: bool, track_running_stats: bool, dtype: Any) -> None:
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=int64)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with no_grad():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(base: type) -> type:
    def __init__(
        self: Any,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        base.__init__(self, 0, eps, momentum, False, False, device, dtype)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters, with_kwargs=True)
        self._lazy_setup(affine, track_running_stats, dtype)

    doc = (
        f"``{base.__name__}`` with ``num_features`` taken from the first input "
        "(Note [lazy modules])."
    )
    return type(
        f"Lazy{base.__name__}",
        (_LazyNormMixin, base),
        {"__init__": __init__, "cls_to_become": base, "__doc__": doc, "__module__": __name__},
    )


LazyBatchNorm1d = _lazy_norm(BatchNorm1d)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d)
