"""erf and erfc. NumPy has no erf: this is the rational approximation of Sun's fdlibm (s_erf.c),
vectorized with masks, accurate to about 1 ulp in float64; float32 has its own fit."""

from __future__ import annotations

from typing import Any

from chainrule.ops._registry import ns, unary
from chainrule.ops.unary._common import _TWO_OVER_SQRT_PI, _cast

__all__ = ["erf", "erfc"]


# erf / erfc ------------------------------------------------------------------------------------
# NumPy has no erf. This is the rational approximation of Sun's fdlibm (s_erf.c), vectorized over
# masks; it is accurate to about 1 ulp in float64. Lower precisions are computed in float64 and
# rounded.

_ERX = 8.45062911510467529297e-01
_PP = (
    1.28379167095512558561e-01,
    -3.25042107247001499370e-01,
    -2.84817495755985104766e-02,
    -5.77027029648944159157e-03,
    -2.37630166566501626084e-05,
)
_QQ = (
    1.0,
    3.97917223959155352819e-01,
    6.50222499887672944485e-02,
    5.08130628187576562776e-03,
    1.32494738004321644526e-04,
    -3.96022827877536812320e-06,
)
_PA = (
    -2.36211856075265944077e-03,
    4.14856118683748331666e-01,
    -3.72207876035701323847e-01,
    3.18346619901161753674e-01,
    -1.10894694282396677476e-01,
    3.54783043256182359371e-02,
    -2.16637559486879084300e-03,
)
_QA = (
    1.0,
    1.06420880400844228286e-01,
    5.40397917702171048937e-01,
    7.18286544141962662868e-02,
    1.26171219808761642112e-01,
    1.36370839120290507362e-02,
    1.19844998467991074170e-02,
)
_RA = (
    -9.86494403484714822705e-03,
    -6.93858572707181764372e-01,
    -1.05586262253232909814e01,
    -6.23753324503260060396e01,
    -1.62396669462573470355e02,
    -1.84605092906711035994e02,
    -8.12874355063065934246e01,
    -9.81432934416914548592e00,
)
_SA = (
    1.0,
    1.96512716674392571292e01,
    1.37657754143519042600e02,
    4.34565877475229228821e02,
    6.45387271733267880336e02,
    4.29008140027567833386e02,
    1.08635005541779435134e02,
    6.57024977031928170135e00,
    -6.04244152148580987438e-02,
)
_RB = (
    -9.86494292470009928597e-03,
    -7.99283237680523006574e-01,
    -1.77579549177547519889e01,
    -1.60636384855821916062e02,
    -6.37566443368389627722e02,
    -1.02509513161107724954e03,
    -4.83519191608651397019e02,
)
_SB = (
    1.0,
    3.03380607434824582924e01,
    3.25792512996573918826e02,
    1.53672958608443695994e03,
    3.19985821950859553908e03,
    2.55305040643316442583e03,
    4.74528541206955367215e02,
    -2.24409524465858183362e01,
)


def _poly(c: tuple[float, ...], s: Any) -> Any:
    r = c[-1]
    for k in c[-2::-1]:
        r = r * s + k
    return r


def _erf_impl(xp: Any, x: Any, complement: bool) -> Any:
    """erf(x) (or erfc(x) when ``complement``) of a float64 array, by fdlibm's piecewise
    rational approximations."""
    ax = xp.abs(x)
    out = xp.empty_like(x)
    m = ax < 0.84375
    if m.any():
        xs = x[m]
        z = xs * xs
        y = _poly(_PP, z) / _poly(_QQ, z)
        if complement:
            out[m] = xp.where(xs < 0.25, 1 - (xs + xs * y), 0.5 - (xs * y + (xs - 0.5)))
        else:
            out[m] = xs + xs * y
    m = (ax >= 0.84375) & (ax < 1.25)
    if m.any():
        s = ax[m] - 1
        pq = _poly(_PA, s) / _poly(_QA, s)
        pos = x[m] >= 0
        if complement:
            out[m] = xp.where(pos, (1 - _ERX) - pq, 1 + (_ERX + pq))
        else:
            out[m] = xp.where(pos, _ERX + pq, -_ERX - pq)
    m = (ax >= 1.25) & (ax < 28)
    if m.any():
        a = ax[m]
        s = 1 / (a * a)
        small = a < 1 / 0.35
        rs = xp.where(small, _poly(_RA, s) / _poly(_SA, s), _poly(_RB, s) / _poly(_SB, s))
        # z is a with its low 32 bits cleared, so that z*z is exact (fdlibm's splitting).
        z = (a.view(xp.uint64) & xp.uint64(0xFFFFFFFF00000000)).view(xp.float64)
        t = xp.exp(-z * z - 0.5625) * xp.exp((z - a) * (z + a) + rs) / a  # erfc(|x|)
        pos = x[m] >= 0
        out[m] = xp.where(pos, t, 2 - t) if complement else xp.where(pos, 1 - t, t - 1)
    m = ax >= 28
    if m.any():
        pos = x[m] > 0
        out[m] = xp.where(pos, 0.0, 2.0) if complement else xp.where(pos, 1.0, -1.0)
    m = xp.isnan(x)
    if m.any():
        out[m] = x[m]
    return out


