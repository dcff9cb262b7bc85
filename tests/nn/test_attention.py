"""scaled_dot_product_attention, multi_head_attention_forward and MultiheadAttention against
PyTorch (values, attention weights, gradients of inputs, masks and every parameter, error types
and messages), gradcheck in float64, and dropout's train/eval behaviour."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule
import chainrule.nn.functional as F
from chainrule.autograd import gradcheck, gradgradcheck
from tests.nn._compare import DT, build_pair, close, compare_backward, error_of, leaves, to_cr

DTYPES = ["float32", "float64"]


def _arr(rng, shape, dtype):
    return rng.standard_normal(shape).astype(DT[dtype][0])


# scaled_dot_product_attention ----------------------------------------------------------------


def _mask(kind, rng, L, S, dtype):
    """(torch mask, whether it needs a gradient) for one mask kind."""
    if kind == "bool":
        m = rng.random((L, S)) > 0.4
        m[:, 0] = True
        return torch.from_numpy(m)
    if kind == "bool-dead-row":  # a row with every key masked: PyTorch gives zeros
        m = rng.random((1, 1, L, S)) > 0.4
        m[..., 1, :] = False
        m[..., 0, :] = True
        return torch.from_numpy(m)
    if kind == "bool-broadcast":  # per batch, broadcast over heads and queries
        m = rng.random((2, 1, 1, S)) > 0.3
        m[..., 0] = True
        return torch.from_numpy(m)
    if kind == "float":
        return torch.from_numpy(_arr(rng, (L, S), dtype))
    if kind == "float-grad":
        return torch.from_numpy(_arr(rng, (3, L, S), dtype)).requires_grad_(True)
    if kind == "float-dead-row":
        m = _arr(rng, (L, S), dtype)
        m[2] = -np.inf
        m[0, 1] = -np.inf
        return torch.from_numpy(m)
    if kind == "float32-on-float64":
        return torch.from_numpy(_arr(rng, (L, S), "float32"))
    raise AssertionError(kind)


SDPA_CASES = {
    "plain": dict(),
    "scale": dict(scale=0.37),
    "causal": dict(is_causal=True),
    "causal-L>S": dict(is_causal=True, L=6, S=4),
    "causal-L<S": dict(is_causal=True, L=3, S=5),
    "bool": dict(mask="bool"),
    "bool-dead-row": dict(mask="bool-dead-row"),
    "bool-broadcast": dict(mask="bool-broadcast"),
    "float": dict(mask="float"),
    "float-grad": dict(mask="float-grad"),
    "float-dead-row": dict(mask="float-dead-row"),
    "gqa": dict(gqa=True),
    "gqa-causal": dict(gqa=True, is_causal=True),
    "3d": dict(shape3=True),
    "broadcast-batch": dict(kv_batch1=True),
    "E>S": dict(L=3, S=2, E=7),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_matches_torch(case, dtype):
    c = dict(SDPA_CASES[case])
    rng = np.random.default_rng(abs(hash(case)) % 2**32)
    L, S, E, Ev = c.pop("L", 4), c.pop("S", 5), c.pop("E", 6), 3
    H, Hk = 3, 3
    if c.pop("gqa", False):
        H, Hk = 6, 2
    lead_q, lead_k = (2, H), (2, Hk)
    if c.pop("shape3", False):
        lead_q = lead_k = (4,)
    if c.pop("kv_batch1", False):
        lead_k = (1, Hk)
    q = torch.from_numpy(_arr(rng, lead_q + (L, E), dtype)).requires_grad_()
    k = torch.from_numpy(_arr(rng, lead_k + (S, E), dtype)).requires_grad_()
    v = torch.from_numpy(_arr(rng, lead_k + (S, Ev), dtype)).requires_grad_()
    kw = {k_: c[k_] for k_ in ("scale", "is_causal") if k_ in c}
    if H != Hk:
        kw["enable_gqa"] = True
    tmask = _mask(c["mask"], rng, L, S, dtype) if "mask" in c else None
    cq, ck, cv = to_cr(q), to_cr(k), to_cr(v)
    cmask = to_cr(tmask) if tmask is not None else None
    t_out = TF.scaled_dot_product_attention(q, k, v, attn_mask=tmask, **kw)
    c_out = F.scaled_dot_product_attention(cq, ck, cv, attn_mask=cmask, **kw)
    close(c_out, t_out, dtype, "output")
    assert not np.isnan(c_out.detach().numpy()).any()
    tl = {"q": q, "k": k, "v": v}
    cl = {"q": cq, "k": ck, "v": cv}
    if tmask is not None and tmask.requires_grad:
        tl["mask"], cl["mask"] = tmask, cmask
    compare_backward([c_out], [t_out], cl, tl, dtype)


def test_sdpa_float32_mask_on_float64_query():
    rng = np.random.default_rng(3)
    q, k, v = (torch.from_numpy(_arr(rng, (2, 4, 3), "float64")) for _ in range(3))
    m = torch.from_numpy(_arr(rng, (4, 4), "float32"))
    t = TF.scaled_dot_product_attention(q, k, v, attn_mask=m)
    c = F.scaled_dot_product_attention(to_cr(q), to_cr(k), to_cr(v), attn_mask=to_cr(m))
    assert c.dtype == chainrule.float64
    close(c, t, "float64")


def test_sdpa_dead_row_is_zero_with_zero_gradient():
    q = chainrule.randn(1, 3, 4, dtype=chainrule.float64, requires_grad=True)
    k = chainrule.randn(1, 5, 4, dtype=chainrule.float64, requires_grad=True)
    v = chainrule.randn(1, 5, 2, dtype=chainrule.float64, requires_grad=True)
    m = chainrule.ones(3, 5, dtype=chainrule.bool)
    m[1] = False
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    assert (out[0, 1] == 0).all().item()
    out.sum().backward()
    assert (q.grad[0, 1] == 0).all().item()
    assert np.isfinite(k.grad.numpy()).all() and np.isfinite(v.grad.numpy()).all()


def _qkv(rng, dtype="float32", q=(2, 3, 4, 6), k=(2, 3, 5, 6), v=(2, 3, 5, 3)):
    return tuple(torch.from_numpy(_arr(rng, s, dtype)) for s in (q, k, v))


SDPA_ERRORS = {
    "mask-and-causal": lambda T, q, k, v: T(
        q, k, v, attn_mask=torch.ones(4, 5, dtype=bool), is_causal=True
    ),
    "E-mismatch": lambda T, q, k, v: T(q, k[..., :5], v),
    "S-mismatch": lambda T, q, k, v: T(q, k, v[..., :4, :]),
    "dtype": lambda T, q, k, v: T(q, k, v.double()),
    "int-mask": lambda T, q, k, v: T(q, k, v, attn_mask=torch.ones(4, 5, dtype=torch.int64)),
    "double-mask": lambda T, q, k, v: T(q, k, v, attn_mask=torch.ones(4, 5).double()),
    "mask-shape": lambda T, q, k, v: T(q, k, v, attn_mask=torch.ones(3, 5)),
    "1-d": lambda T, q, k, v: T(q[0, 0, 0], k[0, 0], v[0, 0]),
    "heads": lambda T, q, k, v: T(q, k[:, :2], v[:, :2]),
    "gqa-divide": lambda T, q, k, v: T(q, k[:, :2], v[:, :2], enable_gqa=True),
    "gqa-2d": lambda T, q, k, v: T(q[0, 0], k[0, 0], v[0, 0], enable_gqa=True),
    "dropout>1": lambda T, q, k, v: T(q, k, v, dropout_p=1.5),
    "int": lambda T, q, k, v: T(q.int(), k.int(), v.int()),
}


@pytest.mark.parametrize("case", list(SDPA_ERRORS))
def test_sdpa_errors_match_torch(case):
    q, k, v = _qkv(np.random.default_rng(0))
    f = SDPA_ERRORS[case]
    expected = error_of(lambda: f(TF.scaled_dot_product_attention, q, k, v))
    assert expected is not None

    def cr_sdpa(*args, attn_mask=None, **kw):
        args = tuple(to_cr(a) for a in args)
        return F.scaled_dot_product_attention(
            *args, attn_mask=None if attn_mask is None else to_cr(attn_mask), **kw
        )

    assert error_of(lambda: f(cr_sdpa, q, k, v)) == expected


@pytest.mark.parametrize("kind", ["none", "causal", "bool-dead-row", "float", "gqa"])
def test_sdpa_gradcheck(kind):
    rng = np.random.default_rng(7)
    H, Hk = (4, 2) if kind == "gqa" else (2, 2)
    q = chainrule.tensor(rng.standard_normal((1, H, 3, 2)), requires_grad=True)
    k = chainrule.tensor(rng.standard_normal((1, Hk, 4, 2)), requires_grad=True)
    v = chainrule.tensor(rng.standard_normal((1, Hk, 4, 2)), requires_grad=True)
    inputs = [q, k, v]
    kw = {}
    if kind == "causal":
        kw["is_causal"] = True
    elif kind == "bool-dead-row":
        m = rng.random((3, 4)) > 0.5
        m[0], m[1] = False, True
        kw["attn_mask"] = chainrule.tensor(m)
    elif kind == "gqa":
        kw["enable_gqa"] = True
    if kind == "float":
        inputs.append(chainrule.tensor(rng.standard_normal((3, 4)), requires_grad=True))

        def f(*xs):
            return F.scaled_dot_product_attention(xs[0], xs[1], xs[2], attn_mask=xs[3])
    else:

        def f(*xs):
            return F.scaled_dot_product_attention(*xs, **kw)

    assert gradcheck(f, inputs)
    if kind in ("none", "float"):
        assert gradgradcheck(f, inputs)


def test_sdpa_dropout_statistics():
    """q = k = 0 gives uniform weights 1/S; with v = I the output is the dropped weights:
    each 0 or 1/(S (1 - p)), zero with frequency p, and the gradient follows the same mask."""
    chainrule.manual_seed(0)
    S, L, p = 8, 400, 0.3
    q = chainrule.zeros(L, 4, requires_grad=True)
    k = chainrule.zeros(S, 4)
    v = chainrule.eye(S, requires_grad=True)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
    o = out.detach().numpy()
    kept = o != 0
    np.testing.assert_allclose(o[kept], 1 / (S * (1 - p)), rtol=1e-6)
    assert abs((~kept).mean() - p) < 0.03
    out.sum().backward()
    # d(sum out)/dv[j] = sum_i attn[i, j]: the kept count of column j over S (1 - p).
    np.testing.assert_allclose(
        v.grad.numpy(), np.broadcast_to(kept.sum(0)[:, None] / (S * (1 - p)), (S, S)), rtol=1e-5
    )
    # No dropout: exact, and equal to torch.
    out0 = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0)
    np.testing.assert_allclose(out0.detach().numpy(), 1 / S, rtol=1e-6)


# MultiheadAttention ---------------------------------------------------------------------------

MHA_CASES = {
    "self": dict(),
    "self-batch-first": dict(batch_first=True),
    "cross": dict(S=5),
    "cross-batch-first-kv-same": dict(S=5, batch_first=True),
    "kvdim": dict(S=5, kdim=3, vdim=7),
    "kvdim-batch-first": dict(S=5, kdim=3, vdim=7, batch_first=True),
    "distinct-kv": dict(S=5, distinct_kv=True),
    "nobias": dict(bias=False),
    "bias-kv": dict(add_bias_kv=True, kpm="bool", attn_mask="bool2"),
    "zero-attn": dict(add_zero_attn=True, kpm="float", attn_mask="float2"),
    "bias-kv-zero-attn": dict(add_bias_kv=True, add_zero_attn=True, S=5),
    "kpm-bool": dict(kpm="bool"),
    "kpm-float": dict(kpm="float"),
    "mask-bool-2d": dict(attn_mask="bool2"),
    "mask-float-3d": dict(attn_mask="float3", S=5),
    "mask-bool-3d-no-weights": dict(attn_mask="bool3", need_weights=False),
    "masks-no-weights": dict(attn_mask="float2", kpm="float", need_weights=False),
    "per-head-weights": dict(average=False),
    "causal-no-weights": dict(attn_mask="causal", is_causal=True, need_weights=False),
    "causal-kpm": dict(attn_mask="causal", is_causal=True, kpm="float", need_weights=False),
    "causal-weights": dict(attn_mask="causal", is_causal=True),
    "unbatched": dict(unbatched=True, kpm="bool", attn_mask="bool2"),
    "unbatched-3d-mask": dict(unbatched=True, attn_mask="float3", need_weights=False),
    "unbatched-kvdim": dict(unbatched=True, S=5, kdim=3, vdim=2),
}


def _mha_masks(c, rng, N, H, L, S, dtype):
    s_eff = S + int(c.get("add_bias_kv", False)) + int(c.get("add_zero_attn", False))
    del s_eff  # masks are given for the S real keys; bias_kv/zero_attn pad them
    out = {}
    kpm = c.get("kpm")
    if kpm is not None:
        pad = rng.random((N, S)) < 0.3
        pad[:, 0] = False
        if c.get("unbatched"):
            pad = pad[0]
        out["key_padding_mask"] = torch.from_numpy(
            pad if kpm == "bool" else np.where(pad, -np.inf, 0.0).astype(DT[dtype][0])
        )
    am = c.get("attn_mask")
    if am is not None:
        if am == "causal":
            m = torch.from_numpy(np.triu(np.full((L, S), -np.inf), 1).astype(DT[dtype][0]))
        else:
            shape = (L, S) if am.endswith("2") else ((H if c.get("unbatched") else N * H), L, S)
            blocked = rng.random(shape) < 0.3
            blocked[..., 0] = False
            if am.startswith("bool"):
                m = torch.from_numpy(blocked)
            else:
                m = torch.from_numpy(
                    np.where(blocked, -np.inf, 0.0).astype(DT[dtype][0]) + _arr(rng, shape, dtype)
                )
        out["attn_mask"] = m
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(MHA_CASES))
def test_mha_matches_torch(case, dtype):
    c = MHA_CASES[case]
    rng = np.random.default_rng(abs(hash(case)) % 2**32)
    E, H, N, L = 8, 2, 3, 4
    S = c.get("S", L)
    kdim, vdim = c.get("kdim"), c.get("vdim")
    bf = c.get("batch_first", False)

    def make(m):
        return m.nn.MultiheadAttention(
            E,
            H,
            bias=c.get("bias", True),
            add_bias_kv=c.get("add_bias_kv", False),
            add_zero_attn=c.get("add_zero_attn", False),
            kdim=kdim,
            vdim=vdim,
            batch_first=bf,
        )

    tm, cm = build_pair(make, dtype)

    def shape(n, e):
        if c.get("unbatched"):
            return (n, e)
        return (N, n, e) if bf else (n, N, e)

    tq = torch.from_numpy(_arr(rng, shape(L, E), dtype)).requires_grad_()
    self_attn = S == L and kdim is None and not c.get("distinct_kv")
    if self_attn:
        tk = tv = tq
    else:
        tk = torch.from_numpy(_arr(rng, shape(S, kdim or E), dtype)).requires_grad_()
        tv = (
            tk
            if (kdim is None and not c.get("distinct_kv"))
            else torch.from_numpy(_arr(rng, shape(S, vdim or E), dtype)).requires_grad_()
        )
    cq = to_cr(tq)
    ck = cq if tk is tq else to_cr(tk)
    cv = ck if tv is tk else to_cr(tv)
    masks = _mha_masks(c, rng, N, H, L, S, dtype)
    kw = dict(
        need_weights=c.get("need_weights", True),
        average_attn_weights=c.get("average", True),
        is_causal=c.get("is_causal", False),
    )
    t_out, t_w = tm(tq, tk, tv, **masks, **kw)
    c_out, c_w = cm(cq, ck, cv, **{k: to_cr(m) for k, m in masks.items()}, **kw)
    close(c_out, t_out, dtype, "output")
    close(c_w, t_w, dtype, "weights")
    t_leaves = leaves(tm)
    c_leaves = leaves(cm)
    for name, tt, ct in (("q", tq, cq), ("k", tk, ck), ("v", tv, cv)):
        t_leaves[name], c_leaves[name] = tt, ct
    compare_backward([c_out, c_w], [t_out, t_w], c_leaves, t_leaves, dtype)


def test_mha_state_dict_and_init():
    for kw in (dict(), dict(kdim=3, vdim=5), dict(add_bias_kv=True, bias=False)):
        c = chainrule.nn.MultiheadAttention(8, 2, **kw)
        t = torch.nn.MultiheadAttention(8, 2, **kw)
        assert list(c.state_dict().keys()) == list(t.state_dict().keys())
        for (cn, cp), (tn, tp) in zip(c.named_parameters(), t.named_parameters()):
            assert cn == tn and tuple(cp.shape) == tuple(tp.shape)
    c = chainrule.nn.MultiheadAttention(64, 4, add_bias_kv=True)
    w = c.in_proj_weight.detach().numpy()
    bound = np.sqrt(6 / (64 + 192))  # xavier uniform over (3E, E)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert (c.in_proj_bias.detach().numpy() == 0).all()
    assert (c.out_proj.bias.detach().numpy() == 0).all()
    # xavier normal over (1, 1, E): fan_in = fan_out = E, std sqrt(2 / (2 E)) = 0.125; 64
    # samples put the sample std within about 0.011 of it
    assert abs(c.bias_k.detach().numpy().std() - np.sqrt(2 / 128)) < 0.04
    assert type(c.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert repr(c) == repr(torch.nn.MultiheadAttention(64, 4, add_bias_kv=True))


def test_mha_functional_static_kv_matches_torch():
    rng = np.random.default_rng(5)
    E, H, N, L, S = 6, 2, 2, 3, 4
    tm, cm = build_pair(lambda m: m.nn.MultiheadAttention(E, H), "float64")
    tq = torch.from_numpy(_arr(rng, (L, N, E), "float64")).requires_grad_()
    sk = torch.from_numpy(_arr(rng, (N * H, S, E // H), "float64")).requires_grad_()
    sv = torch.from_numpy(_arr(rng, (N * H, S, E // H), "float64")).requires_grad_()
    args = lambda m, mod, q, k, v: m.nn.functional.multi_head_attention_forward(  # noqa: E731
        q,
        q,
        q,
        E,
        H,
        mod.in_proj_weight,
        mod.in_proj_bias,
        None,
        None,
        False,
        0.0,
        mod.out_proj.weight,
        mod.out_proj.bias,
        static_k=k,
        static_v=v,
    )
    cq, csk, csv = to_cr(tq), to_cr(sk), to_cr(sv)
    t_out, t_w = args(torch, tm, tq, sk, sv)
    c_out, c_w = args(chainrule, cm, cq, csk, csv)
    close(c_out, t_out, "float64")
    close(c_w, t_w, "float64")
    compare_backward(
        [c_out], [t_out], {"q": cq, "sk": csk, "sv": csv}, {"q": tq, "sk": sk, "sv": sv}, "float64"
    )


MHA_ERRORS = {
    "causal-without-mask": lambda m, q: m(q, q, q, is_causal=True),
    "2d-mask-shape": lambda m, q: m(q, q, q, attn_mask=torch.ones(2, 3)),
    "3d-mask-shape": lambda m, q: m(q, q, q, attn_mask=torch.ones(3, 3, 3)),
    "4d-mask": lambda m, q: m(q, q, q, attn_mask=torch.ones(3, 3, 3, 3)),
    "kpm-rank": lambda m, q: m(q, q, q, key_padding_mask=torch.ones(2, 3, 1)),
    "kpm-int": lambda m, q: m(q, q, q, key_padding_mask=torch.ones(2, 3, dtype=torch.int64)),
    "kv-rank": lambda m, q: m(q[:, 0], q, q),
    "embed-dim": lambda m, q: m(q[:, :, :4], q[:, :, :4], q[:, :, :4]),
    "1-d-query": lambda m, q: m(q[0, 0], q[0, 0], q[0, 0]),
}


@pytest.mark.parametrize("case", list(MHA_ERRORS))
def test_mha_errors_match_torch(case):
    q = torch.randn(3, 2, 8)
    tm, cm = build_pair(lambda m: m.nn.MultiheadAttention(8, 2), "float32")
    f = MHA_ERRORS[case]
    expected = error_of(lambda: f(tm, q))
    assert expected is not None

    def call(*a, **kw):
        a = [to_cr(x) if isinstance(x, torch.Tensor) else x for x in a]
        kw = {k: to_cr(x) if isinstance(x, torch.Tensor) else x for k, x in kw.items()}
        return cm(*a, **kw)

    got = error_of(lambda: f(call, q))
    assert got is not None and got[0] is expected[0]
    assert got[1] == expected[1]


def test_mha_constructor_errors_match_torch():
    for args in ((8, 3), (0, 2), (8, 0)):
        expected = error_of(lambda: torch.nn.MultiheadAttention(*args))
        assert error_of(lambda: chainrule.nn.MultiheadAttention(*args)) == expected


def test_mha_mismatched_mask_types_warn_as_torch():
    q = torch.randn(3, 2, 8)
    tm, cm = build_pair(lambda m: m.nn.MultiheadAttention(8, 2), "float32")
    am, kpm = torch.zeros(3, 3), torch.zeros(2, 3, dtype=torch.bool)
    with pytest.warns(UserWarning, match="mismatched key_padding_mask and attn_mask"):
        t_out, _ = tm(q, q, q, attn_mask=am, key_padding_mask=kpm)
    cq = to_cr(q)
    with pytest.warns(UserWarning, match="mismatched key_padding_mask and attn_mask"):
        c_out, _ = cm(cq, cq, cq, attn_mask=to_cr(am), key_padding_mask=to_cr(kpm))
    close(c_out, t_out, "float32")


@pytest.mark.parametrize("unbatched", [False, True])
def test_mha_gradcheck(unbatched):
    chainrule.manual_seed(1)
    m = chainrule.nn.MultiheadAttention(
        4, 2, add_bias_kv=True, kdim=3, vdim=2, dtype=chainrule.float64
    )
    shape = (lambda n, e: (n, e)) if unbatched else (lambda n, e: (n, 2, e))
    q = chainrule.randn(*shape(3, 4), dtype=chainrule.float64, requires_grad=True)
    k = chainrule.randn(*shape(2, 3), dtype=chainrule.float64, requires_grad=True)
    v = chainrule.randn(*shape(2, 2), dtype=chainrule.float64, requires_grad=True)
    kpm = chainrule.tensor([False, True] if unbatched else [[False, True], [False, False]])
    params = [m.q_proj_weight, m.k_proj_weight, m.in_proj_bias, m.bias_v]

    def f(q, k, v, *ps):
        return m(q, k, v, key_padding_mask=kpm, need_weights=True)

    assert gradcheck(lambda *xs: f(*xs)[0], [q, k, v, *params])
    assert gradcheck(lambda *xs: f(*xs)[1], [q, k, v])


def test_mha_dropout_train_and_eval():
    """Eval: dropout is off, outputs equal torch's in eval. Train: the returned per-head
    weights are the softmax weights dropped (0) or scaled by 1/(1 - p)."""
    rng = np.random.default_rng(2)
    tm, cm = build_pair(lambda m: m.nn.MultiheadAttention(8, 2, dropout=0.5), "float64")
    q = torch.from_numpy(_arr(rng, (6, 3, 8), "float64"))
    cq = to_cr(q)
    tm.eval()
    cm.eval()
    t_out, t_w = tm(q, q, q, average_attn_weights=False)
    c_out, c_w = cm(cq, cq, cq, average_attn_weights=False)
    close(c_out, t_out, "float64")
    close(c_w, t_w, "float64")
    cm.train()
    chainrule.manual_seed(0)
    d_out, d_w = cm(cq, cq, cq, average_attn_weights=False)
    dw, w = d_w.detach().numpy(), c_w.detach().numpy()
    kept = dw != 0
    np.testing.assert_allclose(dw[kept], 2 * w[kept], rtol=1e-12)
    assert 0.4 < (~kept).mean() < 0.6
    assert not np.allclose(d_out.detach().numpy(), c_out.detach().numpy())
