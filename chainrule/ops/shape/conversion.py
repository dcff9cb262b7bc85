"""Copies into a new dtype, device or encoding: clone, to_dtype, to_device and one_hot
(torch.nn.functional's; chainrule.nn.functional re-exports it)."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule.backends import backend_of
from chainrule.ops import _apply
from chainrule.ops._registry import apply_op, defop, ns

__all__ = ["clone", "to_dtype", "to_device", "one_hot"]


@defop(name="clone")
def _clone(xp: Any, x: Any) -> Any:
    """A copy of x with its own memory. VJP: g."""
    return x.copy()


_clone.vjp(lambda ctx, g: (g,))


def clone(input: Any) -> Any:
    """A copy of ``input`` (differentiable: gradients flow back to ``input``)."""
    return apply_op(_clone, (input,))


@defop(name="to_dtype", node_name="ToCopyBackward0")
def _to_dtype(xp: Any, x: Any, *, dtype: Any) -> Any:
    """x cast to ``dtype`` (the real part, for complex x and a real dtype). VJP: g (the engine
    casts it back to the input's dtype)."""
    if _kinds.is_complex(x) and not _kinds.is_complex(dtype):
        x = x.real
    return _kinds.astype(x, dtype)


_to_dtype.vjp(lambda ctx, g: (g,))


def to_dtype(input: Any, dtype: Any) -> Any:
    """``input`` cast to NumPy dtype ``dtype``; complex to real keeps the real part and warns,
    as PyTorch."""
    dtype = np.dtype(dtype)
    if input._data.dtype.kind == "c" and dtype.kind != "c":
        import warnings

        warnings.warn(
            "Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3
        )
    return apply_op(_to_dtype, (input,), {"dtype": dtype})


@defop(name="to_device", node_name="ToCopyBackward0")
def _to_device(xp: Any, x: Any, *, backend: Any, index: Any, src: Any, src_index: Any) -> Any:
    """x copied from device ``src_index`` of backend ``src`` to device ``index`` of
    ``backend`` (through the host: ``src.to_host``, then ``backend.from_host``; a GPU-to-GPU
    copy on one backend is ``backend.copy_to_device``). VJP: g copied back the other way."""
    if src is backend:
        return backend.copy_to_device(x, index)
    return backend.from_host(src.to_host(x), index)


_to_device.vjp(
    lambda ctx, g: (
        ns.to_device(g, backend=ctx.src, index=ctx.src_index, src=ctx.backend, src_index=ctx.index),
    )
)


def to_device(input: Any, backend: Any, index: Any = None) -> Any:
    """``input`` copied to device ``index`` of ``backend`` (the current device when None);
    differentiable: the gradient is copied back to ``input``'s device."""
    d = input._data
    src = backend_of(d)
    return apply_op(
        _to_device,
        (input,),
        {"backend": backend, "index": index, "src": src, "src_index": src.device_index(d)},
    )


_apply.TO_DEVICE[0] = to_device  # Note [0-d CPU tensors in a CUDA op] in ops/_apply.py


@defop(name="one_hot", differentiable=False, promote=None)
def _one_hot(xp: Any, x: Any, *, num_classes: int) -> Any:
    """x[..., None] == arange(num_classes), as int64 (not differentiable)."""
    return (x[..., None] == xp.arange(num_classes)).astype(xp.int64)


def one_hot(tensor: Any, num_classes: int = -1) -> Any:
    """torch.nn.functional.one_hot: int64 tensor with a new last dim of size ``num_classes``."""
    d = tensor._data
    if d.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    num_classes = int(num_classes)
    if d.size == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        lo, hi = int(d.min()), int(d.max())
        if lo < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = hi + 1
        elif hi >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return apply_op(_one_hot, (tensor,), {"num_classes": num_classes})
