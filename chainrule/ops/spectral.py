"""Discrete Fourier transforms: the three primitives PyTorch's ``torch.fft`` is built on
(``fft_c2c``, ``fft_r2c``, ``fft_c2r``, registered ops with PyTorch's node names), and
``resize_signal``, the zero-padding or trimming that ``n=``/``s=`` ask for. The public face
is chainrule/fft.py; ``stft``/``istft`` (chainrule/ops/short_time.py) are built on these.

Each primitive transforms over ``dim`` (a tuple of dims) with a scale c set by ``norm``:
``"backward"`` gives c = 1 for the forward transform (sign -1 in the exponent) and 1/N for the
inverse (sign +1), ``"forward"`` the other way round, ``"ortho"`` 1/sqrt(N) both ways, where N
is the product of the signal sizes over ``dim``.

VJPs (Note [Wirtinger gradients] in ops/complex_numbers.py): the DFT is linear, y = c F x, so
grad_x = c F^H g, the transform of the other direction with the same scale (the "swapped"
norm):
- c2c: c2c(g) in the other direction;
- r2c (the spectrum of a real x, or its onesided half): g (zero-padded back to the full length
  when onesided), then c2c in the inverse direction; the engine keeps its real part for the
  real input;
- c2r (a real signal of length n from a half spectrum): the forward r2c of g with the same
  scale, its entries 1 .. n - n_half doubled (each stands for itself and its conjugate mirror),
  as PyTorch's ``fft_c2r_backward``.
The forwards run NumPy's pocketfft in the input's precision (complex64 for float32).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule.backends import backend_of
from chainrule.ops._registry import apply_op, defop, ns

__all__: list[str] = []

_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _complex_dtype(dt: np.dtype) -> np.dtype:
    return np.dtype(np.complex128 if dt in (np.float64, np.complex128) else np.complex64)


def _real_dtype(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float64 if dt in (np.float64, np.complex128) else np.float32)


@defop(name="fft_c2c", node_name="FftC2CBackward0")
def _fft_c2c(xp: Any, x: Any, *, dim: tuple[int, ...], norm: str, forward: bool) -> Any:
    """The complex DFT of complex x over ``dim`` (sign -1 when ``forward``), scaled by norm."""
    if not dim or x.size == 0:
        return x.copy()
    f = xp.fft.fftn if forward else xp.fft.ifftn
    return f(x, axes=dim, norm=norm).astype(x.dtype, copy=False)


@_fft_c2c.vjp
def _fft_c2c_vjp(ctx: Any, g: Any) -> Any:
    return (ns.fft_c2c(g, dim=ctx.dim, norm=_SWAP[ctx.norm], forward=not ctx.forward),)


@defop(name="fft_r2c", node_name="FftR2CBackward0")
def _fft_r2c(xp: Any, x: Any, *, dim: tuple[int, ...], norm: str, onesided: bool = True) -> Any:
    """The forward DFT of real x over ``dim``; ``onesided`` keeps only the non-negative
    frequencies of the last of them (n // 2 + 1 entries)."""
    if onesided:
        out = xp.fft.rfftn(x, axes=dim, norm=norm)
    else:
        out = xp.fft.fftn(x, axes=dim, norm=norm)
    return out.astype(_complex_dtype(x.dtype), copy=False)


@_fft_r2c.vjp
def _fft_r2c_vjp(ctx: Any, g: Any) -> Any:
    dim = ctx.dim
    if ctx.onesided:
        g = resize_signal(g, {dim[-1]: ctx.input_shapes[0][dim[-1]]})
    return (ns.fft_c2c(g, dim=dim, norm=_SWAP[ctx.norm], forward=False),)


@defop(name="fft_c2r", node_name="FftC2RBackward0")
def _fft_c2r(xp: Any, x: Any, *, dim: tuple[int, ...], norm: str, last_dim_size: int) -> Any:
    """The real inverse DFT over ``dim`` of a half spectrum x (the last dim holding the
    non-negative frequencies), giving ``last_dim_size`` points along the last dim."""
    s = [x.shape[d] for d in dim[:-1]] + [last_dim_size]
    out = xp.fft.irfftn(x, s=s, axes=dim, norm=norm)
    return out.astype(_real_dtype(x.dtype), copy=False)


@_fft_c2r.vjp
def _fft_c2r_vjp(ctx: Any, g: Any) -> Any:
    dim = ctx.dim
    gi = ns.fft_r2c(g, dim=dim, norm=_SWAP[ctx.norm], onesided=True)
    m = ctx.input_shapes[0][dim[-1]]
    double = ctx.last_dim_size - m
    if double > 0:
        w = np.ones(m)
        w[1 : 1 + double] = 2.0
        shape = [1] * len(ctx.input_shapes[0])
        shape[dim[-1]] = m
        w = w.reshape(shape).astype(_real_dtype(np.dtype(_dtype_of(gi))))
        gi = gi * _like(gi, w)
    return (gi,)


def _dtype_of(x: Any) -> Any:
    return getattr(x, "_data", x).dtype


def _like(ref: Any, a: np.ndarray) -> Any:
    """``a`` as a constant of ``ref``'s kind: a Tensor for a Tensor, an array for an array."""
    if hasattr(ref, "_data"):
        from chainrule._tensor import _new_tensor

        return _new_tensor(a if isinstance(ref._data, np.ndarray) else ref._backend.asarray(a))
    # A NumPy array (a compile Tracer too) takes the host constant as it is.
    return a if isinstance(ref, np.ndarray) else backend_of(ref).asarray(a)


def resize_signal(x: Any, sizes: dict[int, int]) -> Any:
    """x zero-padded or trimmed (at the end) to ``sizes[d]`` along each dim d; x itself when
    nothing changes. Differentiable (constant_pad_nd, whose VJP crops)."""
    nd = len(x.shape)
    changed = {d % nd: n for d, n in sizes.items() if x.shape[d] != n}
    if not changed:
        return x
    lo = min(changed)
    pad: list[int] = []
    for d in range(nd - 1, lo - 1, -1):
        pad += [0, changed[d] - x.shape[d]] if d in changed else [0, 0]
    return ns.constant_pad_nd(x, pad=tuple(pad), value=0)


def c2c(x: Any, dim: tuple[int, ...], norm: str, forward: bool) -> Any:
    """``fft_c2c`` of a complex Tensor (see the module docstring)."""
    return apply_op(_fft_c2c, (x,), {"dim": dim, "norm": norm, "forward": forward})


def r2c(x: Any, dim: tuple[int, ...], norm: str, onesided: bool = True) -> Any:
    """``fft_r2c`` of a real Tensor (see the module docstring)."""
    return apply_op(_fft_r2c, (x,), {"dim": dim, "norm": norm, "onesided": onesided})


def c2r(x: Any, dim: tuple[int, ...], norm: str, last_dim_size: int) -> Any:
    """``fft_c2r`` of a complex Tensor (see the module docstring)."""
    return apply_op(_fft_c2r, (x,), {"dim": dim, "norm": norm, "last_dim_size": last_dim_size})
