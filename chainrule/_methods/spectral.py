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

    def lu(self, pivot: bool = True, get_infos: bool = False) -> Any:
        return _ops.lu(self, pivot, get_infos)

    def lu_solve(self, LU_data: Any, LU_pivots: Any) -> Tensor:  # noqa: N803 - PyTorch's names
        return _ops.lu_solve(self, LU_data, LU_pivots)

    def geqrf(self) -> Any:
        return _ops.geqrf(self)

    def orgqr(self, input2: Any) -> Tensor:
        return _ops.orgqr(self, input2)

    def ormqr(self, input2: Any, input3: Any, left: bool = True, transpose: bool = False) -> Tensor:
        return _ops.ormqr(self, input2, input3, left, transpose)
