"""Saving whole objects (issue 15): pickled parts behind PyTorch's weights_only allow-list,
compared with torch.save/torch.load."""

from __future__ import annotations

import base64
import collections
import io
import json
import pickle
import struct

import numpy as np
import pytest

import chainrule
from chainrule import nn, optim
from chainrule import serialization as ser

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _no_leftover_safe_globals():
    ser.clear_safe_globals()
    torch.serialization.clear_safe_globals()
    yield
    ser.clear_safe_globals()
    torch.serialization.clear_safe_globals()


def _round_trip(obj, **load_kw):
    buf = io.BytesIO()
    chainrule.save(obj, buf)
    buf.seek(0)
    return chainrule.load(buf, **load_kw)


def _meta(data: bytes) -> dict:
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8 : 8 + n])["__metadata__"]


def _torch_round_trip(obj, **load_kw):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kw)


def _weights_error_detail(e: BaseException) -> str:
    """The part of the weights_only error after 'WeightsUnpickler error: ', one line."""
    return str(e).split("WeightsUnpickler error: ", 1)[1].split("\n", 1)[0]


Pair = collections.namedtuple("Pair", "a b")


class Point:  # a user's class, pickled by reference to tests.test_serialization_pickle
    def __init__(self, x, t):
        self.x, self.t = x, t


def _model():
    chainrule.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.BatchNorm1d(4), nn.Linear(4, 2))


def test_training_checkpoint_has_no_pickle_and_loads_by_default():
    model = _model()
    opt = optim.Adam(model.parameters(), lr=0.01)
    model(chainrule.randn(5, 3)).sum().backward()
    opt.step()
    ckpt = {"epoch": 3, "model": model.state_dict(), "opt": opt.state_dict()}
    buf = io.BytesIO()
    chainrule.save(ckpt, buf)
    meta = _meta(buf.getvalue())
    assert meta["format_version"] == "2" and '"pickle"' not in meta["structure"]
    buf.seek(0)
    r = chainrule.load(buf)  # weights_only=True by default, as PyTorch >= 2.6
    assert r["epoch"] == 3 and list(r["model"]) == list(model.state_dict())
    for a, b in zip(model.state_dict().values(), r["model"].values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    model2 = _model()
    model2.load_state_dict(r["model"])
    opt2 = optim.Adam(model2.parameters(), lr=0.5)
    opt2.load_state_dict(r["opt"])
    assert opt2.param_groups[0]["lr"] == 0.01
    # torch gives the same structure back for the same checkpoint of its own.
    tm = torch.nn.Linear(3, 4)
    topt = torch.optim.Adam(tm.parameters(), lr=0.01)
    tr = _torch_round_trip({"epoch": 3, "model": tm.state_dict(), "opt": topt.state_dict()})
    assert type(tr["model"]) is type(r["model"]) is collections.OrderedDict
    assert sorted(tr["opt"]) == sorted(r["opt"])


def test_whole_module_round_trip_with_weights_only_false():
    model = _model()
    model(chainrule.randn(8, 3))  # moves the BatchNorm running statistics
    buf = io.BytesIO()
    chainrule.save(model, buf)
    data = buf.getvalue()
    meta = _meta(data)
    assert meta["format_version"] == "3"
    (node,) = [
        n for n in json.loads(meta["structure"]) if isinstance(n, dict) and n["t"] == "pickle"
    ]
    payload = base64.b64decode(node["v"])
    # Tensors are not in the pickle: they are the safetensors part, each stored once.
    n_tensors = len(model.state_dict())
    assert len(node["p"]) == n_tensors
    assert b"float32" not in payload and len(payload) < 4000
    m2 = chainrule.load(io.BytesIO(data), weights_only=False)
    assert type(m2) is nn.Sequential and type(m2[2]) is nn.BatchNorm1d
    assert isinstance(m2[0].weight, nn.Parameter) and m2[0].weight.requires_grad
    assert not m2[2].running_mean.requires_grad
    for (k, a), (k2, b) in zip(model.state_dict().items(), m2.state_dict().items()):
        assert k == k2
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    x = chainrule.randn(5, 3)
    model.eval()
    m2.eval()
    np.testing.assert_array_equal(model(x).detach().numpy(), m2(x).detach().numpy())
    m2(x).sum().backward()
    assert m2[0].weight.grad.shape == (4, 3)


def test_whole_module_refused_by_default_with_torchs_message():
    buf = io.BytesIO()
    chainrule.save(_model(), buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError) as ours:
        chainrule.load(buf)
    with pytest.raises(pickle.UnpicklingError) as theirs:
        _torch_round_trip(torch.nn.Sequential(torch.nn.Linear(3, 4)))
    name = "chainrule.nn.modules.container.Sequential"
    assert _weights_error_detail(ours.value) == _weights_error_detail(theirs.value).replace(
        "torch.nn.modules.container.Sequential", name
    )
    assert str(ours.value).startswith("Weights only load failed. This file can still be loaded")
    assert "weights_only` set to `False`" in str(ours.value)


def test_safe_globals_allow_a_module_with_weights_only():
    buf = io.BytesIO()
    model = _model()
    chainrule.save({"model": model, "w": model[0].weight}, buf)
    buf.seek(0)
    unsafe = ser.get_unsafe_globals_in_checkpoint(buf)
    assert unsafe == [
        "chainrule.nn.modules.container.Sequential",
        "chainrule.nn.modules.linear.Linear",
        "chainrule.nn.modules.activation.ReLU",
        "chainrule.nn.modules.normalization.BatchNorm1d",
    ]
    classes = [nn.Sequential, nn.Linear, nn.ReLU, nn.BatchNorm1d]
    buf.seek(0)
    with ser.safe_globals(classes[:-1]):  # one class short: named in the error
        assert ser.get_safe_globals() == classes[:-1]
        with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL chainrule\S*BatchNorm1d was"):
            chainrule.load(buf)
    assert ser.get_safe_globals() == []
    buf.seek(0)
    with ser.safe_globals(classes):
        r = chainrule.load(buf)
        assert ser.get_unsafe_globals_in_checkpoint(io.BytesIO(buf.getvalue())) == []
    # The parameter saved beside the module is the module's own (stored once, shared).
    assert r["w"] is r["model"][0].weight
    ser.add_safe_globals(classes)
    assert ser.get_safe_globals() == classes
    assert type(chainrule.load(io.BytesIO(buf.getvalue()))["model"]) is nn.Sequential
    ser.clear_safe_globals()
    assert ser.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError):
        chainrule.load(io.BytesIO(buf.getvalue()))


