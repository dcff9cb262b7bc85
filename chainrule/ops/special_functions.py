"""More of ``torch.special``: Bessel and Airy functions, the Hurwitz zeta function and the
classical orthogonal polynomials.

Why this file is over 600 lines: it is one family (PyTorch's special-function kernels that
SciPy does not provide as PyTorch computes them), each op a short declaration beside its
recurrence; splitting the polynomials from the Bessel functions would scatter shared helpers.

The Bessel and Airy forwards call ``scipy.special`` (the same Cephes algorithms as PyTorch's
kernels). The polynomials follow PyTorch's kernels step for step (their special cases, the
trigonometric forms for large ``n`` inside (-1, 1), and the three-term recurrences in the
input's dtype), so that the values match PyTorch's, overflow and nan included. ``n`` is
truncated to an integer, as PyTorch's ``static_cast<int64_t>(n)``; a negative ``n`` gives 0.

PyTorch 2.13 records no gradient for any of these but ``zeta``: their outputs do not require
grad (non-differentiable ops here too). ``zeta(x, q)`` is differentiable in ``q``,
d/dq zeta(x, q) = -x zeta(x + 1, q); backward through ``x`` raises PyTorch's error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule.ops._registry import binary, ns, unary
from chainrule.ops.special import _call, _host

__all__ = [
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "spherical_bessel_j0",
    "zeta",
]

_TYPE_NAMES = {
    "float16": "Half",
    "bfloat16": "BFloat16",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}


def _check(kernel: str, *arrays: Any) -> None:
    """PyTorch's error for the dtypes its CPU kernels lack (half, bfloat16, complex)."""
    for a in arrays:
        name = np.dtype(a.dtype).name
        if name in _TYPE_NAMES or name.startswith(("float8", "complex")):
            t = _TYPE_NAMES.get(name, name)
            raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{t}'")


_X_ARG = (
    "airy_ai",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "spherical_bessel_j0",
)


def _require_tensor(name: str, input: Any) -> None:
    if hasattr(input, "_data"):
        _check(name, input._data)
    else:
        raise TypeError(
            f"special_{name}(): argument '{'x' if name in _X_ARG else 'input'}' "
            "(position 1) must be Tensor, "
            f"not {type(input).__name__}"
        )


def _public(name: str, f: Any, doc: str) -> Any:
    """The torch.special function over the registered one-input op ``f``: a tensor input only
    (as PyTorch), and ``out=``."""

    def public(input: Any, *, out: Any = None) -> Any:
        _require_tensor(name, input)
        r = f(input)
        if out is not None:
            out.copy_(r)
            return out
        return r

    public.__name__ = public.__qualname__ = name
    public.__doc__ = doc
    return public


# Bessel and Airy functions -----------------------------------------------------------------


def _spherical_j0(xp: Any, x: Any) -> Any:
    _check("spherical_bessel_j0", x)
    (h,) = _host(xp, x)
    with np.errstate(all="ignore"):
        x2 = h * h
        one = h.dtype.type(1)
        series = one + x2 * (
            -one / 6
            + x2
            * (
                one / 120
                + x2
                * (
                    -one / 5040
                    + x2 * (one / 362880 + x2 * (-one / 39916800 + x2 * (one / 6227020800)))
                )
            )
        )
        out = np.where(np.isinf(h), 0, np.where(np.abs(h) < 0.5, series, np.sin(h) / h))
    out = np.asarray(out, dtype=h.dtype)
    return out if xp is np else xp.asarray(out)


def _scipy_unary(name: str, sc_name: str, doc: str) -> Any:
    def fwd(xp: Any, x: Any) -> Any:
        _check(name, x)
        return _call(xp, sc_name, x)

    f = unary(name, fwd, differentiable=False, doc=doc)

    return _public(name, f, doc)


