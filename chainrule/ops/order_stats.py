"""Order statistics: ``quantile``/``nanquantile`` (all five interpolations, gradients to the
input and to ``q``) and ``histogram``/``histogramdd``, composed from registered ops (``sort``,
``gather``...), so their gradients and double backward come from those ops."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from chainrule import _kinds, return_types
from chainrule.ops._broadcast import wrap_dim
from chainrule.ops.scattering import _const, _host, _is_t, _name, _ops

__all__ = ["quantile", "nanquantile", "histogram", "histogramdd"]


# Order statistics ------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_qs(input: Any, q: Any, interpolation: str, who: str) -> np.ndarray:
    """PyTorch's checks of quantile's arguments; the q values as a float64 vector."""
    if not _kinds.is_floating(input._data) or input._data.dtype.itemsize < 4:
        # PyTorch names quantile() here for nanquantile too
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            f"{who} interpolation must be one of linear, lower, higher, midpoint or nearest, "
            f"but got {interpolation}"
        )
    if _is_t(q):
        if q.ndim > 1:
            raise RuntimeError(f"{who} q must be a scalar or 1D tensor")
        if q._data.dtype != input._data.dtype:
            raise RuntimeError(f"{who} q tensor must be same dtype as the input tensor")
        qa = _host(q).astype(np.float64).reshape(-1)
    else:
        qa = np.asarray([float(q)], dtype=np.float64)
    if np.any((qa < 0) | (qa > 1)):
        raise RuntimeError(f"{who} q values must be in the range [0, 1]")
    if input.numel() == 0:
        raise RuntimeError(f"{who} input tensor must be non-empty")
    return qa


def _rank_bounds(rank: np.ndarray, interpolation: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The sorted positions (lo, hi) that a quantile at fractional ``rank`` reads."""
    lo = np.floor(rank).astype(np.int64)
    hi = np.ceil(rank).astype(np.int64)
    if interpolation == "lower":
        hi = lo
    elif interpolation == "higher":
        lo = hi
    elif interpolation == "nearest":
        # round half to even, as PyTorch's (and NumPy's) round
        lo = hi = np.round(rank).astype(np.int64)
    return np.clip(lo, 0, n - 1), np.clip(hi, 0, n - 1)


def _linear_weight(
    qk: Any, rank: np.ndarray, cnt: np.ndarray, lo: np.ndarray, dtype: Any, device: Any
) -> Any:
    """The weight of the upper value in linear interpolation, rank - lo; written
    q (cnt - 1) - lo with the tensor ``qk`` when q needs a gradient."""
    if qk is not None:
        return qk * _const((cnt - 1).astype(dtype), device) - _const(lo.astype(dtype), device)
    return _const((rank - lo).astype(dtype), device)


def _quantile(
    input: Any, q: Any, dim: int | None, keepdim: bool, interpolation: str, ignore_nan: bool
) -> Any:
    ops = _ops()
    q_t = _is_t(q)
    qa = _quantile_qs(input, q, interpolation, "nanquantile()" if ignore_nan else "quantile()")
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else wrap_dim(int(dim), input.ndim)
    if x.ndim == 0:
        x = x.reshape(1)
    srt = ops.sort(x, dim=d).values  # nan sorts last
    n = srt.shape[d]
    xa = _host(x)
    nan = np.isnan(xa)
    if ignore_nan:
        cnt = (~nan).sum(axis=d, keepdims=True)  # rows of all nan give nan
    else:
        cnt = np.full(tuple(1 if i == d else s for i, s in enumerate(xa.shape)), n)
    has_nan = nan.any(axis=d, keepdims=True)
    outs = []
    for k, qv in enumerate(qa):
        rank = qv * (cnt - 1)
        lo, hi = _rank_bounds(rank, interpolation, n)
        v_lo = ops.gather(srt, d, _const(lo, device=input.device))
        v_hi = ops.gather(srt, d, _const(hi, device=input.device))
        if interpolation == "linear":
            # With a q that requires grad the weight is q (n - 1) - lo, so q gets a gradient.
            qk = q.reshape(-1)[k] if q_t and q.requires_grad else None
            w = _linear_weight(qk, rank, cnt, lo, xa.dtype, input.device)
            v = v_lo + w * (v_hi - v_lo)
        elif interpolation == "midpoint":
            v = (v_lo + v_hi) * 0.5
        else:
            v = v_lo
        bad = (cnt == 0) if ignore_nan else has_nan
        if bad.any():
            v = v.masked_fill(_const(bad, device=input.device), float("nan"))
        if not keepdim or dim is None:
            v = v.squeeze(d)
        if keepdim and dim is None:
            v = v.reshape((1,) * input.ndim)
        outs.append(v)
    if q_t and q.ndim == 1:
        return ops.stack(outs, 0)
    return outs[0]