def test_user_object_with_tensors_and_a_named_safe_global():
    t = chainrule.arange(6.0).reshape(2, 3)
    p = Point(7, t)
    r = _round_trip({"p": p, "again": p, "t": t}, weights_only=False)
    assert type(r["p"]) is Point and r["again"] is r["p"] and r["p"].x == 7
    assert r["p"].t is r["t"]  # the tensor outside and inside the pickle is one
    np.testing.assert_array_equal(r["t"].numpy(), t.numpy())
    # (obj, "module.name") entries allow an object pickled under another name.
    with ser.safe_globals([(Point, f"{Point.__module__}.Point")]):
        assert type(_round_trip(p)) is Point


@pytest.mark.parametrize(
    "value",
    [
        {1, 2},
        3 + 1j,
        b"xy",
        bytearray(b"z"),
        slice(1, 2),
        frozenset([1]),
        range(3),
        collections.Counter("aab"),
        collections.defaultdict(int, a=1),
        collections.deque([1]),
        Pair(1, 2),
    ],
    ids=lambda v: type(v).__name__,
)
def test_default_allow_list_matches_torch(value):
    """Which plain Python values load with weights_only=True: exactly those torch allows."""
    try:
        theirs = _torch_round_trip({"v": value})["v"]
    except pickle.UnpicklingError as e:
        with pytest.raises(pickle.UnpicklingError) as ours:
            _round_trip({"v": value})
        assert _weights_error_detail(ours.value) == _weights_error_detail(e)
    else:
        ours = _round_trip({"v": value})["v"]
        assert type(ours) is type(theirs) and ours == theirs
    assert _round_trip({"v": value}, weights_only=False)["v"] == value


def test_dtype_device_and_size_inside_pickled_objects_load_by_default():
    obj = {"s": {chainrule.float16, chainrule.int64}, "d": chainrule.device("cpu")}
    r = _round_trip([obj, chainrule.Size([2, 3])])
    assert r[0]["s"] == {chainrule.float16, chainrule.int64}
    assert r[0]["d"] == chainrule.device("cpu") and r[1] == chainrule.Size([2, 3])


