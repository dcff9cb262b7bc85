"""chainrule.special's compositions and error paths against torch.special (the registered ops
have their rows in tests/opinfo/special.py)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import chainrule as cr
import chainrule.special as S
from chainrule.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

X = np.array([[-2.5, -0.3, 0.0], [0.4, 1.7, 6.0]])
P = np.array([[0.01, 0.2, 0.5], [0.7, 0.93, 0.999]])

CASES = [
    ("ndtr", lambda m, x: m.special.ndtr(x), X),
    ("expit", lambda m, x: m.special.expit(x), X),
    ("logit", lambda m, x: m.special.logit(x), P),
    ("logit_eps", lambda m, x: m.special.logit(x, eps=0.05), P),
    ("logit_method", lambda m, x: x.logit(), P),
    ("multigammaln", lambda m, x: m.special.multigammaln(x + 4, 3), X),
    ("mvlgamma", lambda m, x: (x + 4).mvlgamma(2), X),
    ("sinc", lambda m, x: m.special.sinc(x), X + 0.1),
    ("sinc_at_0", lambda m, x: m.special.sinc(x * 0), X),
    ("exp2", lambda m, x: m.special.exp2(x), X),
    ("psi", lambda m, x: m.special.psi(x + 3), X),
    ("gammaln", lambda m, x: m.special.gammaln(x + 3), X),
    ("softmax", lambda m, x: m.special.softmax(x, 1), X),
    ("log_softmax", lambda m, x: m.special.log_softmax(x, 0), X),
    ("logsumexp", lambda m, x: m.special.logsumexp(x, 1), X),
    ("polygamma_method", lambda m, x: (x + 3).polygamma(1), X),
]


@pytest.mark.parametrize("name,f,x", CASES, ids=[c[0] for c in CASES])
def test_matches_torch_values_and_gradients(name: str, f, x: np.ndarray) -> None:
    c = cr.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    yc, yt = f(cr, c), f(torch, t)
    # SciPy's digamma family is accurate to ~1 ulp; PyTorch's CPU kernels are off by up to
    # 3e-10 relative (trigamma(0.5): PyTorch 4.934802202073678, pi**2 / 2 = 4.934802200544679).
    np.testing.assert_allclose(yc.detach().numpy(), yt.detach().numpy(), rtol=1e-9, atol=1e-12)
    g = np.random.default_rng(0).uniform(-1, 1, tuple(yt.shape))
    yc.backward(cr.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(c.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)
    assert gradcheck(lambda a: f(cr, a), [cr.tensor(x, requires_grad=True)])
    assert gradgradcheck(lambda a: f(cr, a), [cr.tensor(x, requires_grad=True)])


def test_float32_stays_float32() -> None:
    x = cr.tensor([0.5, 2.0])
    for f in (cr.lgamma, cr.digamma, cr.erfinv, S.i0e, S.ndtri, lambda v: cr.polygamma(2, v)):
        assert f(x).dtype == cr.float32
    assert cr.lgamma(cr.tensor([1, 2, 3])).dtype == cr.float32  # integers go to float


def test_igamma_first_argument_has_no_gradient() -> None:
    a = cr.tensor([1.5], requires_grad=True)
    y = S.gammainc(a, cr.tensor([2.0]))
    with pytest.raises(
        NotImplementedError, match="the derivative for 'igamma: input' is not implemented."
    ):
        y.sum().backward()


def test_errors_match_torch() -> None:
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        torch.mvlgamma(torch.tensor([2.0]), 0)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        cr.mvlgamma(cr.tensor([2.0]), 0)
    with pytest.raises(RuntimeError, match="polygamma"):
        cr.polygamma(-1, cr.tensor([1.0]))


def test_xlogy_scalar_operands() -> None:
    np.testing.assert_allclose(
        cr.xlogy(2.0, cr.tensor([3.0, 0.5])).numpy(),
        torch.xlogy(2.0, torch.tensor([3.0, 0.5])).numpy(),
    )
    np.testing.assert_allclose(
        cr.xlogy(cr.tensor([0.0, 2.0]), 3.0).numpy(), [0.0, 2 * np.log(3)], rtol=1e-6
    )


def test_import_does_not_load_scipy() -> None:
    code = "import sys, chainrule; sys.exit('scipy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
