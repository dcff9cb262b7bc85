"""``SummaryWriter``: TensorBoard event files from chainrule values, as
``torch.utils.tensorboard.SummaryWriter`` writes them.

The event file format and its protocol buffers come from the ``tensorboard`` package (its
``EventFileWriter`` appends length-prefixed, CRC-checked records on a background thread); this
module only turns tensors, arrays and numbers into those protocol buffers. Images are encoded as
PNG with ``zlib`` (no imaging library needed).
"""

from __future__ import annotations

import os
import socket
import struct
import time
import zlib
from datetime import datetime
from typing import Any

import numpy as np
from tensorboard.compat.proto import event_pb2 as _event_pb2
from tensorboard.compat.proto import summary_pb2 as _summary_pb2
from tensorboard.compat.proto import tensor_pb2 as _tensor_pb2
from tensorboard.compat.proto import tensor_shape_pb2 as _tensor_shape_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter

__all__ = ["SummaryWriter", "FileWriter"]

# protobuf's generated modules make their message classes at run time, out of a type checker's
# sight: typed Any.
event_pb2: Any = _event_pb2
summary_pb2: Any = _summary_pb2
tensor_pb2: Any = _tensor_pb2
tensor_shape_pb2: Any = _tensor_shape_pb2
TensorProto = tensor_pb2.TensorProto
TensorShapeProto = tensor_shape_pb2.TensorShapeProto


def _array(x: Any) -> np.ndarray:
    """A host NumPy array of a tensor (detached), an array or a number."""
    from chainrule._tensor import Tensor

    if isinstance(x, Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _scalar(x: Any) -> float:
    a = _array(x)
    if a.size != 1:
        raise ValueError(f"scalar should be 0D, got a value of shape {tuple(a.shape)}")
    return float(a.reshape(()))


class FileWriter:
    """One event file in ``log_dir``: ``add_event``/``add_summary``, ``flush``, ``close``."""

    def __init__(
        self,
        log_dir: str | os.PathLike[str],
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event: Any, step: int | None = None, walltime: float | None = None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(
        self, summary: Any, global_step: int | None = None, walltime: float | None = None
    ) -> None:
        self.add_event(event_pb2.Event(summary=summary), global_step, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()


def _histogram(values: np.ndarray, bins: Any, max_bins: int | None) -> Any:
    """A HistogramProto of ``values``: count, min, max, sum, sum of squares, and the counts of
    the buckets whose right edges are ``bucket_limit`` (TensorBoard's convention)."""
    v = values.astype(np.float64).reshape(-1)
    if v.size == 0:
        raise ValueError("The input has no element.")
    if isinstance(bins, str) and bins == "tensorflow":
        # TensorFlow's default edges: +-1e-12 * 1.1**k up to 1e20, and 0.
        pos = [1e-12]
        while pos[-1] < 1e20:
            pos.append(pos[-1] * 1.1)
        edges = np.array([-x for x in reversed(pos)] + [0.0] + pos)
    else:
        edges = np.histogram_bin_edges(v, bins=bins)
    counts, edges = np.histogram(v, bins=edges)
    if max_bins is not None and len(counts) > max_bins:
        # Merge runs of k neighbouring buckets so that at most max_bins remain.
        nb = len(counts)
        k = -(-nb // max_bins)
        counts = np.add.reduceat(counts, np.arange(0, nb, k))
        edges = edges[np.r_[0:nb:k, nb]]
    # Keep the buckets from the first to the last non-empty one.
    nz = np.nonzero(counts)[0]
    lo, hi = (int(nz[0]), int(nz[-1]) + 1) if nz.size else (0, len(counts))
    return summary_pb2.HistogramProto(
        min=float(v.min()),
        max=float(v.max()),
        num=int(v.size),
        sum=float(v.sum()),
        sum_squares=float((v * v).sum()),
        bucket_limit=[float(e) for e in edges[lo + 1 : hi + 1]],
        bucket=[float(c) for c in counts[lo:hi]],
    )


def _png(img: np.ndarray) -> bytes:
    """PNG bytes of an HWC uint8 image with 3 or 4 channels (8-bit, no interlace)."""
    h, w, c = img.shape
    color = {3: 2, 4: 6}[c]  # truecolour, truecolour with alpha
    raw = b"".join(b"\x00" + img[r].tobytes() for r in range(h))  # filter 0 on every row

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw, 6))
        + chunk(b"IEND", b"")
    )


def _to_hwc(img: np.ndarray, dataformats: str) -> np.ndarray:
    """An image in ``dataformats`` (CHW, HWC, HW, ...) as HWC with 3 or 4 channels."""
    fmt = dataformats.upper()
    if len(fmt) != img.ndim or sorted(fmt) != sorted(set(fmt)) or not set(fmt) <= set("CHW"):
        raise ValueError(
            f"dataformats {dataformats!r} does not describe an image of shape {img.shape}"
        )
    if "C" not in fmt:
        img, fmt = img[..., None], fmt + "C"
    img = np.transpose(img, [fmt.index(d) for d in "HWC"])
    if img.shape[2] == 2 or img.shape[2] > 4:
        raise ValueError(f"an image needs 1, 3 or 4 channels, got {img.shape[2]}")
    if img.shape[2] == 1:  # grey is written as RGB, as torch does
        img = np.repeat(img, 3, axis=2)
    return img


def _to_uint8(img: np.ndarray) -> np.ndarray:
    # As torch: other than uint8, values are taken to be in [0, 1]; scaled by 255 in float32
    # and truncated.
    if img.dtype == np.uint8:
        return img
    return np.clip(img.astype(np.float32) * 255.0, 0, 255).astype(np.uint8)


def _image_summary(tag: str, img: np.ndarray) -> Any:
    h, w, c = img.shape
    image = summary_pb2.Summary.Image(
        height=h, width=w, colorspace=c, encoded_image_string=_png(np.ascontiguousarray(img))
    )
    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, image=image)])