# PyTorch's airy_ai kernel (Cephes' rational approximations), evaluated in the input's dtype.
_AN = (
    3.46538101525629032477e-01,
    1.20075952739645805542e01,
    7.62796053615234516538e01,
    1.68089224934630576269e02,
    1.59756391350164413639e02,
    7.05360906840444183113e01,
    1.40264691163389668864e01,
    9.99999999999999995305e-01,
)
_AD = (
    5.67594532638770212846e-01,
    1.47562562584847203173e01,
    8.45138970141474626562e01,
    1.77318088145400459522e02,
    1.64234692871529701831e02,
    7.14778400825575695274e01,
    1.40959135607834029598e01,
    1.00000000000000000470e00,
)
_AFN = (
    -1.31696323418331795333e-01,
    -6.26456544431912369773e-01,
    -6.93158036036933542233e-01,
    -2.79779981545119124951e-01,
    -4.91900132609500318020e-02,
    -4.06265923594885404393e-03,
    -1.59276496239262096340e-04,
    -2.77649108155232920844e-06,
    -1.67787698489114633780e-08,
)
_AFD = (
    1.33560420706553243746e01,
    3.26825032795224613948e01,
    2.67367040941499554804e01,
    9.18707402907259625840e00,
    1.47529146771666414581e00,
    1.15687173795188044134e-01,
    4.40291641615211203805e-03,
    7.54720348287414296618e-05,
    4.51850092970580378464e-07,
)
_AGN = (
    1.97339932091685679179e-02,
    3.91103029615688277255e-01,
    1.06579897599595591108e00,
    9.39169229816650230044e-01,
    3.51465656105547619242e-01,
    6.33888919628925490927e-02,
    5.85804113048388458567e-03,
    2.82851600836737019778e-04,
    6.98793669997260967291e-06,
    8.11789239554389293311e-08,
    3.41551784765923618484e-10,
)
_AGD = (
    9.30892908077441974853e00,
    1.98352928718312140417e01,
    1.55646628932864612953e01,
    5.47686069422975497931e00,
    9.54293611618961883998e-01,
    8.64580826352392193095e-02,
    4.12656523824222607191e-03,
    1.01259085116509135510e-04,
    1.17166733214413521882e-06,
    4.91834570062930015649e-09,
)


def _horner(z: Any, coef: tuple[float, ...]) -> Any:
    c = z.dtype.type
    r = np.zeros_like(z)
    for a in coef:
        r = r * z + c(a)
    return r


def _airy_ai_host(x: Any) -> Any:
    c = x.dtype.type
    out = np.full_like(x, np.nan)
    left = x < c(-2.09)
    if left.any():
        v = x[left]
        z = c(1.0) / (c(-2.0) * v * np.sqrt(-v) / c(3.0))
        zz = z * z
        afn, afd = _horner(zz, _AFN), _horner(zz, _AFD)
        agn, agd = _horner(zz, _AGN), _horner(zz, _AGD)
        t = c(-2.0) * v * np.sqrt(-v) / c(3.0) + c(0.25) * c(3.14159265358979323846)
        out[left] = (
            c(5.64189583547756286948e-01)
            / np.sqrt(np.sqrt(-v))
            * (np.sin(t) * (c(1.0) + zz * afn / afd) - np.cos(t) * (z * agn / agd))
        )
    right = (x >= c(2.09)) & (x <= c(103.892))
    if right.any():
        v = x[right]
        zeta = c(2.0) * v * np.sqrt(v) / c(3.0)
        an, ad = _horner(c(1.0) / zeta, _AN), _horner(c(1.0) / zeta, _AD)
        out[right] = (
            c(5.64189583547756286948e-01)
            * (an / ad)
            / (c(2.0) * np.sqrt(np.sqrt(v)) * np.exp(zeta))
        )
    out[x > c(103.892)] = 0
    mid = (x >= c(-2.09)) & (x < c(2.09))
    if mid.any():  # the power series, summed until its terms fall below 2**-53
        v = x[mid]
        f = np.ones_like(v)
        g = v.copy()
        k = np.ones_like(v)
        m = np.ones_like(v)
        n = v.copy()
        z = v * v * v
        live = np.ones(v.shape, dtype=bool)
        while live.any():
            m2 = m * z
            k2 = k + c(1.0)
            m2 = m2 / k2
            n2 = n * z
            k2 = k2 + c(1.0)
            n2 = n2 / k2
            m2 = m2 / k2
            f2 = f + m2
            k2 = k2 + c(1.0)
            n2 = n2 / k2
            g2 = g + n2
            m, k, n, f, g = (
                np.where(live, a, b) for a, b in ((m2, m), (k2, k), (n2, n), (f2, f), (g2, g))
            )
            live = live & (np.abs(m / f) > c(1.11022302462515654042e-16))
        out[mid] = c(0.355028053887817239260) * f - c(0.258819403792806798405) * g
    out[np.isinf(x)] = np.nan
    return out


