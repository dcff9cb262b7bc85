"""The CuPy stand-in is as strict as CuPy: each refusal here is one CuPy documents.

Sources (docs.cupy.dev, stable): "The N-dimensional array" (reference/ndarray.html),
"Universal functions" (reference/ufunc.html), "Difference between CuPy and NumPy"
(user_guide/difference.html), "Interoperability" (user_guide/interoperability.html),
"cupy.random.Generator" (reference/random.html) and "cupyx.errstate" (reference/generated/
cupyx.errstate.html).
"""

from __future__ import annotations

import numpy as np
import pytest

import tests._fakecupy as cp
from tests._fakecupy import cupyx

IMPLICIT = (
    "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a "
    "NumPy array explicitly."
)


def x23():
    return cp.asarray(np.arange(6.0).reshape(2, 3))


# ndarray.html: "cupy.ndarray and numpy.ndarray are not implicitly convertible to each other.
# That means, NumPy functions cannot take cupy.ndarrays as inputs, and vice versa." The text is
# the TypeError CuPy's ndarray.__array__ raises.
def test_implicit_conversion_to_numpy_is_refused():
    x = x23()
    for convert in (np.asarray, np.array, np.ascontiguousarray, lambda a: a.__array__()):
        with pytest.raises(TypeError) as e:
            convert(x)
        assert str(e.value) == IMPLICIT


def test_explicit_conversions_are_allowed():
    x = x23()
    for h in (x.get(), cp.asnumpy(x)):
        assert type(h) is np.ndarray and h.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]] and x[1, 2].item() == 5.0
    # float(), int(), bool() of a one-element array synchronize and convert, as in CuPy.
    assert float(x[1, 2]) == 5.0 and int(x[1, 1]) == 4 and bool(x[0, 0]) is False
    y = cp.zeros(2)
    y.set(np.array([1.0, 2.0]))
    assert y.get().tolist() == [1.0, 2.0]


# ndarray.html ("vice versa"): host arrays are not operands of device operations; CuPy's
# ufuncs raise TypeError("Unsupported type <class 'numpy.ndarray'>").
@pytest.mark.parametrize(
    "mix",
    [
        lambda x, h: x + h,
        lambda x, h: h + x,
        lambda x, h: cp.add(x, h),
        lambda x, h: np.add(x, h),
        lambda x, h: cp.concatenate([x, h]),
        lambda x, h: cp.matmul(x, h.T),
    ],
)
def test_mixing_with_host_arrays_is_refused(mix):
    with pytest.raises(TypeError, match="Unsupported type <class 'numpy.ndarray'>"):
        mix(x23(), np.ones((2, 3)))


def test_scalars_mix_with_device_arrays():
    x = x23()
    r = x * 2 + np.float32(1) - 0.5
    assert isinstance(r, cp.ndarray) and r.get()[1, 2] == 10.5


# interoperability.html: cupy.ndarray implements __array_ufunc__ and __array_function__, so
# NumPy functions applied to device arrays run on the device and return device arrays.
def test_numpy_functions_dispatch_to_the_device():
    x = x23()
    for r in (np.exp(x), np.sum(x, axis=0), np.concatenate([x, x]), np.where(x > 2, x, 0)):
        assert isinstance(r, cp.ndarray)
    assert np.sum(x).get() == 15.0
    # A function of a NumPy submodule resolves to CuPy's submodule (cupy.ndarray's
    # __array_function__ walks func.__module__): numpy.linalg.norm runs cupy.linalg.norm.
    n = np.linalg.norm(x)
    assert isinstance(n, cp.ndarray) and abs(float(n) - np.sqrt(55.0)) < 1e-12


# difference.html, "Reduction methods return zero-dimension array": NumPy returns a scalar.
def test_reductions_return_zero_dim_device_arrays():
    x = x23()
    for r in (x.sum(), x.max(), cp.mean(x), x.argmax(), np.sum(x)):
        assert isinstance(r, cp.ndarray) and r.ndim == 0


