"""``chainrule.cuda``: against PyTorch's CPU build without a GPU, and on the CuPy stand-in."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.backends import get_backend


def _outcome(f):
    try:
        return ("ok", f())
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return (type(e).__name__, str(e))


# Without a GPU: the same answers and errors as PyTorch's CPU build ---------------------------
@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.cuda.is_available(),
        lambda m: m.cuda.device_count(),
        lambda m: m.cuda.memory_allocated(),
        lambda m: m.cuda.max_memory_allocated(),
        lambda m: m.cuda.memory_reserved(),
        lambda m: m.cuda.manual_seed(0),
        lambda m: m.cuda.manual_seed_all(0),
        lambda m: m.cuda.empty_cache(),
        lambda m: m.cuda.current_device(),
        lambda m: m.cuda.synchronize(),
        lambda m: m.cuda.get_device_name(0),
        lambda m: m.cuda.get_device_properties(0),
        lambda m: m.cuda.get_device_capability(),
        lambda m: m.cuda.current_stream(),
        lambda m: m.cuda.Stream(),
        lambda m: m.cuda.stream(None).__enter__(),
        lambda m: m.cuda.device(-1).__enter__() and None,
        lambda m: m.cuda.device(0).__enter__(),
        lambda m: m.cuda.Event(enable_timing=True),
    ],
)
def test_without_gpu_matches_torch_cpu_build(call):
    ours, theirs = _outcome(lambda: call(cr)), _outcome(lambda: call(torch))
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        assert ours[1] == theirs[1]
    else:
        assert ours[1].startswith(theirs[1])  # PyTorch's text, then chainrule's hint


def test_without_gpu_calls_that_torch_fails_internally_raise_its_assertion():
    # torch's CPU build fails here with an internal AttributeError; chainrule raises the
    # AssertionError its other device calls raise.
    for f in (lambda: cr.cuda.set_device(0), lambda: cr.cuda.reset_peak_memory_stats()):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            f()
    cr.cuda.set_device(-1)  # a negative index is a no-op, as in PyTorch


# On the stand-in -------------------------------------------------------------------------
@pytest.fixture
def cuda(fake_cuda):
    return cr.cuda


def test_device_queries(cuda):
    assert cuda.is_available() and cuda.device_count() == 2 and cuda.current_device() == 0
    cuda.set_device("cuda:1")
    assert cuda.current_device() == 1
    cuda.set_device(cr.device("cuda", 0))
    assert cuda.current_device() == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        cuda.set_device(7)
    with pytest.raises(ValueError, match="Expected a cuda device"):
        cuda.set_device("cpu")
    cuda.synchronize()
    cuda.synchronize(1)


def test_device_context_restores_the_previous_device(cuda):
    with cuda.device(1):
        assert cuda.current_device() == 1
        with cuda.device("cuda:0"):
            assert cuda.current_device() == 0
        assert cuda.current_device() == 1
    assert cuda.current_device() == 0
    with cuda.device(None):
        assert cuda.current_device() == 0


def test_device_properties(cuda):
    p = cuda.get_device_properties(1)
    assert p.name == cuda.get_device_name() == "chainrule fake CUDA device"
    assert (p.major, p.minor) == cuda.get_device_capability() == (9, 0)
    assert p.total_memory == 16 * 2**30 and p.multi_processor_count == 4
    assert repr(p).startswith("_CudaDeviceProperties(name='chainrule fake CUDA device', major=9")


def test_manual_seed_makes_the_device_generator_repeat(cuda):
    be = get_backend("cuda")
    cuda.manual_seed(3)
    a = be.to_host(be.generator().standard_normal(size=4))
    cuda.manual_seed(3)
    assert np.array_equal(be.to_host(be.generator().standard_normal(size=4)), a)
    cuda.manual_seed_all(5)
    b0 = be.to_host(be.generator(0).random(size=3))
    b1 = be.to_host(be.generator(1).random(size=3))
    assert np.array_equal(b0, b1)  # same seed on every device
    assert be.device_of(be.generator(1).random(size=3)) == "cuda:1"


def test_global_manual_seed_reaches_every_gpu(cuda):
    # torch.manual_seed seeds the CUDA generators too; the seed waits for the backend.
    be = get_backend("cuda")
    cr.manual_seed(11)
    want = be.to_host(be.default_rng(11).random(size=3))
    for i in (0, 1):
        assert np.array_equal(be.to_host(be.generator(i).random(size=3)), want)
    cuda.manual_seed(12)  # the current device only
    assert np.array_equal(
        be.to_host(be.generator(0).random(size=3)), be.to_host(be.default_rng(12).random(size=3))
    )
    assert not np.array_equal(be.to_host(be.generator(1).random(size=3)), want)  # moved on


def test_seed_given_before_the_backend_exists_is_applied(fake_cuda):
    from chainrule import backends

    backends.set_cupy_module(None)  # no CUDA backend now
    cr.cuda.manual_seed_all(21)
    backends.set_cupy_module(fake_cuda)
    be = get_backend("cuda")
    assert np.array_equal(
        be.to_host(be.generator(1).standard_normal(size=2)),
        be.to_host(be.default_rng(21, device=1).standard_normal(size=2)),
    )


def test_memory_counters(cuda):
    be = get_backend("cuda")
    cuda.reset_peak_memory_stats()
    base = cuda.memory_allocated()
    x = be.from_host(np.zeros(4096))  # 32 KiB
    assert cuda.memory_allocated() - base == 32768
    assert cuda.max_memory_allocated() - base == 32768
    y = be.from_host(np.zeros(2048))
    del x, y
    assert cuda.memory_allocated() == base
    assert cuda.max_memory_allocated() - base == 32768 + 16384  # the peak stays
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == base
    assert cuda.memory_allocated(1) == 0 and cuda.memory_reserved() >= base
    cuda.empty_cache()


def test_streams_and_events(cuda):
    s = cuda.Stream()
    assert s.device == cr.device("cuda", 0) and s.query()
    assert cuda.current_stream() == cuda.default_stream()
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    with cuda.stream(s) as entered:
        assert entered is s and cuda.current_stream() == s
        start.record()
        sum(range(10000))
        end.record()
    assert cuda.current_stream() == cuda.default_stream()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) > 0.0
    s.wait_event(end)
    s.wait_stream(cuda.current_stream())
    ev = s.record_event()
    ev.wait()
    s.synchronize()
    with cuda.stream(None) as nothing:
        assert nothing is None


def test_event_errors_as_torch(cuda):
    a, b = cuda.Event(), cuda.Event()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        a.elapsed_time(b)
    a, b = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="must be recorded"):
        a.elapsed_time(b)
    with pytest.raises(TypeError, match="unexpected keyword"):
        cuda.Stream(colour="red")