# PyTorch's bessel_j0/j1/y0/y1 kernels (Cephes' rational approximations), in the input's dtype.
_J0_PP = (
    7.96936729297347051624e-04,
    8.28352392107440799803e-02,
    1.23953371646414299388e00,
    5.44725003058768775090e00,
    8.74716500199817011941e00,
    5.30324038235394892183e00,
    9.99999999999999997821e-01,
)
_J0_PQ = (
    9.24408810558863637013e-04,
    8.56288474354474431428e-02,
    1.25352743901058953537e00,
    5.47097740330417105182e00,
    8.76190883237069594232e00,
    5.30605288235394617618e00,
    1.00000000000000000218e00,
)
_J0_QP = (
    -1.13663838898469149931e-02,
    -1.28252718670509318512e00,
    -1.95539544257735972385e01,
    -9.32060152123768231369e01,
    -1.77681167980488050595e02,
    -1.47077505154951170175e02,
    -5.14105326766599330220e01,
    -6.05014350600728481186e00,
)
_J0_QQ = (
    6.43178256118178023184e01,
    8.56430025976980587198e02,
    3.88240183605401609683e03,
    7.24046774195652478189e03,
    5.93072701187316984827e03,
    2.06209331660327847417e03,
    2.42005740240291393179e02,
)
_J0_RP = (
    -4.79443220978201773821e09,
    1.95617491946556577543e12,
    -2.49248344360967716204e14,
    9.70862251047306323952e15,
)
_J0_RQ = (
    4.99563147152651017219e02,
    1.73785401676374683123e05,
    4.84409658339962045305e07,
    1.11855537045356834862e10,
    2.11277520115489217587e12,
    3.10518229857422583814e14,
    3.18121955943204943306e16,
    1.71086294081043136091e18,
)
_Y0_YP = (
    1.55924367855235737965e04,
    -1.46639295903971606143e07,
    5.43526477051876500413e09,
    -9.82136065717911466409e11,
    8.75906394395366999549e13,
    -3.46628303384729719441e15,
    4.42733268572569800351e16,
    -1.84950800436986690637e16,
)
_Y0_YQ = (
    1.04128353664259848412e03,
    6.26107330137134956842e05,
    2.68919633393814121987e08,
    8.64002487103935000337e10,
    2.02979612750105546709e13,
    3.17157752842975028269e15,
    2.50596256172653059228e17,
)
_J1_PP = (
    7.62125616208173112003e-04,
    7.31397056940917570436e-02,
    1.12719608129684925192e00,
    5.11207951146807644818e00,
    8.42404590141772420927e00,
    5.21451598682361504063e00,
    1.00000000000000000254e00,
)
_J1_PQ = (
    5.71323128072548699714e-04,
    6.88455908754495404082e-02,
    1.10514232634061696926e00,
    5.07386386128601488557e00,
    8.39985554327604159757e00,
    5.20982848682361821619e00,
    9.99999999999999997461e-01,
)
_J1_QP = (
    5.10862594750176621635e-02,
    4.98213872951233449420e00,
    7.58238284132545283818e01,
    3.66779609360150777800e02,
    7.10856304998926107277e02,
    5.97489612400613639965e02,
    2.11688757100572135698e02,
    2.52070205858023719784e01,
)
_J1_QQ = (
    7.42373277035675149943e01,
    1.05644886038262816351e03,
    4.98641058337653607651e03,
    9.56231892404756170795e03,
    7.99704160447350683650e03,
    2.82619278517639096600e03,
    3.36093607810698293419e02,
)
_J1_RP = (
    -8.99971225705559398224e08,
    4.52228297998194034323e11,
    -7.27494245221818276015e13,
    3.68295732863852883286e15,
)
_J1_RQ = (
    6.20836478118054335476e02,
    2.56987256757748830383e05,
    8.35146791431949253037e07,
    2.21511595479792499675e10,
    4.74914122079991414898e12,
    7.84369607876235854894e14,
    8.95222336184627338078e16,
    5.32278620332680085395e18,
)
_Y1_YP = (
    1.26320474790178026440e09,
    -6.47355876379160291031e11,
    1.14509511541823727583e14,
    -8.12770255501325109621e15,
    2.02439475713594898196e17,
    -7.78877196265950026825e17,
)
_Y1_YQ = (
    5.94301592346128195359e02,
    2.35564092943068577943e05,
    7.34811944459721705660e07,
    1.87601316108706159478e10,
    3.88231277496238566008e12,
    6.20557727146953693363e14,
    6.87141087355300489866e16,
    3.97270608116560655612e18,
)
_PIO4 = 0.785398163397448309615660845819875721
_3PIO4 = 2.356194490192344928846982537459627163
_SQ2OPI = 0.797884560802865355879892119868763737
_TWOOPI = 0.636619772367581343075535053490057448


def _bessel_far(x: Any, z: Any, pp: Any, pq: Any, qp: Any, qq: Any, off: float, y: bool) -> Any:
    c = x.dtype.type
    p = _horner(z, pp) / _horner(z, pq)
    q = c(5.0) / x * (_horner(z, qp) / _horner(z, qq))
    a = x - c(off)
    v = p * np.sin(a) + q * np.cos(a) if y else p * np.cos(a) - q * np.sin(a)
    return v * c(_SQ2OPI) / np.sqrt(x)


