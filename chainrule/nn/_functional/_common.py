"""Helpers shared by the topic modules of torch.nn.functional: constants, argument checks and
the legacy ``size_average``/``reduce`` arguments."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule import ops as _ops
from chainrule._tensor import Tensor, _new_tensor
from chainrule.autograd import grad_mode as _grad_mode
from chainrule.backends import backend_of
from chainrule.ops import conv as _conv
from chainrule.ops._conv_args import arg_type as _arg_type

__all__: list[str] = []


def _const(a: Any, like: Tensor) -> Tensor:
    """A constant tensor (no grad) of ``like``'s dtype, on ``like``'s device (a host array is
    copied there)."""
    d = like._data
    if type(d) is np.ndarray:
        return _new_tensor(np.asarray(a, dtype=d.dtype))
    be = backend_of(d)
    return _new_tensor(be.asarray(a, dtype=d.dtype, device=be.device_index(d)))


def _host(t: Any) -> np.ndarray:
    """``t``'s values on the host (a copy from a GPU): for index structure worked out there."""
    return backend_of(t._data).to_host(t._data)


def _on_device(a: Any, like: Tensor) -> Tensor:
    """The host array ``a`` (its own dtype) as a tensor on ``like``'s device."""
    d = like._data
    if type(d) is np.ndarray:
        return _new_tensor(np.asarray(a))
    be = backend_of(d)
    return _new_tensor(be.from_host(np.asarray(a), be.device_index(d)))


def _xp(t: Any) -> Any:
    """The array module of Tensor ``t``'s device."""
    return backend_of(t._data).xp


def _data(t: Any) -> Any:
    """The array behind ``t`` (on its device)."""
    return t._data


def _tensor_args(fn: str, *args: tuple[str, int, Any, bool]) -> None:
    """torch's TypeError for a non-Tensor argument (a list or a NumPy array passed by mistake),
    instead of an AttributeError from deep inside; ``(name, position, value, optional)``."""
    for name, pos, x, optional in args:
        if not isinstance(x, Tensor) and not (optional and x is None):
            raise TypeError(
                f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not {_arg_type(x)}"
            )


def _not_implemented_for_ints(kernel: str, input: Tensor) -> None:
    if not _kinds.is_inexact(input._data):
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_legacy(input._data.dtype)}'"
        )


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return _ops.mean(loss)
    if reduction == "sum":
        return _ops.sum(loss)
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _check_same_size(input: Tensor, target: Tensor, name: str) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({_size(target)}) that is different to the input size "
            f"({_size(input)}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


def _size(t: Tensor) -> str:
    return "torch.Size([" + ", ".join(str(s) for s in t.shape) + "])"


def _legacy(d: Any) -> str:
    from chainrule.ops._registry import _legacy_name

    return _legacy_name(d)


def _weight_no_grad(name: str, weight: Any, arg: str = "weight") -> None:
    if weight is not None and weight.requires_grad and _grad_mode.is_grad_enabled():
        raise RuntimeError(
            f"The function '{name}' is not differentiable with respect to "
            f"argument '{arg}'. This input cannot have requires_grad True."
        )


def _default_rng(ref: Any) -> np.random.Generator:
    """The default generator of Tensor ``ref``'s device (the CPU's or its GPU's)."""
    from chainrule._creation import rng_of

    return rng_of(None, ref)


def _pair(v: Any) -> tuple[int, int]:
    return _conv._pair(v)


def _rng(ref: Any) -> np.random.Generator:
    """The default generator of Tensor ``ref``'s device (the CPU's or its GPU's)."""
    from chainrule._creation import rng_of

    return rng_of(None, ref)


def _into(input: Tensor, out: Tensor) -> Tensor:
    """Write ``out`` into ``input`` (an in-place form through the differentiable ``copy_``)."""
    input.copy_(out)
    return input


def _ntuple(v: Any, n: int) -> tuple[int, ...]:
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return (int(v[0]),) * n
        if len(v) != n:
            raise RuntimeError(f"expected {n} values, got {list(v)}")
        return tuple(int(i) for i in v)
    return (int(v),) * n