# ufunc.html, Methods: "ufunc.at: add, maximum, minimum" (later CuPy adds subtract and the
# bitwise ufuncs); for others CuPy raises NotImplementedError("`cupy_multiply.at` is not
# supported yet"). cupyx.scatter_add is the documented substitute for add.at.
def test_ufunc_at_only_where_cupy_has_it():
    x = cp.zeros(3)
    i = cp.asarray(np.array([0, 0, 2]))
    cp.add.at(x, i, 1.0)
    cp.maximum.at(x, i, 5.0)
    cp.subtract.at(x, i, 1.0)
    assert x.get().tolist() == [3.0, 0.0, 4.0]
    for uf in (cp.multiply, cp.divide, cp.power):
        with pytest.raises(NotImplementedError, match=r"`cupy_\w+\.at` is not supported yet"):
            uf.at(x, i, 2.0)
    cupyx.scatter_add(x, i, 1.0)
    cupyx.scatter_min(x, i, 0.0)
    assert x.get().tolist() == [0.0, 0.0, 0.0]


# The API reference has no cupy.errstate (GPU arithmetic sets no floating-point flags); only
# cupyx.errstate(linalg=...) exists.
def test_there_is_no_errstate():
    for name in ("errstate", "seterr", "geterr"):
        assert not hasattr(cp, name)
    with pytest.raises(AttributeError):
        cp.errstate  # noqa: B018
    r = cp.asarray(np.array([1.0, 0.0])) / 0.0  # no warning: filterwarnings=error is on
    assert r.get()[0] == np.inf and np.isnan(r.get()[1])


# reference/random.html: Generator offers random, integers, uniform, standard_normal, ... but
# not normal, choice, permutation, shuffle or multinomial; the legacy RandomState has them.
def test_generator_lacks_what_cupys_lacks():
    g = cp.random.default_rng(0)
    for name in ("normal", "choice", "permutation", "shuffle", "multinomial"):
        assert not hasattr(g, name)
    assert isinstance(g.standard_normal(3), cp.ndarray)
    rs = cp.random.RandomState(0)
    for name in ("normal", "choice", "permutation", "shuffle", "uniform", "randint"):
        assert callable(getattr(rs, name))
    a = rs.normal(size=None)
    assert isinstance(a, cp.ndarray) and a.ndim == 0  # no Python float, unlike NumPy
    assert rs.normal(size=3, dtype=np.float32).dtype == np.float32  # CuPy takes dtype=


# cupyx.errstate: linalg='ignore' (the default) or 'raise'; by default a singular matrix gives
# NaNs where NumPy raises LinAlgError.
def test_linalg_failures_are_silent_unless_raise():
    singular = cp.zeros((2, 2))
    assert np.isnan(cp.linalg.inv(singular).get()).all()
    assert np.isnan(cp.linalg.solve(singular, cp.ones((2, 3))).get()).all()
    assert cp.linalg.solve(singular, cp.ones((2, 3))).shape == (2, 3)
    with cupyx.errstate(linalg="raise"):
        with pytest.raises(np.linalg.LinAlgError):
            cp.linalg.cholesky(-cp.eye(2))
    assert np.isnan(cp.linalg.cholesky(-cp.eye(2)).get()).all()
    assert np.allclose(cp.linalg.inv(2 * cp.eye(2)).get(), 0.5 * np.eye(2))


# difference.html, "Out-of-bounds indices": integer-array indices wrap around instead of
# raising IndexError.
def test_out_of_bounds_integer_array_indices_wrap():
    x = x23()
    i = cp.asarray(np.array([3, -4]))
    assert x[i].get().tolist() == [[3, 4, 5], [0, 1, 2]]
    assert x[1, [4]].get().tolist() == [4.0]
    assert x[..., cp.asarray(np.array([5]))].get().tolist() == [[2.0], [5.0]]
    y = cp.zeros(3)
    y[cp.asarray(np.array([4]))] = 7.0
    assert y.get().tolist() == [0.0, 7.0, 0.0]


