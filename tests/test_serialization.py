"""chainrule.save / chainrule.load: safetensors checkpoints, round trips and bad files."""

from __future__ import annotations

import io
import math
from collections import OrderedDict

import numpy as np
import pytest

import chainrule
import chainrule.nn as nn
import chainrule.optim as optim
from chainrule.serialization import CheckpointError, CheckpointIntegrityError, load, save


def _roundtrip(obj):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf)


@pytest.mark.parametrize(
    "dtype", ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
)
def test_tensor_round_trip_bit_exact(dtype):
    a = (np.random.default_rng(0).standard_normal((3, 4)) * 100).astype(dtype)
    if dtype.startswith("float"):
        a.flat[:3] = [np.nan, np.inf, -0.0]
    t = chainrule.from_numpy(a)
    r = _roundtrip(t)
    assert r.dtype == t.dtype and r.shape == t.shape
    assert r.numpy().tobytes() == a.tobytes()


def test_odd_shapes_and_views():
    x = chainrule.arange(12.0).reshape(3, 4)
    obj = {
        "scalar": chainrule.tensor(2.5),
        "empty": chainrule.zeros(0, 3),
        "transposed": x.t(),
        "row": x[1],
    }
    r = _roundtrip(obj)
    assert r["scalar"].shape == () and r["scalar"].item() == 2.5
    assert r["empty"].shape == (0, 3)
    np.testing.assert_array_equal(r["transposed"].numpy(), x.t().numpy())
    np.testing.assert_array_equal(r["row"].numpy(), [4, 5, 6, 7])


def test_nested_structure_and_plain_values():
    obj = {
        "epoch": 3,
        "lr": 0.1,
        "nan": float("nan"),
        "name": "run",
        "flag": True,
        "none": None,
        "list": [1, (2, 3.5), [chainrule.ones(2)]],
        "int_keys": {0: "a", 5: "b"},
        "ordered": OrderedDict([("z", 1), ("a", 2)]),
        "dtype": chainrule.float64,
        "size": chainrule.Size([2, 3]),
    }
    r = _roundtrip(obj)
    assert r["epoch"] == 3 and isinstance(r["epoch"], int)
    assert r["lr"] == 0.1 and math.isnan(r["nan"]) and r["name"] == "run"
    assert r["flag"] is True and r["none"] is None
    assert r["list"][1] == (2, 3.5) and isinstance(r["list"][1], tuple)
    assert r["int_keys"] == {0: "a", 5: "b"}
    assert isinstance(r["ordered"], OrderedDict) and list(r["ordered"]) == ["z", "a"]
    assert r["dtype"] is chainrule.float64 and r["size"] == chainrule.Size([2, 3])


def test_parameters_and_shared_tensors():
    p = nn.Parameter(chainrule.ones(2))
    g = chainrule.ones(3).requires_grad_()
    r = _roundtrip({"p": p, "again": p, "g": g, "plain": chainrule.ones(1)})
    assert isinstance(r["p"], nn.Parameter) and r["p"].requires_grad
    assert r["again"] is r["p"]
    assert r["g"].requires_grad and not isinstance(r["g"], nn.Parameter)
    assert not r["plain"].requires_grad


def test_module_and_optimizer_checkpoint(tmp_path):
    torch_free_model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = optim.Adam(torch_free_model.parameters(), lr=0.01, amsgrad=True)
    x = chainrule.ones(5, 3)
    for _ in range(2):
        opt.zero_grad()
        torch_free_model(x).sum().backward()
        opt.step()
    path = tmp_path / "ckpt.safetensors"
    save({"model": torch_free_model.state_dict(), "optim": opt.state_dict(), "epoch": 2}, path)
    ck = load(str(path))
    model2 = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    model2.load_state_dict(ck["model"])
    opt2 = optim.Adam(model2.parameters(), lr=1.0)
    opt2.load_state_dict(ck["optim"])
    for (k, a), b in zip(torch_free_model.state_dict().items(), model2.state_dict().values()):
        assert a.numpy().tobytes() == b.numpy().tobytes(), k
    sa, sb = opt.state_dict(), opt2.state_dict()
    assert sa["param_groups"] == sb["param_groups"]
    for i in sa["state"]:
        for k in sa["state"][i]:
            assert sa["state"][i][k].numpy().tobytes() == sb["state"][i][k].numpy().tobytes()
            assert sa["state"][i][k].shape == sb["state"][i][k].shape
    # Both continue identically.
    for o, m in ((opt, torch_free_model), (opt2, model2)):
        o.zero_grad()
        m(x).sum().backward()
        o.step()
    for a, b in zip(torch_free_model.parameters(), model2.parameters()):
        assert a.detach().numpy().tobytes() == b.detach().numpy().tobytes()


def _bytes(obj):
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


def _load_bytes(data, name="ckpt.safetensors", tmp_path=None):
    path = tmp_path / name
    path.write_bytes(data)
    return load(path)


