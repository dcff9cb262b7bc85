"""Test helpers: ``assert_close`` and ``make_tensor``, as in ``torch.testing``."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule._tensor import Tensor

__all__ = ["assert_close", "make_tensor"]

_TOL = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


def _arr(x: Any) -> np.ndarray:
    if isinstance(x, Tensor):
        return np.asarray(x._backend.to_host(x._data))
    if type(x).__module__.startswith("torch"):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def assert_close(
    actual: Any,
    expected: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_dtype: bool = True,
    msg: str | None = None,
) -> None:
    """Assert ``actual`` and ``expected`` (tensors, torch tensors, arrays or numbers) are close.

    Default tolerances depend on the dtype, as in ``torch.testing.assert_close``.
    """
    a, e = _arr(actual), _arr(expected)
    if a.shape != e.shape:
        raise AssertionError(f"{msg or ''} shape mismatch: {a.shape} vs {e.shape}")
    if check_dtype and isinstance(actual, Tensor) and isinstance(expected, Tensor):
        if a.dtype != e.dtype:
            raise AssertionError(f"{msg or ''} dtype mismatch: {a.dtype} vs {e.dtype}")
    if _kinds.is_floating(a) or _kinds.is_floating(e):
        r0, a0 = _TOL.get(np.result_type(a.dtype, e.dtype).name, (1e-7, 1e-7))
        rtol = r0 if rtol is None else rtol
        atol = a0 if atol is None else atol
        if not np.allclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan):
            diff = np.abs(a.astype(np.float64) - e.astype(np.float64))
            raise AssertionError(
                f"{msg or 'Tensor-likes are not close!'}\nGreatest absolute difference: "
                f"{np.nanmax(diff) if diff.size else 0} (atol={atol}, rtol={rtol})\n"
                f"actual:\n{a}\nexpected:\n{e}"
            )
    elif not np.array_equal(a, e):
        raise AssertionError(f"{msg or 'Tensors are not equal'}\nactual:\n{a}\nexpected:\n{e}")


def make_tensor(
    *shape: Any,
    dtype: Any = None,
    low: float = -3.0,
    high: float = 3.0,
    requires_grad: bool = False,
    seed: int = 0,
) -> Tensor:
    """A tensor of uniform values in [low, high) (integers for integer dtypes; real and
    imaginary parts each for complex ones), seeded."""
    from chainrule import _dtype
    from chainrule._creation import tensor

    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.float32
    rng = np.random.default_rng(seed)
    if dt.is_floating_point:
        a = rng.uniform(low, high, shape)
    elif dt.is_complex:  # both parts uniform in [low, high)
        a = rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)
    elif dt is _dtype.bool:
        a = rng.random(shape) < 0.5
    else:
        a = rng.integers(int(low), int(high), shape)
    return tensor(a, dtype=dt, requires_grad=requires_grad)
