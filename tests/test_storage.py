"""Storages compared with PyTorch: UntypedStorage, TypedStorage and the legacy typed classes,
Tensor.untyped_storage/storage/storage_type, and set_ (memory shared both ways)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import storage as cr_storage

torch = pytest.importorskip("torch")


def _err(fn_cr, fn_t):
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(Exception) as ec:
        fn_cr()
    assert type(ec.value) is type(et.value)
    assert str(ec.value) == str(et.value)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.arange(6.0),
        lambda m: m.arange(12, dtype=m.int64).reshape(3, 4)[1:],
        lambda m: m.tensor([[1.5, -2.0], [3.0, 4.0]], dtype=m.float64).t(),
        lambda m: m.tensor([True, False, True]),
        lambda m: m.tensor([1 + 2j, 3 - 1j], dtype=m.complex64),
        lambda m: m.arange(10, dtype=m.int16)[2:7:2],
    ],
)
def test_untyped_storage_of_tensor(make):
    a, b = make(cr), make(torch)
    sa, sb = a.untyped_storage(), b.untyped_storage()
    assert sa.size() == sb.size() and sa.nbytes() == sb.nbytes() and len(sa) == len(sb)
    assert sa.tolist() == sb.tolist()
    assert sa.element_size() == sb.element_size() == 1
    assert str(sa.device) == str(sb.device)
    assert a.storage_offset() == b.storage_offset()
    assert sa.data_ptr() == a.data_ptr() - a.storage_offset() * a.element_size()
    ta, tb = a.storage(), b.storage()
    assert ta.size() == tb.size() and ta.tolist() == tb.tolist()
    assert ta.dtype.name == str(tb.dtype).split(".")[-1]
    assert ta.element_size() == tb.element_size() and ta.nbytes() == tb.nbytes()
    assert ta.type() == tb.type()
    assert a.storage_type().__name__ == b.storage_type().__name__
    assert ta.untyped().data_ptr() == sa.data_ptr()
    assert str(ta) == str(tb)


def test_str_and_repr():
    assert str(cr.UntypedStorage([1, 2])) == str(torch.UntypedStorage([1, 2]))
    assert repr(cr.UntypedStorage(0)) == repr(torch.UntypedStorage(0))
    assert str(cr.FloatStorage([1.5, 2])) == str(torch.FloatStorage([1.5, 2]))
    assert str(cr.TypedStorage(0, dtype=cr.float64)) == str(
        torch.TypedStorage(0, dtype=torch.float64)
    )
    assert cr.typename(cr.FloatStorage(1)) == torch.typename(torch.FloatStorage(1))
    assert cr.typename(cr.UntypedStorage(1)) == torch.typename(torch.UntypedStorage(1))


def test_writes_through_storage_reach_tensor():
    for m in (cr, torch):
        x = m.zeros(3)
        x.storage()[0] = 4
        x.untyped_storage()[4:8].copy_(m.FloatStorage([2.5]).untyped())
        assert x.tolist() == [4.0, 2.5, 0.0]
        x.untyped_storage().fill_(0)
        assert x.tolist() == [0.0, 0.0, 0.0]
        s = x.storage()
        x.add_(1)
        assert s.tolist() == [1.0, 1.0, 1.0]


def test_untyped_storage_ops():
    for m in (cr, torch):
        s = m.UntypedStorage(4)
        s.fill_(7)
        assert s.tolist() == [7, 7, 7, 7]
        s[1] = 9
        s[2:4] = 1
        assert s.tolist() == [7, 9, 1, 1]
        t = s[1:3]
        t[0] = 5
        assert s.tolist() == [7, 5, 1, 1]
        assert t.data_ptr() - s.data_ptr() == 1
        s.fill_(300)  # modulo 256, as PyTorch
        assert s.tolist() == [44] * 4
        assert s[-1] == 44
        c = s.clone()
        c[0] = 0
        assert s.tolist() == [44] * 4 and c.tolist() == [0, 44, 44, 44]
        assert c.data_ptr() != s.data_ptr()
        s.copy_(m.UntypedStorage([1, 2, 3, 4]))
        assert s.tolist() == [1, 2, 3, 4]
        assert m.UntypedStorage().size() == 0
        assert m.UntypedStorage([300]).tolist() == [44]
        assert not s.is_shared() and not s.is_pinned()


def test_untyped_storage_errors():
    def pair(f):
        _err(lambda: f(cr), lambda: f(torch))

    pair(lambda m: m.UntypedStorage(4)[10])
    pair(lambda m: m.UntypedStorage(4)[-10])
    pair(lambda m: m.UntypedStorage(4).__setitem__(10, 1))
    pair(lambda m: m.UntypedStorage(4).copy_(m.UntypedStorage(3)))
    pair(lambda m: m.UntypedStorage(4)["a"])
    pair(lambda m: m.UntypedStorage(4).__setitem__(slice(0, 2), m.UntypedStorage(2)))


@pytest.mark.parametrize(
    "name",
    [
        "FloatStorage",
        "DoubleStorage",
        "HalfStorage",
        "BFloat16Storage",
        "LongStorage",
        "IntStorage",
        "ShortStorage",
        "CharStorage",
        "ByteStorage",
        "BoolStorage",
        "ComplexFloatStorage",
        "ComplexDoubleStorage",
    ],
)
def test_legacy_classes(name):
    ca, ct = getattr(cr, name), getattr(torch, name)
    assert ca.dtype.name == str(ct.dtype).split(".")[-1]
    data = [1, 0, 1] if name == "BoolStorage" else [1, 2, -1] if "Byte" not in name else [1, 2, 3]
    a, b = ca(data), ct(data)
    assert a.tolist() == b.tolist()
    assert a.dtype.name == str(b.dtype).split(".")[-1]
    assert isinstance(a, cr.TypedStorage)
    assert a.size() == b.size() == 3 and a.nbytes() == b.nbytes()
    assert a.type() == b.type()
    assert ca(4).size() == ct(4).size()
    assert a[1] == b[1] and type(a[1]) is type(b[1])


def test_typed_storage_ops_and_errors():
    for m in (cr, torch):
        fs = m.FloatStorage([1.5, 2, 3])
        assert fs[0] == 1.5 and isinstance(fs[0], float)
        fs[1] = 7
        assert fs.tolist() == [1.5, 7.0, 3.0]
        fs.fill_(2)
        assert fs.tolist() == [2.0, 2.0, 2.0]
        assert fs.untyped().nbytes() == 12 and len(fs) == 3
        assert fs.data_ptr() == fs.untyped().data_ptr()
        assert m.FloatStorage([1.5]).long().tolist() == [1]
        assert m.FloatStorage([1.5]).double().dtype == m.float64
        cl = fs.clone()
        cl[0] = 9
        assert fs[0] == 2.0
        fs.copy_(m.FloatStorage([4, 5, 6]))
        assert fs.tolist() == [4.0, 5.0, 6.0]
        assert m.TypedStorage([1.0, 2.0], dtype=m.float64).tolist() == [1.0, 2.0]
        assert m.TypedStorage(dtype=m.float32).size() == 0
        assert m.Storage is m.FloatStorage
        assert m.is_storage(fs) and m.is_storage(fs.untyped())
        assert not m.is_storage(m.zeros(1))

    def pair(f):
        _err(lambda: f(cr), lambda: f(torch))

    pair(lambda m: m.FloatStorage([1.0, 2.0])[5])
    pair(lambda m: m.FloatStorage([1.0, 2.0])[0:1])
    pair(lambda m: m.FloatStorage(3).copy_(m.FloatStorage(2)))
    pair(lambda m: m.TypedStorage([1, 2], dtype=m.int64)[3])


def test_typed_storage_deprecation_warning():
    # PyTorch warns once per process; both libraries' flags are reset to check the category.
    torch.storage._warn_typed_storage_removal.__dict__["has_warned"] = False
    cr_storage._WARNED.clear()
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        torch.zeros(2).storage()
    with warnings.catch_warnings(record=True) as wc:
        warnings.simplefilter("always")
        cr.zeros(2).storage()
        cr.zeros(2).storage()  # only once
    assert [w.category for w in wc] == [w.category for w in wt] == [UserWarning]
    assert str(wc[0].message) == str(wt[0].message)


def test_set_storage_shares_memory():
    for m in (cr, torch):
        x = m.arange(6.0)
        y = m.empty(0)
        y.set_(x.untyped_storage(), 2, (2,), (1,))
        assert y.tolist() == [2.0, 3.0]
        assert y.storage_offset() == 2
        y[0] = 100
        assert x.tolist() == [0.0, 1.0, 100.0, 3.0, 4.0, 5.0]
        x[3] = -1
        assert y.tolist() == [100.0, -1.0]
        z = m.empty(0)
        z.set_(x)
        assert z.is_set_to(x) and z.tolist() == x.tolist()
        z2 = m.empty(0)
        z2.set_(x.storage())
        assert z2.tolist() == x.tolist()
        z3 = m.zeros(3)
        z3.set_()
        assert tuple(z3.shape) == (0,)
        w = m.zeros(3)
        w.set_(m.FloatStorage([1, 2, 3, 4]), 1, (2,))
        assert w.tolist() == [2.0, 3.0]
        v = m.zeros(1)
        v.set_(x.untyped_storage(), 0, (2, 2), (1, 2))
        assert v.tolist() == [[0.0, 100.0], [1.0, -1.0]]
        ver = v._version
        v.set_(x)
        assert v._version == ver + 1


def test_set_errors():
    def pair(f):
        _err(lambda: f(cr), lambda: f(torch))

    pair(lambda m: m.zeros(2).set_(m.LongStorage([1])))
    pair(lambda m: m.zeros(2, dtype=m.int64).set_(m.FloatStorage(2)))
    pair(lambda m: m.zeros(2, dtype=m.bool).set_(m.FloatStorage(2)))
    pair(lambda m: m.zeros(2).set_(m.UntypedStorage(2), 0, (2,), (1,)))
    pair(lambda m: m.zeros(2, requires_grad=True).set_(m.zeros(3)))
    pair(lambda m: m.zeros(2, dtype=m.float64).set_(m.zeros(2)))


def test_set_on_graph_tensor_is_refused_and_no_grad_works():
    x = cr.ones(3, requires_grad=True) * 2
    with pytest.raises(NotImplementedError, match="autograd history"):
        x.set_(cr.zeros(2))
    p = cr.ones(3, requires_grad=True)
    with cr.no_grad():
        p.set_(cr.arange(2.0))
    assert p.tolist() == [0.0, 1.0] and p.requires_grad


def test_storage_round_trip_through_numpy_memory():
    x = cr.arange(4, dtype=cr.int32)
    s = x.untyped_storage()
    view = np.frombuffer(bytes(s.tolist()), dtype=np.int32)
    np.testing.assert_array_equal(view, x.numpy())
    t = torch.frombuffer(bytearray(bytes(s.tolist())), dtype=torch.int32)
    assert t.tolist() == x.tolist()


def test_tensor_small_methods():
    class MC(cr.Tensor):
        pass

    class MT(torch.Tensor):
        pass

    for m, M in ((cr, MC), (torch, MT)):
        x = m.arange(3.0, requires_grad=True)
        y = x.as_subclass(M)
        assert type(y) is M and y.data_ptr() == x.data_ptr()
        assert y.requires_grad and not y.is_leaf
        (y * 2).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0, 2.0]
        assert x.is_nested is False
    _err(lambda: cr.zeros(1).as_subclass(int), lambda: torch.zeros(1).as_subclass(int))
    with pytest.raises(NotImplementedError, match="Could not run 'aten::record_stream'"):
        cr.zeros(1).record_stream(cr.Stream())
    with pytest.raises(NotImplementedError, match="Could not run 'aten::record_stream'"):
        torch.zeros(1).record_stream(torch.Stream())
