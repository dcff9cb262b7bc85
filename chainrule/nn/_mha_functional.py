"""``multi_head_attention_forward``: the maths of ``nn.MultiheadAttention``, composed from
``linear``, ``scaled_dot_product_attention`` and shape ops.

Long because it follows PyTorch's argument checks one by one (each with PyTorch's message)
before its few lines of maths.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from chainrule import ops as _ops
from chainrule._tensor import Tensor, _new_tensor
from chainrule.nn._attention_functional import (
    _canonical_mask,
    _none_or_dtype,
    scaled_dot_product_attention,
)
from chainrule.nn._functional.dropout import dropout as _dropout
from chainrule.nn._functional.linear import linear as _linear
from chainrule.nn._functional.vision import pad as _pad

__all__ = ["multi_head_attention_forward"]

# Multi-head attention -------------------------------------------------------------------------


def _mha_shape_check(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    num_heads: int,
) -> bool:
    """Whether the call is batched (3-D query) or not (2-D), with PyTorch's checks of the other
    arguments' ranks."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                f"found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                f"found {attn_mask.dim()}-D tensor instead"
            )
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                f"but found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                    f"but found {attn_mask.dim()}-D tensor instead"
                )
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(
                        f"Expected `attn_mask` shape to be {expected} but got "
                        f"{_size(attn_mask.shape)}"
                    )
        return False
    raise AssertionError(
        "query should be unbatched 2D or batched 3D tensor but received "
        f"{query.dim()}-D query tensor"
    )


def _size(shape: Any) -> str:
    return "torch.Size([" + ", ".join(str(int(s)) for s in shape) + "])"


def _split_last(t: Tensor | None, sizes: list[int]) -> list[Tensor | None]:
    if t is None:
        return [None] * len(sizes)
    return list(_ops.split(t, sizes, 0))


def _in_projection_packed(
    q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Tensor | None
) -> tuple[Tensor, Tensor, Tensor]:
    """q W_q^T + b_q, k W_k^T + b_k, v W_v^T + b_v with the three stacked in ``w`` (3E, E):
    one product for self-attention (q is k is v), two when k is v."""
    E = q.shape[-1]
    if k is v:
        if q is k:
            proj = _linear(q, w, b)
            qp, kp, vp = _ops.split(proj, E, -1)
            return qp, kp, vp
        w_q, w_kv = _ops.split(w, [E, 2 * E], 0)
        b_q, b_kv = _split_last(b, [E, 2 * E])
        kv = _linear(k, w_kv, b_kv)
        kp, vp = _ops.split(kv, E, -1)
        return _linear(q, w_q, b_q), kp, vp
    w_q, w_k, w_v = _ops.split(w, E, 0)
    b_q, b_k, b_v = _split_last(b, [E, E, E])
    return _linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)


def _in_projection(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    w_q: Tensor,
    w_k: Tensor,
    w_v: Tensor,
    b_q: Tensor | None,
    b_k: Tensor | None,
    b_v: Tensor | None,
) -> tuple[Tensor, Tensor, Tensor]:
    """The three projections with separate weights (kdim/vdim differing from embed_dim)."""
    Eq, Ek, Ev = q.shape[-1], k.shape[-1], v.shape[-1]
    for name, w, want in (
        ("query", w_q, (Eq, Eq)),
        ("key", w_k, (Eq, Ek)),
        ("value", w_v, (Eq, Ev)),
    ):
        if tuple(w.shape) != want:
            raise AssertionError(
                f"expecting {name} weights shape of {want}, but got {_size(w.shape)}"
            )
    for name, bb in (("query", b_q), ("key", b_k), ("value", b_v)):
        if bb is not None and tuple(bb.shape) != (Eq,):
            raise AssertionError(
                f"expecting {name} bias shape of {(Eq,)}, but got {_size(bb.shape)}"
            )
    return _linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)