_EXPLICIT = "Can not safely load weights when explicit pickle_module is specified"


def test_weights_only_argument_rules_as_torch():
    data = io.BytesIO()
    chainrule.save({"s": {1}}, data)
    with pytest.raises(RuntimeError, match=_EXPLICIT):
        chainrule.load(io.BytesIO(data.getvalue()), pickle_module=pickle, weights_only=True)
    with pytest.raises(RuntimeError, match=_EXPLICIT):
        torch.load(io.BytesIO(), pickle_module=pickle, weights_only=True)
    # A pickle_module alone means weights_only=False, as in torch.
    r = chainrule.load(io.BytesIO(data.getvalue()), pickle_module=pickle)
    assert r == {"s": {1}}
    with pytest.raises(TypeError, match="list of safe globals"):
        ser.add_safe_globals(Point)
    with pytest.raises(TypeError, match="class or a function"):
        ser.add_safe_globals([3])


def test_pickle_protocol_and_module_are_used():
    class Recorder:
        Pickler = pickle.Pickler
        used = 0

        class Unpickler(pickle.Unpickler):
            def load(self):
                Recorder.used += 1
                return super().load()

    buf = io.BytesIO()
    chainrule.save({"s": {1, 2}}, buf, pickle_module=Recorder, pickle_protocol=4)
    nodes = json.loads(_meta(buf.getvalue())["structure"])
    (node,) = [n for n in nodes if isinstance(n, dict) and n.get("t") == "pickle"]
    assert base64.b64decode(node["v"])[:2] == b"\x80\x04"
    buf.seek(0)
    assert chainrule.load(buf, pickle_module=Recorder) == {"s": {1, 2}}
    assert Recorder.used == 1


def test_malformed_pickle_under_weights_only_is_an_unpickling_error():
    buf = io.BytesIO()
    chainrule.save({"s": {1, 2}}, buf)
    meta = _meta(buf.getvalue())
    nodes = json.loads(meta["structure"])
    (node,) = [n for n in nodes if isinstance(n, dict) and n.get("t") == "pickle"]
    assert base64.b64decode(node["v"])[:2] == b"\x80\x02"
    # A truncated pickle (re-crafted with a valid header checksum) fails cleanly.
    from tests.test_serialization_fuzz import craft

    node["v"] = base64.b64encode(base64.b64decode(node["v"])[:-3]).decode()
    with pytest.raises(pickle.UnpicklingError):
        chainrule.load(io.BytesIO(craft(structure=nodes)))


def test_build_on_a_shared_dtype_or_a_tensor_is_refused():
    """A crafted pickle that BUILDs (sets the state of) the float32 singleton or a tensor of
    the checkpoint is refused under weights_only, and nothing is changed."""
    from tests.test_serialization_fuzz import craft

    name = f"{chainrule.float32.__reduce__()[0].__module__}\n_dtype_by_name\n"
    evil_dtype = (
        b"\x80\x02c" + name.encode() + b"X\x07\x00\x00\x00float32\x85R"
        b"N}X\x04\x00\x00\x00nameX\x04\x00\x00\x00evils\x86b."
    )
    evil_tensor = b"\x80\x02K\x00QN}X\x01\x00\x00\x00xK\x01s\x86b."
    t0 = {"t": "tensor", "k": "0", "rg": False, "param": False}
    for payload, nodes in (
        (evil_dtype, [{"t": "pickle", "v": base64.b64encode(evil_dtype).decode(), "p": []}]),
        (evil_tensor, [t0, {"t": "pickle", "v": base64.b64encode(evil_tensor).decode(), "p": [0]}]),
    ):
        with pytest.raises(pickle.UnpicklingError, match="Can only build"):
            chainrule.load(io.BytesIO(craft(structure=nodes)))
    assert chainrule.float32.name == "float32"
    # The same payload with weights_only=False is plain pickle, as in torch.
    nodes = [{"t": "pickle", "v": base64.b64encode(evil_dtype).decode(), "p": []}]
    try:
        assert chainrule.load(io.BytesIO(craft(structure=nodes)), weights_only=False).name == "evil"
    finally:
        chainrule.float32.name = "float32"
