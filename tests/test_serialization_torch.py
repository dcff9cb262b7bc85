"""Loading checkpoints written by PyTorch's torch.save (its zip format), without running
anything from them: files written by real torch, loaded by chainrule."""

from __future__ import annotations

import io
import pickle
import struct
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import chainrule
from chainrule import nn
from chainrule.serialization import CheckpointError

torch = pytest.importorskip("torch")


def _torch_file(obj, tmp_path=None, **kw):
    if tmp_path is None:
        buf = io.BytesIO()
        torch.save(obj, buf, **kw)
        buf.seek(0)
        return buf
    path = tmp_path / "ckpt.pt"
    torch.save(obj, path, **kw)
    return path


def _same(ours, theirs):
    """Deep comparison of a chainrule load with torch's load of the same file."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, chainrule.Tensor), type(ours)
        assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert ours.requires_grad == theirs.requires_grad
        assert isinstance(ours, nn.Parameter) == isinstance(theirs, torch.nn.Parameter)
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and list(ours) == list(theirs)
        for k in theirs:
            _same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)) and not isinstance(theirs, torch.Size):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
    elif isinstance(theirs, torch.dtype):
        assert ours is getattr(chainrule, str(theirs).replace("torch.", ""))
    elif isinstance(theirs, torch.Size):
        assert isinstance(ours, chainrule.Size) and tuple(ours) == tuple(theirs)
    elif isinstance(theirs, torch.device):
        assert str(ours) == str(theirs)
    else:
        assert type(ours) is type(theirs) and ours == theirs


def _both(obj, tmp_path=None, **load_kw):
    f = _torch_file(obj, tmp_path)
    ours = chainrule.load(f, **load_kw)
    if not isinstance(f, io.BytesIO):
        return ours, torch.load(f)
    f.seek(0)
    return ours, torch.load(f)


class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)
        self.fc = torch.nn.Linear(4 * 6 * 6, 10)
        self.emb = torch.nn.Embedding(5, 3)


@pytest.mark.parametrize("via", ["path", "file object"])
def test_real_model_state_dict_and_training_checkpoint(tmp_path, via):
    torch.manual_seed(0)
    net = TorchNet()
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    x = torch.randn(2, 1, 8, 8)
    net.fc(net.bn(net.conv(x)).flatten(1)).sum().backward()
    opt.step()
    ckpt = {"epoch": 3, "model": net.state_dict(), "opt": opt.state_dict(), "loss": 0.25}
    ours, theirs = _both(ckpt, tmp_path if via == "path" else None)
    _same(ours, theirs)
    # The state dict's version metadata comes along (PyTorch sets it as an attribute).
    assert ours["model"]._metadata == theirs["model"]._metadata
    # It loads into the same architecture built with chainrule, and computes the same.
    mine = nn.ModuleDict(
        {
            "conv": nn.Conv2d(1, 4, 3),
            "bn": nn.BatchNorm2d(4),
            "fc": nn.Linear(4 * 6 * 6, 10),
            "emb": nn.Embedding(5, 3),
        }
    )
    mine.load_state_dict(ours["model"])
    net.eval()
    mine.eval()
    want = net.fc(net.bn(net.conv(x)).flatten(1)).detach().numpy()
    xc = chainrule.from_numpy(x.numpy())
    got = mine["fc"](mine["bn"](mine["conv"](xc)).flatten(1)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


@pytest.mark.parametrize("name", DTYPES)
def test_every_dtype_bit_exact(name):
    dt = getattr(torch, name)
    t = (torch.randn(3, 5) * 50).to(dt)
    ours, theirs = _both({"t": t, "dtype": dt})
    _same(ours, theirs)


def test_views_shared_storage_and_non_contiguous_tensors():
    base = torch.arange(48.0).reshape(6, 8)
    obj = {
        "base": base,
        "rows": base[1:4],
        "strided": base[::2, 1::3],
        "t": base.t(),
        "col": base[:, 5],
        "expanded": torch.ones(3, 1).expand(3, 4),
        "scalar": torch.tensor(2.5),
        "empty": torch.empty(0, 4),
        "offset_view": base.view(-1)[7:20],
        "perm": torch.randn(2, 3, 4).permute(2, 0, 1),
    }
    ours, theirs = _both(obj)
    _same(ours, theirs)
    assert ours["t"].stride() == theirs["t"].stride() == (1, 8)
    assert not ours["strided"].is_contiguous()
    # Views of one storage share memory, as in PyTorch.
    b = ours["base"].numpy()
    for k in ("rows", "strided", "t", "col", "offset_view"):
        assert np.shares_memory(b, ours[k].numpy()), k
    ours["base"][1, 0] = -1.0
    assert ours["rows"][0, 0].item() == -1.0


def test_parameters_requires_grad_nested_containers_and_plain_values():
    p = torch.nn.Parameter(torch.randn(3))
    frozen = torch.nn.Parameter(torch.randn(2), requires_grad=False)
    obj = {
        "p": p,
        "frozen": frozen,
        "leaf": torch.randn(2, requires_grad=True),
        "nested": [OrderedDict(a=(1, 2.5, None, "s", True)), {"deep": [[{"t": torch.ones(1)}]]}],
        7: "int key",
        "size": torch.Size([2, 3]),
        "device": torch.device("cpu"),
        "set": {1, 2},
        "bytes": b"\x00\x01",
        "complex": 1 + 2j,
        "same": [p, p],
    }
    ours, theirs = _both(obj)
    _same(ours, theirs)
    assert ours["same"][0] is ours["same"][1]
    ours["p"].sum().backward()  # a chainrule Parameter, in the graph as any other
    assert ours["p"].grad.tolist() == [1.0, 1.0, 1.0]


def test_whole_torch_module_refused_with_torchs_message():
    f = _torch_file(TorchNet())
    with pytest.raises(pickle.UnpicklingError) as ours:
        chainrule.load(f)
    f.seek(0)
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(f)

    def detail(e):
        return str(e.value).split("WeightsUnpickler error: ")[1].split("\n")[0]

    assert detail(ours) == detail(theirs)
    assert "GLOBAL tests.test_serialization_torch.TorchNet was not an allowed global" in str(
        ours.value
    )
    # Even with weights_only=False, PyTorch's own classes cannot be rebuilt without torch.
    f.seek(0)
    with chainrule.serialization.safe_globals([TorchNet]):
        with pytest.raises(pickle.UnpicklingError, match="GLOBAL torch.nn.modules.conv.Conv2d"):
            chainrule.load(f)
    f.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="cannot rebuild without PyTorch"):
        chainrule.load(f, weights_only=False)


class _Boom:
    def __reduce__(self):
        import os

        return (os.system, ("echo pwned > " + _Boom.target,))


def test_hostile_torch_checkpoint_runs_nothing(tmp_path):
    target = tmp_path / "pwned"
    _Boom.target = str(target)
    f = _torch_file({"w": torch.ones(2), "x": _Boom()})
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL posix.system was not"):
        chainrule.load(f)
    assert not target.exists()
    assert chainrule.serialization.get_unsafe_globals_in_checkpoint(f) == ["posix.system"]


def _rewrite(buf, name_suffix, transform):
    """A copy of a torch zip checkpoint with the record ending in ``name_suffix`` changed."""
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith(name_suffix):
                data = transform(data)
                if data is None:
                    continue
            dst.writestr(info.filename, data)
    out.seek(0)
    return out


def test_damaged_torch_checkpoints_fail_clearly():
    buf = _torch_file({"w": torch.arange(6.0).reshape(2, 3)})
    with pytest.raises(CheckpointError, match="storage '0' holds 20 bytes"):
        chainrule.load(_rewrite(buf, "data/0", lambda d: d[:-4]))
    with pytest.raises(CheckpointError, match="storage '0' is missing"):
        chainrule.load(_rewrite(buf, "data/0", lambda d: None))
    with pytest.raises(CheckpointError, match="byteorder record"):
        chainrule.load(_rewrite(buf, "byteorder", lambda d: b"middle"))
    # A pickle whose tensor reaches past its storage (size patched from (2, 3) to (2, 9)).
    with pytest.raises(CheckpointError, match="reaches element"):
        chainrule.load(
            _rewrite(buf, "data.pkl", lambda d: d.replace(b"K\x02K\x03\x86", b"K\x02K\t\x86"))
        )
    with pytest.raises(CheckpointError, match="data.pkl is malformed"):
        chainrule.load(_rewrite(buf, "data.pkl", lambda d: d[:-1]))
    # A flipped byte in a storage record: its CRC-32 no longer matches.
    raw = bytearray(buf.getvalue())
    at = raw.find(np.arange(6, dtype=np.float32).tobytes())
    assert at > 0
    raw[at + 5] ^= 0x40
    with pytest.raises(CheckpointError, match="storage '0' fails its CRC-32"):
        chainrule.load(io.BytesIO(bytes(raw)))
    # Not a zip archive after all: the safetensors reader names a damaged PyTorch file.
    with pytest.raises(CheckpointError, match="PyTorch"):
        chainrule.load(io.BytesIO(buf.getvalue()[:100]))


def test_big_endian_storage_is_swapped():
    t = torch.arange(5, dtype=torch.int32)
    buf = _torch_file({"t": t})
    swapped = _rewrite(
        _rewrite(buf, "byteorder", lambda d: b"big"),
        "data/0",
        lambda d: np.frombuffer(d, "<i4").astype(">i4").tobytes(),
    )
    assert chainrule.load(swapped)["t"].tolist() == [0, 1, 2, 3, 4]


def test_foreign_dtypes_and_map_location():
    c = chainrule.load(_torch_file({"c": torch.tensor([1 + 2j, -0.5j], dtype=torch.complex64)}))
    assert c["c"].dtype == chainrule.complex64 and c["c"].tolist() == [1 + 2j, -0.5j]
    b = chainrule.load(_torch_file({"b": torch.tensor([1.5, -2.25], dtype=torch.bfloat16)}))["b"]
    assert b.dtype == chainrule.bfloat16 and b.tolist() == [1.5, -2.25]
    for ml in ("cpu", chainrule.device("cpu"), {"cpu": "cpu"}, lambda s, loc: s):
        r = chainrule.load(_torch_file({"w": torch.ones(2)}), map_location=ml)
        assert r["w"].device == chainrule.device("cpu")


# Writing PyTorch's format: chainrule.save(obj, f, format="torch"), read by torch.load ------
def _to_torch(obj, **load_kw):
    buf = io.BytesIO()
    chainrule.save(obj, buf, format="torch")
    buf.seek(0)
    return torch.load(buf, **load_kw), buf


def test_torch_reads_a_chainrule_training_checkpoint():
    chainrule.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    opt = chainrule.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = chainrule.randn(6, 3)
    model(x).pow(2).sum().backward()
    opt.step()
    ckpt = {"epoch": 3, "model": model.state_dict(), "opt": opt.state_dict()}
    r, _ = _to_torch(ckpt)  # torch's default weights_only=True accepts every global written
    assert r["epoch"] == 3 and type(r["model"]) is OrderedDict
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    tm.load_state_dict(r["model"])
    topt = torch.optim.SGD(tm.parameters(), lr=0.5, momentum=0.9)
    topt.load_state_dict(r["opt"])
    assert topt.param_groups[0]["lr"] == 0.1
    model.eval()
    tm.eval()
    want = model(x).detach().numpy()
    np.testing.assert_allclose(tm(torch.from_numpy(x.numpy())).detach().numpy(), want, rtol=1e-6)
    # The momentum buffers came along: one more step from the same gradients agrees.
    for lib_model, lib_opt, inp in ((model, opt, x), (tm, topt, torch.from_numpy(x.numpy()))):
        lib_model.train()
        lib_opt.zero_grad()
        lib_model(inp).pow(2).sum().backward()
        lib_opt.step()
    for p, q in zip(model.parameters(), tm.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_written_values_dtypes_and_sharing():
    base = chainrule.arange(12.0).reshape(3, 4)
    obj = {
        "t": base.t(),  # non-contiguous: written contiguous, same values
        "same": [base, base],
        "p": nn.Parameter(chainrule.ones(2)),
        "frozen": nn.Parameter(chainrule.ones(1), requires_grad=False),
        "leaf": chainrule.ones(2, requires_grad=True),
        "ints": [0, 255, 256, -1, 2**31, -(2**31) - 1, 2**70],
        "f": [0.1, float("inf")],
        "plain": (None, True, False, "s\u00e9", b"\x00\xff"),
        "dtype": chainrule.float16,
        "size": chainrule.Size([2, 3]),
        "device": chainrule.device("cpu"),
        "od": OrderedDict(b=1, a=2),
        **{f"x_{d}": chainrule.arange(5).to(getattr(chainrule, d)) for d in DTYPES},
        "empty": chainrule.empty(0, 3),
        "scalar": chainrule.tensor(2.5),
    }
    r, buf = _to_torch(obj)
    _same(chainrule.load(io.BytesIO(buf.getvalue())), r)  # our reader agrees with torch's
    assert r["same"][0] is r["same"][1]
    assert r["ints"] == obj["ints"] and r["f"] == obj["f"] and r["plain"] == obj["plain"]
    assert r["dtype"] is torch.float16 and r["size"] == torch.Size([2, 3])
    assert r["device"] == torch.device("cpu") and list(r["od"]) == ["b", "a"]
    np.testing.assert_array_equal(r["t"].numpy(), base.t().numpy())
    for d in DTYPES:
        assert r[f"x_{d}"].dtype is getattr(torch, d)
    assert isinstance(r["p"], torch.nn.Parameter) and r["p"].requires_grad
    assert not r["frozen"].requires_grad and r["leaf"].requires_grad


def test_written_records_are_aligned_for_mmap(tmp_path):
    path = tmp_path / "c.pt"
    chainrule.save({"a": chainrule.ones(3), "b": chainrule.arange(7)}, path, format="torch")
    with open(path, "rb") as fh, zipfile.ZipFile(fh) as zf:
        for info in zf.infolist():
            fh.seek(info.header_offset + 26)
            n, m = struct.unpack("<HH", fh.read(4))
            assert (info.header_offset + 30 + n + m) % 64 == 0, info.filename
    r = torch.load(path, mmap=True)
    assert r["a"].tolist() == [1.0, 1.0, 1.0] and r["b"].tolist() == list(range(7))


def test_torch_format_refuses_what_it_cannot_write():
    with pytest.raises(TypeError, match=r"type Sequential \(at obj\['m'\]\)"):
        chainrule.save({"m": nn.Sequential()}, io.BytesIO(), format="torch")
    with pytest.raises(ValueError, match="format must be 'chainrule' or 'torch'"):
        chainrule.save({}, io.BytesIO(), format="pickle")


def test_mmap_load_of_a_torch_file_is_private_copy_on_write(tmp_path):
    path = tmp_path / "m.pt"
    obj = {"w": torch.arange(6.0).reshape(2, 3), "e": torch.empty(0), "i": torch.arange(3)}
    torch.save(obj, path)
    before = path.read_bytes()
    r = chainrule.load(path, mmap=True)
    _same(r, torch.load(path))
    r["w"].add_(100)  # writable, and the file is untouched
    assert r["w"][0, 0].item() == 100.0 and path.read_bytes() == before
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap"):
        chainrule.load(io.BytesIO(before), mmap=True)
