"""Tensor construction, attributes, conversion and repr, compared with PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def _repr_t(t) -> str:
    return repr(t).replace("torch.", "chainrule.")


@pytest.mark.parametrize(
    "data",
    [
        [123.0, 112.0, 109.0],
        [0.1, 2000.0],
        [1e-5, 1.0],
        [[1.0, 2.0], [3.0, 4.5]],
        3.0,
        [],
        [1e10, 1.0],
        [float("nan"), 1.0, float("inf")],
        [-1.5, 2.25, -0.001],
        [0.0, 0.0],
        [[-1.0, 1e-5], [123456.0, 3.0]],
        [True, False],
        [1, 2, 3],
        7,
        [[1, -20], [300, 4]],
    ],
)
def test_repr_matches_torch(data):
    assert repr(cr.tensor(data)) == _repr_t(torch.tensor(data))


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.arange(2000.0),
        lambda m: m.arange(60.0).reshape(3, 20) / 7,
        lambda m: m.zeros(0, 3),
        lambda m: m.ones(2, 3, dtype=m.float64),
        lambda m: m.ones(2, dtype=m.int32),
        lambda m: m.ones(2, 2, 2),
        lambda m: m.tensor([1.0, 2.0], requires_grad=True),
        lambda m: m.tensor([1.0, 2.0], requires_grad=True) * 2,
        lambda m: m.tensor([[1.0, 2.0]], dtype=m.float64, requires_grad=True).sum(),
        lambda m: m.arange(1200).reshape(2, 600),
    ],
)
def test_repr_matches_torch_more(make):
    assert repr(make(cr)) == _repr_t(make(torch))


def test_dtype_inference_matches_torch():
    for data in [
        1,
        1.0,
        True,
        [1, 2],
        [1.0, 2],
        [True, False],
        np.array([1.0]),
        np.array([1], dtype=np.int32),
        np.array([1.0], dtype=np.float32),
    ]:
        assert cr.tensor(data).dtype.name == str(torch.tensor(data).dtype)[6:], data


def test_factories_match_torch_dtypes_and_values():
    pairs = [
        (cr.zeros(2, 3), torch.zeros(2, 3)),
        (cr.ones((2,)), torch.ones((2,))),
        (cr.full((2,), 3), torch.full((2,), 3)),
        (cr.full((2,), 3.0), torch.full((2,), 3.0)),
        (cr.full((1,), True), torch.full((1,), True)),
        (cr.arange(5), torch.arange(5)),
        (cr.arange(0, 1, 0.25), torch.arange(0, 1, 0.25)),
        (cr.arange(1.0, 2.5, 0.5), torch.arange(1.0, 2.5, 0.5)),
        (cr.linspace(0, 1, 5), torch.linspace(0, 1, 5)),
        (cr.eye(2, 3), torch.eye(2, 3)),
        (
            cr.zeros_like(cr.ones(2, dtype=cr.int32)),
            torch.zeros_like(torch.ones(2, dtype=torch.int32)),
        ),
        (cr.full_like(cr.ones(2), 7), torch.full_like(torch.ones(2), 7)),
    ]
    for c, t in pairs:
        assert c.dtype.name == str(t.dtype)[6:]
        np.testing.assert_allclose(c.numpy(), t.numpy())


def test_random_factories_are_seeded_and_shaped():
    cr.manual_seed(0)
    a = cr.randn(3, 4)
    cr.manual_seed(0)
    b = cr.randn(3, 4)
    assert a.tolist() == b.tolist() and a.shape == (3, 4) and a.dtype == cr.float32
    r = cr.rand(1000)
    assert 0 <= r.min().item() and r.max().item() < 1
    i = cr.randint(3, 7, (100,))
    assert i.dtype == cr.int64 and set(i.tolist()) <= {3, 4, 5, 6}
    g = cr.Generator().manual_seed(5)
    assert (
        cr.randn(2, generator=g).tolist()
        == cr.randn(2, generator=cr.Generator().manual_seed(5)).tolist()
    )


def test_from_numpy_shares_memory_and_as_tensor():
    a = np.arange(3.0)
    t = cr.from_numpy(a)
    a[0] = 9
    assert t.tolist() == [9.0, 1.0, 2.0] and t.dtype == cr.float64
    t[1] = 5
    assert a[1] == 5
    assert cr.as_tensor(a)._data is a
    with pytest.raises(TypeError):
        cr.from_numpy([1, 2])


def test_attributes():
    x = cr.ones(2, 3)
    assert x.shape == (2, 3) and x.size() == (2, 3) and x.size(1) == 3 and x.size(-1) == 3
    assert x.dim() == x.ndim == 2 and x.numel() == 6 and x.dtype is cr.float32
    assert repr(x.shape) == "chainrule.Size([2, 3])"
    assert cr.tensor(2.5).item() == 2.5 and cr.tensor([[1, 2]]).tolist() == [[1, 2]]
    assert x.float() is x and x.double().dtype == cr.float64 and x.long().dtype == cr.int64
    assert x.to(cr.float64).dtype == cr.float64 and x.to("cpu") is x
    assert str(x.device) == "cpu" and x.device == cr.device("cpu")
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        x.item()


def test_data_shares_storage_outside_graph():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.is_leaf
    d[0] = 5.0
    assert x.tolist() == [5.0, 2.0]
    assert x._version == 0  # changes through .data are not tracked, as in PyTorch


def test_zero_and_clone():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = x.clone()
    assert y.grad_fn.name() == "CloneBackward0"
    with cr.no_grad():
        x.zero_()
    assert x.tolist() == [0.0, 0.0] and y.tolist() == [1.0, 2.0] and x._version == 1


def test_legacy_tensor_constructor():
    assert cr.Tensor([1, 2]).dtype == cr.float32
    assert cr.Tensor(2, 3).shape == (2, 3)
    assert isinstance(cr.ones(1), cr.Tensor)