def quantile(
    input: Any,
    q: Any,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Any:
    """The ``q``-quantiles (a number or 1-D tensor in [0, 1]) of ``input`` along ``dim``
    (all elements by default), computed from the sorted values at rank ``q (n - 1)``,
    interpolated by ``interpolation``; nan if the reduced values contain nan. A 1-D ``q``
    adds a leading dim. Gradient: through ``sort`` and ``gather``."""
    return _quantile(input, q, dim, keepdim, interpolation, False)


def nanquantile(
    input: Any,
    q: Any,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Any:
    """:func:`quantile` ignoring nan values (nan only where all reduced values are nan)."""
    return _quantile(input, q, dim, keepdim, interpolation, True)


def _check_floating(input: Any) -> None:
    if not _kinds.is_floating(input._data.dtype):
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_name(input)}'")


def _bin_range(range: Sequence[float] | None, k: int, values: np.ndarray) -> tuple[float, float]:
    """The (lo, hi) of dimension ``k``'s bins: ``range[2k], range[2k + 1]`` (lo <= hi), else
    ``values``' min and max (0, 0 when there are none); an empty range is widened by one on
    each side, as PyTorch does."""
    if range is not None:
        lo, hi = float(range[2 * k]), float(range[2 * k + 1])
        if lo > hi:
            raise RuntimeError(
                f"torch.histogramdd: min should not exceed max, but got min "
                f"{lo:g} max {hi:g} for dimension {k}"
            )
    elif values.size:
        lo, hi = float(values.min()), float(values.max())
    else:
        lo, hi = 0.0, 0.0
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    return lo, hi


def histogram(
    input: Any,
    bins: Any = 100,
    *,
    range: Sequence[float] | None = None,
    weight: Any = None,
    density: bool = False,
) -> Any:
    """Histogram of ``input``'s values: ``(hist, bin_edges)``. ``bins`` is a count of equal
    bins over ``range`` (the data's min and max by default) or a 1-D tensor of increasing
    edges; the last bin includes its right edge. ``weight`` weights each element; ``density``
    normalises so that the histogram integrates to 1. Not differentiable."""
    _check_floating(input)
    dt = input._data.dtype
    xa = _host(input).reshape(-1)
    if _is_t(bins):
        if bins.ndim != 1:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have one dimension, but "
                f"got {bins.ndim} dimensions in the bins tensor for dimension 0"
            )
        edges = _host(bins).astype(dt)
    else:
        nb = int(bins)
        if nb <= 0:
            raise RuntimeError(
                f"torch.histogramdd(): bins must be > 0, but got {nb} for dimension 0"
            )
        lo, hi = _bin_range(range, 0, xa)
        edges = np.linspace(lo, hi, nb + 1).astype(dt)
    w = None
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have "
                "the same shape as the input tensor excluding its innermost "
                "dimension, but got input with shape "
                f"{list(input.shape)} and weight with shape "
                f"{list(weight.shape)}"
            )
        w = _host(weight).reshape(-1).astype(np.float64)
    hist, _ = np.histogram(xa, bins=edges.astype(np.float64), weights=w)
    hist = hist.astype(np.float64)
    if density:
        widths = np.diff(edges.astype(np.float64))
        total = hist.sum()
        hist = hist / (total * widths) if total else hist * np.nan
    return return_types.histogram._make_of(
        _const(hist.astype(dt), device=input.device), _const(edges, device=input.device)
    )


def histogramdd(
    input: Any,
    bins: Any = 10,
    *,
    range: Sequence[float] | None = None,
    weight: Any = None,
    density: bool = False,
) -> Any:
    """The D-dimensional histogram of the points ``input`` (..., D): ``(hist, bin_edges)``
    with one tensor of edges per dim. ``bins``: a count for all dims, one count per dim, or
    one edges tensor per dim; ``range``: (min0, max0, min1, max1, ...). Not differentiable."""
    _check_floating(input)
    dt = input._data.dtype
    pts = _host(input)
    d = pts.shape[-1]
    pts = pts.reshape(-1, d).astype(np.float64)
    if isinstance(bins, int):
        bins = [bins] * d
    bins = list(bins)
    if len(bins) != d:
        raise RuntimeError(
            f"torch.histogramdd: expected {d} sequences of bin edges for each of "
            f"the {d} input dimensions, but got {len(bins)} bin edge tensors"
        )
    edges = []
    for k, b in enumerate(bins):
        if _is_t(b):
            edges.append(_host(b).astype(np.float64))
            continue
        lo, hi = _bin_range(range, k, pts[:, k])
        edges.append(np.linspace(lo, hi, int(b) + 1).astype(dt).astype(np.float64))
    w = None if weight is None else _host(weight).reshape(-1).astype(np.float64)
    hist, _ = np.histogramdd(pts, bins=edges, weights=w, density=False)
    if density:
        total = hist.sum()
        vol = np.ones(())
        for e in edges:
            vol = np.multiply.outer(vol, np.diff(e))
        hist = hist / (total * vol) if total else hist * np.nan
    return return_types.histogramdd._make_of(
        _const(hist.astype(dt), input.device),
        tuple(_const(e.astype(dt), input.device) for e in edges),
    )
