"""Attention maths of ``chainrule.nn.functional``: ``scaled_dot_product_attention``, ``rms_norm``
and the mask helpers the transformer layers share (``multi_head_attention_forward`` is in
``_mha_functional.py``).

Everything is composed from registered ops (matmul, softmax, add, dropout, cat, pad...), so
gradients of every order come for free. Masks become additive float biases (0 where a position
takes part, -inf where it does not) built as constant arrays, so a boolean or causal mask costs
one broadcast add forward and nothing extra backward. scaled_dot_product_attention records
PyTorch's nodes: its CPU flash kernel's one node where PyTorch picks that kernel, else its math
path's ops (``_sdpa``, ``_matmul``).
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule import ops as _ops
from chainrule._autocast_state import state as _ac
from chainrule._dtype import CPP_NAMES, c_name, to_dtype
from chainrule._tensor import Tensor, _new_tensor
from chainrule.nn._functional.dropout import dropout as _dropout
from chainrule.ops import _autocast
from chainrule.ops._registry import _legacy_name
from chainrule.ops.composite_node import composite
from chainrule.ops.fused_nn import reshape_alias as _reshape_alias
from chainrule.ops.fused_nn import unsafe_view as _unsafe_view
from chainrule.ops.nn import safe_softmax as _safe_softmax
from chainrule.ops.scalar_overloads import mul_scalar as _mul_scalar

__all__ = ["scaled_dot_product_attention", "rms_norm"]


def _cname(t: Tensor) -> str:
    n: str = t._data.dtype.name
    return CPP_NAMES.get(n, n)


# Scaled dot-product attention -----------------------------------------------------------------


def _check_sdpa(
    query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None, is_causal: bool
) -> None:
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"scaled_dot_product_attention(): argument '{name}' must be Tensor, "
                f"not {type(t).__name__}"
            )
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead."
        )
    dq, dk, dv = query._data.dtype, key._data.dtype, value._data.dtype
    if not (dq == dk == dv):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_cname(query)} key.dtype: {_cname(key)} and value.dtype: {_cname(value)} instead."
        )
    # PyTorch checks the mask's dtype first, then refuses a complex query in its softmax and
    # other non-floating ones in its matmul.
    if attn_mask is not None:
        md = attn_mask._data.dtype
        if not (_kinds.is_bool(md) or md == np.float32 or md == dq):
            raise RuntimeError(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                f"attn_mask.dtype: {_cname(attn_mask)} and  query.dtype: {_cname(query)} "
                "instead."
            )
    if _kinds.is_complex(dq):
        raise NotImplementedError(
            f"\"softmax_lastdim_kernel_impl\" not implemented for '{_legacy_name(dq)}'"
        )
    if not _kinds.is_floating(dq):
        raise RuntimeError(f"expected scalar type Float but found {c_name(dq)}")
    if attn_mask is not None and is_causal:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be "
            "set when is_causal=True"
        )


def _repeat_heads(x: Tensor, heads: int) -> Tensor:
    """Repeat each of x's heads (dim -3) ``heads // x.size(-3)`` times in place order, as
    ``repeat_interleave(r, dim=-3)``: (..., Hk, S, E) -> (..., Hk r, S, E)."""
    hk = x.shape[-3]
    r = heads // hk
    if r == 1:
        return x
    shape = tuple(x.shape)
    big = _ops.expand(_ops.unsqueeze(x, -3), shape[:-2] + (r,) + shape[-2:])
    # PyTorch's repeat_interleave: a contiguous copy of the expanded tensor, then a view.
    return _ops.view(_ops.clone(big), shape[:-3] + (hk * r,) + shape[-2:])


def _bmm_batch(a: Tensor, b: Tensor) -> int:
    try:
        lead = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    except ValueError:
        lead = tuple(a.shape[:-2])
    return int(np.prod(lead, dtype=np.int64))


def _check_batch(a: Tensor, b: Tensor) -> None:
    """Batch dims (all but the last two) must broadcast; PyTorch's message otherwise."""
    sa, sb = tuple(a.shape[:-2]), tuple(b.shape[:-2])
    n = max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    for i in range(n - 1, -1, -1):
        if sa[i] != sb[i] and sa[i] != 1 and sb[i] != 1:
            raise RuntimeError(
                f"The size of tensor a ({sa[i]}) must match the size of tensor b "
                f"({sb[i]}) at non-singleton dimension {i}"
            )


