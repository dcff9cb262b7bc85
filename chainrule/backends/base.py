"""The :class:`Backend` interface: one array library behind one kind of device.

An op's forward receives ``xp`` (the array module) and raw arrays, and nothing else. Where NumPy
and CuPy really differ, the difference is a named method here, implemented once per backend,
so that an op never branches on the library (ARCHITECTURE.md section 6). The differences, as
CuPy documents them (docs.cupy.dev, "Difference between CuPy and NumPy", "Universal functions"):

- ``ufunc.at`` exists in CuPy only for a few ufuncs (add, subtract, maximum, minimum and the
  bitwise ones); ``multiply.at`` is emulated (:meth:`Backend.scatter_reduce`).
- ``errstate`` does not exist in CuPy (GPU arithmetic never warns): :meth:`Backend.errstate`.
- ``cupy.random.Generator`` lacks ``normal``, ``choice``, ``permutation``, ``multinomial``:
  :meth:`Backend.default_rng` hands out a source with NumPy ``Generator`` method names.
- NumPy's reductions return scalars (``np.float32``), CuPy's 0-d arrays:
  :meth:`Backend.ensure_array`.
- Integer-array indices out of range raise in NumPy and wrap around in CuPy:
  :meth:`Backend.check_index_bounds`.
- ``linalg`` failures (singular matrix, not positive definite) raise in NumPy and give NaNs in
  CuPy unless ``cupyx.errstate(linalg='raise')``: :meth:`Backend.linalg_errors`.
- Float-to-int casts of NaN/inf/out-of-range values differ (and warn in NumPy):
  :meth:`Backend.float_to_int`.
- ``sliding_window_view`` (:meth:`Backend.sliding_window_view`) and ``einsum(out=)``
  (:meth:`Backend.einsum`).
"""

from __future__ import annotations

import contextlib
from typing import Any, ContextManager

__all__ = ["Backend", "RandomSource", "doubling_scan", "unbuffered_apply"]


class RandomSource:
    """What :meth:`Backend.default_rng` returns: the methods of ``numpy.random.Generator`` that
    chainrule uses, with NumPy's names and arguments, producing arrays of the backend's kind.

    On NumPy it *is* a ``numpy.random.Generator``. Methods: ``random(size, dtype)``,
    ``standard_normal(size, dtype)``, ``normal(loc, scale, size)``, ``uniform(low, high, size)``,
    ``integers(low, high, size, dtype, endpoint)``, ``permutation(x)``,
    ``choice(a, size, replace, p)``, ``exponential(scale, size)``, ``standard_exponential(size,
    dtype)``, ``poisson(lam, size)``, ``standard_gamma(shape, size, dtype)``, ``binomial(n, p,
    size)``, ``geometric(p, size)``, ``standard_cauchy(size)``, ``lognormal(mean, sigma, size)``,
    ``beta(a, b, size)``.
    """


_NULL = contextlib.nullcontext()


