"""torch's device, accelerator, backend-flag, thread, determinism, jit/compile/hub and amp
namespaces, as PyTorch's CPU build has them; each checked against torch."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e), str(e)
    return None


def test_accelerator_as_on_a_cpu_build():
    assert cr.accelerator.is_available() is torch.accelerator.is_available() is False
    assert cr.accelerator.current_accelerator() is None
    assert torch.accelerator.current_accelerator() is None
    assert cr.accelerator.device_count() == torch.accelerator.device_count() == 0
    for name, args in (
        ("synchronize", ()),
        ("set_device_index", (0,)),
        ("current_device_index", ()),
    ):
        ours = _err(lambda: getattr(cr.accelerator, name)(*args))
        theirs = _err(lambda: getattr(torch.accelerator, name)(*args))
        assert (
            ours
            == theirs
            == (RuntimeError, "Cannot access accelerator device when none is available.")
        ), name


def test_backend_flags_defaults_and_assignment():
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(cr.backends.cudnn, name) == getattr(torch.backends.cudnn, name), name
    assert cr.backends.cudnn.is_available() == torch.backends.cudnn.is_available()
    assert cr.backends.cudnn.version() == torch.backends.cudnn.version()
    assert cr.backends.mps.is_available() == torch.backends.mps.is_available()
    assert cr.backends.mps.is_built() == torch.backends.mps.is_built()
    assert cr.backends.mkldnn.enabled == torch.backends.mkldnn.enabled
    assert cr.backends.cuda.matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32
    assert cr.backends.cuda.is_built() == torch.backends.cuda.is_built()
    with cr.backends.cudnn.flags(enabled=False, benchmark=True):
        assert cr.backends.cudnn.benchmark is True and cr.backends.cudnn.enabled is False
    assert cr.backends.cudnn.benchmark is False and cr.backends.cudnn.enabled is True
    cr.backends.cudnn.benchmark = True
    try:
        assert cr.backends.cudnn.benchmark is True
    finally:
        cr.backends.cudnn.benchmark = False


def test_thread_counts():
    from chainrule import _runtime
    from chainrule.backends import _threads

    for bad in (0, -2, 1.5, True):
        assert _err(lambda: cr.set_num_threads(bad)) == _err(lambda: torch.set_num_threads(bad))
    before = cr.get_num_threads()
    assert before >= 1
    try:
        cr.set_num_threads(1)
        assert cr.get_num_threads() == 1 == _threads.num_threads()
        from threadpoolctl import threadpool_info

        blas = [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]
        assert blas and set(blas) == {1}
    finally:
        _runtime._state["limiter"].restore_original_limits()
        _runtime._state["threads"] = None
        _runtime._state["limiter"] = None
        _threads.set_threads(None)
    assert cr.get_num_threads() == before
    assert cr.get_num_interop_threads() >= 1


def test_determinism_and_matmul_precision_flags():
    from chainrule import _runtime

    assert cr.are_deterministic_algorithms_enabled() is False
    assert type(_err(lambda: cr.use_deterministic_algorithms("x"))[0]) is type(TypeError)
    assert _err(lambda: cr.use_deterministic_algorithms("x")) == _err(
        lambda: torch.use_deterministic_algorithms("x")
    )
    try:
        cr.use_deterministic_algorithms(True, warn_only=True)
        assert cr.are_deterministic_algorithms_enabled()
        assert cr.is_deterministic_algorithms_warn_only_enabled()
        assert cr.get_deterministic_debug_mode() == 1
        cr.set_deterministic_debug_mode("error")
        assert cr.get_deterministic_debug_mode() == 2
    finally:
        cr.use_deterministic_algorithms(False)
    assert cr.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    try:
        cr.set_float32_matmul_precision("high")
        assert cr.get_float32_matmul_precision() == "high"
        with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
            cr.set_float32_matmul_precision("bad")
        assert cr.get_float32_matmul_precision() == "high"
    finally:
        _runtime._state["matmul_precision"] = "highest"


def test_default_device():
    assert str(cr.get_default_device()) == str(torch.get_default_device()) == "cpu"
    try:
        cr.set_default_device("cpu")
        assert cr.zeros(2).device.type == "cpu"
        cr.set_default_device("cuda")
        assert str(cr.get_default_device()) == "cuda"
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            cr.zeros(2)
        assert cr.zeros(2, device="cpu").device.type == "cpu"
    finally:
        cr.set_default_device(None)
    assert cr.ones(3).device.type == "cpu"
    with pytest.raises(RuntimeError, match="device type at start of device string: foo"):
        cr.set_default_device("foo")


@pytest.mark.parametrize("value", [3.0, 2, True, 1e-8, -0.0, float("nan")])
@pytest.mark.parametrize("spec", ["", ".2f", ">8", "e"])
def test_format_of_0d_tensors_as_torch(value, spec):
    if spec in (".2f", "e") and isinstance(value, bool):
        spec = ""
    ours, theirs = cr.tensor(value), torch.tensor(value)
    assert format(ours, spec) == format(theirs, spec)
    assert f"{ours}" == f"{theirs}"


def test_format_of_nd_tensors_is_repr():
    assert f"{cr.ones(2)}" == f"{torch.ones(2)}" == "tensor([1., 1.])"
    assert format(cr.tensor(1.5, requires_grad=True)) == format(
        torch.tensor(1.5, requires_grad=True)
    )


def test_device_predicates():
    t, u = cr.ones(2), torch.ones(2)
    for name in ("is_cuda", "is_cpu", "is_mps", "is_xpu", "is_meta"):
        assert getattr(t, name) == getattr(u, name), name
    assert t.get_device() == u.get_device() == -1


def test_compile_returns_the_callable():
    m = cr.nn.Linear(2, 2)
    c = cr.compile(m)  # compiled (docs/compile.md): it runs and answers as the module does
    assert c._orig_mod is m and list(c.parameters()) == list(m.parameters())
    assert cr.compile(m, disable=True) is m

    @cr.compile
    def f(x):
        return x * 2

    @cr.compile(mode="reduce-overhead", fullgraph=True)
    def g(x):
        return x + 1

    assert f(cr.ones(1)).item() == 2.0 and g(cr.ones(1)).item() == 2.0
    assert cr.compiler.is_compiling() is False
    assert cr.compiler.disable(f) is f
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):
        cr.compile(f, mode="fast")
    with pytest.raises(RuntimeError, match="Either mode or options"):
        cr.compile(f, mode="default", options={})


def test_jit_returns_unchanged_with_one_warning():
    from chainrule import jit

    jit._warned.clear()
    m = cr.nn.Linear(2, 2)
    with pytest.warns(UserWarning, match="torch.jit.script: chainrule has no TorchScript"):
        assert cr.jit.script(m) is m
    assert cr.jit.script(m) is m  # once: filterwarnings=error would fail on a second warning
    assert cr.jit.is_scripting() is False
    assert cr.jit.ignore(len) is len
    assert cr.jit.Final[int] is int
    with pytest.raises(RuntimeError, match="torch.save"):
        cr.jit.save(m, "x.pt")


def test_hub_refuses_with_a_clear_error():
    with pytest.raises(RuntimeError, match="does not download models"):
        cr.hub.load("pytorch/vision", "resnet18")
    with pytest.raises(RuntimeError, match="load_state_dict_from_url"):
        cr.hub.load_state_dict_from_url("https://example.invalid/w.pth")


def test_autocast():
    with pytest.warns(UserWarning) as ours:
        with cr.autocast("cuda"):
            y = cr.ones(2) * 2
    with pytest.warns(UserWarning) as theirs:
        with torch.autocast("cuda"):
            pass
    assert str(ours[0].message) == str(theirs[0].message)
    assert y.dtype == cr.float32
    with cr.autocast(device_type="cpu", enabled=False):
        assert (cr.ones(2) @ cr.ones(2)).dtype == cr.float32

    @cr.autocast("cpu", enabled=False)
    def f(x):
        return x + 1

    assert f(cr.ones(1)).item() == 2.0
    with cr.autocast("cpu"):  # an enabled CPU region: matmul runs in bfloat16
        assert (cr.ones(2, 2) @ cr.ones(2, 2)).dtype == cr.bfloat16
    (t1, m1), (t2, m2) = _err(lambda: cr.autocast("tpu")), _err(lambda: torch.autocast("tpu"))
    assert t1 is t2 and m1.endswith("device type at start of device string: tpu")
    assert m2.endswith("device type at start of device string: tpu")
    with pytest.warns(UserWarning, match="CUDA is not available"):
        with cr.cuda.amp.autocast():
            pass


def _scaler_run(lib, scaler, steps=8):
    lin = lib.nn.Linear(3, 1).double()
    with lib.no_grad():
        lin.weight.copy_(lib.tensor([[0.1, -0.2, 0.3]], dtype=lib.float64))
        lin.bias.fill_(0.05)
    opt = lib.optim.SGD(lin.parameters(), lr=0.1)
    x = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3))
    scales, weights = [], []
    for step in range(steps):
        opt.zero_grad()
        xi = x * float("inf") if step in (2, 5) else x
        loss = (lin(xi) ** 2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        weights.append(lin.weight.detach().numpy().copy())
    return scales, np.array(weights)


def test_grad_scaler_matches_torch_on_cpu():
    kw = dict(init_scale=2.0**4, growth_interval=2)
    s_ours, w_ours = _scaler_run(cr, cr.amp.GradScaler("cpu", **kw))
    s_theirs, w_theirs = _scaler_run(torch, torch.amp.GradScaler("cpu", **kw))
    assert s_ours == s_theirs
    np.testing.assert_allclose(w_ours, w_theirs, rtol=1e-12)
    sc = cr.amp.GradScaler("cpu", **kw)
    sd = sc.state_dict()
    ref = torch.amp.GradScaler("cpu", **kw).state_dict()
    assert sd == ref


def test_disabled_grad_scaler_passes_through():
    with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available"):
        sc = cr.cuda.amp.GradScaler()
    assert not sc.is_enabled() and sc.get_scale() == 1.0
    loss = cr.tensor(2.0, requires_grad=True)
    assert sc.scale(loss) is loss
    s_ours, _ = _scaler_run(cr, cr.amp.GradScaler("cpu", enabled=False), steps=2)
    assert s_ours == [1.0, 1.0]
    with pytest.raises(ValueError, match="growth factor must be > 1.0"):
        cr.amp.GradScaler("cpu", growth_factor=1.0)


@pytest.mark.parametrize("bad", [None, 1.5, True])
def test_device_of_a_non_string_is_torchs_type_error(bad: object) -> None:
    with pytest.raises(TypeError) as theirs:
        torch.device(bad)  # pyright: ignore[reportArgumentType]
    with pytest.raises(TypeError) as ours:
        cr.device(bad)
    assert str(ours.value) == str(theirs.value)