def _mask_bias(
    attn_mask: Tensor | None, is_causal: bool, L: int, S: int, query: Tensor
) -> Tensor | None:
    """The additive bias for the scores (0 where a position takes part, -inf where it does
    not; a float mask as it is), on the query's device. A row with no position left gets zeros
    from ``_safe_softmax``, as in PyTorch (a plain softmax would give NaN)."""
    dtype = query._data.dtype
    backend = query._backend
    if is_causal:
        keep = np.tri(L, S, dtype=bool)
        causal = np.where(keep, 0.0, -np.inf).astype(dtype)
        return _new_tensor(backend.from_host(causal, query.device.index))
    if attn_mask is None:
        return None
    # a 0-d mask: one value for every (query, key) pair
    mask = attn_mask if attn_mask.ndim else _ops.reshape(attn_mask, (1, 1))
    m = mask._data
    if _kinds.is_bool(m):
        xp = mask._backend.xp
        return _new_tensor(xp.where(m, 0.0, -xp.inf).astype(dtype))
    return mask


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(q k^T * scale + bias) v over the last two dims, batch dims broadcast.

    Shapes: query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev). ``scale``
    defaults to 1 / sqrt(E). ``attn_mask`` broadcasts to (..., L, S): a bool mask is True where
    a query may attend (False positions get -inf), a float mask is added to the scores (and gets
    a gradient when it requires one). ``is_causal`` masks key j > query i (the top-left aligned
    lower triangle of an L x S matrix) and excludes ``attn_mask``. A row with every position
    masked gives zeros (and zero gradients), as PyTorch's. ``dropout_p > 0`` applies dropout to
    the attention weights (always: there is no training flag). ``enable_gqa`` repeats key and
    value heads (dim -3) to the query's head count (grouped-query attention; the counts must
    divide it).

    Differs from torch: the dropout mask comes from chainrule's generator, not PyTorch's.
    """
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        query, key, value = _autocast.lower(query, key, value)
    _check_sdpa(query, key, value, attn_mask, is_causal)
    args = (attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if (
        query.ndim == key.ndim == value.ndim == 4
        and dropout_p == 0.0
        and value.shape[-1] == query.shape[-1]
        and not (attn_mask is not None and attn_mask.requires_grad)
    ):
        # PyTorch's CPU flash kernel takes these: one node over q, k, v (Note [composite
        # nodes] in chainrule/ops/composite_node.py).
        return composite(
            "ScaledDotProductFlashAttentionForCpuBackward0",
            lambda q, k, v: _sdpa(q, k, v, *args, False),
            (query, key, value),
        )
    return _sdpa(query, key, value, *args, True)


def _sdpa(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    is_causal: bool,
    scale: float | None,
    enable_gqa: bool,
    math_nodes: bool,
) -> Tensor:
    """scaled_dot_product_attention once the masks' arguments are checked; ``math_nodes``:
    recorded with the nodes of PyTorch's math path (else composed of fewer ops, for the flash
    kernel's one node)."""
    if enable_gqa:
        hq = query.shape[-3] if query.ndim >= 3 else None
        hk = key.shape[-3] if key.ndim >= 3 else None
        hv = value.shape[-3] if value.ndim >= 3 else None
        if hq is None or hk is None or hv is None:
            nd = min(query.ndim, key.ndim, value.ndim)
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{nd}, {nd - 1}], but got -3)"
            )
        if hk == 0 or hv == 0 or hq % hk or hq % hv:
            raise RuntimeError(
                "Number of heads in key and value must divide the number of heads in "
            )
        key, value = _repeat_heads(key, hq), _repeat_heads(value, hq)
    _check_batch(query, key)
    _check_batch(query, value)
    E, S = query.shape[-1], key.shape[-2]
    if key.shape[-1] != E:
        b = _bmm_batch(query, key)
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{b}, {E}] but got: [{b}, {key.shape[-1]}]."
        )
    if value.shape[-2] != S:
        b = _bmm_batch(query, value)
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{b}, {S}] but got: [{b}, {value.shape[-2]}]."
        )
    L = query.shape[-2]
    if scale is None:
        scale = 1.0 / math.sqrt(E) if E else math.inf
    bias = _mask_bias(attn_mask, is_causal, L, S, query)
    if math_nodes:
        # PyTorch's math path: both q and k^T scaled by sqrt(|scale|) (q by its negative for a
        # negative scale), a mask added to the scores, a softmax that gives zeros on rows with
        # no position left, and its matmul's nodes (_matmul).
        root = math.sqrt(abs(float(scale)))
        q = _mul_scalar(query, -root if scale < 0 else root)
        scores = _matmul(q, _mul_scalar(_ops.transpose(key, -2, -1), root))
    else:
        # Inside the flash kernel's one node, fewer ops: scale whichever operand is smaller,
        # q (L x E) or the scores (L x S).
        kt = _ops.transpose(key, -2, -1)
        if E <= S:
            scores = _ops.matmul(query * float(scale), kt)
        else:
            scores = _ops.matmul(query, kt) * float(scale)
    if bias is not None:
        if bias._data.dtype != scores._data.dtype:
            # PyTorch adds the mask in place: a float32 mask keeps a lower query dtype.
            bias = bias.to(scores.dtype)
        scores = scores + bias
    attn = _safe_softmax(scores, -1)
    if dropout_p > 0.0:
        if dropout_p > 1.0:
            raise RuntimeError(
                f"dropout probability has to be between 0 and 1, but got {dropout_p}"
            )
        attn = _dropout(attn, dropout_p, True)
    return _matmul(attn, value) if math_nodes else _ops.matmul(attn, value)