def test_cuda_runtime_and_devices():
    assert cp.cuda.runtime.getDeviceCount() == 2
    with cp.cuda.Device(1):
        assert cp.cuda.runtime.getDevice() == 1 and cp.zeros(1).device.id == 1
    assert cp.cuda.runtime.getDevice() == 0
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError):
        cp.cuda.Device(2)


def test_memory_pool_counts_live_buffers():
    pool = cp.get_default_memory_pool()
    before = pool.used_bytes()
    a = cp.zeros(1000)
    view = a[:10]
    assert pool.used_bytes() - before == 8000
    del a
    assert pool.used_bytes() - before == 8000  # the view keeps the buffer alive
    del view
    assert pool.used_bytes() == before


# cupy/fft/__init__.py (CuPy's source) exports 19 names; its transforms take no ``out=``
# (NumPy 2.0's), refuse host arrays, check ``norm`` and keep single precision.
def test_fft_has_cupys_names_signatures_and_dtypes():
    from tests._fakecupy import fft

    assert set(fft.__all__) == {
        "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn",
        "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq",
        "rfftn", "config",
    }  # fmt: skip
    x = cp.asarray(np.arange(8.0, dtype=np.float32))
    assert cp.fft.rfft(x).dtype == np.complex64 and cp.fft.irfft(cp.fft.rfft(x)).dtype == np.float32
    with pytest.raises(TypeError):
        cp.fft.fft(x, out=cp.zeros(8, dtype=np.complex64))
    with pytest.raises(TypeError, match="must be a cupy.ndarray"):
        cp.fft.fft(np.ones(4))
    with pytest.raises(ValueError, match="Invalid norm value"):
        cp.fft.fft(x, norm="unitary")
    assert cp.fft.fftn(x, axes=()) is x
    np.testing.assert_allclose(
        cp.fft.fftn(x, norm="ortho").get(), np.fft.fftn(x.get(), norm="ortho")
    )
    # numpy.fft.* on a device array runs cupy.fft.* (__array_function__).
    assert isinstance(np.fft.fft(x), cp.ndarray)


# cupy/linalg/__init__.py lists what cupy.linalg has: no multi_dot, vector_norm, ...
def test_linalg_has_only_cupys_names():
    for name in ("qr", "svd", "eigh", "solve", "inv", "det", "slogdet", "lstsq", "pinv"):
        assert callable(getattr(cp.linalg, name))
    for name in ("multi_dot", "vector_norm", "matrix_norm", "svdvals", "outer", "vecdot"):
        with pytest.raises(AttributeError):
            getattr(cp.linalg, name)


# cupyx/scipy/linalg/_decomp_lu.py: lu_factor takes one 2-d matrix (_util._assert_2d), gives
# 0-based int32 pivots, warns on an exactly singular matrix, checks finiteness by default.
def test_cupyx_scipy_lu_factor_is_two_dimensional_only():
    sl = cupyx.scipy.linalg
    a = cp.asarray(np.array([[0.0, 2.0], [3.0, 4.0]]))
    lu, piv = sl.lu_factor(a)
    assert isinstance(lu, cp.ndarray) and piv.dtype == np.int32 and piv.get().tolist() == [1, 1]
    with pytest.raises(np.linalg.LinAlgError, match="3-dimensional array given"):
        sl.lu_factor(cp.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="infs or NaNs"):
        sl.lu_factor(cp.asarray(np.array([[np.nan, 1.0], [1.0, 1.0]])))
    with pytest.warns(RuntimeWarning, match="Singular matrix"):
        sl.lu_factor(cp.zeros((2, 2)))
    with pytest.raises(TypeError, match="Unsupported type"):
        sl.lu_factor(np.eye(2))