class Backend:
    """One array library behind one device type (``'cpu'``: NumPy, ``'cuda'``: CuPy).

    Attributes:
        name: ``"numpy"`` or ``"cupy"``.
        device: the device type, ``"cpu"`` or ``"cuda"``.
        xp: the array module an op's forward is given.
    """

    name: str = ""
    device: str = ""
    xp: Any = None
    multi_gpu: bool = False  # whether two arrays of this backend can be on different devices

    # Where arrays live -------------------------------------------------------------------
    def device_of(self, array: Any) -> str:
        """The device of ``array`` as PyTorch prints it: ``'cpu'``, ``'cuda:0'``."""
        raise NotImplementedError

    def device_index(self, array: Any) -> int | None:
        """The device index of ``array`` (``None`` on the CPU)."""
        raise NotImplementedError

    def asarray(self, obj: Any, dtype: Any = None, device: Any = None) -> Any:
        """``obj`` (array, scalar, nested lists, host array) as an array of this backend, on
        device index ``device`` (the current one when None); no copy when it already is one."""
        raise NotImplementedError

    def to_host(self, array: Any) -> Any:
        """``array`` as a NumPy array (a copy from the GPU; the array itself on the CPU)."""
        raise NotImplementedError

    def from_host(self, array: Any, device: Any = None) -> Any:
        """A host (NumPy) array copied to device index ``device`` of this backend."""
        raise NotImplementedError

    def copy_to_device(self, array: Any, device: Any = None) -> Any:
        """A copy of ``array`` (an array of this backend) on device index ``device`` (the
        current one when None)."""
        raise NotImplementedError

    def array_device(self, array: Any) -> ContextManager[Any]:
        """A context in which ``array``'s device is current, so that the kernels launched in
        it run there (the CPU has only one: nothing to do)."""
        return _NULL

    # What the libraries do differently ---------------------------------------------------
    def scatter_add(self, target: Any, index: Any, values: Any) -> None:
        """``target[index] += values``, unbuffered: repeated indices all contribute."""
        raise NotImplementedError

    def scatter_reduce(self, target: Any, index: Any, values: Any, reduce: str) -> None:
        """``target[index] = target[index] (op) values``, unbuffered, for ``reduce`` in
        ``'add'``, ``'multiply'``, ``'maximum'``, ``'minimum'`` (NumPy's ``ufunc.at``)."""
        raise NotImplementedError

    def writeable(self, array: Any) -> bool:
        """Whether ``array`` may be written: NumPy's ``flags.writeable`` (False for broadcast
        views); always True on CuPy, which has no read-only flag."""
        raise NotImplementedError

    def accumulate(self, array: Any, axis: int, reduce: str) -> Any:
        """The running ``reduce`` (``'maximum'`` or ``'minimum'``, NaN-propagating) of
        ``array`` along ``axis``: NumPy's ``ufunc.accumulate``, which CuPy has only for add and
        multiply (:func:`doubling_scan` there)."""
        raise NotImplementedError

    def errstate(self, **kwargs: Any) -> ContextManager[Any]:
        """``np.errstate(**kwargs)`` on NumPy; on CuPy, where arithmetic never warns, a context
        that does nothing."""
        raise NotImplementedError

    def default_rng(self, seed: int | None = None, device: Any = None) -> Any:
        """A seeded :class:`RandomSource` making arrays on this backend's device ``device``."""
        raise NotImplementedError

    def ensure_array(self, value: Any) -> Any:
        """``value`` (a reduction's result: a NumPy scalar, or a CuPy 0-d array) as an array."""
        raise NotImplementedError

    def check_index_bounds(self, index: Any, size: int, dim: int = 0) -> None:
        """Raise PyTorch's ``IndexError`` when an integer index array has an entry outside
        ``[-size, size)``. On the GPU this costs one small device-to-host copy."""
        if index.size == 0:
            return
        lo, hi = (int(v) for v in self.to_host(self.xp.stack([index.min(), index.max()])))
        bad = lo if lo < -size else hi if hi >= size else None
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")

    def linalg_errors(self) -> ContextManager[Any]:
        """A context inside which ``xp.linalg`` failures raise ``numpy.linalg.LinAlgError``
        (NumPy's default; CuPy's only under ``cupyx.errstate(linalg='raise')``)."""
        raise NotImplementedError

    def float_to_int(self, array: Any, dtype: Any) -> Any:
        """A floating array cast to integer ``dtype``, truncating toward zero as PyTorch does.
        NaN, infinities and out-of-range values give unspecified values (as in PyTorch) and no
        warning."""
        raise NotImplementedError

    def sliding_window_view(self, array: Any, window_shape: Any, axis: Any = None) -> Any:
        """NumPy's ``sliding_window_view``: overlapping windows as a view. Treat it as
        read-only: NumPy marks it so, CuPy has no read-only flag (writes would alias)."""
        raise NotImplementedError

    def as_strided(self, array: Any, shape: Any, strides: Any) -> Any:
        """A strided view of ``array`` (``as_strided``), to be read only: NumPy marks it
        read-only; CuPy cannot (writes through overlapping windows would alias)."""
        raise NotImplementedError

    def einsum(self, subscripts: str, *operands: Any, out: Any = None) -> Any:
        """``xp.einsum``; with ``out=`` the result is written into ``out`` (CuPy's einsum has no
        ``out=``) and ``out`` is returned."""
        raise NotImplementedError

    def lu_factor(self, a: Any) -> tuple[Any, Any]:
        """LAPACK's getrf of each matrix of a non-empty ``a`` (..., m, n): ``(lu, piv)``, L
        (unit diagonal implied) below the diagonal of ``lu`` and U on and above it, ``piv``
        (..., min(m, n)) the 1-based ``int32`` row swapped with each row in turn. A singular
        matrix gives a zero on U's diagonal, without a warning."""
        raise NotImplementedError


def doubling_scan(xp: Any, ufunc: Any, array: Any, axis: int) -> Any:
    """The inclusive scan of an associative ``ufunc`` along ``axis`` in ceil(log2 n) whole-array
    steps (Hillis and Steele): after the step with offset k, position i holds
    ``ufunc`` over positions i - 2k + 1 .. i. Each step computes the right-hand side before
    writing, so overlapping reads are safe."""
    out = array.copy()
    n = out.shape[axis]
    k = 1
    lead = (slice(None),) * (axis % out.ndim) if out.ndim else ()
    while k < n:
        hi = lead + (slice(k, None),)
        lo = lead + (slice(None, n - k),)
        out[hi] = ufunc(out[hi], out[lo])
        k *= 2
    return out


def unbuffered_apply(xp: Any, ufunc: Any, target: Any, index: Any, values: Any) -> None:
    """``ufunc.at(target, index, values)`` built from buffered fancy indexing, for libraries
    whose ufunc lacks ``at`` (CuPy's ``multiply``).

    Every index position is turned into a flat position of ``target``; positions are grouped by
    a stable sort, and the k-th occurrence of each position is applied in round k. Within a
    round no position repeats, so ``flat[pos] = ufunc(flat[pos], v)`` is exact, and rounds run
    in the original order, so the result equals NumPy's sequential ``ufunc.at`` bit for bit.
    The number of rounds is the largest multiplicity (one host read).
    """
    if target.size == 0:
        return
    pos = xp.arange(target.size).reshape(target.shape)[index]
    vals = xp.broadcast_to(xp.asarray(values, dtype=target.dtype), pos.shape).ravel()
    pos = pos.ravel()
    if pos.size == 0:
        return
    order = xp.argsort(pos, kind="stable")
    spos, svals = pos[order], vals[order]
    starts = xp.ones(spos.shape, dtype=bool)
    starts[1:] = spos[1:] != spos[:-1]
    # rank within its group: position in the sorted order minus where its group starts
    group = xp.cumsum(starts) - 1
    rank = xp.arange(spos.size) - xp.nonzero(starts)[0][group]
    rounds = int(rank.max()) + 1
    flat = target.reshape(-1) if target.flags.c_contiguous else None
    for r in range(rounds):
        sel = rank == r
        p, v = spos[sel], svals[sel]
        if flat is not None:
            flat[p] = ufunc(flat[p], v)
        else:
            nd = xp.unravel_index(p, target.shape)
            target[nd] = ufunc(target[nd], v)