def _matmul(a: Tensor, b: Tensor) -> Tensor:
    """a @ b recorded as PyTorch's matmul records it where the nodes are known: ``mm`` for two
    matrices; for equal batch dims, both expanded, reshaped to 3-d, ``bmm`` and an
    ``_unsafe_view`` back (UnsafeViewBackward0 over BmmBackward0 over ViewBackward0 over
    ExpandBackward0). Other shapes (broadcast batch dims, a matrix with a batch) go through
    chainrule's matmul."""
    if a.ndim == 2 and b.ndim == 2:
        return _ops.mm(a, b)
    batch = tuple(a.shape[:-2])
    if a.ndim < 3 or tuple(b.shape[:-2]) != batch:
        return _ops.matmul(a, b)
    n = int(np.prod(batch, dtype=np.int64))
    a3 = _as_3d(_ops.expand(a, tuple(a.shape)), (n,) + tuple(a.shape[-2:]))
    b3 = _as_3d(_ops.expand(b, tuple(b.shape)), (n,) + tuple(b.shape[-2:]))
    return _unsafe_view(_ops.bmm(a3, b3), batch + (a.shape[-2], b.shape[-1]))


def _as_3d(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """PyTorch's reshape of ``x``: a view of a contiguous tensor (ViewBackward0), an alias of
    one that can be viewed (ReshapeAliasBackward0), else a contiguous copy reshaped
    (UnsafeViewBackward0 over CloneBackward0)."""
    if x.is_contiguous():
        return _ops.view(x, shape)
    probe = x._data.view()
    try:
        probe.shape = shape  # raises where NumPy would have to copy
    except AttributeError:
        return _unsafe_view(_ops.clone(x), shape)
    return _reshape_alias(x, shape)


# Masks ----------------------------------------------------------------------------------------


def _none_or_dtype(input: Tensor | None) -> Any:
    """The dtype of ``input``, or None (the ``other_type`` argument of ``_canonical_mask``)."""
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(
    mask: Tensor | None,
    mask_name: str,
    other_type: Any,
    other_name: str,
    target_type: Any,
    check_other: bool = True,
) -> Tensor | None:
    """A bool or float mask as a float mask of ``target_type``: True (masked out) becomes -inf,
    False 0; a float mask is returned as is. Warns, as PyTorch does, when the two masks of one
    call have different types."""
    if mask is None:
        return None
    if not (_kinds.is_bool(mask._data) or _kinds.is_floating(mask._data)):
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
            "same type for both instead.",
            UserWarning,
            stacklevel=3,
        )
    if _kinds.is_bool(mask._data):
        dt = _np_dtype(target_type)
        return _new_tensor(np.where(mask._data, -np.inf, 0.0).astype(dt))
    return mask


def _np_dtype(dtype: Any) -> np.dtype:
    return to_dtype(dtype).np


# RMS normalization ----------------------------------------------------------------------------


def rms_norm(
    input: Tensor, normalized_shape: Any, weight: Tensor | None = None, eps: float | None = None
) -> Tensor:
    """x / sqrt(mean(x^2) + eps) * weight over the trailing ``normalized_shape`` dims.

    ``eps=None`` means ``finfo(input.dtype).eps``. Composed from ops, so it has every
    derivative.
    """
    shape = (
        (normalized_shape,)
        if isinstance(normalized_shape, numbers.Integral)
        else tuple(int(s) for s in normalized_shape)
    )
    k = len(shape)
    if k > input.ndim:
        raise ValueError(f"Input tensor must have at least {k} dimensions, but got {input.ndim}")
    if tuple(input.shape[input.ndim - k :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*{', '.join(str(s) for s in shape)}], but got input of size"
            f"{list(input.shape)}"
        )
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    y = input * _ops.rsqrt(_ops.mean(input * input, dims, keepdim=True) + eps)
    return y * weight if weight is not None else y
