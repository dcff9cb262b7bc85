"""On the CuPy stand-in: one random generator per GPU (independent of the CPU's, as in
PyTorch), ``torch.cuda``'s random-state functions, gradcheck of CUDA inputs, and the ops
outside the op table that came with the fft/LU work (geqrf, stft/istft), SparseAdam."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.autograd.gradcheck import GradcheckError


def _h(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy()


def test_cpu_and_gpu_streams_are_independent(fake_cuda: Any) -> None:
    cr.manual_seed(0)
    a, b = cr.randn(5), cr.randn(5, device="cuda")
    cr.manual_seed(0)
    b2, a2 = cr.randn(5, device="cuda"), cr.randn(5)  # the other order: the same numbers
    np.testing.assert_array_equal(_h(a), _h(a2))
    np.testing.assert_array_equal(_h(b), _h(b2))
    # One seed, one algorithm: each device's stream starts where the CPU's does.
    np.testing.assert_array_equal(_h(a), _h(b))
    # Draws on cuda:1 do not move cuda:0's stream.
    cr.manual_seed(3)
    c = cr.rand(4, device="cuda:0")
    cr.manual_seed(3)
    cr.rand(7, device="cuda:1")
    np.testing.assert_array_equal(_h(c), _h(cr.rand(4, device="cuda:0")))


def test_samplers_and_init_draw_from_the_tensors_gpu(fake_cuda: Any) -> None:
    for fill in (
        lambda t: t.normal_(),
        lambda t: t.uniform_(-1, 2),
        lambda t: t.bernoulli_(0.3),
        lambda t: cr.nn.init.kaiming_uniform_(t),
        lambda t: cr.nn.init.trunc_normal_(t),
    ):
        cr.manual_seed(1)
        x = fill(cr.empty(3, 4, device="cuda"))
        cr.randn(9)  # a CPU draw in between changes nothing on the GPU
        cr.manual_seed(1)
        cr.randn(9, device="cuda:1")
        y = fill(cr.empty(3, 4, device="cuda"))
        np.testing.assert_array_equal(_h(x), _h(y))
        assert x.is_cuda
    cr.manual_seed(2)
    p = cr.rand(3, device="cuda")
    s1 = (cr.bernoulli(p), cr.normal(p, 1.0), cr.poisson(p), cr.multinomial(p, 2))
    cr.manual_seed(2)
    p = cr.rand(3, device="cuda")
    cr.randn(4)
    s2 = (cr.bernoulli(p), cr.normal(p, 1.0), cr.poisson(p), cr.multinomial(p, 2))
    for u, v in zip(s1, s2):
        assert u.is_cuda
        np.testing.assert_array_equal(_h(u), _h(v))


def test_cuda_rng_state_functions(fake_cuda: Any) -> None:
    cr.manual_seed(0)
    state = cr.cuda.get_rng_state()
    assert state.dtype == cr.uint8 and not state.is_cuda  # a CPU ByteTensor, as PyTorch's
    first = cr.rand(4, device="cuda")
    cr.rand(4)
    cr.cuda.set_rng_state(state)
    np.testing.assert_array_equal(_h(first), _h(cr.rand(4, device="cuda")))
    cr.cuda.manual_seed(5)  # the current GPU only
    assert cr.cuda.initial_seed() == 5 and cr.initial_seed() == 0
    with cr.cuda.device(1):
        assert cr.cuda.initial_seed() == 0
        cr.cuda.manual_seed(7)
        assert cr.cuda.initial_seed() == 7
    assert cr.cuda.initial_seed() == 5
    states = cr.cuda.get_rng_state_all()
    assert len(states) == 2
    one = cr.rand(2, device="cuda:1")
    cr.cuda.set_rng_state_all(states)
    np.testing.assert_array_equal(_h(one), _h(cr.rand(2, device="cuda:1")))
    cr.cuda.manual_seed_all(11)
    assert cr.cuda.initial_seed() == 11 and cr.cuda.get_rng_state(1).dtype == cr.uint8
    cr.cuda.seed_all()
    cr.cuda.seed()
    with pytest.raises(RuntimeError, match="Invalid RNG state"):
        cr.cuda.set_rng_state(cr.zeros(3, dtype=cr.uint8))


def test_cuda_rng_functions_without_a_gpu_answer_as_torch_cpu_build() -> None:
    for name in ("get_rng_state", "initial_seed"):
        with pytest.raises(AssertionError) as mine:
            getattr(cr.cuda, name)()
        with pytest.raises(AssertionError) as theirs:
            getattr(torch.cuda, name)()
        assert str(mine.value).startswith(str(theirs.value))
    assert cr.cuda.get_rng_state_all() == [] == torch.cuda.get_rng_state_all()
    assert cr.cuda.set_rng_state(cr.zeros(3, dtype=cr.uint8)) is None
    assert cr.cuda.seed() is None and cr.cuda.seed_all() is None


def test_gradcheck_of_cuda_inputs(fake_cuda: Any) -> None:
    rng = np.random.default_rng(0)
    x = cr.tensor(rng.standard_normal((3, 3)), device="cuda", requires_grad=True)
    z = cr.tensor(
        rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2)),
        device="cuda",
        requires_grad=True,
    )
    for fast in (False, True):
        assert cr.autograd.gradcheck(lambda a: (a.sin() @ a).exp(), (x,), fast_mode=fast)
        assert cr.autograd.gradgradcheck(lambda a: (a.sin() @ a).exp(), (x,), fast_mode=fast)
        assert cr.autograd.gradcheck(lambda a: (a * a.conj()).abs().sum(), (z,), fast_mode=fast)
        with pytest.raises(GradcheckError):
            cr.autograd.gradcheck(lambda a: a.detach() * a, (x,), fast_mode=fast)
    assert x.is_cuda and x.grad is None


def test_geqrf_and_short_time_transforms_on_cuda(fake_cuda: Any) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 5, 3))
    for (c1, c2), t in zip(
        zip(cr.geqrf(cr.tensor(a)), cr.geqrf(cr.tensor(a, device="cuda"))),
        torch.geqrf(torch.tensor(a)),
    ):
        assert c2.is_cuda
        np.testing.assert_allclose(_h(c2), _h(c1), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(_h(c1), t.numpy(), rtol=1e-10, atol=1e-10)
    sig = rng.standard_normal(64)
    outs = []
    for dev in ("cpu", "cuda"):
        x = cr.tensor(sig, device=dev, requires_grad=True)
        w = cr.hann_window(16, dtype=cr.float64, device=dev)
        s = cr.stft(x, 16, hop_length=4, window=w, return_complex=True)
        y = cr.istft(s, 16, hop_length=4, window=w, length=64)
        (s.abs().sum() + y.pow(2).sum()).backward()
        assert s.device == y.device == x.grad.device == cr.device(dev if dev == "cpu" else "cuda:0")
        outs.append((_h(s), _h(y), _h(x.grad)))
    for u, v in zip(*outs):
        np.testing.assert_allclose(v, u, rtol=1e-12, atol=1e-12)


def test_sparse_adam_on_cuda_refuses_dense_gradients_as_torch(fake_cuda: Any) -> None:
    # chainrule's gradients are dense (no sparse Embedding): SparseAdam refuses them with
    # PyTorch's message, on cuda as on the CPU.
    w = cr.nn.Parameter(cr.ones(3, device="cuda"))
    opt = cr.optim.SparseAdam([w])
    opt.step()  # no gradient yet: nothing to do
    (w * w).sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        opt.step()
    tw = torch.nn.Parameter(torch.ones(3))
    (tw * tw).sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        torch.optim.SparseAdam([tw]).step()


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_parametrization_on_cuda(orthogonal_map: str, shape: Any, fake_cuda: Any):
    from chainrule.nn.utils.parametrizations import orthogonal

    rng = np.random.default_rng(1)
    q0 = np.linalg.qr(rng.standard_normal((max(shape), max(shape))))[0][: shape[0], : shape[1]]
    x0 = rng.standard_normal((2, shape[1]))
    res = []
    for dev in ("cpu", "cuda"):
        cr.manual_seed(0)
        lin = orthogonal(cr.nn.Linear(shape[1], shape[0]), orthogonal_map=orthogonal_map)
        lin.to(dev)
        w = lin.weight
        lin(cr.tensor(x0, dtype=cr.float32, device=dev)).pow(2).sum().backward()
        grad = lin.parametrizations.weight.original.grad
        cr.manual_seed(5)  # assignment draws (non-square) from the weight's device generator
        lin.weight = cr.tensor(q0, dtype=cr.float32, device=dev)
        assert (
            w.device
            == grad.device
            == lin.weight.device
            == cr.device(dev, 0 if dev == "cuda" else None)
        )
        res.append((_h(w), _h(grad), _h(lin.weight)))
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[1][2], q0, atol=1e-5)  # the assigned weight reads back
    # Registered on a CUDA module directly.
    lin = orthogonal(cr.nn.Linear(shape[1], shape[0], device="cuda"), orthogonal_map=orthogonal_map)
    w = _h(lin.weight).astype(np.float64)
    small = w @ w.T if shape[0] <= shape[1] else w.T @ w
    np.testing.assert_allclose(small, np.eye(min(shape)), atol=1e-5)
