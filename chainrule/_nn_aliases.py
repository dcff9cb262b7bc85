"""``torch.dropout``, ``torch.batch_norm`` and the other top-level forms of functions that
live in ``chainrule.nn.functional``, with torch's top-level signatures.

They sit above ``nn.functional`` (which is above ``chainrule.ops``), so ``chainrule/__init__.py``
re-exports them from here rather than from ``chainrule.ops``.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "dropout",
    "batch_norm",
    "layer_norm",
    "group_norm",
    "embedding",
    "cosine_similarity",
    "pixel_shuffle",
    "pixel_unshuffle",
    "bilinear",
]


def _F() -> Any:
    # At call time, so that `import chainrule` does not load chainrule.nn.
    from chainrule.nn import functional

    return functional


def dropout(input: Any, p: float, train: bool) -> Any:
    """``torch.dropout(input, p, train)``: see ``nn.functional.dropout`` (whose Python check
    is a ValueError; this one is the kernel's RuntimeError)."""
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _F().dropout(input, p, train)


def batch_norm(
    input: Any,
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    training: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Any:
    """``torch.batch_norm``: see ``nn.functional.batch_norm``."""
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def layer_norm(
    input: Any,
    normalized_shape: Any,
    weight: Any = None,
    bias: Any = None,
    eps: float = 1e-5,
    cudnn_enable: bool = True,
) -> Any:
    """``torch.layer_norm``: see ``nn.functional.layer_norm``."""
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(
    input: Any,
    num_groups: int,
    weight: Any = None,
    bias: Any = None,
    eps: float = 1e-5,
    cudnn_enabled: bool = True,
) -> Any:
    """``torch.group_norm``: see ``nn.functional.group_norm``."""
    return _F().group_norm(input, num_groups, weight, bias, eps)


def embedding(
    weight: Any,
    input: Any,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Any:
    """``torch.embedding(weight, indices)`` (note the order; padding_idx -1 means none)."""
    return _F().embedding(
        input,
        weight,
        None if padding_idx == -1 else padding_idx,
        scale_grad_by_freq=scale_grad_by_freq,
        sparse=sparse,
    )


def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Any:
    """``torch.cosine_similarity``: see ``nn.functional.cosine_similarity``."""
    return _F().cosine_similarity(x1, x2, dim, eps)


def pixel_shuffle(input: Any, upscale_factor: int) -> Any:
    """``torch.pixel_shuffle``: (*, C r^2, H, W) -> (*, C, H r, W r)."""
    return _F().pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input: Any, downscale_factor: int) -> Any:
    """``torch.pixel_unshuffle``: (*, C, H r, W r) -> (*, C r^2, H, W)."""
    return _F().pixel_unshuffle(input, downscale_factor)


def bilinear(input1: Any, input2: Any, weight: Any, bias: Any = None) -> Any:
    """``torch.bilinear``: see ``nn.functional.bilinear``."""
    return _F().bilinear(input1, input2, weight, bias)
