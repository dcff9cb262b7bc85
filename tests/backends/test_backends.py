"""Each Backend method, on NumPy and on the CuPy stand-in (registered as the ``cuda`` device)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from chainrule import backends
from chainrule.backends import NumpyBackend, backend_of, get_backend
from chainrule.backends.base import unbuffered_apply

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(params=["cpu", "cuda"])
def be(request):
    """The backend under test: NumPy, or the CUDA backend over the stand-in."""
    if request.param == "cpu":
        return get_backend("cpu")
    request.getfixturevalue("fake_cuda")
    return get_backend("cuda")


def dev(be, a, dtype=None):
    return be.from_host(np.asarray(a, dtype=dtype))


def host(be, x):
    return be.to_host(x)


# Where arrays live ---------------------------------------------------------------------------
def test_names_and_round_trip(be):
    a = np.arange(6.0).reshape(2, 3)
    x = be.asarray(a)
    assert isinstance(x, be.xp.ndarray)
    assert be.name == ("numpy" if be.device == "cpu" else "cupy")
    assert be.device_of(x) == ("cpu" if be.device == "cpu" else "cuda:0")
    assert be.device_index(x) == (None if be.device == "cpu" else 0)
    back = be.to_host(x)
    assert type(back) is np.ndarray and np.array_equal(back, a)
    assert be.asarray(x) is x  # no copy when it already is one
    assert be.asarray([1, 2], dtype=np.float32).dtype == np.float32


def test_from_host_to_another_device(fake_cuda):
    be = get_backend("cuda")
    x = be.from_host(np.ones(3), device=1)
    assert be.device_of(x) == "cuda:1" and be.device_index(x) == 1
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        be.from_host(np.ones(3), device=5)


# Scatter ---------------------------------------------------------------------------------------
def test_scatter_add_counts_repeated_indices(be):
    t = dev(be, np.zeros(4))
    be.scatter_add(t, (dev(be, [0, 0, 2, 0]),), dev(be, [1.0, 2.0, 3.0, 4.0]))
    assert host(be, t).tolist() == [7.0, 0.0, 3.0, 0.0]


@pytest.mark.parametrize("reduce", ["add", "multiply", "maximum", "minimum"])
def test_scatter_reduce_equals_numpy_ufunc_at(be, reduce):
    rng = np.random.default_rng(0)
    target = rng.standard_normal((5, 4))
    rows = rng.integers(0, 5, size=(3, 7))
    cols = rng.integers(0, 4, size=(3, 7))
    vals = rng.standard_normal((3, 7))
    want = target.copy()
    getattr(np, reduce).at(want, (rows, cols), vals)
    t = dev(be, target)
    be.scatter_reduce(t, (dev(be, rows), dev(be, cols)), dev(be, vals), reduce)
    assert np.array_equal(host(be, t), want)  # bit for bit, repeated indices included


def test_scatter_reduce_rejects_unknown_reduction(be):
    with pytest.raises(ValueError, match="reduce must be one of"):
        be.scatter_reduce(dev(be, np.zeros(2)), (dev(be, [0]),), dev(be, [1.0]), "mean")


@pytest.mark.parametrize("seed", range(4))
def test_unbuffered_apply_matches_multiply_at(seed):
    # The emulation CuPy's backend uses for multiply.at, checked against NumPy on NumPy arrays:
    # duplicates, a broadcast value, a non-contiguous target, a slice in the index.
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((6, 5))
    target = base.T if seed % 2 else base.copy()
    idx = (rng.integers(-5, 5, size=9), slice(1, 4))
    vals = rng.standard_normal((9, 3)) if seed < 2 else 1.5
    want = target.copy()
    np.multiply.at(want, idx, vals)
    unbuffered_apply(np, np.multiply, target, idx, vals)
    assert np.array_equal(target, want)


def test_unbuffered_apply_on_empty_inputs():
    t = np.ones(3)
    unbuffered_apply(np, np.multiply, t, (np.zeros(0, dtype=np.int64),), np.zeros(0))
    unbuffered_apply(np, np.multiply, np.ones((0, 2)), (np.zeros(0, dtype=np.int64),), 2.0)
    assert t.tolist() == [1.0, 1.0, 1.0]


# errstate, random, 0-d reductions --------------------------------------------------------------
def test_errstate(be):
    x = dev(be, [1.0, 0.0])
    if be.device == "cpu":
        with pytest.raises(FloatingPointError):
            with be.errstate(divide="raise"):
                x / 0.0
    with be.errstate(divide="ignore", invalid="ignore"):
        r = host(be, x / 0.0)
    assert r[0] == np.inf and np.isnan(r[1])


def test_default_rng_methods(be):
    r1, r2 = be.default_rng(7), be.default_rng(7)
    a = r1.standard_normal(size=(3, 2), dtype=np.float32)
    assert isinstance(a, be.xp.ndarray) and a.shape == (3, 2) and a.dtype == np.float32
    assert np.array_equal(host(be, a), host(be, r2.standard_normal(size=(3, 2), dtype=np.float32)))
    checks = {
        "random": r1.random(size=4),
        "normal": r1.normal(2.0, 0.5, size=4),
        "uniform": r1.uniform(-1.0, 1.0, size=4),
        "integers": r1.integers(0, 3, size=50),
        "permutation": r1.permutation(6),
        "choice": r1.choice(4, size=20, replace=True, p=dev(be, [0.0, 0.5, 0.5, 0.0])),
        "exponential": r1.exponential(2.0, size=4),
        "poisson": r1.poisson(3.0, size=4),
        "standard_gamma": r1.standard_gamma(2.0, size=4),
        "binomial": r1.binomial(5, 0.5, size=4),
        "geometric": r1.geometric(0.5, size=4),
        "standard_cauchy": r1.standard_cauchy(size=4),
        "lognormal": r1.lognormal(0.0, 1.0, size=4),
        "beta": r1.beta(2.0, 3.0, size=4),
        "standard_exponential": r1.standard_exponential(size=4),
    }
    for name, arr in checks.items():
        assert isinstance(arr, be.xp.ndarray), name
    h = {k: host(be, v) for k, v in checks.items()}
    assert set(h["integers"].tolist()) <= {0, 1, 2} and len(set(h["integers"].tolist())) == 3
    assert sorted(h["permutation"].tolist()) == list(range(6))
    assert set(h["choice"].tolist()) <= {1, 2}
    assert ((h["uniform"] >= -1) & (h["uniform"] < 1)).all() and (h["beta"] > 0).all()
    assert set(host(be, r1.integers(2, 3, size=10, endpoint=True)).tolist()) <= {2, 3}


def test_ensure_array_turns_reductions_into_arrays(be):
    s = dev(be, [1.0, 2.0]).sum()
    a = be.ensure_array(s)
    assert isinstance(a, be.xp.ndarray) and a.ndim == 0 and float(a) == 3.0
    assert be.ensure_array(a) is a


# Index bounds, linalg, casts -------------------------------------------------------------------
def test_check_index_bounds(be):
    be.check_index_bounds(dev(be, [0, 2, -3]), 3)
    with pytest.raises(IndexError) as ours:
        be.check_index_bounds(dev(be, [0, 5]), 3)
    with pytest.raises(IndexError) as theirs:
        torch.zeros(3)[torch.tensor([5])]
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(IndexError, match="index -4 is out of bounds for dimension 1 with size 3"):
        be.check_index_bounds(dev(be, [-4, 1]), 3, dim=1)


def test_check_index_bounds_on_empty_index(be):
    be.check_index_bounds(dev(be, np.zeros(0, dtype=np.int64)), 0)


def test_linalg_errors(be):
    singular = dev(be, np.zeros((2, 2)))
    with pytest.raises(np.linalg.LinAlgError):
        with be.linalg_errors():
            be.xp.linalg.inv(singular)


def test_float_to_int_truncates_like_torch_without_warnings(be):
    vals = [-1.7, -0.5, 0.5, 2.9, 1e3]
    r = be.float_to_int(dev(be, vals + [np.nan, np.inf]), np.int64)  # filterwarnings=error
    want = torch.tensor(vals, dtype=torch.float64).to(torch.int64).tolist()
    assert host(be, r)[:5].tolist() == want and r.dtype == np.int64


@pytest.mark.parametrize(
    "shape,window,axis",
    [((7,), 3, None), ((4, 5), (2, 3), None), ((4, 5, 6), 2, -1), ((4, 5, 6), (2, 2), (0, 2))],
)
def test_sliding_window_view(be, shape, window, axis):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    want = np.lib.stride_tricks.sliding_window_view(a, window, axis=axis)
    got = be.sliding_window_view(dev(be, a), window, axis=axis)
    assert np.array_equal(host(be, got), want)


def test_sliding_window_view_errors(fake_cuda):
    be = get_backend("cuda")
    with pytest.raises(ValueError, match="larger than input"):
        be.sliding_window_view(dev(be, np.ones(2)), 3)
    with pytest.raises(ValueError, match="matching length"):
        be.sliding_window_view(dev(be, np.ones((2, 2))), (1, 1), axis=0)


def test_numpy_sliding_window_view_is_read_only():
    w = get_backend("cpu").sliding_window_view(np.ones(5), 2)
    assert not w.flags.writeable


def test_einsum_with_and_without_out(be):
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    out = dev(be, np.zeros((2, 4)))
    r = be.einsum("ij,jk->ik", dev(be, a), dev(be, b), out=out)
    assert r is out and np.array_equal(host(be, out), a @ b)
    assert np.array_equal(host(be, be.einsum("ij->j", dev(be, a))), a.sum(0))


# backend_of, get_backend -----------------------------------------------------------------------
MIXED = "Expected all tensors to be on the same device, but found at least two devices, {} and {}!"


def test_backend_of_numpy_and_scalars():
    cpu = get_backend("cpu")
    assert isinstance(cpu, NumpyBackend)
    for obj in (np.ones(2), np.float32(1), 1.0, 3, [1, 2]):
        assert backend_of(obj) is cpu
    assert backend_of(np.ones(2), np.ones(3), 2.0) is cpu
    assert backend_of() is cpu


def test_backend_of_device_arrays(fake_cuda):
    cuda = get_backend("cuda")
    x = cuda.from_host(np.ones(2))
    assert backend_of(x) is cuda and backend_of(x, x) is cuda
    assert backends._BY_TYPE[type(x)] is cuda  # cached per type
    # host scalars and 0-d host arrays may go with device arrays, in either order
    for s in (2.0, np.float32(2), np.array(2.0)):
        assert backend_of(x, s) is cuda and backend_of(s, x) is cuda
    with pytest.raises(RuntimeError) as e:
        backend_of(x, np.ones(2))
    assert str(e.value) == MIXED.format("cuda:0", "cpu")
    with pytest.raises(RuntimeError) as e:
        backend_of(np.ones(2), x)
    assert str(e.value) == MIXED.format("cuda:0", "cpu")  # PyTorch names the GPU first
    y = cuda.from_host(np.ones(2), device=1)
    with pytest.raises(RuntimeError) as e:
        backend_of(x, y)
    assert str(e.value) == MIXED.format("cuda:0", "cuda:1")


def test_get_backend():
    assert get_backend("cpu") is get_backend(None) is get_backend("cpu:0")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda device type"):
        get_backend("tpu")
    # No GPU backend here: PyTorch's CPU build raises AssertionError with this text.
    with pytest.raises(AssertionError) as theirs:
        torch.zeros(1, device="cuda")
    with pytest.raises(AssertionError) as ours:
        get_backend("cuda")
    assert str(ours.value).startswith(str(theirs.value))


def test_get_backend_cuda_with_stand_in(fake_cuda):
    b = get_backend("cuda:1")
    assert b is get_backend("cuda") and b.name == "cupy" and b.xp is fake_cuda
    assert backends.cupy_module() is fake_cuda


def test_set_cupy_module_by_name_and_restore():
    prev = backends.set_cupy_module("tests._fakecupy")
    try:
        assert backends.cuda_available() and backends.cupy_module().__name__ == "tests._fakecupy"
    finally:
        backends.set_cupy_module(prev)
    assert not backends.cuda_available() and backends.cupy_module() is None


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    e = dict(os.environ, **env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=e,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_import_chainrule_never_imports_cupy(tmp_path):
    # A `cupy` that records and refuses its import sits first on the path.
    pkg = tmp_path / "cupy"
    pkg.mkdir()
    marker = tmp_path / "imported"
    (pkg / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nraise RuntimeError('CuPy failed to load libcudart')\n"
    )
    code = """
        import sys
        import chainrule as torch
        x = torch.randn(3, requires_grad=True)
        (x * 2).sum().backward()
        torch.nn.Linear(2, 2)(torch.ones(1, 2))
        from chainrule.backends import backend_of
        import numpy as np
        backend_of(np.ones(2), 1.0)
        assert "cupy" not in sys.modules
        print("ok")
    """
    r = _run(code, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok" and not marker.exists()
    # The fake cupy is reachable: asking for the GPU imports it; its failure (not only an
    # ImportError) means no GPU, and the reason shows in the error of a device="cuda" call.
    code = """
        import chainrule
        print(chainrule.cuda.is_available())
        try:
            chainrule.zeros(1, device="cuda")
        except AssertionError as e:
            print(str(e).split("[")[-1])
    """
    r = _run(code, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}")
    assert r.stdout.split("\n")[:2] == ["False", "RuntimeError: CuPy failed to load libcudart]"]
    assert marker.exists()


def test_env_var_hook_loads_the_stand_in():
    code = """
        import chainrule
        print(chainrule.cuda.is_available(), chainrule.cuda.device_count())
    """
    r = _run(code, CHAINRULE_CUPY_MODULE="tests._fakecupy", PYTHONPATH=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "2"]
