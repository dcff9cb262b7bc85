"""Transformer layers, stacks and nn.Transformer against PyTorch from identical weights (outputs
and gradients of inputs and every parameter, float32 and float64, masks, batch_first, norm_first,
activations), state dict layout, deep-copied layers, the causal mask helper, RMSNorm."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn.functional as F
from chainrule.autograd import gradcheck, gradgradcheck
from tests.nn._compare import DT, build_pair, close, compare_backward, error_of, leaves, to_cr

DTYPES = ["float32", "float64"]
D, H, FF = 8, 2, 12


def _arr(rng, shape, dtype):
    return rng.standard_normal(shape).astype(DT[dtype][0])


def _act(m, name):
    """The same activation in either library: a string, a function or a Module."""
    return {
        "relu": "relu",
        "gelu": "gelu",
        "silu-fn": m.nn.functional.silu,
        "tanh-module": m.nn.Tanh() if name == "tanh-module" else None,
    }[name]


def _seq(rng, n, N, dtype, bf, unbatched=False):
    shape = (n, D) if unbatched else ((N, n, D) if bf else (n, N, D))
    return torch.from_numpy(_arr(rng, shape, dtype)).requires_grad_()


def _causal(n, dtype):
    return torch.from_numpy(np.triu(np.full((n, n), -np.inf), 1).astype(DT[dtype][0]))


def _padding(rng, N, n, kind, dtype, unbatched=False):
    pad = rng.random((N, n)) < 0.3
    pad[:, 0] = False
    if unbatched:
        pad = pad[0]
    if kind == "bool":
        return torch.from_numpy(pad)
    return torch.from_numpy(np.where(pad, -np.inf, 0.0).astype(DT[dtype][0]))


ENC_CASES = {
    "post-norm": dict(),
    "pre-norm": dict(norm_first=True),
    "batch-first": dict(batch_first=True, act="gelu"),
    "pre-norm-gelu-bf": dict(norm_first=True, batch_first=True, act="gelu"),
    "silu-fn": dict(act="silu-fn"),
    "tanh-module": dict(act="tanh-module"),
    "nobias": dict(bias=False, eps=1e-3),
    "causal-mask": dict(mask="causal"),
    "causal-hint": dict(mask="causal", is_causal=True, norm_first=True),
    "bool-mask-kpm": dict(mask="bool", kpm="bool"),
    "float-kpm": dict(kpm="float", batch_first=True),
    "unbatched": dict(unbatched=True, kpm="bool"),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(ENC_CASES))
def test_encoder_layer_matches_torch(case, dtype):
    c = ENC_CASES[case]
    rng = np.random.default_rng(abs(hash(case)) % 2**32)
    N, S = 3, 5
    bf = c.get("batch_first", False)

    def make(m):
        return m.nn.TransformerEncoderLayer(
            D,
            H,
            FF,
            dropout=0.0,
            activation=_act(m, c.get("act", "relu")),
            layer_norm_eps=c.get("eps", 1e-5),
            batch_first=bf,
            norm_first=c.get("norm_first", False),
            bias=c.get("bias", True),
        )

    tm, cm = build_pair(make, dtype)
    src = _seq(rng, S, N, dtype, bf, c.get("unbatched", False))
    kw = {}
    if c.get("mask") == "causal":
        kw["src_mask"] = _causal(S, dtype)
    elif c.get("mask") == "bool":
        m = rng.random((S, S)) < 0.3
        m[:, 0] = False
        kw["src_mask"] = torch.from_numpy(m)
    if "kpm" in c:
        kw["src_key_padding_mask"] = _padding(rng, N, S, c["kpm"], dtype, c.get("unbatched"))
    if c.get("is_causal"):
        kw["is_causal"] = True
    t_out = tm(src, **kw)
    csrc = to_cr(src)
    c_out = cm(csrc, **{k: to_cr(v) if isinstance(v, torch.Tensor) else v for k, v in kw.items()})
    close(c_out, t_out, dtype, "output")
    tl, cl = leaves(tm), leaves(cm)
    tl["src"], cl["src"] = src, csrc
    compare_backward([c_out], [t_out], cl, tl, dtype)


DEC_CASES = {
    "post-norm": dict(),
    "pre-norm-bf": dict(norm_first=True, batch_first=True, act="gelu"),
    "masks": dict(tgt_mask=True, memory_mask=True, kpm="bool"),
    "causal-hint-float-kpm": dict(tgt_mask=True, tgt_is_causal=True, kpm="float", norm_first=True),
    "nobias-silu": dict(bias=False, act="silu-fn"),
    "unbatched": dict(unbatched=True, tgt_mask=True),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(DEC_CASES))
def test_decoder_layer_matches_torch(case, dtype):
    c = DEC_CASES[case]
    rng = np.random.default_rng(abs(hash(case)) % 2**32)
    N, T, S = 2, 4, 5
    bf, ub = c.get("batch_first", False), c.get("unbatched", False)

    def make(m):
        return m.nn.TransformerDecoderLayer(
            D,
            H,
            FF,
            dropout=0.0,
            activation=_act(m, c.get("act", "relu")),
            batch_first=bf,
            norm_first=c.get("norm_first", False),
            bias=c.get("bias", True),
        )

    tm, cm = build_pair(make, dtype)
    tgt, mem = _seq(rng, T, N, dtype, bf, ub), _seq(rng, S, N, dtype, bf, ub)
    kw = {}
    if c.get("tgt_mask"):
        kw["tgt_mask"] = _causal(T, dtype)
    if c.get("memory_mask"):
        kw["memory_mask"] = torch.from_numpy(_arr(rng, (T, S), dtype))
    if "kpm" in c:
        kw["tgt_key_padding_mask"] = _padding(rng, N, T, c["kpm"], dtype)
        kw["memory_key_padding_mask"] = _padding(rng, N, S, c["kpm"], dtype)
    if c.get("tgt_is_causal"):
        kw["tgt_is_causal"] = True
    if c.get("kpm") == "bool":  # bool padding with float attn masks: torch's own warning
        with pytest.warns(UserWarning, match="mismatched"):
            t_out = tm(tgt, mem, **kw)
    else:
        t_out = tm(tgt, mem, **kw)
    ctgt, cmem = to_cr(tgt), to_cr(mem)
    ckw = {k: to_cr(v) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
    if c.get("kpm") == "bool":
        with pytest.warns(UserWarning, match="mismatched"):
            c_out = cm(ctgt, cmem, **ckw)
    else:
        c_out = cm(ctgt, cmem, **ckw)
    close(c_out, t_out, dtype, "output")
    tl, cl = leaves(tm), leaves(cm)
    tl["tgt"], cl["tgt"], tl["mem"], cl["mem"] = tgt, ctgt, mem, cmem
    compare_backward([c_out], [t_out], cl, tl, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bf", [False, True])
def test_transformer_matches_torch(bf, dtype):
    rng = np.random.default_rng(11)
    N, S, T = 2, 5, 4

    def make(m):
        return m.nn.Transformer(
            D,
            H,
            2,
            2,
            FF,
            dropout=0.0,
            batch_first=bf,
            norm_first=bf,
            activation="gelu" if bf else "relu",
        )

    tm, cm = build_pair(make, dtype)
    src, tgt = _seq(rng, S, N, dtype, bf), _seq(rng, T, N, dtype, bf)
    tgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=DT[dtype][1])
    kpm = _padding(rng, N, S, "float", dtype)
    kw = dict(tgt_mask=tgt_mask, src_key_padding_mask=kpm, memory_key_padding_mask=kpm)
    t_out = tm(src, tgt, **kw)
    csrc, ctgt = to_cr(src), to_cr(tgt)
    c_out = cm(csrc, ctgt, **{k: to_cr(v) for k, v in kw.items()})
    close(c_out, t_out, dtype, "output")
    tl, cl = leaves(tm), leaves(cm)
    tl.update(src=src, tgt=tgt)
    cl.update(src=csrc, tgt=ctgt)
    compare_backward([c_out], [t_out], cl, tl, dtype)


def test_encoder_decoder_stacks_with_norm_and_detected_causal_mask():
    rng = np.random.default_rng(4)
    dtype = "float64"

    def make(m):
        layer = m.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0)
        return m.nn.TransformerEncoder(layer, 3, norm=m.nn.LayerNorm(D), enable_nested_tensor=False)

    tm, cm = build_pair(make, dtype)
    src = _seq(rng, 6, 2, dtype, False)
    mask = _causal(6, dtype)
    t_out = tm(src, mask=mask)  # is_causal=None: detected from the mask
    csrc = to_cr(src)
    c_out = cm(csrc, mask=to_cr(mask))
    close(c_out, t_out, dtype)
    tl, cl = leaves(tm), leaves(cm)
    tl["src"], cl["src"] = src, csrc
    compare_backward([c_out], [t_out], cl, tl, dtype)

    def make_dec(m):
        return m.nn.TransformerDecoder(
            m.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0), 2, norm=m.nn.LayerNorm(D)
        )

    tm, cm = build_pair(make_dec, dtype)
    tgt, mem = _seq(rng, 3, 2, dtype, False), _seq(rng, 6, 2, dtype, False)
    t_out = tm(tgt, mem, tgt_mask=_causal(3, dtype))
    ctgt, cmem = to_cr(tgt), to_cr(mem)
    c_out = cm(ctgt, cmem, tgt_mask=to_cr(_causal(3, dtype)))
    close(c_out, t_out, dtype)
    tl, cl = leaves(tm), leaves(cm)
    tl.update(tgt=tgt, mem=mem)
    cl.update(tgt=ctgt, mem=cmem)
    compare_backward([c_out], [t_out], cl, tl, dtype)


def test_detect_is_causal_mask():
    from chainrule.nn.modules.transformer import _detect_is_causal_mask

    causal = chainrule.nn.Transformer.generate_square_subsequent_mask(4)
    assert _detect_is_causal_mask(causal, None, 4) is True
    assert _detect_is_causal_mask(causal, None, 3) is False
    assert _detect_is_causal_mask(chainrule.zeros(4, 4), None, 4) is False
    assert _detect_is_causal_mask(chainrule.zeros(4, 4), True, 4) is True
    assert _detect_is_causal_mask(causal, False, 4) is False
    assert _detect_is_causal_mask(None, None, 4) is False


def test_layers_are_independent_deep_copies():
    layer = chainrule.nn.TransformerEncoderLayer(D, H, FF)
    enc = chainrule.nn.TransformerEncoder(layer, 3)
    ws = [m.linear1.weight for m in enc.layers]
    assert len({id(w) for w in ws}) == 3 and all(w is not layer.linear1.weight for w in ws)
    for w in ws:
        np.testing.assert_array_equal(w.detach().numpy(), layer.linear1.weight.detach().numpy())
    with chainrule.no_grad():
        ws[0].add_(1.0)
    assert not np.allclose(ws[0].detach().numpy(), ws[1].detach().numpy())
    assert len(list(enc.parameters())) == 3 * len(list(layer.parameters()))


def test_state_dict_keys_and_shapes_match_torch():
    makers = [
        lambda m: m.nn.Transformer(D, H, 2, 1, FF),
        lambda m: m.nn.TransformerEncoderLayer(D, H, FF, activation=m.nn.GELU()),
        lambda m: m.nn.TransformerDecoderLayer(D, H, FF, bias=False),
        lambda m: m.nn.TransformerEncoder(
            m.nn.TransformerEncoderLayer(D, H, FF), 2, norm=m.nn.LayerNorm(D)
        ),
    ]
    for make in makers:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            t = make(torch)
        c = make(chainrule)
        ts, cs = t.state_dict(), c.state_dict()
        assert list(cs) == list(ts)
        assert all(tuple(cs[k].shape) == tuple(ts[k].shape) for k in ts)
        assert repr(c) == repr(t)


def test_transformer_init_is_xavier():
    chainrule.manual_seed(0)
    t = chainrule.nn.Transformer(32, 4, 1, 1, 64)
    w = t.encoder.layers[0].linear1.weight.detach().numpy()  # (64, 32)
    bound = np.sqrt(6 / (64 + 32))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    # One-dim parameters keep their layer's init: LayerNorm ones, attention biases zeros.
    assert (t.decoder.norm.weight.detach().numpy() == 1).all()
    assert (t.encoder.layers[0].self_attn.in_proj_bias.detach().numpy() == 0).all()


def test_generate_square_subsequent_mask_matches_torch():
    for dt in (None, "float64"):
        kw = {} if dt is None else {"dtype": DT[dt][2]}
        tkw = {} if dt is None else {"dtype": DT[dt][1]}
        c = chainrule.nn.Transformer.generate_square_subsequent_mask(5, **kw)
        t = torch.nn.Transformer.generate_square_subsequent_mask(5, **tkw)
        assert c.dtype == (chainrule.float32 if dt is None else chainrule.float64)
        np.testing.assert_array_equal(c.numpy(), t.numpy())


def test_transformer_errors_match_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        tm = torch.nn.Transformer(D, H, 1, 1, FF)
    cm = chainrule.nn.Transformer(D, H, 1, 1, FF)
    cases = [
        (torch.randn(5, 2, D), torch.randn(4, 3, D)),
        (torch.randn(5, 2, D), torch.randn(4, 2, D + 1)),
    ]
    for src, tgt in cases:
        expected = error_of(lambda: tm(src, tgt))
        assert expected is not None
        assert error_of(lambda: cm(to_cr(src), to_cr(tgt))) == expected
    expected = error_of(lambda: torch.nn.TransformerEncoderLayer(D, H, activation="tanh"))
    assert (
        error_of(lambda: chainrule.nn.TransformerEncoderLayer(D, H, activation="tanh")) == expected
    )


def test_dropout_train_and_eval():
    """Eval: dropout off, equal to torch in eval. Train: random, and different from eval."""
    rng = np.random.default_rng(9)
    tm, cm = build_pair(lambda m: m.nn.TransformerEncoderLayer(D, H, FF, dropout=0.3), "float64")
    src = _seq(rng, 5, 2, "float64", False)
    tm.eval()
    cm.eval()
    close(cm(to_cr(src)), tm(src), "float64")
    cm.train()
    chainrule.manual_seed(0)
    a = cm(to_cr(src)).detach().numpy()
    b = cm(to_cr(src)).detach().numpy()
    e = cm.eval()(to_cr(src)).detach().numpy()
    assert not np.allclose(a, b) and not np.allclose(a, e)


# RMSNorm --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "kw",
    [dict(), dict(eps=1e-3), dict(elementwise_affine=False)],
    ids=["default", "eps", "noaffine"],
)
def test_rms_norm_matches_torch(kw, dtype):
    rng = np.random.default_rng(1)
    tm, cm = build_pair(lambda m: m.nn.RMSNorm([3, 4], **kw), dtype)
    if tm.weight is not None:
        with torch.no_grad():
            tm.weight.copy_(torch.from_numpy(_arr(rng, (3, 4), dtype)))
        cm.load_state_dict({"weight": to_cr(tm.weight, False)})
    x = torch.from_numpy(_arr(rng, (2, 3, 4), dtype) * 1e-4).requires_grad_()
    cx = to_cr(x)
    t_out, c_out = tm(x), cm(cx)
    close(c_out, t_out, dtype)
    tl, cl = leaves(tm), leaves(cm)
    tl["x"], cl["x"] = x, cx
    compare_backward([c_out], [t_out], cl, tl, dtype)
    assert repr(cm) == repr(tm)


def test_rms_norm_functional_gradcheck_and_errors():
    rng = np.random.default_rng(2)
    x = chainrule.tensor(rng.standard_normal((2, 5)), requires_grad=True)
    w = chainrule.tensor(rng.standard_normal(5), requires_grad=True)
    assert gradcheck(lambda x, w: F.rms_norm(x, (5,), w, 1e-6), [x, w])
    assert gradgradcheck(lambda x, w: F.rms_norm(x, 5, w), [x, w])
    t = torch.randn(2, 3)
    for shape in ((4,), (3, 4), (1, 2, 3)):
        expected = error_of(lambda: torch.nn.functional.rms_norm(t, shape))
        assert expected is not None
        assert error_of(lambda: F.rms_norm(to_cr(t), shape)) == expected
    # eps=None is the dtype's machine epsilon: visible on an all-zero row (0 / sqrt(eps) = 0)
    # and on tiny values.
    tiny = torch.full((1, 4), 1e-5, dtype=torch.float32)
    close(F.rms_norm(to_cr(tiny), (4,)), torch.nn.functional.rms_norm(tiny, (4,)), "float32")
