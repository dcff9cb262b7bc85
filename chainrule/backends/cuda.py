"""``torch.backends.cuda``'s flags (TF32 matmul, SDPA kernel choice), kept for programs that set
them; chainrule's GPU path (CuPy) is chosen by the array backend, not by these flags."""

from __future__ import annotations

__all__ = [
    "matmul",
    "is_built",
    "flash_sdp_enabled",
    "enable_flash_sdp",
    "mem_efficient_sdp_enabled",
    "enable_mem_efficient_sdp",
    "math_sdp_enabled",
    "enable_math_sdp",
]


class _Matmul:
    """``torch.backends.cuda.matmul``: ``allow_tf32`` and the reduced-precision flags."""

    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _Matmul()
_sdp = {"flash": True, "mem_efficient": True, "math": True}


def is_built() -> bool:
    """False: chainrule is not built against CUDA (its GPU path is CuPy, when installed)."""
    return False


def flash_sdp_enabled() -> bool:
    """Whether the flash attention kernel may be chosen (a flag only)."""
    return _sdp["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    """Allow or forbid the flash attention kernel (a flag only)."""
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    """Whether the memory-efficient attention kernel may be chosen (a flag only)."""
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Allow or forbid the memory-efficient attention kernel (a flag only)."""
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled() -> bool:
    """Whether the reference attention kernel may be chosen (a flag only)."""
    return _sdp["math"]


def enable_math_sdp(enabled: bool) -> None:
    """Allow or forbid the reference attention kernel (a flag only)."""
    _sdp["math"] = bool(enabled)