# erf(x) ~ x P(x^2) / Q(x^2) on |x| <= 3.92 (erf rounds to +-1 in float32 beyond): a rational
# least-squares fit of relative error, 2e-8 in exact arithmetic, under 7 ulp evaluated in
# float32. Coefficients in increasing powers.
_ERF32_P = (
    1.1283791611132858,
    0.18871110809502806,
    0.052530383808090914,
    0.0036950946585477392,
    0.0002836793592115097,
    2.067754501816621e-06,
)
_ERF32_Q = (
    1.0,
    0.5005738700467448,
    0.11341381383336988,
    0.014826950703898372,
    0.001146193861268777,
    3.8212681119864644e-05,
)


_CHUNK = 65536  # elements: 256 KB of float32, so that a chain of passes stays in L2 cache


def _by_chunks(xp: Any, f: Any, x: Any) -> Any:
    """``f(x)`` for an elementwise ``f`` made of many array passes, run over L2-sized slices of
    a large array (3-5x faster than whole-array passes that stream through memory)."""
    if x.size <= 2 * _CHUNK:
        return f(x)
    flat = x.reshape(-1)
    out = xp.empty(flat.shape, x.dtype)
    for i in range(0, flat.size, _CHUNK):
        out[i : i + _CHUNK] = f(flat[i : i + _CHUNK])
    return out.reshape(x.shape)


def _erf32(xp: Any, x: Any) -> Any:
    """erf of a float32 array in float32 arithmetic, branch-free: about 25 array passes, where
    the float64 piecewise form costs ~50x more (masked gathers, float64 exp)."""
    return _by_chunks(xp, lambda c: _erf32_chunk(xp, c), x)


def _erf32_chunk(xp: Any, x: Any) -> Any:
    xc = xp.clip(x, -3.92, 3.92)
    s = xc * xc
    p = s * _ERF32_P[-1]
    for c in _ERF32_P[-2:0:-1]:
        p += c
        p *= s
    p += _ERF32_P[0]
    q = s * _ERF32_Q[-1]
    for c in _ERF32_Q[-2:0:-1]:
        q += c
        q *= s
    q += 1.0
    p *= xc
    p /= q
    return p


def _erf_fwd(xp: Any, x: Any, complement: bool = False) -> Any:
    if not complement and x.dtype == xp.float32:
        return _erf32(xp, x)  # NaN stays NaN (clip keeps it), +-inf gives +-1
    return _cast(_erf_impl(xp, x.astype(xp.float64, copy=False), complement), x)


erf = unary(
    "erf",
    _erf_fwd,
    saves="x",
    vjp=lambda ctx, g: g * _TWO_OVER_SQRT_PI * ns.exp(-ctx.x * ctx.x),
    doc="Error function (fdlibm's approximation, ~1 ulp). VJP: g 2/sqrt(pi) e**(-x**2).",
)
erfc = unary(
    "erfc",
    lambda xp, x: _erf_fwd(xp, x, True),
    saves="x",
    vjp=lambda ctx, g: -g * _TWO_OVER_SQRT_PI * ns.exp(-ctx.x * ctx.x),
    doc="Complementary error function 1 - erf(x), accurate for large x. "
    "VJP: -g 2/sqrt(pi) e**(-x**2).",
)