def _j0_host(x: Any) -> Any:
    c = x.dtype.type
    x = np.abs(x)
    xx = x * x
    near = (
        (xx - c(5.78318596294678452118e00))
        * (xx - c(3.04712623436620863991e01))
        * _horner(xx, _J0_RP)
        / _horner(xx, _J0_RQ)
    )
    near = np.where(x < c(0.00001), c(1.0) - xx / c(4.0), near)
    far = _bessel_far(x, c(25.0) / xx, _J0_PP, _J0_PQ, _J0_QP, _J0_QQ, _PIO4, False)
    return np.where(x <= c(5.0), near, far)


def _y0_host(x: Any) -> Any:
    c = x.dtype.type
    xx = x * x
    near = _horner(xx, _Y0_YP) / _horner(xx, _Y0_YQ) + c(_TWOOPI) * np.log(x) * _j0_host(x)
    near = np.where(x == 0, -np.inf, near)
    far = _bessel_far(x, c(25.0) / xx, _J0_PP, _J0_PQ, _J0_QP, _J0_QQ, _PIO4, True)
    return np.where(x <= c(5.0), near, far)


def _j1_host(x: Any) -> Any:
    c = x.dtype.type
    sign = np.where(x < 0, c(-1.0), c(1.0))
    x = np.abs(x)
    xx = x * x
    near = (
        _horner(xx, _J1_RP)
        / _horner(xx, _J1_RQ)
        * x
        * (xx - c(1.46819706421238932572e01))
        * (xx - c(4.92184563216946036703e01))
    )
    z = c(5.0) / x * (c(5.0) / x)
    far = _bessel_far(x, z, _J1_PP, _J1_PQ, _J1_QP, _J1_QQ, _3PIO4, False)
    return sign * np.where(x <= c(5.0), near, far)


def _y1_host(x: Any) -> Any:
    c = x.dtype.type
    xx = x * x
    near = x * (_horner(xx, _Y1_YP) / _horner(xx, _Y1_YQ)) + c(_TWOOPI) * (
        _j1_host(x) * np.log(x) - c(1.0) / x
    )
    near = np.where(x == 0, -np.inf, np.where(x < 0, np.nan, near))
    z = c(5.0) / x * (c(5.0) / x)
    far = _bessel_far(x, z, _J1_PP, _J1_PQ, _J1_QP, _J1_QQ, _3PIO4, True)
    return np.where(x <= c(5.0), near, far)


def _ported(name: str, host: Any, doc: str) -> Any:
    def fwd(xp: Any, x: Any) -> Any:
        _check(name, x)
        (h,) = _host(xp, x)
        with np.errstate(all="ignore"):
            out = np.asarray(host(np.asarray(h)), dtype=h.dtype)
        return out if xp is np else xp.asarray(out)

    f = unary(name, fwd, differentiable=False, doc=doc)

    return _public(name, f, doc)


airy_ai = _ported("airy_ai", _airy_ai_host, "Airy function Ai(x).")
bessel_j0 = _ported("bessel_j0", _j0_host, "Bessel function of the first kind, order 0, J0(x).")
bessel_j1 = _ported("bessel_j1", _j1_host, "Bessel function of the first kind, order 1, J1(x).")
bessel_y0 = _ported("bessel_y0", _y0_host, "Bessel function of the second kind, order 0, Y0(x).")
bessel_y1 = _ported("bessel_y1", _y1_host, "Bessel function of the second kind, order 1, Y1(x).")
modified_bessel_i0 = _scipy_unary(
    "modified_bessel_i0", "i0", "Modified Bessel function of the first kind, order 0, I0(x)."
)
modified_bessel_i1 = _scipy_unary(
    "modified_bessel_i1", "i1", "Modified Bessel function of the first kind, order 1, I1(x)."
)
modified_bessel_k0 = _scipy_unary(
    "modified_bessel_k0", "k0", "Modified Bessel function of the second kind, order 0, K0(x)."
)
modified_bessel_k1 = _scipy_unary(
    "modified_bessel_k1", "k1", "Modified Bessel function of the second kind, order 1, K1(x)."
)
scaled_modified_bessel_k0 = _scipy_unary(
    "scaled_modified_bessel_k0", "k0e", "Exponentially scaled K0: e**x K0(x)."
)
scaled_modified_bessel_k1 = _scipy_unary(
    "scaled_modified_bessel_k1", "k1e", "Exponentially scaled K1: e**x K1(x)."
)

