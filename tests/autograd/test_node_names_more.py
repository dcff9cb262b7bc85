"""More nn.functional calls whose nodes are PyTorch's (the pooling, normalization, distance,
attention and loss functions of issue 15's list): the class names of ``out.grad_fn`` and of the
nodes under it, three levels of ``next_functions``, against torch; values and gradients against
torch; gradcheck and gradgradcheck in float64 through the one-node forms (Note [composite
nodes] in chainrule/ops/composite_node.py)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
from tests.autograd.test_node_names import _Args, _chain

torch = pytest.importorskip("torch")

Case = Callable[[Any, _Args], Any]

CASES: dict[str, Case] = {
    "group_norm": lambda F, a: F.group_norm(a.t(2, 4, 3), 2, a.t(4), a.t(4)),
    "group_norm_noaff": lambda F, a: F.group_norm(a.t(2, 4, 3), 2),
    "avg_pool1d": lambda F, a: F.avg_pool1d(a.t(2, 3, 8), 2),
    "avg_pool2d": lambda F, a: F.avg_pool2d(a.t(2, 3, 8, 8), 2),
    "avg_pool2d_unb": lambda F, a: F.avg_pool2d(a.t(3, 8, 8), 2),
    "avg_pool3d": lambda F, a: F.avg_pool3d(a.t(2, 3, 4, 4, 4), 2),
    "adaptive_avg_pool1d": lambda F, a: F.adaptive_avg_pool1d(a.t(2, 3, 8), 3),
    "adaptive_avg_pool2d": lambda F, a: F.adaptive_avg_pool2d(a.t(2, 3, 8, 8), 3),
    "adaptive_avg_pool2d_1": lambda F, a: F.adaptive_avg_pool2d(a.t(2, 3, 8, 8), 1),
    "adaptive_avg_pool3d": lambda F, a: F.adaptive_avg_pool3d(a.t(2, 3, 4, 4, 4), 2),
    "adaptive_max_pool1d": lambda F, a: F.adaptive_max_pool1d(a.t(2, 3, 8), 3),
    "adaptive_max_pool2d": lambda F, a: F.adaptive_max_pool2d(a.t(2, 3, 8, 8), 3),
    "adaptive_max_pool3d": lambda F, a: F.adaptive_max_pool3d(a.t(2, 3, 4, 4, 4), 2),
    "unfold": lambda F, a: F.unfold(a.t(2, 3, 5, 5), 2),
    "fold": lambda F, a: F.fold(a.t(2, 12, 16), (5, 5), 2),
    "embedding_bag": lambda F, a: F.embedding_bag(
        a.const([0, 2, 1, 4]), a.t(6, 3), a.const([0, 2])
    ),
    "embedding_bag_2d": lambda F, a: F.embedding_bag(a.const([[0, 2], [1, 4]]), a.t(6, 3)),
    "embedding_bag_sum": lambda F, a: F.embedding_bag(
        a.const([0, 2, 1, 4]), a.t(6, 3), a.const([0, 2]), mode="sum"
    ),
    "embedding_bag_max": lambda F, a: F.embedding_bag(
        a.const([0, 2, 1, 4]), a.t(6, 3), a.const([0, 2]), mode="max"
    ),
    "embedding_bag_psw": lambda F, a: F.embedding_bag(
        a.const([0, 2, 1, 4]), a.t(6, 3), a.const([0, 2]), mode="sum", per_sample_weights=a.t(4)
    ),
    "rrelu": lambda F, a: F.rrelu(a.t(4, 5)),
    "rrelu_train": lambda F, a: F.rrelu(a.t(4, 5), training=True),
    "normalize": lambda F, a: F.normalize(a.t(4, 5)),
    "normalize_p1": lambda F, a: F.normalize(a.t(4, 5), p=1, dim=0),
    "pairwise_distance": lambda F, a: F.pairwise_distance(a.t(4, 5), a.t(4, 5)),
    "pdist": lambda F, a: F.pdist(a.t(4, 5)),
    "sdpa": lambda F, a: F.scaled_dot_product_attention(
        a.t(2, 3, 4, 5), a.t(2, 3, 6, 5), a.t(2, 3, 6, 5)
    ),
    "sdpa_causal": lambda F, a: F.scaled_dot_product_attention(
        a.t(2, 3, 4, 5), a.t(2, 3, 4, 5), a.t(2, 3, 4, 5), is_causal=True
    ),
    "sdpa_mask": lambda F, a: F.scaled_dot_product_attention(
        a.t(2, 3, 4, 5), a.t(2, 3, 6, 5), a.t(2, 3, 6, 5), attn_mask=a.t(4, 6, rg=False)
    ),
    "soft_margin_loss": lambda F, a: F.soft_margin_loss(
        a.t(4, 5), a.const(np.sign(np.arange(20).reshape(4, 5) - 9.5).astype(np.float32))
    ),
    "multi_margin_loss": lambda F, a: F.multi_margin_loss(a.t(4, 5), a.const([0, 2, 4, 1])),
    "margin_ranking_loss": lambda F, a: F.margin_ranking_loss(
        a.t(4), a.t(4), a.const(np.array([1.0, -1, 1, -1], np.float32))
    ),
    "ce_probs": lambda F, a: F.cross_entropy(a.t(4, 5), a.const(np.full((4, 5), 0.2, np.float32))),
    "ce_probs_ls": lambda F, a: F.cross_entropy(
        a.t(4, 5), a.const(np.full((4, 5), 0.2, np.float32)), label_smoothing=0.1
    ),
    "ce_ls": lambda F, a: F.cross_entropy(a.t(4, 5), a.const([0, 2, 4, 1]), label_smoothing=0.1),
    "threshold_": lambda F, a: F.threshold_(a.t(4, 5) * 1, 0.1, 20.0),
    "threshold_inplace": lambda F, a: F.threshold(a.t(4, 5) * 1, 0.1, 20.0, inplace=True),
    "multilabel_margin_loss": lambda F, a: F.multilabel_margin_loss(
        a.t(2, 4), a.const([[3, 0, -1, 1], [1, 2, 3, -1]])
    ),
    "triplet_dist": lambda F, a: F.triplet_margin_with_distance_loss(
        a.t(4, 5), a.t(4, 5), a.t(4, 5)
    ),
    "interp_nearest1d": lambda F, a: F.interpolate(a.t(2, 3, 4), scale_factor=2),
    "interp_nearest2d": lambda F, a: F.interpolate(a.t(2, 3, 4, 4), scale_factor=2),
    "interp_nearest3d": lambda F, a: F.interpolate(a.t(2, 3, 2, 2, 2), scale_factor=2),
    "interp_nearest_exact2d": lambda F, a: F.interpolate(
        a.t(2, 3, 4, 4), size=(6, 7), mode="nearest-exact"
    ),
    "interp_linear": lambda F, a: F.interpolate(a.t(2, 3, 4), scale_factor=2, mode="linear"),
    "interp_bilinear": lambda F, a: F.interpolate(a.t(2, 3, 4, 4), scale_factor=2, mode="bilinear"),
    "interp_bilinear_ac": lambda F, a: F.interpolate(
        a.t(2, 3, 4, 4), size=(5, 7), mode="bilinear", align_corners=True
    ),
    "interp_bilinear_aa": lambda F, a: F.interpolate(
        a.t(2, 3, 8, 8), size=(5, 3), mode="bilinear", antialias=True
    ),
    "interp_bicubic": lambda F, a: F.interpolate(a.t(2, 3, 4, 4), scale_factor=2, mode="bicubic"),
    "interp_bicubic_aa": lambda F, a: F.interpolate(
        a.t(2, 3, 8, 8), size=(5, 3), mode="bicubic", antialias=True
    ),
    "interp_trilinear": lambda F, a: F.interpolate(
        a.t(2, 3, 2, 2, 2), scale_factor=2, mode="trilinear"
    ),
    "interp_area": lambda F, a: F.interpolate(a.t(2, 3, 8, 8), size=(3, 3), mode="area"),
    "interp_area1d": lambda F, a: F.interpolate(a.t(2, 3, 8), size=3, mode="area"),
}
# Random in training (the noise is drawn from each library's own generator): names only.
RANDOM = {"rrelu_train"}


def _out(case: Case, m: Any, a: _Args) -> Any:
    out = case(m.nn.functional, a)
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("name", sorted(CASES))
def test_nodes_as_torch_records(name: str) -> None:
    out = _out(CASES[name], cr, _Args(cr))
    ref = _out(CASES[name], torch, _Args(torch))
    assert _chain(out.grad_fn) == _chain(ref.grad_fn)
    assert type(out.grad_fn).__name__ == out.grad_fn.name()


@pytest.mark.parametrize("name", sorted(set(CASES) - RANDOM))
def test_values_and_grads_as_torch(name: str) -> None:
    a, b = _Args(cr), _Args(torch)
    out, ref = _out(CASES[name], cr, a), _out(CASES[name], torch, b)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-5)
    g = np.random.default_rng(1).standard_normal(tuple(ref.shape)).astype(np.float32)
    out.backward(cr.tensor(g))
    ref.backward(torch.tensor(g))
    for x, y in zip(a.leaves, b.leaves):
        if y.grad is not None:
            np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-4, atol=1e-5)


class _Args64(_Args):
    """float64 leaves (for gradcheck), taken from ``given`` in order when set."""

    def __init__(self, m: Any, given: list[Any] | None = None) -> None:
        super().__init__(m)
        self.given = iter(given) if given is not None else None

    def t(self, *shape: int, rg: bool = True) -> Any:
        a = self.rng.standard_normal(shape)
        if rg and self.given is not None:
            return next(self.given)
        x = self.m.tensor(a, requires_grad=rg)
        self.leaves.append(x)
        return x


@pytest.mark.parametrize("name", sorted(set(CASES) - RANDOM))
def test_gradcheck_and_gradgradcheck(name: str) -> None:
    a = _Args64(cr)
    _out(CASES[name], cr, a)
    ins = [x for x in a.leaves if x.requires_grad]

    def f(*xs: Any) -> Any:
        return _out(CASES[name], cr, _Args64(cr, list(xs)))

    assert cr.autograd.gradcheck(f, ins, eps=1e-6, atol=1e-4)
    assert cr.autograd.gradgradcheck(f, ins, eps=1e-6, atol=1e-4)


def test_threshold_inplace_gradient_as_torch() -> None:
    """threshold_ with a value above the threshold: the replaced elements get no gradient."""
    grads = []
    for m in (cr, torch):
        x = m.tensor(np.array([-1.0, 0.05, 0.5, 2.0]), requires_grad=True)
        y = x * 1
        m.nn.functional.threshold_(y, 0.1, 20.0)
        assert type(y.grad_fn).__name__ == "ThresholdBackward1"
        (y * m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