def _grid(imgs: np.ndarray) -> np.ndarray:
    """NHWC images tiled into one HWC image, up to 8 per row (as torch's make_grid)."""
    n, h, w, c = imgs.shape
    cols = min(n, 8)
    rows = -(-n // cols)
    out = np.zeros((rows * h, cols * w, c), imgs.dtype)
    for i in range(n):
        r, k = divmod(i, cols)
        out[r * h : (r + 1) * h, k * w : (k + 1) * w] = imgs[i]
    return out


class SummaryWriter:
    """Write TensorBoard event files to ``log_dir``, as ``torch.utils.tensorboard.SummaryWriter``.

    Args:
        log_dir: the directory (default ``runs/<date>_<host><comment>``).
        comment: appended to the default ``log_dir``.
        purge_step: events of a crashed earlier run at steps >= ``purge_step`` are hidden
            by TensorBoard (a SessionLog START event at that step).
        max_queue: events kept in memory before they are written.
        flush_secs: seconds between flushes to disk.
        filename_suffix: appended to the event file's name.
    """

    def __init__(
        self,
        log_dir: str | os.PathLike[str] | None = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir  # kept as given (a Path stays a Path), as torch does
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict[str, FileWriter] = {}
        self._get_file_writer()

    def _get_file_writer(self) -> FileWriter:
        if self.file_writer is None:
            self.file_writer = FileWriter(
                self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix
            )
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                start = event_pb2.Event(
                    session_log=event_pb2.SessionLog(status=event_pb2.SessionLog.START)
                )
                self.file_writer.add_event(start, self.purge_step)
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str | os.PathLike[str]:
        """The directory the event files go to (as given)."""
        return self.log_dir

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """Log one number (a Python number, or a one-element tensor or array) under ``tag``."""
        v = _scalar(scalar_value)
        if new_style:
            dtype = "DT_DOUBLE" if double_precision else "DT_FLOAT"
            tensor = TensorProto(
                dtype=dtype,
                tensor_shape=TensorShapeProto(),
                **({"double_val": [v]} if double_precision else {"float_val": [v]}),
            )
            meta = summary_pb2.SummaryMetadata(
                plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars")
            )
            value = summary_pb2.Summary.Value(tag=tag, tensor=tensor, metadata=meta)
        else:
            value = summary_pb2.Summary.Value(tag=tag, simple_value=v)
        self._get_file_writer().add_summary(
            summary_pb2.Summary(value=[value]), global_step, walltime
        )

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: dict[str, Any],
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log several numbers on one chart: each goes to its own run directory
        ``<log_dir>/<main_tag>_<tag>``, under ``main_tag``."""
        walltime = time.time() if walltime is None else walltime
        base = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            path = os.path.join(base, main_tag.replace("/", "_") + "_" + tag)
            w = self.all_writers.get(path)
            if w is None:
                w = FileWriter(path, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[path] = w
            summary = summary_pb2.Summary(
                value=[summary_pb2.Summary.Value(tag=main_tag, simple_value=_scalar(value))]
            )
            w.add_summary(summary, global_step, walltime)

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: int | None = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
    ) -> None:
        """Log the distribution of ``values``; ``bins`` is ``"tensorflow"`` (TensorFlow's
        exponential buckets) or anything ``numpy.histogram`` takes ("auto", an int, edges)."""
        histo = _histogram(_array(values), bins, max_bins)
        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, histo=histo)])
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_histogram_raw(
        self,
        tag: str,
        min: float,  # noqa: A002 - PyTorch's argument names
        max: float,  # noqa: A002
        num: int,
        sum: float,  # noqa: A002
        sum_squares: float,
        bucket_limits: Any,
        bucket_counts: Any,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a histogram already computed: bucket right edges and their counts."""
        limits = [float(x) for x in _array(bucket_limits).reshape(-1)]
        counts = [float(x) for x in _array(bucket_counts).reshape(-1)]
        if len(limits) != len(counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        histo = summary_pb2.HistogramProto(
            min=min,
            max=max,
            num=num,
            sum=sum,
            sum_squares=sum_squares,
            bucket_limit=limits,
            bucket=counts,
        )
        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, histo=histo)])
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_text(
        self,
        tag: str,
        text_string: str,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a string (Markdown), shown by TensorBoard's text plugin."""
        meta = summary_pb2.SummaryMetadata(
            plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text")
        )
        tensor = TensorProto(
            dtype="DT_STRING",
            string_val=[text_string.encode("utf-8")],
            tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]),
        )
        value = summary_pb2.Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=tensor)
        self._get_file_writer().add_summary(
            summary_pb2.Summary(value=[value]), global_step, walltime
        )

    def add_image(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "CHW",
    ) -> None:
        """Log an image: floats in [0, 1] or uint8 in [0, 255], laid out as ``dataformats``."""
        img = _to_uint8(_to_hwc(_array(img_tensor), dataformats))
        self._get_file_writer().add_summary(_image_summary(tag, img), global_step, walltime)

    def add_images(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "NCHW",
    ) -> None:
        """Log a batch of images (``dataformats`` with N first) tiled into one grid."""
        arr = _array(img_tensor)
        fmt = dataformats.upper()
        if not fmt.startswith("N") or arr.ndim != len(fmt):
            raise ValueError(
                f"dataformats {dataformats!r} does not describe a batch of shape {arr.shape}"
            )
        imgs = np.stack([_to_hwc(a, fmt[1:]) for a in arr]) if len(arr) else None
        if imgs is None:
            raise ValueError("add_images needs at least one image")
        img = _to_uint8(_grid(imgs))
        self._get_file_writer().add_summary(_image_summary(tag, img), global_step, walltime)

    def flush(self) -> None:
        """Write every pending event to disk."""
        for w in self.all_writers.values():
            w.flush()

    def close(self) -> None:
        """Flush and close every event file; later ``add_*`` calls open new ones."""
        for w in self.all_writers.values():
            w.flush()
            w.close()
        self.file_writer = None
        self.all_writers = {}

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