_sph_j0 = unary("spherical_bessel_j0", _spherical_j0, differentiable=False)


def spherical_bessel_j0(input: Any, *, out: Any = None) -> Any:
    """Spherical Bessel function of the first kind, order 0: j0(x) = sin(x) / x (1 at 0)."""
    _require_tensor("spherical_bessel_j0", input)
    r = _sph_j0(input)
    if out is not None:
        out.copy_(r)
        return out
    return r


# Hurwitz zeta ------------------------------------------------------------------------------


def _zeta_fwd(xp: Any, a: Any, b: Any) -> Any:
    _check("zeta", *(v for v in (a, b) if hasattr(v, "dtype")))
    out = _call(xp, "zeta", a, b)
    # PyTorch's series gives 0 * inf = nan at q = +inf (x > 1); SciPy's gives 0.
    return xp.where(xp.isposinf(b) & (a > 1), xp.nan, out)


def _zeta_x_vjp(ctx: Any, g: Any) -> Any:
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")


def _zeta_q_vjp(ctx: Any, g: Any) -> Any:
    return g * -ctx.a * ns.special_zeta(ctx.a + 1, ctx.b)


_ZETA_DOC = "Hurwitz zeta function sum_k (k + q)**-x. VJP in q: -g x zeta(x + 1, q)."
_zeta = binary(
    "special_zeta",
    _zeta_fwd,
    saves=("a", "b"),
    promote="float",
    node_name="SpecialZetaBackward0",
    vjp=(_zeta_x_vjp, _zeta_q_vjp),
    doc=_ZETA_DOC,
)
# PyTorch's overloads with a Python number on one side name their nodes ...Backward1 / 2.
_zeta_scalar_x = binary(
    "special_zeta_scalar_self",
    _zeta_fwd,
    saves=("a", "b"),
    promote="float",
    node_name="SpecialZetaBackward1",
    vjp=(None, _zeta_q_vjp),
    doc=_ZETA_DOC,
)
_zeta_scalar_q = binary(
    "special_zeta_scalar_other",
    _zeta_fwd,
    promote="float",
    node_name="SpecialZetaBackward2",
    vjp=(_zeta_x_vjp, None),
    doc=_ZETA_DOC,
)


def _both(name: str, first: str, input: Any, other: Any) -> tuple[Any, Any]:
    from chainrule._creation import tensor

    ti, to = hasattr(input, "_data"), hasattr(other, "_data")
    if not ti and not to:
        raise TypeError(
            f"special_{name}() received an invalid combination of arguments - got "
            f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
            f" * (Tensor {first}, Tensor {'n' if first == 'x' else 'other'}, *, Tensor out = None)"
        )

    def like(v: Any, t: Any) -> Any:
        # A Python number takes the tensor's dtype if that is floating (scalar promotion).
        dt = t.dtype if t.is_floating_point() else None
        return tensor(v, dtype=dt, device=t.device)

    if not ti:
        input = like(input, other)
    if not to:
        other = like(other, input)
    return input, other


def zeta(input: Any, other: Any, *, out: Any = None) -> Any:
    """Hurwitz zeta function zeta(x, q) = sum_{k >= 0} (k + q)**-x (``x``: ``input``,
    ``q``: ``other``; a Python number allowed for either). Differentiable in ``q`` only, as in
    PyTorch: d/dq zeta(x, q) = -x zeta(x + 1, q)."""
    _check("zeta", *(v._data for v in (input, other) if hasattr(v, "_data")))
    op = _zeta if hasattr(other, "_data") else _zeta_scalar_q
    op = op if hasattr(input, "_data") else _zeta_scalar_x
    r = op(*_both("zeta", "input", input, other))
    if out is not None:
        out.copy_(r)
        return out
    return r


# Orthogonal polynomials --------------------------------------------------------------------

_INT64_MIN = np.iinfo(np.int64).min


def _as_int(n: Any) -> Any:
    """``static_cast<int64_t>(n)``: truncation; nan and out-of-range values give INT64_MIN
    (x86's result), so a negative degree."""
    if n.dtype.kind in "iub":
        return n.astype(np.int64)
    with np.errstate(all="ignore"):
        ok = np.isfinite(n) & (np.abs(n) < 2.0**63)
        return np.where(ok, np.trunc(np.where(ok, n, 0)), _INT64_MIN).astype(np.int64)


class _Sel:
    """The result of a polynomial kernel, filled case by case in PyTorch's order."""

    def __init__(self, x: Any) -> None:
        self.out = np.zeros_like(x)
        self.done = np.zeros(x.shape, dtype=bool)

    def put(self, cond: Any, value: Any) -> None:
        m = cond & ~self.done
        if m.any():
            self.out[m] = np.broadcast_to(value, self.out.shape)[m]
            self.done |= m


