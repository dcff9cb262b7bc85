"""``torch.fft``: discrete Fourier transforms with gradients, built on the three primitives of
chainrule/ops/spectral.py (``fft_c2c``, ``fft_r2c``, ``fft_c2r``), plus ``fftfreq``,
``rfftfreq``, ``fftshift`` and ``ifftshift``.

Every transform takes PyTorch's arguments: the signal size ``n`` (``s`` for several dims; the
input is zero-padded or trimmed at the end to it, -1 keeping a dim's size), ``dim``, and
``norm``: ``"backward"`` (the default: no scale forward, 1/N on the inverse), ``"ortho"``
(1/sqrt(N) both ways) or ``"forward"`` (1/N forward, none on the inverse). Real inputs of
``fft`` and friends are taken as complex, integer inputs as the default float dtype. Results
are complex64/float32 for single precision and complex128/float64 for double.

Gradients follow PyTorch's convention for complex numbers (Note [Wirtinger gradients] in
chainrule/ops/complex_numbers.py); the recorded nodes are FftC2CBackward0, FftR2CBackward0
and FftC2RBackward0, as in PyTorch.

>>> import chainrule as torch
>>> x = torch.tensor([1.0, 2.0, 3.0, 4.0])
>>> torch.fft.fft(x)
tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
>>> torch.fft.irfft(torch.fft.rfft(x), n=4)
tensor([1., 2., 3., 4.])
"""

from __future__ import annotations

import builtins
from typing import Any, Callable, Sequence

import numpy as np

from chainrule import _dtype
from chainrule._out import _wrap_factory, _wrap_op
from chainrule.ops import complex_numbers as _cx
from chainrule.ops import spectral as _sp

