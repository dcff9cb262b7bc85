"""The Tensor surface beyond math ops, compared with PyTorch: ``new_*`` constructors, memory
layout queries, ``as_strided``, ``apply_``/``map_``, shared/pinned memory and DLPack."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def _same(a, b) -> None:
    """Same values, dtype name, shape and requires_grad as the torch tensor ``b``."""
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape)
    assert a.requires_grad == b.requires_grad
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def _err(fn_cr, fn_t):
    """Both raise; the same type and message."""
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(Exception) as ec:
        fn_cr()
    assert type(ec.value) is type(et.value)
    assert str(ec.value) == str(et.value)


def _pair(make):
    return make(cr), make(torch)


SOURCES = [
    lambda m: m.ones(2, 3, requires_grad=True),
    lambda m: m.ones(2, dtype=m.int32),
    lambda m: m.arange(4, dtype=m.float64),
]

CALLS = [
    lambda t, m: t.new_tensor([1.5, 2.0]),
    lambda t, m: t.new_tensor(np.array([1, 2])),
    lambda t, m: t.new_tensor([[1, 2]], dtype=m.int64),
    lambda t, m: t.new_tensor([1.0], dtype=m.float64, requires_grad=True),
    lambda t, m: t.new_zeros(2, 3),
    lambda t, m: t.new_zeros((2, 3), dtype=m.int64),
    lambda t, m: t.new_zeros([0]),
    lambda t, m: t.new_ones(2),
    lambda t, m: t.new_ones(m.Size([1, 2]), dtype=m.float32, requires_grad=True),
    lambda t, m: t.new_full((2,), 3.5),
    lambda t, m: t.new_full([2, 1], 7, dtype=m.float64),
    lambda t, m: t.new_empty(3).shape,
    lambda t, m: t.new_empty((2, 2), dtype=m.int16).dtype,
    lambda t, m: t.type_as(m.ones(1, dtype=m.int32)),
    lambda t, m: t.type_as(m.ones(1, dtype=m.float64)),
]


@pytest.mark.parametrize("src", range(len(SOURCES)))
@pytest.mark.parametrize("call", range(len(CALLS)))
def test_new_constructors_match_torch(src, call):
    a, b = _pair(SOURCES[src])
    try:
        rt = CALLS[call](b, torch)
    except Exception:
        _err(lambda: CALLS[call](a, cr), lambda: CALLS[call](b, torch))
        return
    rc = CALLS[call](a, cr)
    if isinstance(rt, torch.Tensor):
        _same(rc, rt)
        assert not rc.is_leaf or rc.grad_fn is None
    else:
        assert str(rc).replace("chainrule", "torch") == str(rt)


@pytest.mark.parametrize(
    "call",
    [
        lambda t, m: t.new_full(2, 3.0),
        lambda t, m: t.new_ones(2, requires_grad=True),  # integer self: no gradients
        lambda t, m: t.new_zeros(2.5),
        lambda t, m: t.new_zeros(2, 2.5),
        lambda t, m: t.new_full((2, 2.5), 1.0),
    ],
)
def test_new_constructor_errors(call):
    _err(
        lambda: call(cr.ones(2, dtype=cr.int64), cr),
        lambda: call(torch.ones(2, dtype=torch.int64), torch),
    )


def test_new_tensor_copies_and_warns_on_tensor():
    x = cr.ones(3, requires_grad=True)
    with pytest.warns(UserWarning, match="rather than tensor.new_tensor"):
        y = x.new_tensor(x)
    assert not y.requires_grad and y.grad_fn is None
    y[0] = 5.0
    assert x[0].item() == 1.0
    a = np.arange(3.0)
    z = cr.ones(1, dtype=cr.float64).new_tensor(a)
    z[0] = 9.0
    assert a[0] == 0.0


LAYOUTS = [
    lambda m: m.arange(24.0).reshape(2, 3, 4),
    lambda m: m.arange(24.0).reshape(2, 3, 4).transpose(0, 2),
    lambda m: m.arange(24.0).reshape(2, 3, 4)[1:, ::2, 1:3],
    lambda m: m.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
    lambda m: m.arange(6.0).reshape(3, 2)[:, 1],
    lambda m: m.arange(3.0).reshape(3, 1).expand(3, 4),
    lambda m: m.arange(10, dtype=m.int16)[3:],
    lambda m: m.zeros(0, 3),
    lambda m: m.ones(2, 1, 3).permute(2, 0, 1),
    lambda m: m.tensor(5.0),
]


@pytest.mark.parametrize("make", range(len(LAYOUTS)))
def test_layout_queries_match_torch(make):
    a, b = _pair(LAYOUTS[make])
    assert a.stride() == b.stride()
    assert a.storage_offset() == b.storage_offset()
    assert a.is_contiguous() == b.is_contiguous()
    assert a.element_size() == b.element_size() and a.itemsize == b.itemsize
    assert a.nbytes == b.nbytes
    assert a.dim_order() == b.dim_order()
    ca, cb = a.contiguous(), b.contiguous()
    assert ca.stride() == cb.stride() and ca.is_contiguous()
    assert (ca is a) == (cb is b)
    np.testing.assert_array_equal(ca.numpy(), cb.numpy())


def test_data_ptr_is_the_first_element():
    x = cr.arange(10.0)
    assert x.data_ptr() == x.numpy().ctypes.data
    assert x[3:].data_ptr() == x.data_ptr() + 3 * 4
    assert x.view(2, 5).data_ptr() == x.data_ptr()
    assert x.clone().data_ptr() != x.data_ptr()
    assert cr.zeros(0).data_ptr() == torch.zeros(0).data_ptr() == 0


def test_contiguous_of_a_view_is_a_differentiable_copy():
    x = cr.arange(6.0, requires_grad=True)
    y = x.view(2, 3).t()
    c = y.contiguous()
    assert c.data_ptr() != x.data_ptr() and c.stride() == (2, 1)
    (c * cr.arange(6.0).view(3, 2)).sum().backward()
    xt = torch.arange(6.0, requires_grad=True)
    (xt.view(2, 3).t().contiguous() * torch.arange(6.0).view(3, 2)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


def test_numpy_force():
    x = cr.ones(2, requires_grad=True)
    xt = torch.ones(2, requires_grad=True)
    _err(lambda: x.numpy(), lambda: xt.numpy())
    np.testing.assert_array_equal(x.numpy(force=True), xt.numpy(force=True))
    y = cr.ones(2)
    assert np.shares_memory(y.numpy(), y.numpy(force=True))


@pytest.mark.parametrize(
    "args",
    [
        ((2, 2), (1, 2), 1),
        ((3,), (2,)),
        ((2, 3), (0, 1)),
        ((2, 2), (3, 1), 0),
        ((0, 4), (1, 1)),
        ((3, 3), (1, 1)),  # out of bounds
        ((2,), (1, 1)),  # length mismatch
    ],
)
def test_as_strided_matches_torch(args):
    a, b = cr.arange(6.0), torch.arange(6.0)
    try:
        rt = b.as_strided(*args)
    except Exception:
        _err(lambda: a.as_strided(*args), lambda: b.as_strided(*args))
        return
    rc = a.as_strided(*args)
    assert rc.stride() == rt.stride() and rc.storage_offset() == rt.storage_offset()
    np.testing.assert_array_equal(rc.numpy(), rt.numpy())
    if rc.numel():
        a.fill_(-1.0)  # a view: writes through the storage are seen
        assert (rc.numpy() == -1.0).all()


def test_as_strided_gradient_matches_torch():
    a = cr.arange(6.0, dtype=cr.float64, requires_grad=True)
    b = torch.arange(6.0, dtype=torch.float64, requires_grad=True)
    w = np.arange(8.0).reshape(2, 4)
    (a.as_strided((2, 4), (2, 1), 0) * cr.tensor(w)).sum().backward()
    (b.as_strided((2, 4), (2, 1), 0) * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    assert cr.autograd.gradcheck(
        lambda t: t.as_strided((3, 2), (1, 2)), (cr.randn(6, dtype=cr.float64, requires_grad=True),)
    )


def test_apply_and_map_match_torch():
    a, b = cr.arange(6.0).view(2, 3), torch.arange(6.0).view(2, 3)
    v0 = a._version
    assert a.apply_(lambda v: v * v + 1) is a
    b.apply_(lambda v: v * v + 1)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a._version == v0 + 1
    ai, bi = cr.arange(4, dtype=cr.int32), torch.arange(4, dtype=torch.int32)
    ai.apply_(lambda v: v // 2 - 1)
    bi.apply_(lambda v: v // 2 - 1)
    _same(ai, bi)
    a.map_(cr.tensor([10.0, 20.0, 30.0]), lambda x, y: x - y)
    b.map_(torch.tensor([10.0, 20.0, 30.0]), lambda x, y: x - y)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.ones(2, requires_grad=True).apply_(lambda v: v),
        lambda m: m.ones(3).map_(m.arange(2.0), lambda x, y: x),
        lambda m: m.ones(3).map_(m.arange(3), lambda x, y: x),
        lambda m: m.ones(2).pin_memory(),
    ],
)
def test_apply_map_pin_errors(call):
    _err(lambda: call(cr), lambda: call(torch))


def test_pinned_and_shared_memory():
    x = cr.arange(4.0)
    assert x.is_pinned() is torch.arange(4.0).is_pinned() is False
    assert not x.is_shared()
    v0 = x.data_ptr()
    assert x.share_memory_() is x
    assert x.is_shared() and x.data_ptr() != v0
    assert x.share_memory_().data_ptr() == x.data_ptr()  # already shared: no-op
    np.testing.assert_array_equal(x.numpy(), np.arange(4.0, dtype=np.float32))
    y = x.view(2, 2)
    y[0, 0] = 7.0
    assert x[0].item() == 7.0 and y.is_shared()


def test_dlpack_with_numpy_and_torch():
    a = np.arange(6.0).reshape(2, 3)
    t = cr.from_dlpack(a)
    assert t.dtype == cr.float64 and t.shape == (2, 3)
    t[0, 0] = 7.0  # shared memory, both ways
    assert a[0, 0] == 7.0
    back = np.from_dlpack(t)
    back[1, 2] = -1.0
    assert t[1, 2].item() == -1.0
    assert t.__dlpack_device__() == tuple(torch.ones(1).__dlpack_device__())
    tt = torch.arange(4, dtype=torch.int32)
    c = cr.from_dlpack(tt)
    _same(c, tt)
    c[0] = 9
    assert tt[0].item() == 9
    d = torch.from_dlpack(cr.arange(3.0).t())
    assert d.tolist() == [0.0, 1.0, 2.0]
    caps = cr.utils.dlpack.to_dlpack(t)
    e = cr.utils.dlpack.from_dlpack(caps)
    assert e.data_ptr() == t.data_ptr()
    with pytest.raises(BufferError, match="Can't export tensors that require gradient"):
        cr.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(TypeError, match="from_dlpack"):
        cr.from_dlpack([1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cr.from_dlpack(cr.ones(2)).tolist() == [1.0, 1.0]


# In-place forms generated from out-of-place methods ---------------------------------------------
from chainrule._methods.inplace_generated import INPLACE_OF  # noqa: E402

_X = np.array([[0.3, -0.7, 0.55], [-0.2, 0.9, 0.1]])
_Y = np.array([[0.6, 0.25, -0.4], [0.8, -0.35, 0.5]])
_SQ = np.eye(3) * 0.5 + 0.1 * np.arange(9.0).reshape(3, 3)
_ARGS = {  # arguments after self, as a function of the module (chainrule or torch)
    "atan2": lambda m: (m.tensor(_Y),),
    "arctan2": lambda m: (m.tensor(_Y),),
    "copysign": lambda m: (m.tensor(_Y),),
    "heaviside": lambda m: (m.tensor(_Y),),
    "hypot": lambda m: (m.tensor(_Y),),
    "fmod": lambda m: (0.25,),
    "remainder": lambda m: (0.25,),
    "floor_divide": lambda m: (m.tensor(_Y),),
    "true_divide": lambda m: (m.tensor(_Y),),
    "divide": lambda m: (m.tensor(_Y),),
    "multiply": lambda m: (m.tensor(_Y),),
    "subtract": lambda m: (m.tensor(_Y),),
    "float_power": lambda m: (2,),
    "lerp": lambda m: (m.tensor(_Y), 0.3),
    "nan_to_num": lambda m: (),
    "renorm": lambda m: (2, 0, 0.5),
    "cumsum": lambda m: (1,),
    "cumprod": lambda m: (0,),
    "addmm": lambda m: (m.tensor(_Y), m.tensor(_SQ)),
    "addmv": None,
    "addr": None,
    "addbmm": None,
    "baddbmm": None,
    **{
        n: (lambda m: (m.tensor(_Y),))
        for n in (
            "eq",
            "ne",
            "not_equal",
            "lt",
            "less",
            "le",
            "less_equal",
            "gt",
            "greater",
            "ge",
            "greater_equal",
            "logical_and",
            "logical_or",
            "logical_xor",
        )
    },
}
_SHAPED = {  # ops whose self must have another shape: (self, args)
    "addmv": lambda m: (m.tensor(_X[0]), (m.tensor(_Y.T), m.tensor(_X[1, :2]))),
    "addr": lambda m: (m.tensor(_X), (m.tensor(_Y[0, :2]), m.tensor(_Y[1]))),
    "addbmm": lambda m: (
        m.tensor(_X),
        (m.tensor(np.stack([_X, _Y])), m.tensor(np.stack([_SQ, _SQ.T]))),
    ),
    "baddbmm": lambda m: (
        m.tensor(np.stack([_X, _Y])),
        (m.tensor(np.stack([_Y, _X])), m.tensor(np.stack([_SQ, _SQ.T]))),
    ),
}
_INT_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"}


def _inputs(m, base, dtype):
    if base in _SHAPED:
        s, args = _SHAPED[base](m)
        return s.to(dtype), tuple(a.to(dtype) for a in args)
    if base in _INT_ONLY:
        x = m.tensor(np.array([[3, -5, 6], [0, 9, -1]]))
        return x, (() if base == "bitwise_not" else (m.tensor([[1, 7, 2], [4, 4, 8]]),))
    x = m.tensor(_X).to(dtype)
    args = _ARGS.get(base, lambda m: ())(m)
    return x, tuple(a.to(dtype) if isinstance(a, (cr.Tensor, torch.Tensor)) else a for a in args)


@pytest.mark.parametrize("name", sorted(INPLACE_OF))
def test_generated_inplace_values_match_torch(name):
    base = INPLACE_OF[name]
    dtype = "float64" if base == "float_power" else "float32"
    a, args_a = _inputs(cr, base, getattr(cr, dtype))
    b, args_b = _inputs(torch, base, getattr(torch, dtype))
    va = a._version
    assert getattr(a, name)(*args_a) is a
    getattr(b, name)(*args_b)
    assert a._version == va + 1
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "name",
    [
        "floor_",
        "cosh_",
        "hypot_",
        "lerp_",
        "cumsum_",
        "eq_",
        "float_power_",
        "reciprocal_",
        "addmm_",
        "negative_",
    ],
)
def test_generated_inplace_gradients_and_leaf_errors(name):
    base = INPLACE_OF[name]
    res = []
    for m in (cr, torch):
        x, args = _inputs(m, base, m.float64)
        x.requires_grad_(True)
        w = m.tensor(_Y.sum() + np.arange(x.numel()).reshape(tuple(x.shape)))
        with pytest.raises(RuntimeError) as e:  # a leaf that requires grad
            getattr(x, name)(*args)
        assert "a leaf Variable that requires grad" in str(e.value)
        y = x * 1.5
        out = getattr(y, name)(*args)
        assert out is y and y.requires_grad
        (y * w).sum().backward()
        res.append((y.detach().numpy().copy(), x.grad.numpy().copy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-7)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-7)


def test_generated_inplace_on_view_rewrites_base():
    for m in (cr, torch):
        x = m.tensor(_X, requires_grad=True)
        y = x * 2
        y[0].cosh_()
        y.sum().backward()
        if m is cr:
            ya, ga, name = y.detach().numpy(), x.grad.numpy(), y.grad_fn.name()
    assert name == "CopySlices" and y.grad_fn.name().endswith("CopySlices")
    np.testing.assert_allclose(ya, y.detach().numpy(), rtol=1e-7)
    np.testing.assert_allclose(ga, x.grad.numpy(), rtol=1e-7)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.ones(2).float_power_(2),
        lambda m: m.ones(2, dtype=m.int64).true_divide_(2),
        lambda m: m.ones(2).hypot_(m.ones(3, 2)),
        lambda m: m.tensor([1.0, 2.0], requires_grad=True).floor_(),
    ],
)
def test_generated_inplace_errors(call):
    _err(lambda: call(cr), lambda: call(torch))


def test_saved_value_changed_by_generated_inplace_is_caught():
    for m in (cr, torch):
        x = m.tensor(_X, requires_grad=True)
        y = x * 1
        z = y.sin()  # saves y
        y.tan_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


# Indexing by range, lists, NumPy arrays and tuples of them ------------------------------------
_INDICES = [
    range(2),
    range(0, 3, 2),
    range(0),
    [],
    [0, 2],
    [-1, 0],
    [True, False, True],
    [0.5, 2.0],
    np.array([0, 2]),
    np.array([[0], [2]]),
    np.array([True, False, True]),
    np.array([0.0, 1.7]),
    np.array([2, 0], dtype=np.int32),
    np.array(1),
    (range(2), [1, 2]),
    ([0, 1], range(2)),
    (slice(None), np.array([1, 3])),
    (np.array([0, 2]), np.array([1, 3])),
    (range(2),),
    ([0, 1], ...),
    (..., range(1, 3)),
    (1, range(2)),
    (np.int64(1), range(2)),
    (slice(1, None), [True, False, True, False]),
    ([[0, 1], [1, 2]],),
    (None, range(2)),
    [5],
    (range(4),),
    np.array([True, False]),
    (range(2), [1, 2, 3]),
]


def _index_result(m, idx):
    x = m.arange(12.0, dtype=m.float64).reshape(3, 4).requires_grad_(True)
    try:
        y = x[idx]
    except Exception as e:
        return ("error", type(e), str(e))
    (y * m.arange(y.numel(), dtype=m.float64).reshape(y.shape)).sum().backward()
    return ("ok", y.detach().numpy().copy(), x.grad.numpy().copy())


@pytest.mark.parametrize("idx", range(len(_INDICES)))
def test_getitem_sequences_match_torch(idx):
    a, b = _index_result(cr, _INDICES[idx]), _index_result(torch, _INDICES[idx])
    assert a[0] == b[0], (a, b)
    if a[0] == "error":
        assert a[1] is b[1] and a[2] == b[2]
    else:
        np.testing.assert_array_equal(a[1], b[1])
        np.testing.assert_array_equal(a[2], b[2])


@pytest.mark.parametrize("idx", range(len(_INDICES)))
def test_setitem_sequences_match_torch(idx):
    res = []
    for m in (cr, torch):
        x = m.arange(12.0, dtype=m.float64).reshape(3, 4).requires_grad_(True)
        v = m.tensor(-1.5, dtype=m.float64, requires_grad=True)
        y = x * 1
        try:
            y[_INDICES[idx]] = v
        except Exception as e:
            res.append(("error", type(e), str(e)))
            continue
        (y * m.arange(12.0, dtype=m.float64).reshape(3, 4)).sum().backward()
        res.append(("ok", y.detach().numpy().copy(), x.grad.numpy().copy(), v.grad.item()))
    a, b = res
    assert a[0] == b[0], (a, b)
    if a[0] == "error":
        assert a[1] is b[1] and a[2] == b[2]
    else:
        for p, q in zip(a[1:], b[1:]):
            np.testing.assert_array_equal(p, q)


def test_setitem_with_sequence_values():
    for m in (cr, torch):
        x = m.zeros(3, 4)
        x[range(1, 3), [0, 3]] = m.tensor([5.0, 6.0])
        x[np.array([0])] = 2.0
        if m is cr:
            got = x.numpy().copy()
    np.testing.assert_array_equal(got, x.numpy())


# out= ---------------------------------------------------------------------------------------
_OUT_CALLS = [
    ("add", lambda m: (m.ones(2, 3), 2.0), {}),
    ("add", lambda m: (m.ones(2, 3), m.arange(3.0)), {"alpha": 2}),
    ("sub", lambda m: (m.ones(2), m.ones(2)), {}),
    ("mul", lambda m: (m.arange(4.0), 3), {}),
    ("div", lambda m: (m.arange(4.0), 2), {"rounding_mode": "floor"}),
    ("matmul", lambda m: (m.ones(2, 3), m.arange(6.0).reshape(3, 2)), {}),
    ("cat", lambda m: ([m.ones(2), m.zeros(3)],), {}),
    ("stack", lambda m: ([m.ones(2), m.zeros(2)], 1), {}),
    ("sum", lambda m: (m.arange(6.0).reshape(2, 3), 1), {}),
    ("mean", lambda m: (m.arange(6.0).reshape(2, 3),), {"dim": 0, "keepdim": True}),
    ("clamp", lambda m: (m.arange(6.0), 1, 4), {}),
    ("exp", lambda m: (m.arange(3.0),), {}),
    ("log", lambda m: (m.arange(1.0, 4.0),), {}),
    ("sqrt", lambda m: (m.arange(4.0),), {}),
    ("where", lambda m: (m.tensor([True, False]), m.ones(2), m.zeros(2)), {}),
    ("maximum", lambda m: (m.tensor([1, 5]), m.tensor([3, 2])), {}),
]
_OUT_DTYPES = ["float32", "float64", "int64"]


@pytest.mark.parametrize("dt", _OUT_DTYPES)
@pytest.mark.parametrize("shape", [(0,), None])  # empty out (resized), right shape
@pytest.mark.parametrize("call", range(len(_OUT_CALLS)))
def test_out_matches_torch(call, shape, dt):
    name, args, kw = _OUT_CALLS[call]
    res = []
    for m in (cr, torch):
        ref = getattr(m, name)(*args(m), **kw)
        o = m.empty(shape if shape is not None else tuple(ref.shape), dtype=getattr(m, dt))
        try:
            r = getattr(m, name)(*args(m), **kw, out=o)
        except Exception as e:
            res.append((type(e), str(e)))
            continue
        assert r is o
        res.append((str(o.dtype).split(".")[-1], o.numpy().copy(), o.stride(), o._version > 0))
    a, b = res
    assert len(a) == len(b)
    if len(a) == 2:
        assert a == b
    else:
        assert a[0] == b[0] and a[2:] == b[2:]
        np.testing.assert_allclose(a[1], b[1], rtol=1e-6)


def test_out_tuple_and_factories_match_torch():
    res = []
    for m in (cr, torch):
        v, i = m.empty(0), m.empty(0, dtype=m.int64)
        r = m.max(m.tensor([[1.0, 5.0], [4.0, 2.0]]), 1, out=(v, i))
        assert r[0] is v and r[1] is i and r.values is v
        z = m.zeros(2, 3, out=m.empty(0, dtype=m.int64))
        a = m.arange(1, 4, out=m.empty(0, dtype=m.float64))
        f = m.full((2,), 7, out=m.empty(2, dtype=m.int32))
        res.append([t.tolist() for t in (v, i, z, a, f)] + [str(t.dtype)[-5:] for t in (z, a, f)])
    assert res[0] == res[1]


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.add(m.ones(2, requires_grad=True), 1, out=m.empty(2)),
        lambda m: m.exp(m.ones(2), out=m.empty(2, requires_grad=True)),
        lambda m: m.cat([m.ones(2, requires_grad=True)], out=m.empty(0)),
        lambda m: m.add(m.ones(2), 1, out=m.empty(2, dtype=m.int64)),
        lambda m: m.cat([m.ones(2)], out=m.empty(0, dtype=m.int64)),
        lambda m: m.mean(m.ones(2, 3), out=m.empty(0, dtype=m.int64)),
        lambda m: m.zeros(2, dtype=m.float32, out=m.empty(0, dtype=m.int64)),
    ],
)
def test_out_errors_match_torch(call):
    _err(lambda: call(cr), lambda: call(torch))


def test_out_under_no_grad_and_resize_warning():
    for m in (cr, torch):
        a = m.ones(2, requires_grad=True)
        with m.no_grad():
            r = m.mul(a, 3, out=m.empty(2))
        assert r.tolist() == [3.0, 3.0] and not r.requires_grad
        with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
            o = m.add(m.ones(2), 1, out=m.empty(3))
        assert o.shape == (2,)