def _append_one(mask: Tensor | None) -> Tensor | None:
    """One more (attended, 0) key position at the end of a float mask."""
    return None if mask is None else _pad(mask, (0, 1))


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention over sequence-first inputs.

    query (L, N, E), key (S, N, kdim), value (S, N, vdim), or unbatched (L, E), (S, kdim),
    (S, vdim). Each input is projected (``in_proj_weight`` split in three, or the separate
    ``q/k/v_proj_weight``), split into ``num_heads`` heads of E / num_heads, and per head
    ``softmax(q k^T / sqrt(d) + mask) v``; heads are concatenated and projected by
    ``out_proj_weight``. ``bias_k``/``bias_v`` append one learned key/value position,
    ``add_zero_attn`` one zero position (masks are padded to match). Masks: ``attn_mask``
    (L, S) or (N * num_heads, L, S), ``key_padding_mask`` (N, S); a bool mask is True where a
    position is masked OUT (the opposite of ``scaled_dot_product_attention``), a float mask is
    added. ``is_causal`` is only a hint: ``attn_mask`` must be given too, and is used whenever
    weights are needed or a key padding mask is present. Dropout on the weights applies when
    ``training``.

    Returns:
        (output (L, N, E), weights) where weights are (N, L, S) averaged over heads, (N,
        num_heads, L, S) when ``average_attn_weights=False``, or None unless ``need_weights``.
        With ``need_weights`` a fully masked row gives NaN (a plain softmax), without it zeros,
        as in PyTorch.
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = (
            (_ops.unsqueeze(x, 1) for x in (query, key, value))
            if not (query is key or key is value)
            else _unsqueeze_shared(query, key, value)
        )
        if key_padding_mask is not None:
            key_padding_mask = _ops.unsqueeze(key_padding_mask, 0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask, attn_mask, is_causal = _prepare_masks(
        key_padding_mask, attn_mask, is_causal, need_weights, query.dtype
    )
    head_dim = _check_dims(
        key, value, embed_dim, embed_dim_to_check, num_heads, use_separate_proj_weight
    )
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        q, k, v = _separate_projection(
            query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, in_proj_bias
        )
    if attn_mask is not None:
        attn_mask = _batched_attn_mask(attn_mask, bsz * num_heads, tgt_len, key.shape[0])

    if bias_k is not None or bias_v is not None:
        k, v = _add_bias_kv(k, v, bias_k, bias_v, static_k, static_v)
        attn_mask = _append_one(attn_mask)
        key_padding_mask = _append_one(key_padding_mask)

    q = _ops.transpose(_ops.reshape(q, (tgt_len, bsz * num_heads, head_dim)), 0, 1)
    k = _heads(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _heads(v, static_v, "static_v", bsz * num_heads, head_dim)

    if add_zero_attn:
        zeros = _new_tensor(np.zeros((bsz * num_heads, 1, head_dim), dtype=k._data.dtype))
        k = _ops.cat([k, zeros], 1)
        v = _ops.cat([v, zeros], 1)
        attn_mask = _append_one(attn_mask)
        key_padding_mask = _append_one(key_padding_mask)

    if key_padding_mask is not None:
        kpm = _heads_padding_mask(key_padding_mask, bsz, num_heads, k.shape[1])
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    if not training:
        dropout_p = 0.0
    heads = (q, k, v, attn_mask, dropout_p, bsz, num_heads)
    if need_weights:
        out, w = _attend_with_weights(*heads, out_proj_weight, out_proj_bias)
        if average_attn_weights:
            w = _ops.mean(w, 1)
        if not is_batched:
            out = _ops.squeeze(out, 1)
            w = _ops.squeeze(w, 0)
        return out, w
    out = _attend(*heads, is_causal, out_proj_weight, out_proj_bias)
    if not is_batched:
        out = _ops.squeeze(out, 1)
    return out, None


def _prepare_masks(
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    is_causal: bool,
    need_weights: bool,
    dtype: Any,
) -> tuple[Tensor | None, Tensor | None, bool]:
    """Both masks as float masks (a bool mask's True becomes -inf), and whether the causal hint
    stays: with no key padding mask and no weights needed, the hint replaces ``attn_mask``."""
    key_padding_mask = _canonical_mask(
        key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask", dtype
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
            "method `generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        # The hint alone is enough for scaled_dot_product_attention.
        return key_padding_mask, None, is_causal
    attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", dtype, check_other=False)
    return key_padding_mask, attn_mask, is_causal and key_padding_mask is None


def _check_dims(
    key: Tensor,
    value: Tensor,
    embed_dim: int,
    embed_dim_to_check: int,
    num_heads: int,
    separate: bool,
) -> int:
    """PyTorch's checks of the embedding size and of key against value; the head size."""
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if separate:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(
                f"key's sequence and batch dims {_size(key.shape[:2])} do not "
                f"match value's {_size(value.shape[:2])}"
            )
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(
            f"key shape {_size(key.shape)} does not match value shape {_size(value.shape)}"
        )
    return head_dim


def _separate_projection(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    q_proj_weight: Tensor | None,
    k_proj_weight: Tensor | None,
    v_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
) -> tuple[Tensor, Tensor, Tensor]:
    """The projections with ``use_separate_proj_weight``: the three weights must be given."""
    for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
        if w is None:
            raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
    assert q_proj_weight is not None and k_proj_weight is not None and v_proj_weight is not None
    b_q, b_k, b_v = _split_last(in_proj_bias, [query.shape[-1]] * 3)
    return _in_projection(
        query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v
    )


def _add_bias_kv(
    k: Tensor,
    v: Tensor,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    static_k: Tensor | None,
    static_v: Tensor | None,
) -> tuple[Tensor, Tensor]:
    """k and v (S, N, E) with the learned ``bias_k``/``bias_v`` appended as one more position."""
    if bias_k is None or bias_v is None:
        raise AssertionError("bias_k and bias_v must be given together")
    if static_k is not None:
        raise AssertionError("bias cannot be added to static key.")
    if static_v is not None:
        raise AssertionError("bias cannot be added to static value.")
    bsz, embed_dim = k.shape[1], k.shape[2]
    k = _ops.cat([k, _ops.expand(bias_k, (1, bsz, embed_dim))])
    v = _ops.cat([v, _ops.expand(bias_v, (1, bsz, embed_dim))])
    return k, v


def _batched_attn_mask(attn_mask: Tensor, bh: int, tgt_len: int, src_len: int) -> Tensor:
    """``attn_mask`` checked as (L, S) or (N * heads, L, S), and given its leading dim."""
    if attn_mask.dim() == 2:
        want: tuple[int, ...] = (tgt_len, src_len)
        if tuple(attn_mask.shape) != want:
            raise RuntimeError(
                f"The shape of the 2D attn_mask is {_size(attn_mask.shape)}, but should be {want}."
            )
        return _ops.unsqueeze(attn_mask, 0)
    if attn_mask.dim() == 3:
        want = (bh, tgt_len, src_len)
        if tuple(attn_mask.shape) != want:
            raise RuntimeError(
                f"The shape of the 3D attn_mask is {_size(attn_mask.shape)}, but should be {want}."
            )
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _heads_padding_mask(key_padding_mask: Tensor, bsz: int, num_heads: int, src_len: int) -> Tensor:
    """The (N, S) key padding mask repeated per head: (N * heads, 1, S)."""
    if tuple(key_padding_mask.shape) != (bsz, src_len):
        raise AssertionError(
            f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
            f"{_size(key_padding_mask.shape)}"
        )
    return _ops.reshape(
        _ops.expand(
            _ops.reshape(key_padding_mask, (bsz, 1, 1, src_len)), (bsz, num_heads, 1, src_len)
        ),
        (bsz * num_heads, 1, src_len),
    )


def _attend_with_weights(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    bsz: int,
    num_heads: int,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
) -> tuple[Tensor, Tensor]:
    """Attention written out, keeping the weights: (L, N, E) output, (N, heads, L, S) weights.
    q, k, v are (N * heads, L or S, head_dim)."""
    tgt_len, src_len, head_dim = q.shape[1], k.shape[1], q.shape[2]
    q_scaled = q * math.sqrt(1.0 / float(head_dim))
    w = _ops.matmul(q_scaled, _ops.transpose(k, -2, -1))
    if attn_mask is not None:
        w = w + attn_mask
    w = _ops.softmax(w, -1)
    if dropout_p > 0.0:
        w = _dropout(w, p=dropout_p)
    out = _ops.matmul(w, v)
    out = _ops.reshape(_ops.transpose(out, 0, 1), (tgt_len * bsz, head_dim * num_heads))
    out = _linear(out, out_proj_weight, out_proj_bias)
    out = _ops.reshape(out, (tgt_len, bsz, out.shape[1]))
    return out, _ops.reshape(w, (bsz, num_heads, tgt_len, src_len))


def _attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    bsz: int,
    num_heads: int,
    is_causal: bool,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
) -> Tensor:
    """Attention through ``scaled_dot_product_attention`` (no weights kept): (L, N, E)."""
    tgt_len, src_len, head_dim = q.shape[1], k.shape[1], q.shape[2]
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = _ops.unsqueeze(attn_mask, 0)
        else:
            attn_mask = _ops.reshape(attn_mask, (bsz, num_heads, -1, src_len))
    q = _ops.reshape(q, (bsz, num_heads, tgt_len, head_dim))
    k = _ops.reshape(k, (bsz, num_heads, src_len, head_dim))
    v = _ops.reshape(v, (bsz, num_heads, src_len, head_dim))
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = _ops.reshape(_ops.permute(out, (2, 0, 1, 3)), (bsz * tgt_len, head_dim * num_heads))
    out = _linear(out, out_proj_weight, out_proj_bias)
    return _ops.reshape(out, (tgt_len, bsz, out.shape[1]))


def _unsqueeze_shared(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Unsqueeze dim 1 of each input once, keeping ``query is key`` / ``key is value``
    identities (they choose the packed projection's form)."""
    done: dict[int, Tensor] = {}
    out = []
    for x in (query, key, value):
        if id(x) not in done:
            done[id(x)] = _ops.unsqueeze(x, 1)
        out.append(done[id(x)])
    return out[0], out[1], out[2]


def _heads(x: Tensor, static: Tensor | None, name: str, bh: int, head_dim: int) -> Tensor:
    """(S, N, E) -> (N * heads, S, head_dim), or the given ``static_k``/``static_v``."""
    if static is None:
        return _ops.transpose(_ops.reshape(x, (x.shape[0], bh, head_dim)), 0, 1)
    if static.shape[0] != bh:
        raise AssertionError(f"expecting {name}.size(0) of {bh}, but got {static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.shape[2]}")
    return static
