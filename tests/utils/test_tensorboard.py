"""utils.tensorboard: event files read back with TensorBoard's own reader, compared with what
torch.utils.tensorboard writes for the same calls."""

from __future__ import annotations

import importlib
import io
import sys

import numpy as np
import pytest

import chainrule

pytest.importorskip("tensorboard")
torch = pytest.importorskip("torch")
from tensorboard.backend.event_processing.event_accumulator import (  # noqa: E402
    EventAccumulator,
)


def _read(path):
    ea = EventAccumulator(str(path), size_guidance={"scalars": 0, "histograms": 0, "images": 0})
    ea.Reload()
    return ea


def _log(lib, writer_cls, log_dir):
    """The same calls on torch's and chainrule's SummaryWriter."""
    rng = np.random.default_rng(0)
    vals = rng.standard_normal(1000)
    img = rng.random((3, 8, 5))
    imgs = rng.random((3, 1, 4, 4))
    with writer_cls(log_dir, purge_step=None) as w:
        for step in range(5):
            w.add_scalar("loss", lib.tensor(1.0 / (step + 1)), step)
            w.add_scalar("lr", 0.1 * step, global_step=step)
        w.add_scalars("run", {"a": 1.5, "b": lib.tensor(2.5)}, 3)
        w.add_histogram("w", lib.tensor(vals), 1)
        w.add_histogram("w_auto", vals, 2, bins="auto")
        w.add_text("note", "hello **world**", 0)
        w.add_image("img", lib.tensor(img), 0)
        w.add_image(
            "img_hwc", (img.transpose(1, 2, 0) * 255).astype(np.uint8), 0, dataformats="HWC"
        )
        w.add_images("batch", lib.tensor(imgs), 0)
        w.add_images(
            "batch10", (rng.random((10, 4, 3, 3)) * 255).astype(np.uint8), 0, dataformats="NHWC"
        )
        w.add_image("grey", rng.random((6, 7)), 0, dataformats="HW")
        assert w.get_logdir() == log_dir
    return vals


def test_same_events_as_torch(tmp_path):
    from PIL import Image
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from chainrule.utils.tensorboard import SummaryWriter

    vals = _log(torch, TorchWriter, tmp_path / "torch")
    _log(chainrule, SummaryWriter, tmp_path / "ours")
    theirs, ours = _read(tmp_path / "torch"), _read(tmp_path / "ours")
    assert sorted(ours.Tags()["scalars"]) == sorted(theirs.Tags()["scalars"]) == ["loss", "lr"]
    for tag in ("loss", "lr"):
        a = [(e.step, e.value) for e in ours.Scalars(tag)]
        b = [(e.step, e.value) for e in theirs.Scalars(tag)]
        assert a == b and len(a) == 5
    # add_scalars writes one run per key, as torch does.
    for key, want in (("a", 1.5), ("b", 2.5)):
        sub_o, sub_t = (
            _read(tmp_path / "ours" / f"run_{key}"),
            _read(tmp_path / "torch" / f"run_{key}"),
        )
        assert [(e.step, e.value) for e in sub_o.Scalars("run")] == [(3, want)]
        assert [(e.step, e.value) for e in sub_t.Scalars("run")] == [(3, want)]
    for tag in ("w", "w_auto"):
        (ho,) = ours.Histograms(tag)
        (ht,) = theirs.Histograms(tag)
        o, t = ho.histogram_value, ht.histogram_value
        assert (o.num, ho.step) == (t.num, ht.step) == (1000, ht.step)
        np.testing.assert_allclose(
            [o.min, o.max, o.sum, o.sum_squares], [t.min, t.max, t.sum, t.sum_squares]
        )
        assert sum(o.bucket) == 1000
        assert all(a <= b for a, b in zip(o.bucket_limit, o.bucket_limit[1:]))
        assert o.bucket_limit[-1] >= vals.max()
    for tag in ("img", "img_hwc", "batch", "batch10", "grey"):
        (io_,) = ours.Images(tag)
        (it,) = theirs.Images(tag)
        po = np.asarray(Image.open(io.BytesIO(io_.encoded_image_string)))
        pt = np.asarray(Image.open(io.BytesIO(it.encoded_image_string)))
        assert (io_.width, io_.height) == (it.width, it.height)
        np.testing.assert_array_equal(po, pt)
    (text_o,) = ours.Tensors("note/text_summary")
    (text_t,) = theirs.Tensors("note/text_summary")
    assert text_o.tensor_proto.string_val == text_t.tensor_proto.string_val == [b"hello **world**"]


def test_purge_step_scalar_checks_and_default_log_dir(tmp_path, monkeypatch):
    from chainrule.utils.tensorboard import SummaryWriter

    w = SummaryWriter(tmp_path / "p", purge_step=2)
    w.add_scalar("x", 1.0, 2)
    with pytest.raises(ValueError, match="scalar should be 0D"):
        w.add_scalar("x", chainrule.ones(3), 3)
    with pytest.raises(ValueError, match="dataformats"):
        w.add_image("i", np.zeros((3, 4)), 0)
    w.close()
    assert [(e.step, e.value) for e in _read(tmp_path / "p").Scalars("x")] == [(2, 1.0)]
    monkeypatch.chdir(tmp_path)
    w2 = SummaryWriter(comment="_exp")
    assert w2.get_logdir().startswith("runs") and w2.get_logdir().endswith("_exp")
    w2.close()


def test_clear_import_error_without_tensorboard(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    monkeypatch.delitem(sys.modules, "chainrule.utils.tensorboard", raising=False)
    monkeypatch.delitem(sys.modules, "chainrule.utils.tensorboard.writer", raising=False)
    with pytest.raises(ImportError, match="TensorBoard logging requires TensorBoard"):
        importlib.import_module("chainrule.utils.tensorboard")
