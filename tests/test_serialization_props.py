"""Property tests of chainrule.save / chainrule.load: thousands of random checkpoints (names,
shapes including 0-d and empty ones, every dtype, nesting, shared objects) come back exactly,
through a file object, a path and a memory map, and stay readable by safetensors itself."""

from __future__ import annotations

import io
import math
import struct
from collections import Counter, OrderedDict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.numpy import load_file

import chainrule
import chainrule.nn as nn
from chainrule.serialization import load, save

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci")

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
SHAPES = st.lists(st.integers(0, 3), min_size=0, max_size=4).map(tuple)  # () is 0-d


@st.composite
def tensors(draw):
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(SHAPES)
    seed = draw(st.integers(0, 2**32 - 1))
    raw = np.random.default_rng(seed).integers(
        0, 256, size=int(np.prod(shape)) * np.dtype(dtype).itemsize, dtype=np.uint8
    )
    if dtype == "bool":
        raw &= 1
    a = raw.view(dtype).reshape(shape)  # any bit pattern: NaNs, infinities, -0.0, subnormals
    t = chainrule.from_numpy(a.copy())
    kind = draw(st.sampled_from(["plain", "grad", "param"]))
    if kind != "plain" and dtype.startswith("float"):
        t = nn.Parameter(t) if kind == "param" else t.requires_grad_()
    return t


NAMES = st.text(max_size=12)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | NAMES
    | st.sampled_from([chainrule.float32, chainrule.int64, chainrule.bool])
    | st.lists(st.integers(0, 5), max_size=3).map(chainrule.Size)
)
KEYS = NAMES | st.integers(-5, 5) | st.tuples(st.integers(0, 3), NAMES)


def values(leaves):
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.lists(inner, max_size=3).map(tuple)
            | st.dictionaries(KEYS, inner, max_size=4)
            | st.dictionaries(NAMES, inner, max_size=3).map(OrderedDict)
            | st.dictionaries(NAMES, st.integers(0, 9), max_size=3).map(Counter)
        ),
        max_leaves=12,
    )


# A state dict: names -> tensors, nested like a training checkpoint.
STATE_DICTS = st.dictionaries(NAMES, tensors(), max_size=6) | values(tensors() | SCALARS)