def test_truncated_file_names_file_and_problem(tmp_path):
    data = _bytes({"w": chainrule.ones(100)})
    for cut in (4, 20, len(data) - 10):
        with pytest.raises(CheckpointError) as e:
            _load_bytes(data[:cut], tmp_path=tmp_path)
        assert "ckpt.safetensors" in str(e.value) and "truncated" in str(e.value)
    with pytest.raises(CheckpointError, match="truncated or empty"):
        _load_bytes(b"", tmp_path=tmp_path)


def test_corrupted_data_and_header(tmp_path):
    data = bytearray(_bytes({"w": chainrule.ones(100), "b": chainrule.zeros(3)}))
    flipped = bytearray(data)
    flipped[-50] ^= 0xFF
    with pytest.raises(CheckpointError, match="fails its checksum"):
        _load_bytes(bytes(flipped), tmp_path=tmp_path)
    bad_header = bytearray(data)
    bad_header[8] = ord("!")  # the opening brace of the JSON header
    with pytest.raises(CheckpointError, match="not valid JSON"):
        _load_bytes(bytes(bad_header), tmp_path=tmp_path)
    with pytest.raises(CheckpointError, match="PyTorch"):
        _load_bytes(b"PK\x03\x04" + b"\0" * 100, tmp_path=tmp_path)


