"""``embedding`` as one op, so that its node is PyTorch's ``EmbeddingBackward0``."""

from __future__ import annotations

from typing import Any

from chainrule.ops._registry import apply_op, defop, ns

__all__: list[str] = []


@defop(name="embedding", promote=None)
def _embedding(xp: Any, w: Any, *, index: Any, keep: Any) -> Any:
    """out[..., :] = w[index[...], :] (``index`` a constant integer array of valid rows).
    VJP: g added into zeros of w's shape at the rows ``index``, with the rows picked where
    ``keep`` is False (the padding index) given no gradient; ``keep`` is None for all kept."""
    return xp.take(w, index, axis=0)


@_embedding.vjp
def _embedding_vjp(ctx: Any, g: Any) -> Any:
    if ctx.keep is not None:
        g = g * ctx.keep
    return (ns.index_grad(g, shape=ctx.input_shapes[0], index=(ctx.index,)),)


def embedding(weight: Any, index: Any, keep: Any = None) -> Any:
    """Rows ``index`` of ``weight`` (internal helper of ``F.embedding``, which has checked the
    indices); ``keep``: a boolean array of index's shape plus a trailing 1, False where a row
    gets no gradient."""
    return apply_op(_embedding, (weight,), {"index": index, "keep": keep})