def assert_same(a, b, seen=None):
    """Equal values, types, dtypes and bits (NaN payloads and -0.0 included)."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, chainrule.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.requires_grad == b.requires_grad
        assert a.detach().numpy().tobytes() == b.detach().numpy().tobytes()
    elif isinstance(a, float):
        assert struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
    elif isinstance(a, dict):
        ia, ib = list(a.items()), list(b.items())
        assert len(ia) == len(ib) == len(a) == len(b)
        for (ka, va), (kb, vb) in zip(ia, ib):
            assert_same(ka, kb)
            assert_same(va, vb)
    elif isinstance(a, (list, tuple)) and not isinstance(a, chainrule.Size):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    else:
        assert a == b


def random_state_dict(rng, depth=0):
    """A random checkpoint-like object from a NumPy generator (much cheaper to draw than a
    Hypothesis example, so that thousands fit in a few seconds)."""

    def tensor():
        dtype = DTYPES[rng.integers(len(DTYPES))]
        shape = tuple(int(s) for s in rng.integers(0, 4, size=rng.integers(0, 4)))
        n = int(np.prod(shape)) * np.dtype(dtype).itemsize
        raw = rng.integers(0, 256, size=n, dtype=np.uint8)
        if dtype == "bool":
            raw &= 1
        t = chainrule.from_numpy(raw.view(dtype).reshape(shape).copy())
        if dtype.startswith("float") and rng.random() < 0.3:
            t = nn.Parameter(t) if rng.random() < 0.5 else t.requires_grad_()
        return t

    def scalar():
        return [
            None,
            True,
            False,
            int(rng.integers(-(2**62), 2**62)),
            float(rng.standard_normal()),
            float("nan"),
            -0.0,
            math.inf,
            f"s{rng.integers(100)}",
            chainrule.float16,
            chainrule.Size([int(rng.integers(5))]),
        ][rng.integers(11)]

    def value(d):
        r = rng.random()
        if d >= 3 or r < 0.45:
            return tensor()
        if r < 0.6:
            return scalar()
        items = [value(d + 1) for _ in range(rng.integers(0, 4))]
        if r < 0.7:
            return items
        if r < 0.8:
            return tuple(items)
        keys = [f"k{i}" if rng.random() < 0.7 else i for i in range(len(items))]
        return (OrderedDict if r < 0.85 else dict)(zip(keys, items))

    sd = {
        f"{rng.choice(['enc', 'dec', 'é'])}.{i}.weight": value(depth)
        for i in range(rng.integers(0, 8))
    }
    if rng.random() < 0.2 and sd:  # a tensor saved under two names stays one tensor
        k = next(iter(sd))
        sd["alias"] = sd[k]
    return sd


def test_thousands_of_random_state_dicts_round_trip():
    rng = np.random.default_rng(12)
    for _ in range(3000):
        sd = random_state_dict(rng)
        buf = io.BytesIO()
        save(sd, buf)
        buf.seek(0)
        r = load(buf)
        assert_same(sd, r)
        if "alias" in sd and isinstance(sd["alias"], chainrule.Tensor):
            assert r["alias"] is r[next(iter(r))]


@settings(max_examples=150)
@given(st.lists(STATE_DICTS, min_size=1, max_size=4))
def test_random_state_dicts_round_trip(objs):
    for obj in objs:
        buf = io.BytesIO()
        save(obj, buf)
        buf.seek(0)
        assert_same(obj, load(buf))
        assert buf.tell() == len(buf.getvalue())  # left just after the checkpoint


@settings(max_examples=40)
@given(st.lists(STATE_DICTS, min_size=1, max_size=5), st.booleans())
def test_random_state_dicts_through_files_mmap_and_safetensors(tmp_path_factory, objs, mmap):
    path = tmp_path_factory.mktemp("ck") / "x.st"
    for obj in objs:
        save(obj, path)
        assert_same(obj, load(path, mmap=mmap))
        # safetensors itself reads every file (the tensors under their keys "0", "1", ...).
        plain = load_file(str(path))
        assert all(isinstance(v, np.ndarray) for v in plain.values())


@pytest.mark.parametrize("target", [0x180, 0x280, 0x4B50, 0x14B50])
def test_header_lengths_that_look_like_pickle_or_zip(target):
    """The header length is little-endian: 1 in 32 files start with 0x80 (pickle) or 'PK'
    (zip). Pad a string in the structure until the header length is ``target``."""

    def save_padded(pad):
        obj = {"w": chainrule.ones(2), "note": "x" * pad}
        buf = io.BytesIO()
        save(obj, buf)
        return obj, buf.getvalue()

    n0 = struct.unpack("<Q", save_padded(0)[1][:8])[0]
    for pad in range(max(0, target - n0 - 24), target - n0 + 24):
        obj, data = save_padded(pad)
        if struct.unpack("<Q", data[:8])[0] == target:
            break
    else:
        raise AssertionError(f"no padding gives a header of {target} bytes")
    assert data[:1] == b"\x80" or data[:2] == b"PK"
    assert_same(obj, load(io.BytesIO(data)))


def test_issue_reproduction_seventeen_layers(tmp_path):
    path = tmp_path / "x.st"
    sd = {f"layer{i}.weight": chainrule.zeros(2, 2) for i in range(17)}
    chainrule.save(sd, path)
    assert_same(sd, chainrule.load(path))


def test_deep_nesting_and_shared_objects_round_trip():
    deep: list = [chainrule.ones(1)]
    for _ in range(20_000):
        deep = [deep]
    r = load(_bytes(deep))
    for _ in range(20_000):
        assert type(r) is list and len(r) == 1
        r = r[0]
    assert r[0].tolist() == [1.0]
    shared = [1, 2]
    t = chainrule.arange(3.0)
    r = load(_bytes({"a": shared, "b": shared, "t": (t, t)}))
    assert r["a"] is r["b"] and r["a"] == [1, 2]  # shared as with torch's pickle
    assert r["t"][0] is r["t"][1]


def test_self_containing_object_is_refused():
    a: list = [1]
    a.append(a)
    with pytest.raises(ValueError, match=r"contains itself \(at obj\[1\]\)"):
        _bytes(a)
    d: dict = {}
    d["me"] = {"x": [d]}
    with pytest.raises(ValueError, match=r"contains itself \(at obj\['me'\]\['x'\]\[0\]\)"):
        _bytes(d)


def _bytes(obj):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return buf
