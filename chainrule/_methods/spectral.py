"""Tensor methods of the complex, spectral and matrix-factorization families
(chainrule/ops/complex_numbers.py, spectral.py, short_time.py, factorizations.py); see
chainrule/_methods/__init__.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chainrule._dispatch import ops as _ops

if TYPE_CHECKING:
    from chainrule._tensor import Tensor


class SpectralMethods:
    __slots__ = ()

    def stft(
        self,
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
    ) -> Tensor:
        return _ops.stft(
            self,
            n_fft,
            hop_length,
            win_length,
            window,
            center,
            pad_mode,
            normalized,
            onesided,
            return_complex,
            align_to_window,
        )

    def istft(
        self,
        n_fft: int,
        hop_length: int | None = None,
        win_length: int | None = None,
        window: Any = None,
        center: bool = True,
        normalized: bool = False,
        onesided: bool | None = None,
        length: int | None = None,
        return_complex: bool = False,
    ) -> Tensor:
        return _ops.istft(
            self,
            n_fft,
            hop_length,
            win_length,
            window,
            center,
            normalized,
            onesided,
            length,
            return_complex,
        )
