"""The short-time Fourier transform and its inverse, ``stft`` and ``istft``, composed as
PyTorch composes them (aten/src/ATen/native/SpectralOps.cpp), so their gradients come from
the ops they are built of: reflect (or other) padding, framing (indexing), the window
product, the DFT primitives of ops/spectral.py and, in ``istft``, overlap-add (``index_add``)
divided by the overlap-added squared window.

stft: with x padded by n_fft // 2 on both sides when ``center``, frames
x_t = x[t hop : t hop + n_fft] (t = 0 .. 1 + (L - n_fft) // hop - 1) and w the window zero-padded
to n_fft at its centre, X[f, t] = c sum_k w_k x_t[k] exp(-2 pi i f k / n_fft), c = n_fft**-0.5
when ``normalized``, else 1; the onesided result keeps f = 0 .. n_fft // 2.

istft: y = sum_t w * ifft(X[:, t]) placed at t hop, divided by sum_t w**2 placed the same way
(which must stay above 1e-11 where kept), then trimmed as ``center`` and ``length`` say.
"""

from __future__ import annotations

import builtins
import warnings
from typing import Any

import numpy as np

from chainrule._creation import ones, tensor, zeros
from chainrule.ops import spectral as _sp
from chainrule.ops._registry import ns
from chainrule.ops.complex_numbers import view_as_real

__all__ = ["stft", "istft"]


def _ops() -> Any:
    from chainrule._dispatch import ops

    return ops


def _shape(t: Any) -> str:
    return "[" + ", ".join(map(str, t.shape)) + "]"


def _window_str(window: Any) -> str:
    if window is None:
        return "None"
    from chainrule._tensor import _type_name

    return f"torch.{_type_name(window._data.dtype)}{{{_shape(window)}}}"


def _padded_window(window: Any, win_length: int, n_fft: int) -> Any:
    if win_length == n_fft:
        return window
    left = (n_fft - win_length) // 2
    return ns.constant_pad_nd(window, pad=(left, n_fft - win_length - left), value=0)


def _stft_return_complex(complex_fft: bool, return_complex: bool | None) -> bool:
    """``return_complex`` as given, or True for complex input or window; PyTorch refuses real
    input and window without it, and warns that False is deprecated."""
    if return_complex is None:
        if not complex_fft:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release."
            )
        return True
    if not return_complex:
        warnings.warn(
            "stft with return_complex=False is deprecated. In a future pytorch release, stft "
            "will return complex tensors for all inputs, and return_complex=False will raise an "
            "error.\nNote: you can still call torch.view_as_real on the complex output to "
            "recover the old return format.",
            UserWarning,
            stacklevel=3,
        )
    return return_complex


def _center_pad(input: Any, n_fft: int, pad_mode: str) -> Any:
    """``input`` padded by n_fft // 2 on both sides of its last dim, as ``pad`` takes it (a
    3-d input)."""
    nd = input.ndim
    pad = n_fft // 2
    x = input.reshape((1,) * (3 - nd) + tuple(input.shape)) if nd <= 3 else input
    x = _ops().pad(x, (pad, pad), mode=pad_mode)
    return x.reshape(tuple(x.shape[-nd:])) if nd <= 3 else x


def _flag(v: bool | None) -> str:
    return "None" if v is None else str(builtins.int(v))


