"""nn.utils.rnn against PyTorch: padding, packing and unpacking, values and gradients, in both
orders and layouts, plus PackedSequence's fields and conversions and the error texts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _both(fn: Any, arrays: list[np.ndarray], dtype: str = "float64") -> None:
    """Run ``fn(m, *leaves)`` in both libraries; compare every output and the gradients of a
    random weighting of them."""
    res = {}
    for m in (torch, cr):
        leaves = [m.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
        outs = fn(m, *leaves)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        floats = [o for o in outs if o.is_floating_point()]
        g = np.random.default_rng(0)
        loss = sum(
            (o * m.tensor(g.standard_normal(tuple(o.shape)).astype(dtype))).sum() for o in floats
        )
        loss.backward()
        res[m] = (outs, [x.grad for x in leaves])
    for a, b in zip(res[torch][0], res[cr][0]):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-12, atol=0)
    for a, b in zip(*(res[m][1] for m in (torch, cr))):
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-12, atol=0)


def _seqs(lengths: list[int], rest: tuple[int, ...] = (2,)) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [rng.standard_normal((n,) + rest) for n in lengths]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("rest", [(), (2,), (2, 3)])
def test_pad_sequence(batch_first: bool, side: str, rest: tuple[int, ...]) -> None:
    _both(
        lambda m, *s: m.nn.utils.rnn.pad_sequence(
            list(s), batch_first=batch_first, padding_value=-1.5, padding_side=side
        ),
        _seqs([3, 1, 4, 0], rest),
    )


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths_as", [list, "tensor"])
def test_pack_pad_round_trip(enforce_sorted: bool, batch_first: bool, lengths_as: Any) -> None:
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    x = np.random.default_rng(2).standard_normal((4, 5, 2) if batch_first else (5, 4, 2))

    def fn(m: Any, x: Any) -> Any:
        R = m.nn.utils.rnn
        lens = m.tensor(lengths) if lengths_as == "tensor" else list(lengths)
        p = R.pack_padded_sequence(x, lens, batch_first=batch_first, enforce_sorted=enforce_sorted)
        assert (p.sorted_indices is None) == enforce_sorted
        padded, out_lens = R.pad_packed_sequence(
            p, batch_first=batch_first, padding_value=0.25, total_length=7
        )
        extras = [] if enforce_sorted else [p.sorted_indices, p.unsorted_indices]
        return [p.data, p.batch_sizes, padded, out_lens, *extras]

    _both(fn, [x])


def test_sort_ties_are_stable_like_torch() -> None:
    lengths = [2, 4, 2, 4, 2, 1, 4]
    x = np.zeros((4, len(lengths), 1))
    got = [
        _np(
            m.nn.utils.rnn.pack_padded_sequence(
                m.tensor(x), lengths, enforce_sorted=False
            ).sorted_indices
        )
        for m in (torch, cr)
    ]
    np.testing.assert_array_equal(got[0], got[1])


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_and_unpack_sequence(enforce_sorted: bool) -> None:
    lengths = [4, 2, 1] if enforce_sorted else [2, 4, 1]

    def fn(m: Any, *s: Any) -> Any:
        R = m.nn.utils.rnn
        p = R.pack_sequence(list(s), enforce_sorted=enforce_sorted)
        back = R.unpack_sequence(p)
        assert [tuple(b.shape) for b in back] == [tuple(a.shape) for a in s]
        return [p.data, p.batch_sizes, *back]

    _both(fn, _seqs(lengths, (3,)))


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence(batch_first: bool) -> None:
    x = np.random.default_rng(3).standard_normal((3, 4, 2) if batch_first else (4, 3, 2))

    def fn(m: Any, x: Any) -> Any:
        # torch transposes its argument in place, which a leaf refuses: pass a non-leaf.
        return m.nn.utils.rnn.unpad_sequence(x * 1, m.tensor([4, 1, 3]), batch_first=batch_first)

    _both(fn, [x])


def test_packed_sequence_fields_and_conversions() -> None:
    R = cr.nn.utils.rnn
    p = R.pack_padded_sequence(cr.ones(3, 2, 2), [2, 3], enforce_sorted=False)
    assert isinstance(p, tuple) and p._fields == (
        "data",
        "batch_sizes",
        "sorted_indices",
        "unsorted_indices",
    )
    data, batch_sizes, si, ui = p
    assert batch_sizes.dtype == cr.int64 and batch_sizes.tolist() == [2, 2, 1]
    assert si.tolist() == [1, 0] and ui.tolist() == [1, 0]
    d = p.double()
    assert isinstance(d, R.PackedSequence) and d.data.dtype == cr.float64
    assert d.batch_sizes is p.batch_sizes and d.sorted_indices.tolist() == [1, 0]
    assert p.to(cr.float32) is p
    assert p.float().data.dtype == cr.float32 and p.long().data.dtype == cr.int64
    assert p.to("cpu") is p and p.cpu() is p
    assert p.is_cuda is False and p.is_pinned() is False
    q = R.PackedSequence(cr.ones(3), cr.tensor([2, 1]), cr.tensor([1, 0]))
    assert q.unsorted_indices.tolist() == [1, 0]
    assert R.PackedSequence((cr.ones(3), cr.tensor([2, 1]))).batch_sizes.tolist() == [2, 1]
    assert R.invert_permutation(cr.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    assert R.invert_permutation(None) is None


def _err(fn: Any) -> tuple[str, str] | None:
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (comparing whatever each library raises)
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize(
    "case",
    [
        lambda m: m.nn.utils.rnn.pack_padded_sequence(m.zeros(5, 3, 2), [4, 5, 2]),
        lambda m: m.nn.utils.rnn.pack_padded_sequence(m.zeros(5, 3, 2), [5, 4, 0]),
        lambda m: m.nn.utils.rnn.pack_padded_sequence(m.zeros(5, 3, 2), [5, 4]),
        lambda m: m.nn.utils.rnn.pack_padded_sequence(m.zeros(5, 3, 2), m.tensor([[5, 4, 2]])),
        lambda m: m.nn.utils.rnn.pad_packed_sequence(
            m.nn.utils.rnn.pack_padded_sequence(m.zeros(5, 3, 2), [5, 4, 2]), total_length=3
        ),
        lambda m: m.nn.utils.rnn.pad_sequence([m.ones(2, 3)], padding_side="middle"),
        lambda m: m.nn.utils.rnn.pad_sequence([m.ones(2, 3), m.ones(3, 4)]),
        lambda m: m.nn.utils.rnn.pad_sequence([]),
        lambda m: m.nn.utils.rnn.pack_sequence([m.ones(2), m.ones(3)]),
    ],
)
def test_errors_match_torch(case: Any) -> None:
    t, c = _err(lambda: case(torch)), _err(lambda: case(cr))
    assert t is not None and c == t, (t, c)


def test_length_longer_than_input_is_an_error() -> None:
    """torch reads past the input here; chainrule refuses."""
    with pytest.raises(RuntimeError, match="exceeds the input's sequence length"):
        cr.nn.utils.rnn.pack_padded_sequence(cr.zeros(5, 3, 2), [6, 4, 2])


def test_pad_sequence_of_a_tensor_unbinds_it() -> None:
    x = np.arange(6.0).reshape(2, 3)
    a = torch.nn.utils.rnn.pad_sequence(torch.tensor(x))
    b = cr.nn.utils.rnn.pad_sequence(cr.tensor(x))
    np.testing.assert_array_equal(_np(a), _np(b))
