"""EmbeddingBag / F.embedding_bag against torch: every mode with offsets, 2-d inputs,
include_last_offset, per_sample_weights, padding_idx, max_norm and scale_grad_by_freq
(values and the gradients of weight and per_sample_weights, float32 and float64), the module's
init, repr and from_pretrained, and error types and texts. The op table row
(tests/opinfo/nn_bag.py) adds gradcheck / gradgradcheck."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule
from tests.nn._compare import DT, close
from tests.nn.test_parametrize import err

DTYPES = ["float32", "float64"]
IDX = np.array([1, 2, 4, 5, 4, 3, 2, 9, 9, 0])
CASES: dict[str, dict[str, Any]] = {
    "mean": dict(offsets=[0, 4, 4, 7], mode="mean"),
    "sum": dict(offsets=[0, 3, 8], mode="sum"),
    "max": dict(offsets=[0, 4, 4, 7], mode="max"),
    "max_dup": dict(offsets=[0, 1], mode="max"),
    "last_offset": dict(offsets=[0, 2, 10], mode="mean", include_last_offset=True),
    "last_offset_sum": dict(offsets=[0, 2, 2, 10], mode="sum", include_last_offset=True),
    "last_offset_max": dict(offsets=[0, 2, 10], mode="max", include_last_offset=True),
    "psw": dict(offsets=[0, 4, 4, 7], mode="sum", psw=True),
    "psw_2d": dict(shape=(2, 5), mode="sum", psw=True),
    "2d_mean": dict(shape=(5, 2), mode="mean"),
    "2d_max": dict(shape=(2, 5), mode="max"),
    "padding_mean": dict(offsets=[0, 2, 5], mode="mean", padding_idx=4),
    "padding_neg_sum": dict(offsets=[0, 2, 5], mode="sum", padding_idx=-1),
    "padding_max": dict(offsets=[0, 2, 5], mode="max", padding_idx=2),
    "max_norm": dict(offsets=[0, 5], mode="mean", max_norm=1.0),
    "max_norm_p1": dict(offsets=[0, 5], mode="sum", max_norm=0.8, norm_type=1.0),
    "empty_input": dict(idx=[], offsets=[0, 0], mode="mean"),
}


def _run(lib: Any, case: dict[str, Any], dtype: str) -> tuple[Any, Any, Any, Any]:
    c = dict(case)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((10, 3)).astype(DT[dtype][0])
    idx = np.array(c.pop("idx", IDX), dtype=np.int64).reshape(c.pop("shape", (-1,)))
    weight = lib.tensor(w, requires_grad=True)
    psw = None
    if c.pop("psw", False):
        psw = lib.tensor(rng.uniform(-2, 2, idx.shape).astype(DT[dtype][0]), requires_grad=True)
    offs = c.pop("offsets", None)
    offsets = None if offs is None else lib.tensor(np.array(offs, dtype=np.int64))
    wt = weight
    if "max_norm" in c:
        wt = lib.tensor(w.copy(), requires_grad=True)
    out = lib.nn.functional.embedding_bag(lib.tensor(idx), wt, offsets, per_sample_weights=psw, **c)
    g = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(DT[dtype][0])
    if out.numel():
        (out * lib.tensor(g)).sum().backward()
    return out, wt, psw, wt.detach()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_embedding_bag_matches_torch(case, dtype):
    to, tw, tp, tw_after = _run(torch, CASES[case], dtype)
    co, cw, cp, cw_after = _run(chainrule, CASES[case], dtype)
    close(co, to, dtype, "output")
    close(cw.grad, tw.grad, dtype, "grad weight")
    if tp is not None:
        close(cp.grad, tp.grad, dtype, "grad per_sample_weights")
    # max_norm renormalizes the used rows of the weight in place, as in torch.
    close(cw_after, tw_after, dtype, "weight after the call")
    assert co.dtype == DT[dtype][2]


MODULES = {
    "mean": lambda nn: nn.EmbeddingBag(10, 3),
    "sum_pad": lambda nn: nn.EmbeddingBag(10, 3, mode="sum", padding_idx=2),
    "max_last": lambda nn: nn.EmbeddingBag(10, 3, mode="max", include_last_offset=True),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(MODULES))
def test_module_matches_torch(case, dtype):
    tm = MODULES[case](torch.nn).to(DT[dtype][1])
    cm = MODULES[case](chainrule.nn).to(DT[dtype][2])
    assert repr(cm) == repr(tm)
    assert list(cm.state_dict()) == ["weight"]
    cm.load_state_dict({"weight": chainrule.tensor(tm.weight.detach().numpy())})
    idx, off = np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 3, 8])
    to = tm(torch.tensor(idx), torch.tensor(off))
    co = cm(chainrule.tensor(idx), chainrule.tensor(off))
    close(co, to, dtype, "output")
    to.pow(2).sum().backward()
    co.pow(2).sum().backward()
    close(cm.weight.grad, tm.weight.grad, dtype, "grad")


def test_init_and_from_pretrained():
    chainrule.manual_seed(0)
    m = chainrule.nn.EmbeddingBag(2000, 4, padding_idx=3)
    w = m.weight.detach().numpy()
    assert np.all(w[3] == 0)
    assert abs(w.mean()) < 0.05 and abs(w.std() - 1) < 0.05
    e = chainrule.tensor([[1.0, 2.0], [3.0, 4.0]])
    for freeze in (True, False):
        b = chainrule.nn.EmbeddingBag.from_pretrained(e, freeze=freeze, mode="sum")
        t = torch.nn.EmbeddingBag.from_pretrained(
            torch.tensor(e.numpy()), freeze=freeze, mode="sum"
        )
        assert repr(b) == repr(t) and b.weight.requires_grad == t.weight.requires_grad
        out = b(chainrule.tensor([[0, 1]]))
        np.testing.assert_array_equal(out.detach().numpy(), [[4.0, 6.0]])


ERRORS = {
    "no_offsets": lambda F, lib, w, i, o: F.embedding_bag(i, w, mode="sum"),
    "2d_offsets": lambda F, lib, w, i, o: F.embedding_bag(i.reshape(2, 4), w, o),
    "mode": lambda F, lib, w, i, o: F.embedding_bag(i, w, o, mode="foo"),
    "psw_mode": lambda F, lib, w, i, o: F.embedding_bag(
        i, w, o, mode="mean", per_sample_weights=lib.ones(8)
    ),
    "psw_shape": lambda F, lib, w, i, o: F.embedding_bag(
        i, w, o, mode="sum", per_sample_weights=lib.ones(7)
    ),
    "offset_end": lambda F, lib, w, i, o: F.embedding_bag(i, w, lib.tensor([0, 9])),
    "float_input": lambda F, lib, w, i, o: F.embedding_bag(i.float(), w, o),
    "float_offsets": lambda F, lib, w, i, o: F.embedding_bag(i, w, o.float()),
    "index_high": lambda F, lib, w, i, o: F.embedding_bag(lib.tensor([1, 10]), w, o[:1]),
    "index_negative": lambda F, lib, w, i, o: F.embedding_bag(lib.tensor([1, -1]), w, o[:1]),
    "3d": lambda F, lib, w, i, o: F.embedding_bag(i.reshape(1, 2, 4), w),
    "offsets_2d": lambda F, lib, w, i, o: F.embedding_bag(i, w, o.reshape(1, 2)),
    "padding_idx": lambda F, lib, w, i, o: F.embedding_bag(i, w, o, padding_idx=10),
    "max_freq": lambda F, lib, w, i, o: F.embedding_bag(
        i, w, o, mode="max", scale_grad_by_freq=True
    ),
    "weight_1d": lambda F, lib, w, i, o: F.embedding_bag(i, w[0], o),
    "module_padding": lambda F, lib, w, i, o: lib.nn.EmbeddingBag(10, 3, padding_idx=11),
    "module_weight": lambda F, lib, w, i, o: lib.nn.EmbeddingBag(10, 3, _weight=lib.ones(2, 2)),
    "pretrained_1d": lambda F, lib, w, i, o: lib.nn.EmbeddingBag.from_pretrained(lib.ones(3)),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_torch(case):
    def make(lib):
        w = lib.ones(10, 3)
        i = lib.tensor([1, 2, 4, 5, 4, 3, 2, 9])
        return ERRORS[case](lib.nn.functional, lib, w, i, lib.tensor([0, 4]))

    t, c = err(lambda: make(torch)), err(lambda: make(chainrule))
    assert t is not None and c is not None
    assert c == t


def test_first_offset_and_decreasing_offsets_are_errors():
    w = chainrule.ones(10, 3)
    i = chainrule.tensor([1, 2, 4, 5])
    with pytest.raises(RuntimeError, match=r"offsets\[0\] has to be 0.*However, got 1"):
        chainrule.nn.functional.embedding_bag(i, w, chainrule.tensor([1, 2]))
    # torch fails with an internal check here; chainrule says what is wrong.
    with pytest.raises(RuntimeError, match="non-decreasing"):
        chainrule.nn.functional.embedding_bag(i, w, chainrule.tensor([0, 3, 2]))


def _bags_by_embedding(
    lib: Any, w: Any, idx: np.ndarray, starts: list[int], mode: str, padding_idx: Any = None
) -> Any:
    """The bag reduction written out over F.embedding (the reference for scale_grad_by_freq,
    whose embedding_bag kernel in torch misattributes the counts)."""
    rows = lib.nn.functional.embedding(
        lib.tensor(idx), w, padding_idx=padding_idx, scale_grad_by_freq=True
    )
    ends = starts[1:] + [len(idx)]
    outs = []
    for a, b in zip(starts, ends):
        keep = [j for j in range(a, b) if idx[j] != padding_idx]
        r = rows[lib.tensor(keep, dtype=lib.int64)].sum(0)
        outs.append(r / max(len(keep), 1) if mode == "mean" else r)
    return lib.stack(outs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode,padding_idx", [("sum", None), ("mean", 9), ("mean", None)])
def test_scale_grad_by_freq_divides_by_counts(mode, padding_idx, dtype):
    w = np.random.default_rng(0).standard_normal((10, 3)).astype(DT[dtype][0])
    g = np.random.default_rng(1).standard_normal((2, 3)).astype(DT[dtype][0])
    tw, cw = torch.tensor(w, requires_grad=True), chainrule.tensor(w, requires_grad=True)
    ref = _bags_by_embedding(torch, tw, IDX, [0, 5], mode, padding_idx)
    out = chainrule.nn.functional.embedding_bag(
        chainrule.tensor(IDX),
        cw,
        chainrule.tensor([0, 5]),
        mode=mode,
        padding_idx=padding_idx,
        scale_grad_by_freq=True,
    )
    close(out, ref, dtype, "output")
    (ref * torch.tensor(g)).sum().backward()
    (out * chainrule.tensor(g)).sum().backward()
    close(cw.grad, tw.grad, dtype, "grad weight")


def test_last_offset_before_the_end_and_no_bags():
    w = chainrule.arange(10.0).reshape(10, 1)
    idx = chainrule.tensor(IDX)
    off = chainrule.tensor([0, 2, 6])
    F = chainrule.nn.functional
    # Every mode reduces the same bags [0, 2) and [2, 6) (idx[2:6] = 4, 5, 4, 3).
    for mode, want in (("sum", [3.0, 16.0]), ("mean", [1.5, 4.0]), ("max", [2.0, 5.0])):
        got = F.embedding_bag(idx, w, off, mode=mode, include_last_offset=True)
        np.testing.assert_array_equal(got.numpy().ravel(), want)
    out = F.embedding_bag(idx, w, chainrule.tensor([], dtype=chainrule.int64), mode="sum")
    assert out.shape == (0, 1)