def test_plain_safetensors_file_loads_as_dict(tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "plain.safetensors"
    save_file({"a": np.arange(3, dtype=np.int32)}, str(path))
    r = load(path)
    assert list(r) == ["a"] and r["a"].dtype == chainrule.int32


def test_unpicklable_objects_rejected_as_torch_does():
    import pickle

    import torch

    # Other objects are pickled (tests/test_serialization_pickle.py); a lambda cannot be,
    # and torch.save raises the same error as pickle for it.
    fn = lambda: 0  # noqa: E731
    with pytest.raises((pickle.PicklingError, AttributeError)) as theirs:
        torch.save([fn], io.BytesIO())
    with pytest.raises(type(theirs.value), match="lambda"):
        _bytes([fn])


def test_mismatched_checkpoint_leaves_module_and_optimizer_untouched():
    ck = _roundtrip({"model": nn.Linear(3, 5).state_dict()})
    model = nn.Linear(3, 4)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        model.load_state_dict(ck["model"])
    for k, v in model.state_dict().items():
        assert v.numpy().tobytes() == before[k].numpy().tobytes()
    small = nn.Linear(3, 5)
    opt_small = optim.SGD(small.parameters(), lr=0.1, momentum=0.9)
    small(chainrule.ones(1, 3)).sum().backward()
    opt_small.step()
    ck = _roundtrip(opt_small.state_dict())
    opt = optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    with pytest.raises(ValueError, match="has shape"):
        opt.load_state_dict(ck)
    assert opt.param_groups[0]["lr"] == 0.5 and len(opt.state) == 0


def test_version_1_files_still_load(tmp_path):
    """Files written before the header checksum (a nested structure tree) load, iteratively."""
    import json
    import zlib

    from safetensors.numpy import save as st_save

    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    node = {"t": "tensor", "k": "0", "rg": True, "param": True}
    for _ in range(300):  # nested deeper than a recursive decoder would like
        node = {"t": "list", "v": [node]}
    tree = {
        "t": "odict",
        "k": ["w", 1, "deep"],
        "v": [{"t": "tensor", "k": "0", "rg": True, "param": True}, {"t": "size", "v": [2]}, node],
    }
    meta = {
        "format": "chainrule",
        "format_version": "1",
        "structure": json.dumps(tree),
        "crc32": json.dumps({"0": zlib.crc32(w.tobytes())}),
    }
    path = tmp_path / "v1.st"
    path.write_bytes(st_save({"0": w}, metadata=meta))
    r = load(path)
    assert isinstance(r, OrderedDict) and list(r) == ["w", 1, "deep"]
    assert isinstance(r["w"], nn.Parameter) and r["w"].tolist() == w.tolist()
    assert r[1] == chainrule.Size([2])
    deep = r["deep"]
    for _ in range(300):
        deep = deep[0]
    assert deep is r["w"]


def test_files_are_safetensors_files(tmp_path):
    from safetensors import safe_open
    from safetensors.numpy import load_file

    path = tmp_path / "m.safetensors"
    sd = nn.Linear(3, 2).state_dict()
    save({"model": sd, "flag": chainrule.tensor([True, False])}, path)
    plain = load_file(str(path))
    got = sorted(plain.values(), key=lambda a: a.size)
    want = sorted([v.numpy() for v in sd.values()] + [np.array([True, False])], key=np.size)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    with safe_open(str(path), "np") as fh:
        assert fh.metadata()["format"] == "chainrule"
        assert fh.metadata()["format_version"] == "2"
    n = int.from_bytes(path.read_bytes()[:8], "little")
    assert n % 8 == 0  # the data starts aligned


def test_mmap_load_is_private_copy_on_write(tmp_path):
    import torch

    path = tmp_path / "m.st"
    save({"w": chainrule.arange(4.0), "i": chainrule.arange(3)}, path)
    before = path.read_bytes()
    r = load(path, mmap=True)
    assert r["w"].tolist() == [0.0, 1.0, 2.0, 3.0] and r["i"].dtype == chainrule.int64
    r["w"].add_(10)  # writable, as torch.load(mmap=True) gives ...
    r["w"][0] = -1
    assert r["w"].tolist() == [-1.0, 11.0, 12.0, 13.0]
    assert path.read_bytes() == before  # ... and the file is untouched (MAP_PRIVATE)
    assert load(path)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    # The tensors view the mapping rather than a copy.
    assert r["w"].numpy().base is not None and not r["w"].numpy().flags.owndata
    tpath = tmp_path / "t.pt"
    torch.save({"w": torch.zeros(2)}, tpath)
    buf = io.BytesIO(path.read_bytes())
    with pytest.raises(ValueError) as ours:
        load(buf, mmap=True)
    with pytest.raises(ValueError) as theirs:
        torch.load(io.BytesIO(tpath.read_bytes()), mmap=True)
    assert str(ours.value) == str(theirs.value)


def test_save_streams_and_load_copies_once(tmp_path):
    """Memory (issue 12, defect 13): save allocates nothing of the tensors' size (it writes
    from their memory), load allocates the tensors once, mmap allocates nothing."""
    import tracemalloc

    sd = {f"w{i}": chainrule.ones(256, 1024) for i in range(16)}  # 16 MiB
    size = 16 * 256 * 1024 * 4
    path = tmp_path / "big.st"
    tracemalloc.start()
    try:
        save(sd, path)
        _, peak = tracemalloc.get_traced_memory()
        assert peak < size / 16, peak
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        r = load(path)
        _, peak = tracemalloc.get_traced_memory()
        assert size <= peak - base < size * 1.1, (peak - base, size)
        del r
        base, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        r = load(path, mmap=True)
        _, peak = tracemalloc.get_traced_memory()
        assert peak - base < size / 16
        assert float(r["w3"].sum()) == 256 * 1024
    finally:
        tracemalloc.stop()


def test_streams_left_after_the_checkpoint_and_unseekable_streams():
    buf = io.BytesIO(b"junk")
    buf.seek(4)
    save({"a": chainrule.ones(3)}, buf)
    buf.seek(4)
    assert load(buf)["a"].tolist() == [1.0, 1.0, 1.0] and buf.tell() == len(buf.getvalue())

    class Pipe(io.RawIOBase):
        def __init__(self, data):
            self.inner = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            return self.inner.readinto(b)

        def seekable(self):
            return False

        def tell(self):
            raise OSError("not seekable")

    data = buf.getvalue()[4:]
    assert load(io.BufferedReader(Pipe(data)))["a"].tolist() == [1.0, 1.0, 1.0]


def test_raw_stream_returning_short_reads():
    buf = io.BytesIO()
    save({"a": chainrule.arange(300.0), "n": "x" * 50}, buf)

    class Trickle(io.RawIOBase):
        """A seekable raw stream that returns at most 5 bytes per read."""

        def __init__(self, data):
            self.inner = io.BytesIO(data)

        def readable(self):
            return True

        def seekable(self):
            return True

        def seek(self, pos, whence=0):
            return self.inner.seek(pos, whence)

        def tell(self):
            return self.inner.tell()

        def readinto(self, b):
            n = min(len(b), 5)
            return self.inner.readinto(memoryview(b)[:n])

    r = load(Trickle(buf.getvalue()))
    assert r["a"].tolist() == list(np.arange(300.0)) and r["n"] == "x" * 50


@pytest.mark.parametrize("mmap", [False, True])
def test_checksums_on_the_worker_thread(tmp_path, monkeypatch, mmap):
    """Large checkpoints checksum on a second thread; it names the damaged tensor too."""
    import chainrule.serialization as ser

    monkeypatch.setattr(ser._reader, "_THREADED_BYTES", 0)
    monkeypatch.setattr(ser._reader, "_CHUNK", 64)  # many chunks per tensor
    sd = {f"w{i}": chainrule.arange(100.0) * i for i in range(5)}
    path = tmp_path / "t.st"
    save(sd, path)
    r = load(path, mmap=mmap, verify=True)
    assert all(r[k].tolist() == v.tolist() for k, v in sd.items())
    data = bytearray(path.read_bytes())
    data[-450] ^= 1  # inside the fourth tensor stored ("3")
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointIntegrityError, match="tensor '3' .*fails its checksum"):
        load(path, mmap=mmap, verify=True)