def _recur(sel: _Sel, x: Any, n: Any, q1: Any, step: Any) -> None:
    """The recurrence: p = 1, q = q1, then for j = 1 .. n - 1: r = step(j, p, q); p, q = q, r."""
    m = ~sel.done
    if not m.any():
        return
    xs, ns_ = x[m], n[m]
    p = np.ones_like(xs)
    q = np.broadcast_to(q1, x.shape)[m].copy()
    top = int(ns_.max())
    for j in range(1, top):
        live = ns_ > j
        if not live.any():
            break
        r = step(j, xs, p, q)
        p = np.where(live, q, p)
        q = np.where(live, r, q)
        if np.isnan(q[live]).all():  # nan stays nan: the rest of the recurrence changes nothing
            break
    sel.out[m] = q
    sel.done |= m


def _signed(n: Any, even: Any, odd: Any) -> Any:
    return np.where(n % 2 == 0, even, odd)


def _cheb_t(x: Any, n: Any, t: Any) -> Any:
    s = _Sel(x)
    s.put(n < 0, 0)
    s.put(np.abs(x) == 1, np.where((x > 0) | (n % 2 == 0), 1, -1))
    s.put((n > 6) & (np.abs(x) < 1), np.cos(n.astype(t) * np.arccos(x)))
    s.put(n == 0, 1)
    s.put(n == 1, x)
    _recur(s, x, n, x, lambda j, x, p, q: (x + x) * q - p)
    return s.out


def _cheb_u(x: Any, n: Any, t: Any) -> Any:
    s = _Sel(x)
    n1 = (n + 1).astype(t)
    s.put(n < 0, 0)
    s.put(np.abs(x) == 1, np.where((x > 0) | (n % 2 == 0), n1, -n1))
    ac = np.arccos(x)
    sa = np.sin(ac)
    trig = np.where(sa != 0, np.sin(n1 * ac) / sa, n1 * np.cos(n1 * ac) / x)
    s.put((n > 8) & (np.abs(x) < 1), trig)
    s.put(n == 0, 1)
    s.put(n == 1, x + x)
    _recur(s, x, n, x + x, lambda j, x, p, q: (x + x) * q - p)
    return s.out


def _cheb_v(x: Any, n: Any, t: Any) -> Any:
    s = _Sel(x)
    n21 = (n + n + 1).astype(t)
    half = t.type(0.5)
    s.put(n < 0, 0)
    s.put(np.abs(x) == 1, np.where(x > 0, 1, _signed(n, n21, -n21)))
    ac = np.arccos(x)
    trig = np.where(
        np.sin(ac / 2) != 1,
        np.cos((n.astype(t) + half) * ac) / np.cos(ac / 2),
        _signed(n, n21, -n21),
    )
    s.put((n > 8) & (np.abs(x) < 1), trig)
    s.put(n == 0, 1)
    s.put(n == 1, x + x - 1)
    _recur(s, x, n, x + x - 1, lambda j, x, p, q: (x + x) * q - p)
    return s.out


def _cheb_w(x: Any, n: Any, t: Any) -> Any:
    s = _Sel(x)
    n21 = (n + n + 1).astype(t)
    half = t.type(0.5)
    s.put(n < 0, 0)
    s.put(np.abs(x) == 1, np.where(x > 0, n21, _signed(n, 1, -1)))
    ac = np.arccos(x)
    trig = np.where(
        np.cos(ac / 2) != 1,
        np.sin((n.astype(t) + half) * ac) / np.sin(ac / 2),
        np.where(x > 0, n21, _signed(n, 1, -1)),
    )
    s.put((n > 8) & (np.abs(x) < 1), trig)
    s.put(n == 0, 1)
    s.put(n == 1, x + x + 1)
    _recur(s, x, n, x + x + 1, lambda j, x, p, q: (x + x) * q - p)
    return s.out


def _shifted_t(x: Any, n: Any, t: Any) -> Any:
    s = _Sel(x)
    y = x + x - 1
    s.put(n < 0, 0)
    s.put(x == 1, 1)
    s.put(x == 0, _signed(n, 1, -1))
    s.put((n > 6) & (np.abs(y) < 1), np.cos(n.astype(t) * np.arccos(y)))
    s.put(n == 0, 1)
    s.put(n == 1, y)
    _recur(s, x, n, y, lambda j, x, p, q: ((x + x - 1) + (x + x - 1)) * q - p)
    return s.out


