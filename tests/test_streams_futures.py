"""torch.Stream/torch.Event on the CPU, torch.futures.Future, fork/wait (torch and torch.jit),
the Sym* wrappers and the small enums, compared with PyTorch."""

from __future__ import annotations

import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def _err(fn_cr, fn_t):
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(Exception) as ec:
        fn_cr()
    assert type(ec.value) is type(et.value)
    assert str(ec.value) == str(et.value)


def test_stream_cpu():
    for m in (cr, torch):
        s = m.Stream()
        assert (s.device_index, s.stream_id, s.device_type) == (-1, 0, 0)
        assert str(s.device) == "cpu" and s.query() is True and s.synchronize() is None
        assert s == m.Stream("cpu", priority=0) and hash(s) == hash(m.Stream())
        assert s.wait_event(m.Event()) is None
        with s as entered:
            assert entered is s
    assert repr(cr.Stream()) == repr(torch.Stream())
    for f in (
        lambda m: m.Stream().wait_stream(m.Stream()),
        lambda m: m.Stream().record_event(),
        lambda m: m.Stream("cuda"),
    ):
        _err(lambda: f(cr), lambda: f(torch))


def test_event_cpu():
    for m in (cr, torch):
        e = m.Event()
        assert e.query() is True and e.synchronize() is None and e.event_id == 0
        assert e.wait() is None and e.wait(m.Stream()) is None
        assert str(e.device) == "cpu"
    assert repr(cr.Event()) == repr(torch.Event())
    assert repr(cr.Event(enable_timing=True)) == repr(torch.Event(enable_timing=True))
    for f in (
        lambda m: m.Event().record(),
        lambda m: m.Event().record(m.Stream()),
        lambda m: m.Event().elapsed_time(m.Event()),
        lambda m: m.Event(enable_timing=True).elapsed_time(m.Event(enable_timing=True)),
        lambda m: m.Event("cuda"),
    ):
        _err(lambda: f(cr), lambda: f(torch))


def test_cpu_device_module():
    assert cr.get_device_module() is cr.cpu and cr.get_device_module("cpu") is cr.cpu
    assert cr.get_device_module(cr.device("cpu")) is cr.cpu
    assert torch.get_device_module("cpu") is torch.cpu
    assert cr.get_device_module("cuda") is cr.cuda
    for name in ("is_available", "device_count", "current_device", "synchronize"):
        assert getattr(cr.cpu, name)() == getattr(torch.cpu, name)()
    assert isinstance(cr.cpu.current_stream(), cr.Stream)
    with cr.cpu.stream(cr.cpu.current_stream()):
        pass


def _futures(m):
    return m.futures


@pytest.mark.parametrize("m", [cr, torch], ids=["chainrule", "torch"])
def test_future(m):
    F = _futures(m)
    f = F.Future()
    assert not f.done()
    seen = []
    f.add_done_callback(lambda fut: seen.append(fut.value()))
    g = f.then(lambda fut: fut.value() + 1)
    f.set_result(3)
    assert f.done() and f.wait() == 3 and f.value() == 3 and seen == [3]
    assert g.wait() == 4
    f.add_done_callback(lambda fut: seen.append(-fut.value()))
    assert seen == [3, -3]
    with pytest.raises(RuntimeError, match="Future can only be marked completed once"):
        f.set_result(4)
    h = F.Future()
    h.set_exception(ValueError("boom"))
    with pytest.raises(ValueError, match="boom"):
        h.wait()
    with pytest.raises(ValueError, match="boom"):
        h.value()
    bad = f.then(lambda fut: 1 / 0)
    msg = "Got the following error when running the callback: ZeroDivisionError: division by zero"
    with pytest.raises(RuntimeError, match=msg):
        bad.wait()
    assert [x.wait() for x in F.collect_all([f, g]).wait()] == [3, 4]
    assert F.wait_all([f, g]) == [3, 4]


@pytest.mark.parametrize("m", [cr, torch], ids=["chainrule", "torch"])
def test_fork_wait(m):
    with pytest.warns(DeprecationWarning, match="`torch.jit.fork` is deprecated"):
        fk = m.jit.fork(lambda a, b=1: a * 2 + b, 5, b=3)
    with pytest.warns(DeprecationWarning, match="`torch.jit.wait` is deprecated"):
        assert m.jit.wait(fk) == 13
    assert fk.done() and m.wait(fk) == 13
    assert m.wait(m.fork(lambda: "x")) == "x"

    def bad():
        raise KeyError("x")

    with pytest.raises(KeyError):
        m.fork(bad)


def test_sym_types():
    i = cr.SymInt(3)
    assert int(i + 2) == 5 and isinstance(i + 2, cr.SymInt) and 2 + i == 5
    assert isinstance(i / 2, cr.SymFloat) and float(i / 2) == 1.5
    assert [10, 20, 30, 40][i] == 40 and bool(i == 3) and hash(i) == hash(3)
    assert i.bit_length() == 2 and i.as_integer_ratio() == (3, 1)
    f = cr.SymFloat(2.5)
    assert float(f * 2) == 5.0 and f.is_integer() is False and bool(f > 2)
    b = cr.SymBool(True)
    assert bool(b & False) is False and bool(~b) is False and isinstance(i < 4, cr.SymBool)
    for m in (cr, torch):
        assert not isinstance(3, m.SymInt)
        assert m.sym_constrain_range(3, min=0, max=5) is None
        assert m.sym_constrain_range_for_size(3) is None
        assert m.sym_fresh_size(5) == 5
    for f in (
        lambda m: m.sym_constrain_range(3, min=4),
        lambda m: m.sym_constrain_range_for_size(-1),
        lambda m: m.sym_constrain_range(9, max=5),
    ):
        _err(lambda: f(cr), lambda: f(torch))


def test_enums():
    assert [(k, int(v)) for k, v in cr.Tag.__members__.items()] == [
        (k, int(v)) for k, v in torch.Tag.__members__.items()
    ]
    assert str(cr.Tag.pointwise) == str(torch.Tag.pointwise)
    assert (cr.Tag.core == 0) == (torch.Tag.core == 0)
    assert cr.Tag.core.name == torch.Tag.core.name
    for n in ("SUM", "AVG"):
        a, b = getattr(cr, n), getattr(torch, n)
        assert str(a) == str(b) and int(a) == int(b) and a.name == b.name
        assert a is getattr(cr.AggregationType, n)


def test_small_helpers():
    class C:
        @cr.classproperty
        def name(cls):
            return cls.__name__ + "!"

    class D(C):
        pass

    assert C.name == "C!" and D.name == "D!" and D().name == "D!"
    assert cr.get_file_path("a", "b").endswith("a/b")
    assert cr.get_file_path() == torch.get_file_path().replace(
        torch.get_file_path(), cr.get_file_path()
    )
    assert cr.prepare_multiprocessing_environment("/tmp") is None
    assert cr.thread_safe_generator() is None and torch.thread_safe_generator() is None


def test_build_constants():
    for n in ("PRIVATE_OPS", "USE_GLOBAL_DEPS", "USE_RTLD_GLOBAL_WITH_LIBTORCH"):
        assert getattr(cr, n) == getattr(torch, n)
    assert (
        cr.profiler_allow_cudagraph_cupti_lazy_reinit_cuda12()
        == torch.profiler_allow_cudagraph_cupti_lazy_reinit_cuda12()
    )
    assert issubclass(cr.FatalError, Exception) and issubclass(torch.FatalError, Exception)
