"""``MultiheadAttention``: the parameters of multi-head attention; the maths is
``functional.multi_head_attention_forward``."""

from __future__ import annotations

from typing import Any

from chainrule import _creation
from chainrule._tensor import Tensor
from chainrule.nn import functional as F
from chainrule.nn import init
from chainrule.nn.modules.linear import NonDynamicallyQuantizableLinear
from chainrule.nn.modules.module import Module
from chainrule.nn.parameter import Parameter

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Multi-head attention (Vaswani et al., 2017):
    ``concat(head_1..head_h) W_o^T + b_o`` with ``head_i = softmax(q_i k_i^T / sqrt(d) + mask)
    v_i``, q, k, v the projected inputs split into ``num_heads`` heads of d = embed_dim /
    num_heads.

    Parameters, as PyTorch's (so state dicts interchange): ``in_proj_weight`` (3E, E) when
    ``kdim == vdim == embed_dim``, otherwise ``q_proj_weight`` (E, E), ``k_proj_weight`` (E,
    kdim) and ``v_proj_weight`` (E, vdim); ``in_proj_bias`` (3E) when ``bias``; ``out_proj``
    (a Linear E -> E); ``bias_k``, ``bias_v`` (1, 1, E) with ``add_bias_kv``. Init: Xavier
    uniform projection weights, zero biases, Xavier normal ``bias_k``/``bias_v``.

    Inputs are (L, N, E) sequence-first, (N, L, E) with ``batch_first``, or unbatched (L, E).
    ``forward`` returns ``(output, weights)``: see ``functional.multi_head_attention_forward``.

    Differs from torch: there is no separate inference fast path (PyTorch's gives the same
    values).
    """

    __constants__ = ["batch_first"]

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                f"num_heads={num_heads} instead"
            )
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        def param(*shape: int) -> Parameter:
            return Parameter(_creation.empty(shape, dtype=dtype))

        if not self._qkv_same_embed_dim:
            self.q_proj_weight = param(embed_dim, embed_dim)
            self.k_proj_weight = param(embed_dim, self.kdim)
            self.v_proj_weight = param(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = param(3 * embed_dim, embed_dim)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = param(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(
            embed_dim, embed_dim, bias=bias, dtype=dtype
        )
        if add_bias_kv:
            self.bias_k = param(1, 1, embed_dim)
            self.bias_v = param(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def merge_masks(
        self,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        query: Tensor,
    ) -> tuple[Tensor | None, int | None]:
        """The masks combined for a (B, L, E) ``query``, with PyTorch's mask-type code.

        Only ``key_padding_mask`` (B, L): itself, type 1. ``attn_mask`` (L, L) or
        (B * num_heads, L, L): viewed as (B, num_heads, L, L), type 2; with both, that plus
        ``key_padding_mask`` viewed as (B, 1, 1, L) and broadcast over the heads (logical or
        for boolean masks, a sum for additive ones). Neither: ``(None, None)``.
        """
        mask_type: int | None = None
        merged: Tensor | None = None
        if key_padding_mask is not None:
            mask_type = 1
            merged = key_padding_mask
        if attn_mask is not None:
            batch, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.ndim == 3:
                expanded = attn_mask.view(batch, -1, seq_len, seq_len)
            else:
                # one (L, L) mask shared by every batch entry and head
                expanded = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch, self.num_heads, -1, -1
                )
            merged = expanded
            if key_padding_mask is not None:
                kpm = key_padding_mask.view(batch, 1, 1, seq_len).expand(-1, self.num_heads, -1, -1)
                merged = expanded + kpm
        return merged, mask_type

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """Attention of ``query`` over ``key``/``value``; see the class docstring.

        Args:
            key_padding_mask: (N, S) or (S,): True / -inf where a key is padding.
            need_weights: also return the attention weights (averaged over heads unless
                ``average_attn_weights=False``).
            attn_mask: (L, S) or (N * num_heads, L, S): True / -inf where attention is not
                allowed.
            is_causal: a hint that ``attn_mask`` is the causal mask (it must still be given).
        """
        is_batched = query.dim() == 3
        key_padding_mask = F._canonical_mask(
            key_padding_mask,
            "key_padding_mask",
            F._none_or_dtype(attn_mask),
            "attn_mask",
            query.dtype,
        )
        attn_mask = F._canonical_mask(
            attn_mask, "attn_mask", None, "", query.dtype, check_other=False
        )
        if self.batch_first and is_batched:
            # Transpose each distinct input once, so that `query is key is value` still holds
            # (it selects the one-product self-attention projection).
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        common: dict[str, Any] = dict(
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if not self._qkv_same_embed_dim:
            out, weights = F.multi_head_attention_forward(
                query,
                key,
                value,
                self.embed_dim,
                self.num_heads,
                self.in_proj_weight,
                self.in_proj_bias,
                self.bias_k,
                self.bias_v,
                self.add_zero_attn,
                self.dropout,
                self.out_proj.weight,
                self.out_proj.bias,
                use_separate_proj_weight=True,
                q_proj_weight=self.q_proj_weight,
                k_proj_weight=self.k_proj_weight,
                v_proj_weight=self.v_proj_weight,
                **common,
            )
        else:
            out, weights = F.multi_head_attention_forward(
                query,
                key,
                value,
                self.embed_dim,
                self.num_heads,
                self.in_proj_weight,
                self.in_proj_bias,
                self.bias_k,
                self.bias_v,
                self.add_zero_attn,
                self.dropout,
                self.out_proj.weight,
                self.out_proj.bias,
                **common,
            )
        if self.batch_first and is_batched:
            return out.transpose(1, 0), weights
        return out, weights