__all__ = [
    "fft",
    "ifft",
    "rfft",
    "irfft",
    "hfft",
    "ihfft",
    "fft2",
    "ifft2",
    "rfft2",
    "irfft2",
    "hfft2",
    "ihfft2",
    "fftn",
    "ifftn",
    "rfftn",
    "irfftn",
    "hfftn",
    "ihfftn",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

_NORMS = ("backward", "forward", "ortho")


def _norm(norm: str | None) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _swap(norm: str) -> str:
    return {"backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


def _as_complex(name: str, x: Any) -> Any:
    """x as a complex Tensor: integers through the default float dtype, real floats to the
    complex type of their precision (the cast's gradient keeps the real part)."""
    k = x._data.dtype.kind
    if k == "c":
        return x
    return x.to(_dtype.complex_of(_as_float(name, x).dtype))


def _as_float(name: str, x: Any) -> Any:
    k = x._data.dtype.kind
    if k == "c":
        raise RuntimeError(f"{name} expects a real input tensor, but got {_type_name(x)}")
    if k in "biu":
        return x.to(_dtype.get_default_dtype())
    if x._data.dtype == np.float16:
        raise RuntimeError(f"Unsupported dtype Half for {name}: only float and double work on CPU")
    return x


def _type_name(t: Any) -> str:
    from chainrule._tensor import _type_name

    return _type_name(t._data.dtype).replace("Tensor", "")


def _wrap(d: int, nd: int) -> int:
    if not -max(nd, 1) <= d < max(nd, 1):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, "
            f"{max(nd, 1) - 1}], but got {d})"
        )
    return d % max(nd, 1)


def _check_n(n: int) -> int:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _dims_and_sizes(
    name: str, x: Any, s: Sequence[int] | None, dim: int | Sequence[int] | None
) -> tuple[tuple[int, ...], list[int | None]]:
    """PyTorch's resolution of ``s`` and ``dim`` for the n-dimensional transforms: the dims
    (wrapped, unique) and the requested size per dim (None: keep)."""
    nd = x.ndim
    if isinstance(dim, builtins.int):
        dim = (dim,)
    if s is not None:
        s = [builtins.int(v) for v in s]
    if dim is not None:
        dims = tuple(_wrap(builtins.int(d), nd) for d in dim)
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > nd:
            raise RuntimeError(
                f"Got shape with {len(s)} values but input tensor only has {nd} dimensions."
            )
        dims = tuple(range(nd - len(s), nd))
    else:
        dims = tuple(range(nd))
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    sizes: list[int | None] = [None] * len(dims)
    if s is not None:
        sizes = [None if v == -1 else _check_n(v) for v in s]
    return dims, sizes


def _resize(x: Any, dims: Sequence[int], sizes: Sequence[int | None]) -> Any:
    return _sp.resize_signal(x, {d: n for d, n in zip(dims, sizes) if n is not None})


# One-dimensional transforms ---------------------------------------------------------------


def _one(x: Any, n: int | None, dim: int) -> tuple[tuple[int, ...], list[int | None]]:
    d = _wrap(builtins.int(dim), x.ndim)
    return (d,), [None if n is None else _check_n(builtins.int(n))]


def _c2c(name: str, x: Any, dims: tuple[int, ...], sizes: Any, norm: Any, forward: bool) -> Any:
    """The complex transform. A real input of the one-dimensional ``fft``/``ifft`` takes the
    full (two-sided) r2c, as in PyTorch, conjugated for the inverse direction (conj of the
    forward transform, for real x); the n-dimensional ones take it as complex."""
    norm = _norm(norm)
    if x._data.dtype.kind != "c" and name in ("fft", "ifft"):
        x = _resize(_as_float(name, x), dims, sizes)
        if forward:
            return _sp.r2c(x, dims, norm, onesided=False)
        return _cx.conj(_sp.r2c(x, dims, _swap(norm), onesided=False))
    x = _resize(_as_complex(name, x), dims, sizes)
    return _sp.c2c(x, dims, norm, forward)


def _r2c(name: str, x: Any, dims: tuple[int, ...], sizes: Any, norm: str) -> Any:
    x = _resize(_as_float(name, x), dims, sizes)
    return _sp.r2c(x, dims, norm)


def _c2r(name: str, x: Any, dims: tuple[int, ...], sizes: Any, norm: str) -> Any:
    """The real inverse transform: the last dim's output size is its requested size, else
    2 (m - 1) for m input points; the input's last dim is resized to that size // 2 + 1."""
    x = _as_complex(name, x)
    last = sizes[-1] if sizes[-1] is not None else 2 * (x.shape[dims[-1]] - 1)
    _check_n(last)
    x = _resize(x, dims, list(sizes[:-1]) + [last // 2 + 1])
    return _sp.c2r(x, dims, norm, last)


def fft(input: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Any:
    """The one-dimensional DFT along ``dim``: X_k = c sum_j x_j exp(-2 pi i jk / n).
    VJP: c times the inverse-direction DFT of g."""
    dims, sizes = _one(input, n, dim)
    return _c2c("fft", input, dims, sizes, norm, True)


def ifft(input: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Any:
    """The one-dimensional inverse DFT along ``dim``: x_j = c sum_k X_k exp(2 pi i jk / n)
    (c = 1/n by default)."""
    dims, sizes = _one(input, n, dim)
    return _c2c("ifft", input, dims, sizes, norm, False)


def rfft(input: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Any:
    """The DFT of a real signal, keeping the n // 2 + 1 non-negative frequencies."""
    dims, sizes = _one(input, n, dim)
    return _r2c("rfft", input, dims, sizes, _norm(norm))


def irfft(input: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Any:
    """The inverse of ``rfft``: a real signal of n points (2 (m - 1) by default) from its
    half spectrum (the imaginary parts of the zero and Nyquist terms are ignored)."""
    dims, sizes = _one(input, n, dim)
    return _c2r("irfft", input, dims, sizes, _norm(norm))


def hfft(input: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Any:
    """The DFT of a Hermitian-symmetric signal given by its first half: a real result of n
    points, ``irfft(conj(input), n)`` with the forward transform's scaling."""
    dims, sizes = _one(input, n, dim)
    return _c2r("hfft", _cx.conj(_as_complex("hfft", input)), dims, sizes, _swap(_norm(norm)))


def ihfft(input: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Any:
    """The inverse of ``hfft``: ``conj(rfft(input))`` with the inverse transform's scaling."""
    dims, sizes = _one(input, n, dim)
    return _cx.conj(_r2c("ihfft", input, dims, sizes, _swap(_norm(norm))))


# Two- and n-dimensional transforms -----------------------------------------------------------


def fftn(
    input: Any, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None
) -> Any:
    """The DFT over ``dim`` (all dims by default; the last len(s) dims when only ``s`` is
    given), each resized to ``s``."""
    dims, sizes = _dims_and_sizes("fftn", input, s, dim)
    return _c2c("fftn", input, dims, sizes, norm, True)


def ifftn(
    input: Any, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None
) -> Any:
    """The inverse DFT over ``dim`` (see ``fftn``)."""
    dims, sizes = _dims_and_sizes("ifftn", input, s, dim)
    return _c2c("ifftn", input, dims, sizes, norm, False)


def rfftn(
    input: Any, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None
) -> Any:
    """The DFT of a real signal over ``dim``, keeping half of the last dim's frequencies."""
    dims, sizes = _dims_and_sizes("rfftn", input, s, dim)
    return _r2c("rfftn", input, dims, sizes, _norm(norm))


def irfftn(
    input: Any, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None
) -> Any:
    """The inverse of ``rfftn``: a real signal, the last dim 2 (m - 1) points unless ``s``
    says otherwise."""
    dims, sizes = _dims_and_sizes("irfftn", input, s, dim)
    return _c2r("irfftn", input, dims, sizes, _norm(norm))


def hfftn(
    input: Any, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None
) -> Any:
    """The n-dimensional ``hfft``: ``irfftn(conj(input))`` with the forward scaling."""
    dims, sizes = _dims_and_sizes("hfftn", input, s, dim)
    x = _cx.conj(_as_complex("hfftn", input))
    return _c2r("hfftn", x, dims, sizes, _swap(_norm(norm)))


def ihfftn(
    input: Any, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None
) -> Any:
    """The n-dimensional ``ihfft``: ``conj(rfftn(input))`` with the inverse scaling."""
    dims, sizes = _dims_and_sizes("ihfftn", input, s, dim)
    return _cx.conj(_r2c("ihfftn", input, dims, sizes, _swap(_norm(norm))))


def _last_two(nd: Callable[..., Any]) -> Callable[..., Any]:
    """The two-dimensional form of the n-dimensional transform ``nd``: ``nd`` over ``dim``,
    the last two dims by default."""

    def two(
        input: Any, s: Sequence[int] | None = None, dim: Any = (-2, -1), norm: str | None = None
    ) -> Any:
        return nd(input, s, dim, norm)

    two.__name__ = two.__qualname__ = nd.__name__[:-1] + "2"
    two.__doc__ = f"``{nd.__name__}`` over the last two dims."
    return two


fft2 = _last_two(fftn)
ifft2 = _last_two(ifftn)
rfft2 = _last_two(rfftn)
irfft2 = _last_two(irfftn)
hfft2 = _last_two(hfftn)
ihfft2 = _last_two(ihfftn)


# Frequencies and shifts ------------------------------------------------------------------


def _freq_tensor(values: np.ndarray, dtype: Any, device: Any, requires_grad: bool) -> Any:
    from chainrule._creation import tensor

    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    return tensor(values.astype(dt.np), device=device, requires_grad=requires_grad)


def fftfreq(
    n: int,
    d: float = 1.0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The sample frequencies of an n-point DFT with sample spacing d:
    [0, 1, ..., ceil(n/2) - 1, -floor(n/2), ..., -1] / (d n)."""
    return _freq_tensor(np.fft.fftfreq(builtins.int(n), d), dtype, device, requires_grad)


def rfftfreq(
    n: int,
    d: float = 1.0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The non-negative sample frequencies of ``rfft``: [0, 1, ..., n // 2] / (d n)."""
    return _freq_tensor(np.fft.rfftfreq(builtins.int(n), d), dtype, device, requires_grad)


def _shift(input: Any, dim: Any, sign: int) -> Any:
    from chainrule.ops import roll

    if dim is None:
        dims = tuple(range(input.ndim))
    elif isinstance(dim, builtins.int):
        dims = (dim,)
    else:
        dims = tuple(dim)
    if not dims:
        return input
    return roll(input, [sign * (input.shape[d] // 2) for d in dims], dims)


def fftshift(input: Any, dim: Any = None) -> Any:
    """Rolls the zero frequency to the centre: each dim in ``dim`` (all by default) rolled by
    size // 2. Differentiable (a roll)."""
    return _shift(input, dim, 1)


def ifftshift(input: Any, dim: Any = None) -> Any:
    """The inverse of ``fftshift``: each dim rolled by -(size // 2)."""
    return _shift(input, dim, -1)


for _name in __all__:
    _f = globals()[_name]
    globals()[_name] = (_wrap_factory if _name.endswith("freq") else _wrap_op)(_name, _f)
del _name, _f