def _shifted_u(x: Any, n: Any, t: Any) -> Any:
    s = _Sel(x)
    y = x + x - 1
    n1 = (n + 1).astype(t)
    s.put(n < 0, 0)
    s.put(x == 1, n1)
    s.put(x == 0, _signed(n, n1, -n1))
    ac = np.arccos(y)
    sa = np.sin(ac)
    trig = np.where(sa != 0, np.sin(n1 * ac) / sa, n1 * np.cos(n1 * ac) / y)
    s.put((n > 6) & (np.abs(y) < 1), trig)
    s.put(n == 0, 1)
    s.put(n == 1, y + y)
    _recur(s, x, n, y + y, lambda j, x, p, q: ((x + x - 1) + (x + x - 1)) * q - p)
    return s.out


def _shifted_v(x: Any, n: Any, t: Any) -> Any:
    s = _Sel(x)
    y = x + x - 1
    n21 = (n + n + 1).astype(t)
    half = t.type(0.5)
    s.put(n < 0, 0)
    s.put(x == 1, 1)
    s.put(x == 0, _signed(n, n21, -n21))
    ac = np.arccos(y)
    trig = np.where(
        np.sin(ac / 2) != 1,
        np.cos((n.astype(t) + half) * ac) / np.cos(ac / 2),
        _signed(n, n21, -n21),
    )
    s.put((n > 6) & (np.abs(y) < 1), trig)
    s.put(n == 0, 1)
    s.put(n == 1, y + y - 1)
    _recur(s, x, n, y + y - 1, lambda j, x, p, q: ((x + x - 1) + (x + x - 1)) * q - p)
    return s.out


def _shifted_w(x: Any, n: Any, t: Any) -> Any:
    s = _Sel(x)
    y = x + x - 1
    n21 = (n + n + 1).astype(t)
    half = t.type(0.5)
    s.put(n < 0, 0)
    s.put(x == 1, n21)
    s.put(x == 0, _signed(n, 1, -1))
    ac = np.arccos(y)
    trig = np.where(
        np.cos(ac / 2) != 1,
        np.sin((n.astype(t) + half) * ac) / np.sin(ac / 2),
        _signed(n, 1, -1),
    )
    s.put((n > 4) & (np.abs(y) < 1), trig)
    s.put(n == 0, 1)
    s.put(n == 1, y + y + 1)
    _recur(s, x, n, y + y + 1, lambda j, x, p, q: ((x + x - 1) + (x + x - 1)) * q - p)
    return s.out


def _hermite_h(x: Any, n: Any, t: Any) -> Any:
    s = _Sel(x)
    s.put(n < 0, 0)
    s.put(n == 0, 1)
    s.put(n == 1, x + x)
    _recur(s, x, n, x + x, lambda j, x, p, q: (x + x) * q - (2 * j) * p)
    return s.out


def _hermite_he(x: Any, n: Any, t: Any) -> Any:
    s = _Sel(x)
    s.put(n < 0, 0)
    s.put(n == 0, 1)
    s.put(n == 1, x)
    _recur(s, x, n, x, lambda j, x, p, q: x * q - j * p)
    return s.out


def _laguerre_l(x: Any, n: Any, t: Any) -> Any:
    s = _Sel(x)
    s.put(n < 0, 0)
    s.put(np.abs(x) == 0, 1)
    s.put(n == 0, 1)
    s.put(n == 1, 1 - x)
    _recur(s, x, n, 1 - x, lambda j, x, p, q: (((j + j) + (1 - x)) * q - j * p) / (j + 1))
    return s.out


def _legendre_p(x: Any, n: Any, t: Any) -> Any:
    s = _Sel(x)
    s.put(n < 0, 0)
    s.put(np.abs(x) == 1, np.where((x > 0) | (n % 2 == 0), 1, -1))
    s.put(n == 0, 1)
    s.put(n == 1, x)
    _recur(s, x, n, x, lambda j, x, p, q: ((j + j + 1) * x * q - j * p) / (j + 1))
    return s.out


def _poly_op(name: str, kernel: Any, math: str) -> Any:
    def fwd(xp: Any, a: Any, b: Any) -> Any:
        _check(name, a, b)
        x, n = _host(xp, a, b)
        t = np.result_type(x.dtype, n.dtype)
        x, n = np.broadcast_arrays(np.asarray(x, dtype=t), _as_int(np.asarray(n, dtype=t)))
        with np.errstate(all="ignore"):
            out = np.asarray(kernel(np.array(x), np.array(n), t), dtype=t)
        return out if xp is np else xp.asarray(out)

    op = binary(name, fwd, promote="float", differentiable=False, doc=math)

    def public(input: Any, n: Any, *, out: Any = None) -> Any:
        _check(name, *(v._data for v in (input, n) if hasattr(v, "_data")))
        r = op(*_both(name, "x", input, n))
        if out is not None:
            out.copy_(r)
            return out
        return r

    public.__name__ = public.__qualname__ = name
    public.__doc__ = (
        f"{math} (``n`` truncated to an integer; 0 for negative ``n``), computed as PyTorch "
        "does; a Python number allowed for either argument. Not differentiable (as PyTorch)."
    )
    return public


