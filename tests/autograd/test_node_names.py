"""The nodes that nn.functional records are PyTorch's: for each function of the table below,
the class name of ``out.grad_fn`` and of the nodes under it (three levels of
``next_functions``) are those torch records for the same call; and every node's class name is
its ``name()`` (Note [node classes] in chainrule/autograd/_nodes.py), over whole graphs."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def _chain(gf: Any, depth: int = 3) -> Any:
    """(class name, chains of the children) of a node, ``depth`` levels down."""
    if gf is None:
        return None
    kids = () if depth == 1 else tuple(_chain(n, depth - 1) for n, _ in gf.next_functions if n)
    return (type(gf).__name__, kids)


class _Args:
    """Inputs made from one seeded stream, the same arrays for chainrule and for torch."""

    def __init__(self, m: Any) -> None:
        self.m = m
        self.rng = np.random.default_rng(0)
        self.leaves: list[Any] = []

    def t(self, *shape: int, rg: bool = True) -> Any:
        a = self.rng.standard_normal(shape).astype(np.float32)
        x = self.m.tensor(a, requires_grad=rg)
        self.leaves.append(x)
        return x

    def p(self, *shape: int) -> Any:  # in (0, 1), for binary_cross_entropy
        a = self.rng.uniform(0.1, 0.9, shape).astype(np.float32)
        x = self.m.tensor(a, requires_grad=True)
        self.leaves.append(x)
        return x

    def const(self, a: Any) -> Any:
        return self.m.tensor(np.asarray(a))


Case = Callable[[Any, _Args], Any]

# Each case: F -> out. The losses and layers of nn.functional, as a tutorial calls them.
CASES: dict[str, Case] = {
    "mse_loss": lambda F, a: F.mse_loss(a.t(4, 5), a.t(4, 5, rg=False)),
    "mse_loss_none": lambda F, a: F.mse_loss(a.t(4, 5), a.t(4, 5), reduction="none"),
    "l1_loss": lambda F, a: F.l1_loss(a.t(4, 5), a.t(4, 5, rg=False)),
    "smooth_l1_loss": lambda F, a: F.smooth_l1_loss(a.t(4, 5), a.t(4, 5, rg=False)),
    "huber_loss": lambda F, a: F.huber_loss(a.t(4, 5), a.t(4, 5), reduction="sum"),
    "binary_cross_entropy": lambda F, a: F.binary_cross_entropy(
        a.p(4, 5), a.const(np.full((4, 5), 0.3, np.float32))
    ),
    "binary_cross_entropy_with_logits": lambda F, a: F.binary_cross_entropy_with_logits(
        a.t(4, 5), a.const(np.full((4, 5), 0.3, np.float32))
    ),
    "bce_with_logits_pos_weight": lambda F, a: F.binary_cross_entropy_with_logits(
        a.t(4, 5),
        a.const(np.full((4, 5), 0.3, np.float32)),
        pos_weight=a.const(np.full((5,), 2.0, np.float32)),
    ),
    "cross_entropy": lambda F, a: F.cross_entropy(a.t(4, 5), a.const([0, 2, 4, 1])),
    "nll_loss": lambda F, a: F.nll_loss(a.t(4, 5), a.const([0, 2, 4, 1])),
    "nll_loss_sum_4d": lambda F, a: F.nll_loss(
        a.t(2, 3, 2, 2), a.const(np.zeros((2, 2, 2), np.int64)), reduction="sum"
    ),
    "nll_loss_3d_none": lambda F, a: F.nll_loss(
        a.t(2, 3, 4), a.const(np.ones((2, 4), np.int64)), reduction="none"
    ),
    "cross_entropy_3d": lambda F, a: F.cross_entropy(
        a.t(2, 3, 4), a.const(np.ones((2, 4), np.int64))
    ),
    "kl_div": lambda F, a: F.kl_div(
        a.t(4, 5), a.const(np.full((4, 5), 0.2, np.float32)), reduction="batchmean"
    ),
    "poisson_nll_loss": lambda F, a: F.poisson_nll_loss(a.t(4, 5), a.t(4, 5, rg=False).abs()),
    "gaussian_nll_loss": lambda F, a: F.gaussian_nll_loss(
        a.t(4, 5), a.t(4, 5, rg=False), a.const(np.ones((4, 5), np.float32))
    ),
    "hinge_embedding_loss": lambda F, a: F.hinge_embedding_loss(
        a.t(4), a.const(np.array([1.0, -1.0, 1.0, -1.0], np.float32))
    ),
    "cosine_embedding_loss": lambda F, a: F.cosine_embedding_loss(
        a.t(4, 5), a.t(4, 5), a.const(np.array([1.0, -1.0, 1.0, -1.0], np.float32))
    ),
    "triplet_margin_loss": lambda F, a: F.triplet_margin_loss(a.t(4, 5), a.t(4, 5), a.t(4, 5)),
    "linear_2d": lambda F, a: F.linear(a.t(4, 5), a.t(3, 5), a.t(3)),
    "linear_2d_no_bias": lambda F, a: F.linear(a.t(4, 5), a.t(3, 5)),
    "linear_3d": lambda F, a: F.linear(a.t(2, 4, 5), a.t(3, 5), a.t(3)),
    "linear_4d": lambda F, a: F.linear(a.t(2, 2, 4, 5), a.t(3, 5), a.t(3)),
    "linear_1d_no_bias": lambda F, a: F.linear(a.t(5), a.t(3, 5)),
    "linear_3d_no_bias": lambda F, a: F.linear(a.t(2, 4, 5), a.t(3, 5)),
    "linear_1d": lambda F, a: F.linear(a.t(5), a.t(3, 5), a.t(3)),
    "conv2d": lambda F, a: F.conv2d(a.t(2, 3, 8, 8), a.t(4, 3, 3, 3), a.t(4), padding=1),
    "conv2d_no_bias": lambda F, a: F.conv2d(a.t(2, 3, 8, 8), a.t(4, 3, 3, 3)),
    "conv1d": lambda F, a: F.conv1d(a.t(2, 3, 8), a.t(4, 3, 3), a.t(4), padding=1),
    "conv1d_unbatched_no_bias": lambda F, a: F.conv1d(a.t(3, 8), a.t(4, 3, 3), stride=2),
    "conv_transpose1d": lambda F, a: F.conv_transpose1d(a.t(2, 3, 6), a.t(3, 4, 3), a.t(4)),
    "conv_transpose2d": lambda F, a: F.conv_transpose2d(a.t(2, 3, 6, 6), a.t(3, 4, 3, 3), a.t(4)),
    "batch_norm_train": lambda F, a: F.batch_norm(
        a.t(4, 3, 5), a.m.zeros(3), a.m.ones(3), a.t(3), a.t(3), training=True
    ),
    "batch_norm_eval": lambda F, a: F.batch_norm(
        a.t(4, 3, 5), a.m.zeros(3), a.m.ones(3), a.t(3), a.t(3), training=False
    ),
    "batch_norm_eval_no_affine": lambda F, a: F.batch_norm(
        a.t(4, 3, 2, 2), a.m.zeros(3), a.m.ones(3), training=False
    ),
    "layer_norm": lambda F, a: F.layer_norm(a.t(4, 5), (5,), a.t(5), a.t(5)),
    "layer_norm_no_affine": lambda F, a: F.layer_norm(a.t(2, 4, 5), (4, 5)),
    "rms_norm": lambda F, a: F.rms_norm(a.t(4, 5), (5,), a.t(5)),
    "local_response_norm": lambda F, a: F.local_response_norm(a.t(2, 4, 5, 5), 2),
    "embedding": lambda F, a: F.embedding(a.const([[0, 2], [5, 2]]), a.t(6, 3)),
    "embedding_padding_idx": lambda F, a: F.embedding(
        a.const([0, 2, 5, 2]), a.t(6, 3), padding_idx=2
    ),
    "relu": lambda F, a: F.relu(a.t(4, 5)),
    "relu6": lambda F, a: F.relu6(a.t(4, 5)),
    "leaky_relu": lambda F, a: F.leaky_relu(a.t(4, 5)),
    "elu": lambda F, a: F.elu(a.t(4, 5)),
    "selu": lambda F, a: F.selu(a.t(4, 5)),
    "celu": lambda F, a: F.celu(a.t(4, 5)),
    "gelu": lambda F, a: F.gelu(a.t(4, 5)),
    "gelu_tanh": lambda F, a: F.gelu(a.t(4, 5), approximate="tanh"),
    "silu": lambda F, a: F.silu(a.t(4, 5)),
    "mish": lambda F, a: F.mish(a.t(4, 5)),
    "hardswish": lambda F, a: F.hardswish(a.t(4, 5)),
    "hardsigmoid": lambda F, a: F.hardsigmoid(a.t(4, 5)),
    "hardtanh": lambda F, a: F.hardtanh(a.t(4, 5)),
    "softplus": lambda F, a: F.softplus(a.t(4, 5)),
    "softsign": lambda F, a: F.softsign(a.t(4, 5)),
    "tanhshrink": lambda F, a: F.tanhshrink(a.t(4, 5)),
    "threshold": lambda F, a: F.threshold(a.t(4, 5), 0.1, 20.0),
    "logsigmoid": lambda F, a: F.logsigmoid(a.t(4, 5)),
    "sigmoid": lambda F, a: F.sigmoid(a.t(4, 5)),
    "tanh": lambda F, a: F.tanh(a.t(4, 5)),
    "glu": lambda F, a: F.glu(a.t(4, 6)),
    "glu_dim1": lambda F, a: F.glu(a.t(2, 4, 3), 1),
    "hardshrink": lambda F, a: F.hardshrink(a.t(4, 5)),
    "softshrink": lambda F, a: F.softshrink(a.t(4, 5), 0.3),
    "pixel_shuffle": lambda F, a: F.pixel_shuffle(a.t(2, 8, 3, 3), 2),
    "pixel_unshuffle": lambda F, a: F.pixel_unshuffle(a.t(2, 2, 4, 6), 2),
    "prelu": lambda F, a: F.prelu(a.t(2, 3, 4), a.t(3)),
    "softmax": lambda F, a: F.softmax(a.t(4, 5), dim=1),
    "log_softmax": lambda F, a: F.log_softmax(a.t(4, 5), dim=1),
    "softmin": lambda F, a: F.softmin(a.t(4, 5), dim=1),
    "cosine_similarity": lambda F, a: F.cosine_similarity(a.t(4, 5), a.t(4, 5)),
    "max_pool2d": lambda F, a: F.max_pool2d(a.t(2, 3, 8, 8), 2),
    "max_pool2d_overlap_unbatched": lambda F, a: F.max_pool2d(a.t(3, 7, 7), 3, 2, 1),
    "max_pool2d_indices": lambda F, a: F.max_pool2d(a.t(2, 3, 7, 7), 3, return_indices=True)[0],
    "max_pool1d": lambda F, a: F.max_pool1d(a.t(2, 3, 8), 2),
    "lp_pool2d": lambda F, a: F.lp_pool2d(a.t(2, 3, 8, 8), 2, 2),
    "pad_constant": lambda F, a: F.pad(a.t(2, 3, 4), (1, 1)),
    "pad_reflect": lambda F, a: F.pad(a.t(2, 3, 4), (1, 1), mode="reflect"),
    "pad_replicate": lambda F, a: F.pad(a.t(2, 3, 4), (1, 1), mode="replicate"),
    # scaled_dot_product_attention on PyTorch's math path (sdpa_* in test_node_names_more.py
    # are its CPU flash kernel's): SDPA_MATH below checks them six levels deep.
    "sdpa_math_3d": lambda F, a: F.scaled_dot_product_attention(
        a.t(2, 3, 4), a.t(2, 5, 4), a.t(2, 5, 4)
    ),
    "sdpa_math_2d": lambda F, a: F.scaled_dot_product_attention(a.t(3, 4), a.t(5, 4), a.t(5, 4)),
    "sdpa_math_causal": lambda F, a: F.scaled_dot_product_attention(
        a.t(2, 3, 4), a.t(2, 5, 4), a.t(2, 5, 4), is_causal=True
    ),
    "sdpa_math_bool_mask": lambda F, a: F.scaled_dot_product_attention(
        a.t(2, 3, 4), a.t(2, 5, 4), a.t(2, 5, 4), attn_mask=a.const(np.tri(3, 5, dtype=bool))
    ),
    "sdpa_math_dead_rows": lambda F, a: F.scaled_dot_product_attention(
        a.t(2, 3, 4), a.t(2, 5, 4), a.t(2, 5, 4), attn_mask=a.const(np.tri(3, 5, -1, dtype=bool))
    ),
    "sdpa_math_float_mask": lambda F, a: F.scaled_dot_product_attention(
        a.t(2, 3, 4), a.t(2, 5, 4), a.t(2, 5, 4), attn_mask=a.t(3, 5, rg=False)
    ),
    "sdpa_math_mask_grad": lambda F, a: F.scaled_dot_product_attention(
        a.t(1, 2, 3, 4), a.t(1, 2, 5, 4), a.t(1, 2, 5, 4), attn_mask=a.t(3, 5)
    ),
    "sdpa_math_scale": lambda F, a: F.scaled_dot_product_attention(
        a.t(2, 3, 4), a.t(2, 5, 4), a.t(2, 5, 4), scale=0.3
    ),
    "sdpa_math_neg_scale": lambda F, a: F.scaled_dot_product_attention(
        a.t(2, 3, 4), a.t(2, 5, 4), a.t(2, 5, 4), scale=-0.3
    ),
    "sdpa_math_dropout0": lambda F, a: F.scaled_dot_product_attention(
        a.t(2, 3, 4), a.t(2, 5, 4), a.t(2, 5, 4), dropout_p=0.0
    ),
    "sdpa_math_head_size": lambda F, a: F.scaled_dot_product_attention(
        a.t(2, 2, 3, 4), a.t(2, 2, 5, 4), a.t(2, 2, 5, 6)
    ),
    "sdpa_math_5d": lambda F, a: F.scaled_dot_product_attention(
        a.t(2, 1, 2, 3, 8), a.t(2, 1, 2, 5, 8), a.t(2, 1, 2, 5, 8)
    ),
    "sdpa_math_transposed_key": lambda F, a: F.scaled_dot_product_attention(
        a.t(2, 3, 4), a.t(2, 4, 5).transpose(-2, -1), a.t(2, 5, 4)
    ),
    "sdpa_dropout": lambda F, a: F.scaled_dot_product_attention(  # random: names only
        a.t(2, 3, 4), a.t(2, 5, 4), a.t(2, 5, 4), dropout_p=0.5
    ),
    "sdpa_math_gqa": lambda F, a: F.scaled_dot_product_attention(
        a.t(1, 4, 3, 4), a.t(1, 2, 5, 4), a.t(1, 2, 5, 4), attn_mask=a.t(3, 5), enable_gqa=True
    ),
    "sdpa_math_permuted_value": lambda F, a: F.scaled_dot_product_attention(
        a.t(2, 3, 4), a.t(2, 5, 4), a.t(5, 2, 4).transpose(0, 1)
    ),
}
SDPA_MATH = sorted(n for n in CASES if n.startswith("sdpa_math"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_nodes_as_torch_records(name: str) -> None:
    case = CASES[name]
    out = case(cr.nn.functional, _Args(cr))
    ref = case(torch.nn.functional, _Args(torch))
    got = _chain(out.grad_fn)
    assert got == _chain(ref.grad_fn)
    assert type(out.grad_fn).__name__ == out.grad_fn.name()


@pytest.mark.parametrize(
    "name",
    [
        "mse_loss_none",
        "huber_loss",
        "binary_cross_entropy",
        "nll_loss_sum_4d",
        "conv1d",
        "conv_transpose1d",
        "glu_dim1",
        "softshrink",
        "pixel_shuffle",
    ],
)
def test_fused_losses_match_torch_values_and_grads(name: str) -> None:
    """The losses and layers that became one op give torch's values and gradients (the op table has
    gradcheck and gradgradcheck for each)."""
    case = CASES[name]
    a, b = _Args(cr), _Args(torch)
    out, ref = case(cr.nn.functional, a), case(torch.nn.functional, b)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = np.random.default_rng(1).standard_normal(tuple(ref.shape)).astype(np.float32)
    out.backward(cr.tensor(g))
    ref.backward(torch.tensor(g))
    for x, y in zip(a.leaves, b.leaves):
        if y.requires_grad:
            np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_embedding_padding_idx_gradient_as_torch() -> None:
    w = np.random.default_rng(2).standard_normal((6, 3)).astype(np.float32)
    idx = np.array([0, 2, 5, 2, 2])
    outs = []
    for m in (cr, torch):
        wt = m.tensor(w, requires_grad=True)
        y = m.nn.functional.embedding(m.tensor(idx), wt, padding_idx=2)
        (y * m.tensor(np.arange(15, dtype=np.float32).reshape(5, 3))).sum().backward()
        outs.append((y.detach().numpy(), wt.grad.numpy()))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_array_equal(outs[0][1], outs[1][1])


def _walk(root: Any) -> list[Any]:
    seen: set[int] = set()
    stack, nodes = [root], []
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        nodes.append(n)
        stack.extend(c for c, _ in n.next_functions)
    return nodes


def _srgan(m: Any) -> Any:
    import pathlib
    import types

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "srgan" / "models.py"
    src = path.read_text().replace("import chainrule as torch\nfrom chainrule import nn\n", "")
    mod = types.ModuleType(f"srgan_models_{m.__name__}")
    mod.__dict__.update(torch=m, nn=m.nn)
    exec(compile(src, str(path), "exec"), mod.__dict__)
    return mod


def test_every_node_class_is_named_as_its_node_srgan() -> None:
    """Over the generator's perceptual loss of examples/srgan (convolutions, BatchNorm, PReLU,
    pixel shuffle, the discriminator, MSE losses) and its double backward: each node's class
    name is ``name()``, and the op nodes are OpNode instances."""
    mods = _srgan(cr)
    netG, netD = mods.Generator(2, 8, 1), mods.Discriminator(8)
    rng = np.random.default_rng(3)
    hr = cr.tensor(rng.uniform(0, 1, (2, 3, 16, 16)).astype(np.float32))
    lr = cr.tensor(rng.uniform(0, 1, (2, 3, 8, 8)).astype(np.float32))
    bic = cr.tensor(np.repeat(np.repeat(lr.numpy(), 2, axis=2), 2, axis=3))
    fake = netG(lr, bic)
    loss = mods.GeneratorLoss()(netD(fake).mean(), fake, hr)
    nodes = _walk(loss.grad_fn)
    assert len(nodes) > 40
    acc = "torch::autograd::AccumulateGrad"  # PyTorch's name() for its C++ leaf sink
    for n in nodes:
        assert n.name() == (acc if type(n).__name__ == "AccumulateGrad" else type(n).__name__)
    names = {type(n).__name__ for n in nodes}
    assert {"MseLossBackward0", "ConvolutionBackward0", "AccumulateGrad"} <= names
    # A double backward records VJP nodes: named as their class too.
    p = next(netG.parameters())
    (g,) = cr.autograd.grad(loss, [p], create_graph=True)
    for n in _walk(g.grad_fn):
        assert n.name() == (acc if type(n).__name__ == "AccumulateGrad" else type(n).__name__)


def test_node_classes_are_shared_and_slotted() -> None:
    """One class per name, made once; instances carry no ``__dict__`` (as OpNode's)."""
    from chainrule.autograd.graph import OpNode

    x = cr.ones(2, 3, requires_grad=True)
    a, b = (x * 2).grad_fn, (x * 3).grad_fn
    assert type(a) is type(b)
    assert isinstance(a, OpNode) and type(a) is not OpNode
    assert type(a).__slots__ == ()
    assert not hasattr(a, "__dict__")
    # Parameter-dependent names (sum over all or over a dim) pick their class when recorded.
    assert type(x.sum().grad_fn).__name__ == "SumBackward0"
    assert type(x.sum(1).grad_fn).__name__ == "SumBackward1"
    assert repr(a).startswith("<MulBackward0 object at ")


@pytest.mark.parametrize("name", SDPA_MATH)
def test_sdpa_math_path_as_torch(name: str) -> None:
    """scaled_dot_product_attention where PyTorch takes its math path: the nodes six levels
    deep, the values and the gradients as PyTorch's."""
    case = CASES[name]
    a, b = _Args(cr), _Args(torch)
    out, ref = case(cr.nn.functional, a), case(torch.nn.functional, b)
    assert _chain(out.grad_fn, 6) == _chain(ref.grad_fn, 6)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = np.random.default_rng(1).standard_normal(tuple(ref.shape)).astype(np.float32)
    out.backward(cr.tensor(g))
    ref.backward(torch.tensor(g))
    for x, y in zip(a.leaves, b.leaves):
        if y.requires_grad:
            np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_sdpa_dropout_nodes_as_torch() -> None:
    """Dropout on the math path: PyTorch's MulBackward0 by the scaled noise, six levels deep."""
    out = CASES["sdpa_dropout"](cr.nn.functional, _Args(cr))
    ref = CASES["sdpa_dropout"](torch.nn.functional, _Args(torch))
    assert _chain(out.grad_fn, 6) == _chain(ref.grad_fn, 6)


@pytest.mark.parametrize("mask", ["none", "dead_rows", "float"])
def test_sdpa_math_path_gradcheck(mask: str) -> None:
    """gradcheck and gradgradcheck in float64 through the math path (safe softmax included)."""
    rng = np.random.default_rng(0)
    q, k, v = (
        cr.tensor(rng.standard_normal(s), dtype=cr.float64, requires_grad=True)
        for s in ((2, 3, 4), (2, 5, 4), (2, 5, 4))
    )
    m: Any = None
    if mask == "dead_rows":
        m = cr.tensor(np.tri(3, 5, -1, dtype=bool))
    elif mask == "float":
        m = cr.tensor(rng.standard_normal((3, 5)), dtype=cr.float64, requires_grad=True)
    args = (q, k, v) if m is None or not m.requires_grad else (q, k, v, m)

    def f(*xs: Any) -> Any:
        return cr.nn.functional.scaled_dot_product_attention(
            xs[0], xs[1], xs[2], attn_mask=xs[3] if len(xs) > 3 else m
        )

    assert cr.autograd.gradcheck(f, args)
    assert cr.autograd.gradgradcheck(f, args)