def _check_stft(
    prefix: str, input: Any, n_fft: int, hop: int, win: int, window: Any, align: bool | None
) -> None:
    """PyTorch's checks of stft's (padded) input and sizes, in its order of errors, and its
    warning when no window is given."""
    if input.ndim not in (1, 2):
        raise RuntimeError(prefix + f"expected a 1D or 2D tensor, but got {input.ndim}D")
    length = input.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(prefix + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(prefix + f"expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(prefix + f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(
            prefix + f"expected a 1D window tensor of size equal to win_length={win}, but got "
            f"window with size {_shape(window)}"
        )
    if align and win < n_fft:
        # PyTorch then frames the signal from the window's start rather than the padded
        # frame's (more frames); not implemented here.
        raise NotImplementedError(
            "stft: align_to_window=True with win_length < n_fft is not implemented in chainrule"
        )
    if window is None:
        warnings.warn(
            "A window was not provided. A rectangular window will be applied,which is known to "
            "cause spectral leakage. Other windows such as torch.hann_window or "
            "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
            "warning and use a rectangular window, explicitly set "
            "`window=torch.ones(n_fft, device=<device>)`.",
            UserWarning,
            stacklevel=3,
        )


def stft(
    input: Any,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Any = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Any:
    """The short-time Fourier transform of a 1-D (L) or 2-D (B, L) signal: a complex tensor
    (B, n_fft // 2 + 1 or n_fft, n_frames) (see the module docstring). ``return_complex=False``
    (deprecated in PyTorch, and warned about) gives ``view_as_real`` of it. Defaults:
    hop_length n_fft // 4, win_length n_fft, a rectangular window (with PyTorch's warning),
    onesided for real input and window. VJP: through the ops it is composed of.

    Raises:
        RuntimeError: with PyTorch's messages, for a missing ``return_complex`` with real input
            and window, and sizes out of range.
    """
    complex_fft = input.is_complex() or (window is not None and window.is_complex())
    return_complex = _stft_return_complex(complex_fft, return_complex)
    n_fft = builtins.int(n_fft)
    hop = n_fft // 4 if hop_length is None else builtins.int(hop_length)
    win = n_fft if win_length is None else builtins.int(win_length)
    if center:
        input = _center_pad(input, n_fft, pad_mode)
    prefix = (
        f"stft(torch.{_type_name(input)}{_shape(input)}, n_fft={n_fft}, hop_length={hop}, "
        f"win_length={win}, window={_window_str(window)}, normalized={builtins.int(normalized)}, "
        f"onesided={_flag(onesided)}, return_complex={builtins.int(return_complex)}, "
        f"align_to_window={_flag(align_to_window)}) : "
    )
    _check_stft(prefix, input, n_fft, hop, win, window, align_to_window)
    x = input.unsqueeze(0) if input.ndim == 1 else input
    n_frames = 1 + (input.shape[-1] - n_fft) // hop
    frames = x[:, tensor(np.arange(n_frames)[:, None] * hop + np.arange(n_fft))]  # (B, T, n_fft)
    if window is not None:
        frames = frames * _padded_window(window, win, n_fft)
    norm = "ortho" if normalized else "backward"
    onesided = (not complex_fft) if onesided is None else builtins.bool(onesided)
    if complex_fft:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _sp.c2c(frames, (2,), norm, True)
    else:
        out = _sp.r2c(frames, (2,), norm, onesided=onesided)
    out = out.transpose(1, 2)
    if input.ndim == 1:
        out = out.squeeze(0)
    return out if return_complex else view_as_real(out)


def _type_name(t: Any) -> str:
    from chainrule._tensor import _type_name as tn

    return tn(t._data.dtype)


def _c10_type(t: Any) -> str:
    return {
        "complex64": "ComplexFloat",
        "complex128": "ComplexDouble",
        "float32": "Float",
        "float64": "Double",
    }.get(t._data.dtype.name, "Float")


def _check_istft(
    prefix: str, input: Any, n_fft: int, hop: int, win: int, window: Any, onesided: bool | None
) -> bool:
    """PyTorch's checks of istft's input and sizes, in its order of errors; ``onesided`` as
    given, or whether the input holds fewer than n_fft frequencies."""
    if input.numel() == 0:
        raise RuntimeError(prefix + ": istft input tensor cannot be empty")
    if input.ndim not in (2, 3):
        raise RuntimeError(
            prefix + f": expected a tensor with 2 or 3 dimensions of complex values, but got "
            f"{input.ndim}"
        )
    fft_size = input.shape[-2]
    sided: bool = (fft_size != n_fft) if onesided is None else builtins.bool(onesided)
    if sided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(
            prefix + ": expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match n_fft / 2 + 1 when onesided=True, but got {fft_size}"
        )
    if not sided and n_fft != fft_size:
        raise RuntimeError(
            prefix + ": expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match n_fft when onesided=False, but got {fft_size}"
        )
    if not 0 < hop <= win:
        raise RuntimeError(prefix + ": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(prefix + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(
            prefix + f": expected a 1D window tensor of size equal to win_length={win}, but got "
            f"window with size {_shape(window)}"
        )
    return sided


def _istft_window(window: Any, win: int, n_fft: int, real_dt: Any, device: Any) -> Any:
    """The window zero-padded to n_fft, a rectangular one (with PyTorch's warning) if none."""
    if window is None:
        warnings.warn(
            "A window was not provided. A rectangular window will be applied.Please provide the "
            "same window used by stft to make the inversion lossless.To suppress this warning "
            "and use a rectangular window, explicitly set "
            "`window=torch.ones(n_fft, device=<device>)`.",
            UserWarning,
            stacklevel=3,
        )
        window = ones(win, dtype=real_dt, device=device)
    return _padded_window(window, win, n_fft)


def _inverse_frames(
    x: Any, norm: str, n_fft: int, onesided: bool, return_complex: bool, window: Any
) -> Any:
    """The inverse DFT of each frame of ``x`` (B, n_frames, fft_size): complex (c2c) when
    ``return_complex``, else real (c2r) from the onesided half."""
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        return _sp.c2c(x, (2,), norm, False)
    if window is not None and window.is_complex():
        raise RuntimeError("Complex windows are incompatible with return_complex=False")
    if not onesided:
        x = x.narrow(-1, 0, n_fft // 2 + 1)
    return _sp.c2r(x, (2,), norm, n_fft)


def _istft_end(center: bool, length: int | None, n_fft: int, expected_len: int) -> int:
    """Where the kept signal ends: ``length`` points after its start, else the end of the
    overlap-added signal less the centring pad."""
    if length is not None:
        return (n_fft // 2 if center else 0) + builtins.int(length)
    return expected_len - n_fft // 2 if center else expected_len


def istft(
    input: Any,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Any = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Any:
    """The inverse of ``stft`` by overlap-add (see the module docstring): a signal (L) or
    (B, L) from a complex (n_freq, n_frames) or (B, n_freq, n_frames) tensor. VJP: through the
    ops it is composed of.

    Raises:
        RuntimeError: with PyTorch's messages, for real input, mismatched sizes, or a window
            whose overlap-added square falls below 1e-11 somewhere in the kept signal.
    """
    n_fft = builtins.int(n_fft)
    hop = n_fft // 4 if hop_length is None else builtins.int(hop_length)
    win = n_fft if win_length is None else builtins.int(win_length)
    if not input.is_complex():
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with "
            "return_complex=True."
        )
    prefix = (
        f"istft(CPU{_c10_type(input)}Type{_shape(input)}, n_fft={n_fft}, hop_length={hop}, "
        f"win_length={win}, window={_window_str(window)}, center={builtins.int(center)}, "
        f"normalized={builtins.int(normalized)}, "
        f"onesided={_flag(onesided)}, "
        f"length={'None' if length is None else length}, "
        f"return_complex={builtins.int(return_complex)}) "
    )
    onesided = _check_istft(prefix, input, n_fft, hop, win, window, onesided)
    n_frames = input.shape[-1]
    expected_len = n_fft + hop * (n_frames - 1)
    w = _istft_window(window, win, n_fft, input.real.dtype, input.device)
    x = input.unsqueeze(0) if input.ndim == 2 else input
    x = x.transpose(1, 2)  # (B, n_frames, fft_size)
    norm = "ortho" if normalized else "backward"
    frames = _inverse_frames(x, norm, n_fft, onesided, return_complex, window)
    y_tmp = frames * w  # (B, n_frames, n_fft)
    dev = input.device
    index = tensor((np.arange(n_frames)[:, None] * hop + np.arange(n_fft)).reshape(-1), device=dev)
    batch = y_tmp.shape[0]
    y = zeros(batch, expected_len, dtype=y_tmp.dtype, device=dev).index_add(
        1, index, y_tmp.reshape(batch, n_frames * n_fft)
    )
    w2 = (w * w).expand(n_frames, n_fft).reshape(n_frames * n_fft)
    env = zeros(expected_len, dtype=w2.dtype, device=dev).index_add(0, index, w2)
    start = n_fft // 2 if center else 0
    end = _istft_end(center, length, n_fft, expected_len)
    stop = min(end, expected_len)
    y = y[:, start:stop]
    env = env[start:stop]
    if env.numel() and float(abs(env._data).min()) < 1e-11:
        raise RuntimeError(prefix + "window overlap add min: 1")
    y = y / env
    if input.ndim == 2:
        y = y.squeeze(0)
    if end > expected_len:
        warnings.warn(
            "The length of signal is shorter than the length parameter. Result is being padded "
            "with zeros in the tail. Please check your center and hop_length settings.",
            UserWarning,
            stacklevel=2,
        )
        y = ns.constant_pad_nd(y, pad=(0, end - expected_len), value=0)
    return y