chebyshev_polynomial_t = _poly_op(
    "chebyshev_polynomial_t", _cheb_t, "Chebyshev polynomial of the first kind T_n(x)"
)
chebyshev_polynomial_u = _poly_op(
    "chebyshev_polynomial_u", _cheb_u, "Chebyshev polynomial of the second kind U_n(x)"
)
chebyshev_polynomial_v = _poly_op(
    "chebyshev_polynomial_v", _cheb_v, "Chebyshev polynomial of the third kind V_n(x)"
)
chebyshev_polynomial_w = _poly_op(
    "chebyshev_polynomial_w", _cheb_w, "Chebyshev polynomial of the fourth kind W_n(x)"
)
shifted_chebyshev_polynomial_t = _poly_op(
    "shifted_chebyshev_polynomial_t",
    _shifted_t,
    "Shifted Chebyshev polynomial T*_n(x) = T_n(2x - 1)",
)
shifted_chebyshev_polynomial_u = _poly_op(
    "shifted_chebyshev_polynomial_u",
    _shifted_u,
    "Shifted Chebyshev polynomial U*_n(x) = U_n(2x - 1)",
)
shifted_chebyshev_polynomial_v = _poly_op(
    "shifted_chebyshev_polynomial_v",
    _shifted_v,
    "Shifted Chebyshev polynomial V*_n(x) = V_n(2x - 1)",
)
shifted_chebyshev_polynomial_w = _poly_op(
    "shifted_chebyshev_polynomial_w",
    _shifted_w,
    "Shifted Chebyshev polynomial W*_n(x) = W_n(2x - 1)",
)
hermite_polynomial_h = _poly_op(
    "hermite_polynomial_h", _hermite_h, "Physicists' Hermite polynomial H_n(x)"
)
hermite_polynomial_he = _poly_op(
    "hermite_polynomial_he", _hermite_he, "Probabilists' Hermite polynomial He_n(x)"
)
laguerre_polynomial_l = _poly_op("laguerre_polynomial_l", _laguerre_l, "Laguerre polynomial L_n(x)")
legendre_polynomial_p = _poly_op("legendre_polynomial_p", _legendre_p, "Legendre polynomial P_n(x)")

# torch.special.common_args / multi_dim_common: the docstring fragments PyTorch's docs reuse.
common_args: dict[str, str] = {
    "input": "input (Tensor): the input tensor.",
    "generator": "generator (:class:`torch.Generator`, optional): a pseudorandom number "
    "generator for sampling",
    "out": "out (Tensor, optional): the output tensor.",
    "memory_format": "memory_format (:class:`torch.memory_format`, optional): the desired "
    "memory format of\n        returned tensor. Default: ``torch.preserve_format``.",
}
multi_dim_common: dict[str, str] = {
    **common_args,
    "dtype": "dtype (:class:`torch.dtype`, optional): the desired data type of returned "
    "tensor.\n        If specified, the input tensor is casted to :attr:`dtype` before the "
    "operation\n        is performed. This is useful for preventing data type overflows. "
    "Default: None.",
    "keepdim": "keepdim (bool): whether the output tensor has :attr:`dim` retained or not.",
    "opt_keepdim": "\n    keepdim (bool, optional): whether the output tensor has :attr:`dim` "
    "retained or not. Default: ``False``.\n",
    "dim": "dim (int or tuple of ints): the dimension or dimensions to reduce.",
    "keepdim_details": "\nIf :attr:`keepdim` is ``True``, the output tensor is of the same "
    "size\nas :attr:`input` except in the dimension(s) :attr:`dim` where it is of size 1.\n"
    "Otherwise, :attr:`dim` is squeezed (see :func:`torch.squeeze`), resulting in the\noutput "
    "tensor having 1 (or ``len(dim)``) fewer dimension(s).\n",
    "opt_dim": "\n    dim (int or tuple of ints, optional): the dimension or dimensions to "
    "reduce.\n",
    "opt_dim_all_reduce": "\n    dim (int or tuple of ints, optional): the dimension or "
    "dimensions to reduce.\n        If ``None``, all dimensions are reduced.\n",
}
