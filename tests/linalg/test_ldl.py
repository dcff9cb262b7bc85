"""torch.linalg.ldl_factor / ldl_factor_ex / ldl_solve against PyTorch: LD and pivots exactly
as LAPACK's sytrf/hetrf give them, info, the solution, batching and broadcasting, the errors,
and the backward that PyTorch does not define."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(150)


def _np(t: Any) -> np.ndarray:
    if hasattr(t, "_data"):
        return np.asarray(t._data)
    return t.detach().resolve_conj().numpy()


def _same(c: Any, t: Any, atol: float = 1e-12) -> None:
    assert tuple(c.shape) == tuple(t.shape)
    assert c.dtype.name == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(c), _np(t), atol=atol, rtol=1e-6)


def _rand(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    a = RNG.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


CASES = [
    ((4, 4), "float64", False),
    ((6, 6), "float32", False),
    ((2, 3, 5, 5), "float64", False),
    ((5, 5), "complex128", False),
    ((5, 5), "complex128", True),
    ((3, 4, 4), "complex64", True),
    ((1, 1), "float64", False),
    ((0, 0), "float64", False),
    ((2, 0, 0), "complex128", True),
]


@pytest.mark.parametrize(("shape", "dtype", "hermitian"), CASES)
def test_ldl_factor_and_solve_match_torch(
    shape: tuple[int, ...], dtype: str, hermitian: bool
) -> None:
    a = _rand(shape, dtype)  # not symmetric: only the lower triangle is read
    atol = 1e-4 if dtype in ("float32", "complex64") else 1e-12
    c = cr.linalg.ldl_factor_ex(cr.tensor(a), hermitian=hermitian)
    t = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
    _same(c.LD, t.LD, atol)
    _same(c.pivots, t.pivots)
    _same(c.info, t.info)
    c2 = cr.linalg.ldl_factor(cr.tensor(a), hermitian=hermitian)
    assert type(c2).__name__ == "linalg_ldl_factor" and len(c2) == 2
    _same(c2.LD, t.LD, atol)
    n = shape[-1]
    # a single LD broadcasts against a batch of B (PyTorch 2.13 crashes on a batched LD
    # with more batch dims in B, so that case is not compared)
    b = _rand((shape[:-2] or (2,)) + (n, 3), dtype)
    x = cr.linalg.ldl_solve(c.LD, c.pivots, cr.tensor(b), hermitian=hermitian)
    tx = torch.linalg.ldl_solve(t.LD, t.pivots, torch.tensor(b), hermitian=hermitian)
    _same(x, tx, 1e-3 if atol > 1e-10 else 1e-9)
    if n and dtype == "float64":
        # and it does solve the symmetric system whose lower triangle is a
        s = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
        np.testing.assert_allclose(s @ _np(x), b, atol=1e-9)


def test_ldl_2x2_pivots_and_int64_pivots() -> None:
    a = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 0.0]])  # forces a 2x2 block
    c = cr.linalg.ldl_factor(cr.tensor(a))
    t = torch.linalg.ldl_factor(torch.tensor(a))
    _same(c.LD, t.LD)
    _same(c.pivots, t.pivots)
    assert (_np(c.pivots) < 0).any()
    b = RNG.standard_normal((3, 2))
    x = cr.linalg.ldl_solve(c.LD, c.pivots.long(), cr.tensor(b))
    _same(x, torch.linalg.ldl_solve(t.LD, t.pivots.long(), torch.tensor(b)))
    np.testing.assert_allclose(a @ _np(x), b, atol=1e-12)


def test_singular_d_info_and_errors() -> None:
    z = np.zeros((2, 3, 3))
    z[0] = np.eye(3)
    c = cr.linalg.ldl_factor_ex(cr.tensor(z))
    t = torch.linalg.ldl_factor_ex(torch.tensor(z))
    _same(c.info, t.info)
    _same(c.LD, t.LD)
    _same(c.pivots, t.pivots)
    # PyTorch 2.13 fails with an internal assert carrying this sentence
    for f, msg in (
        (
            lambda m: m.linalg.ldl_factor(m.zeros(3, 3)),
            "torch.linalg.ldl_factor: Unknown error code: 1.",
        ),
        (
            lambda m: m.linalg.ldl_factor_ex(m.zeros(2, 3, 3), check_errors=True),
            "torch.linalg.ldl_factor_ex: Unknown error code: 1.",
        ),
    ):
        with pytest.raises(RuntimeError) as te:
            f(torch)
        assert msg in str(te.value)
        with pytest.raises(RuntimeError, match=msg.replace(".", r"\.")):
            f(cr)


def _raises_as_torch(f: Callable[[Any], Any]) -> None:
    with pytest.raises(Exception) as te:
        f(torch)
    with pytest.raises(Exception) as ce:
        f(cr)
    assert type(ce.value) is type(te.value), (ce.value, te.value)
    assert str(ce.value) == str(te.value)


D = "float64"
ERRORS = [
    lambda m: m.linalg.ldl_factor(m.ones(3)),
    lambda m: m.linalg.ldl_factor(m.ones(3, 4)),
    lambda m: m.linalg.ldl_factor(m.ones(3, 3, dtype=m.int64)),
    lambda m: m.linalg.ldl_factor_ex(m.ones(3, 3, dtype=m.bool)),
    lambda m: m.linalg.ldl_factor(m.ones(3, 3, dtype=m.float16)),
    lambda m: m.linalg.ldl_factor([[1.0]]),
    lambda m: m.linalg.ldl_factor(m.ones(3, 3), hermitian=1),
    lambda m: m.linalg.ldl_factor_ex(m.ones(3, 3), check_errors=1),
    lambda m: m.linalg.ldl_solve(
        m.ones(3, dtype=m.float64), m.ones(3, dtype=m.int32), m.ones(3, 1)
    ),
    lambda m: m.linalg.ldl_solve(m.ones(3, 4), m.ones(3, dtype=m.int32), m.ones(3, 1)),
    lambda m: m.linalg.ldl_solve(
        m.ones(3, 3, dtype=m.int64), m.ones(3, dtype=m.int32), m.ones(3, 1, dtype=m.int64)
    ),
    lambda m: m.linalg.ldl_solve(
        m.ones(3, 3), m.ones(3, dtype=m.int32), m.ones(3, 1, dtype=m.float64)
    ),
    lambda m: m.linalg.ldl_solve(m.ones(3, 3), m.ones(3, dtype=m.int32), m.ones(3)),
    lambda m: m.linalg.ldl_solve(m.ones(3, 3), m.ones(3, dtype=m.int32), m.ones(4, 2)),
    lambda m: m.linalg.ldl_solve(m.ones(3, 3), m.ones(3), m.ones(3, 2)),
    lambda m: m.linalg.ldl_solve(m.ones(3, 3), m.ones(2, dtype=m.int32), m.ones(3, 2)),
    lambda m: m.linalg.ldl_solve(m.ones(3, 3), m.ones(3, 3, dtype=m.int32), m.ones(3, 2)),
    lambda m: m.linalg.ldl_solve(m.ones(2, 3, 3), m.ones(2, 3, dtype=m.int32), m.ones(3, 3, 1)),
    lambda m: m.linalg.ldl_solve(
        m.ones(3, 3, dtype=m.float16), m.ones(3, dtype=m.int32), m.ones(3, 1, dtype=m.float16)
    ),
    lambda m: m.linalg.ldl_solve(m.ones(3, 3), m.ones(3, dtype=m.int32), m.ones(3, 1), hermitian=1),
]


@pytest.mark.parametrize("f", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors_match_torch(f: Callable[[Any], Any]) -> None:
    _raises_as_torch(f)


def test_not_differentiable_as_torch() -> None:
    a = _rand((4, 4), D)
    b = _rand((4, 2), D)
    for m in (cr, torch):
        A = m.tensor(a, requires_grad=True)  # noqa: N806
        LD, piv, info = m.linalg.ldl_factor_ex(A)  # noqa: N806
        assert LD.requires_grad and not piv.requires_grad and not info.requires_grad
        assert LD.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not"):
            LD.sum().backward()
        B = m.tensor(b, requires_grad=True)  # noqa: N806
        x = m.linalg.ldl_solve(LD.detach(), piv, B)
        assert x.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve is not"):
            x.sum().backward()
        with m.no_grad():
            assert m.linalg.ldl_factor(A).LD.grad_fn is None
