"""On the CuPy stand-in: every random draw for a CUDA tensor (dropout masks, rrelu, the
factories and samplers, the in-place samplers, distributions, ``nn.init``) comes from its GPU's
generator (Note [one generator per GPU] in chainrule/_random.py): CPU and GPU streams do not
move each other, ``cuda.manual_seed`` and ``cuda.get_rng_state``/``set_rng_state`` replay the
GPU draws, and an explicit ``generator=`` of the other device kind raises PyTorch's error."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import distributions as D


def _h(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy()


def _x() -> Any:
    return cr.ones(4, 3, 5, 5, device="cuda")


_DRAWS: dict[str, Callable[[], Any]] = {
    "dropout": lambda: F.dropout(_x(), 0.5),
    "dropout2d": lambda: F.dropout2d(_x(), 0.5),
    "alpha_dropout": lambda: F.alpha_dropout(_x(), 0.5, True),
    "feature_alpha_dropout": lambda: F.feature_alpha_dropout(_x(), 0.5, True),
    "nn.Dropout": lambda: cr.nn.Dropout(0.3)(_x()),
    "rrelu": lambda: F.rrelu(-_x(), training=True),
    "gumbel_softmax": lambda: F.gumbel_softmax(_x()),
    "randn": lambda: cr.randn(6, device="cuda"),
    "rand": lambda: cr.rand(6, device="cuda"),
    "randint": lambda: cr.randint(0, 9, (6,), device="cuda"),
    "randperm": lambda: cr.randperm(9, device="cuda"),
    "randn_like": lambda: cr.randn_like(_x()),
    "rand_like": lambda: cr.rand_like(_x()),
    "randint_like": lambda: cr.randint_like(_x(), 5),
    "normal_size": lambda: cr.normal(0.0, 1.0, (6,), device="cuda"),
    "normal": lambda: cr.normal(_x(), 2.0),
    "bernoulli": lambda: cr.bernoulli(_x() * 0.5),
    "multinomial": lambda: cr.multinomial(_x()[0, 0], 3),
    "poisson": lambda: cr.poisson(_x()),
    "normal_": lambda: _x().normal_(),
    "uniform_": lambda: _x().uniform_(),
    "bernoulli_": lambda: _x().bernoulli_(0.4),
    "exponential_": lambda: _x().exponential_(),
    "random_": lambda: _x().random_(0, 7),
    "geometric_": lambda: _x().geometric_(0.3),
    "cauchy_": lambda: _x().cauchy_(),
    "log_normal_": lambda: _x().log_normal_(),
    "Normal.rsample": lambda: D.Normal(_x(), 1.0).rsample(),
    "Laplace.rsample": lambda: D.Laplace(_x(), 1.0).rsample(),
    "Cauchy.rsample": lambda: D.Cauchy(_x(), 1.0).rsample(),
    "Exponential.rsample": lambda: D.Exponential(_x()).rsample(),
    "Gamma.rsample": lambda: D.Gamma(_x(), 1.0).rsample(),
    "Dirichlet.rsample": lambda: D.Dirichlet(_x()).rsample(),
    "Bernoulli.sample": lambda: D.Bernoulli(probs=_x() * 0.5).sample(),
    "Categorical.sample": lambda: D.Categorical(probs=_x()).sample(),
    "Poisson.sample": lambda: D.Poisson(_x()).sample(),
    "Binomial.sample": lambda: D.Binomial(3, probs=_x() * 0.5).sample(),
    "Multinomial.sample": lambda: D.Multinomial(4, probs=_x()).sample(),
    "VonMises.sample": lambda: D.VonMises(_x(), 1.0).sample(),
    "Uniform.rsample": lambda: D.Uniform(_x() * 0, _x()).rsample(),
    "kaiming_uniform_": lambda: cr.nn.init.kaiming_uniform_(_x()),
    "xavier_normal_": lambda: cr.nn.init.xavier_normal_(_x()),
    "orthogonal_": lambda: cr.nn.init.orthogonal_(_x()),
    "trunc_normal_": lambda: cr.nn.init.trunc_normal_(_x()),
    "nn.Linear(device=cuda)": lambda: cr.nn.Linear(5, 4, device="cuda").weight,
}


@pytest.mark.parametrize("name", sorted(_DRAWS))
def test_cuda_draw_comes_from_the_gpu_generator(name: str, fake_cuda: Any) -> None:
    draw = _DRAWS[name]
    # (a) a CPU sequence is the same with and without interleaved cuda draws
    cr.manual_seed(5)
    plain = [_h(cr.rand(7)) for _ in range(3)]
    cr.manual_seed(5)
    mixed = []
    for _ in range(3):
        mixed.append(_h(cr.rand(7)))
        out = draw()
    assert out.is_cuda
    for u, v in zip(plain, mixed):
        np.testing.assert_array_equal(u, v)
    # (b) cuda.manual_seed reproduces the cuda draw, whatever the CPU stream does
    cr.cuda.manual_seed(11)
    a = _h(draw())
    cr.cuda.manual_seed(11)
    cr.rand(13)
    np.testing.assert_array_equal(a, _h(draw()))
    # ... and the draws leave the CPU stream where it was
    cr.manual_seed(2)
    cpu = _h(cr.rand(5))
    cr.manual_seed(2)
    draw()
    np.testing.assert_array_equal(cpu, _h(cr.rand(5)))
    # (c) get_rng_state / set_rng_state on cuda replay it
    state = cr.cuda.get_rng_state()
    b = _h(draw())
    cr.cuda.set_rng_state(state)
    np.testing.assert_array_equal(b, _h(draw()))


def test_each_gpu_has_its_own_stream_for_dropout(fake_cuda: Any) -> None:
    cr.cuda.manual_seed_all(4)
    a = _h(F.dropout(cr.ones(50, device="cuda:0"), 0.5))
    cr.cuda.manual_seed_all(4)
    F.dropout(cr.ones(50, device="cuda:1"), 0.5)
    np.testing.assert_array_equal(a, _h(F.dropout(cr.ones(50, device="cuda:0"), 0.5)))


def test_cuda_generator_argument_is_honoured(fake_cuda: Any) -> None:
    g = cr.Generator(device="cuda")
    g.manual_seed(8)
    a = _h(cr.randn(6, device="cuda", generator=g))
    b = _h(cr.empty(6, device="cuda").normal_(generator=g))
    g.manual_seed(8)
    cr.cuda.manual_seed(1)
    cr.randn(3, device="cuda")  # the default GPU generator is another stream
    np.testing.assert_array_equal(a, _h(cr.randn(6, device="cuda", generator=g)))
    np.testing.assert_array_equal(b, _h(cr.empty(6, device="cuda").normal_(generator=g)))


def _torch_message(fn: Callable[[], Any]) -> str:
    with pytest.raises(RuntimeError) as info:
        fn()
    return str(info.value)


# PyTorch's messages (ATen's check_generator: "Expected a '<type>' device type for generator
# but found '<type>'"), checked against torch's CUDA builds' reports.
CPU_GEN_CUDA = "Expected a 'cuda' device type for generator but found 'cpu'"
CUDA_GEN_CPU = "Expected a 'cpu' device type for generator but found 'cuda'"


@pytest.mark.parametrize(
    "call",
    [
        lambda g, dev: cr.randn(3, device=dev, generator=g),
        lambda g, dev: cr.rand(3, device=dev, generator=g),
        lambda g, dev: cr.randint(0, 5, (3,), device=dev, generator=g),
        lambda g, dev: cr.randperm(5, device=dev, generator=g),
        lambda g, dev: cr.normal(0.0, 1.0, (3,), device=dev, generator=g),
        lambda g, dev: cr.ones(3, device=dev).normal_(generator=g),
        lambda g, dev: cr.ones(3, device=dev).uniform_(generator=g),
        lambda g, dev: cr.ones(3, device=dev).random_(0, 4, generator=g),
        lambda g, dev: cr.bernoulli(cr.ones(3, device=dev) * 0.5, generator=g),
        lambda g, dev: cr.multinomial(cr.ones(3, device=dev), 2, generator=g),
        lambda g, dev: cr.poisson(cr.ones(3, device=dev), generator=g),
        lambda g, dev: cr.nn.init.normal_(cr.ones(3, device=dev), generator=g),
    ],
)
def test_generator_of_the_other_device_kind_raises_pytorchs_error(
    call: Callable[[Any, str], Any], fake_cuda: Any
) -> None:
    msg = _torch_message(lambda: call(cr.Generator(), "cuda"))
    assert msg == CPU_GEN_CUDA
    msg = _torch_message(lambda: call(cr.Generator(device="cuda"), "cpu"))
    assert msg == CUDA_GEN_CPU
