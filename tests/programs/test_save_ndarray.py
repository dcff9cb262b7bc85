"""A NumPy array given to save comes back from load as a NumPy array (torch.save pickles it and
torch.load(weights_only=False) returns an ndarray), not as a tensor; programs that save data
with numpy and read it with torch.from_numpy depend on it."""

from __future__ import annotations

import io

import numpy as np
import torch

import chainrule as cr


def _torch_round_trip(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=False)


def _cr_round_trip(obj, **kw):
    buf = io.BytesIO()
    cr.save(obj, buf)
    buf.seek(0)
    return cr.load(buf, **kw)


def test_ndarray_loads_as_ndarray_like_torch():
    a = np.sin(np.arange(12, dtype=np.float64).reshape(3, 4) / 3.0)
    want = _torch_round_trip(a)
    for kw in ({}, {"weights_only": False}):
        got = _cr_round_trip(a, **kw)
        assert type(got) is type(want) is np.ndarray
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert cr.from_numpy(_cr_round_trip(a)[1:, :-1]).shape == (2, 3)


def test_ndarrays_inside_containers_and_beside_tensors():
    ints = np.arange(6, dtype=np.int64).reshape(2, 3)
    t = cr.arange(4.0)
    got = _cr_round_trip({"ints": ints, "t": t, "pair": [ints, ints]})
    assert type(got["ints"]) is np.ndarray and got["ints"].dtype == np.int64
    np.testing.assert_array_equal(got["ints"], ints)
    assert isinstance(got["t"], cr.Tensor) and got["t"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert all(type(x) is np.ndarray for x in got["pair"])
    # one array saved three times comes back as one array, as torch's pickle memo gives
    want = _torch_round_trip({"ints": ints, "pair": [ints, ints]})
    assert want["pair"][0] is want["ints"]
    assert got["pair"][0] is got["ints"] and got["pair"][1] is got["ints"]
    got["ints"][0, 0] = 99  # writable, and not the saved array
    assert ints[0, 0] == 0
