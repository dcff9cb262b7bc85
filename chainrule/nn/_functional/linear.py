"""Linear maps and lookups: linear, bilinear and embedding."""

from __future__ import annotations

from chainrule import _kinds
from chainrule import ops as _ops
from chainrule._autocast_state import state as _ac
from chainrule._dispatch import upper as _upper
from chainrule._tensor import Tensor, _type_name
from chainrule.nn._functional._common import (
    _data,
    _tensor_args,
)
from chainrule.nn._functional._device import on_input_device
from chainrule.ops import _autocast
from chainrule.ops import embedding as _embedding_ops
from chainrule.ops import fused_nn as _fused
from chainrule.ops.composite_node import composite as _composite_of
from chainrule.ops.linalg import check_addmm_dtype, linear_addmm

__all__ = ["linear", "bilinear", "embedding"]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x W^T + b. An input with more than two dims is flattened to (-1, in_features) around
    one matrix product, as PyTorch does: the weight's gradient is then one GEMM, not a batch
    of GEMMs summed over the batch."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, weight, bias = _autocast.lower(input, weight, bias)
    _tensor_args(
        "linear", ("input", 1, input, False), ("weight", 2, weight, False), ("bias", 3, bias, True)
    )
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(
            "both arguments to linear need to be at least 1D, but they are "
            f"{input.ndim}D and {weight.ndim}D"
        )
    if weight.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {weight.ndim}D")
    if bias is not None and weight.ndim == 2:
        # torch computes this as addmm(b, x, W^T): its dtype rule and texts.
        check_addmm_dtype(bias, input, weight)
    if weight.ndim == 2 and input.shape[-1] == weight.shape[1]:
        # As PyTorch: addmm(b, x, W^T) (AddmmBackward0) for a 2-D input with a bias; other
        # inputs viewed as (-1, in_features) around it (the weight's gradient is one GEMM).
        if input.ndim == 2:
            if bias is None:
                return _ops.matmul(input, _ops.t(weight))
            return linear_addmm(bias, input, _ops.t(weight))
        if input.ndim > 2 or bias is not None:
            x2 = _ops.reshape(input, (-1, input.shape[-1]))
            wt = _ops.t(weight)
            shape = tuple(input.shape[:-1]) + (weight.shape[0],)
            if bias is None:  # torch's matmul: mm, then UnsafeViewBackward0
                return _fused.unsafe_view(_ops.matmul(x2, wt), shape)
            return _ops.reshape(linear_addmm(bias, x2, wt), shape)
        if bias is None:  # 1-D, as torch's matmul: unsqueeze, mm, squeeze_ (SqueezeBackward4)
            return _fused.squeeze0(_ops.matmul(_ops.unsqueeze(input, 0), _ops.t(weight)))
    out = _ops.matmul(input, _ops.t(weight) if weight.ndim == 2 else weight)
    return out + bias if bias is not None else out


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y_k = x1^T W_k x2 + b_k: x1 against W reshaped to (in1, out*in2), then a product with
    x2 summed over in2."""
    o, i1, i2 = weight.shape
    lead = tuple(input1.shape[:-1])
    x1 = _ops.reshape(input1, (-1, i1))
    x2 = _ops.reshape(input2, (-1, i2))

    def trilinear(a: Tensor, w: Tensor, b: Tensor) -> Tensor:
        wf = _ops.reshape(_ops.permute(w, (1, 0, 2)), (i1, o * i2))
        t = _ops.reshape(_ops.matmul(a, wf), (-1, o, i2))
        return _ops.sum(t * _ops.unsqueeze(b, 1), -1)

    # PyTorch's graph: views of the inputs, one TrilinearBackward0, a view, the bias added.
    out = _ops.reshape(
        _composite_of("TrilinearBackward0", trilinear, (x1, weight, x2), reads="trilinear"),
        lead + (o,),
    )
    if bias is not None:
        out = out + bias
    return out


@on_input_device
def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input``; the ``padding_idx`` row gets no
    gradient (the picked rows there come from a detached weight)."""
    if max_norm is not None or scale_grad_by_freq:
        raise NotImplementedError(
            "embedding: max_norm and scale_grad_by_freq are not implemented in chainrule"
        )
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.shape[0] + padding_idx
    _tensor_args("embedding", ("weight", 1, weight, False), ("indices", 2, input, False))
    if not _kinds.is_integral(input._data):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the "
            "following scalar types: Long, Int; but got "
            f"chainrule.{_type_name(input._data.dtype)} instead (while checking "
            "arguments for embedding)"
        )
    idx = _data(input)
    if idx.size and (idx.min() < 0 or idx.max() >= weight.shape[0]):
        # torch's text; plain indexing would wrap a negative index around silently.
        raise IndexError("index out of range in self")
    keep = None
    if sparse:  # weight.grad a sparse COO tensor (Note [sparse embedding gradients])
        mask = None if padding_idx is None else idx != padding_idx
        rows = _upper.sparse_rows(weight, idx, mask)
        return rows.reshape(*idx.shape, weight.shape[1])
    if padding_idx is not None:
        keep = (idx != padding_idx)[..., None].astype(weight._data.dtype)
    return _embedding_ops.embedding(weight, idx, keep)  # EmbeddingBackward0, as PyTorch
