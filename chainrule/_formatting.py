"""Tensor ``repr`` in PyTorch's layout (precision 4, line width 80, summarised above 1000
elements with 3 edge items), so printed results read the same as PyTorch's."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from chainrule import _kinds

__all__ = ["tensor_repr", "set_printoptions"]


class _Opts:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode: bool | None = None


PRINT_OPTS = _Opts()


def set_printoptions(
    precision: int | None = None,
    threshold: int | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set the options used by tensor repr, as ``torch.set_printoptions``."""
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


class _Formatter:
    def __init__(self, a: np.ndarray) -> None:
        self.floating = _kinds.is_floating(a)
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = PRINT_OPTS.precision
        flat = a.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(_plain(v)))
            return
        vals = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if vals.size == 0:
            return
        absv = np.abs(vals)
        vmin, vmax = absv.min(), absv.max()
        self.int_mode = bool(np.all(np.ceil(vals) == vals))
        lst = vals.tolist()
        if self.int_mode:
            if vmax / vmin > 1000.0 or vmax > 1.0e8:
                self.sci_mode = True
                self.max_width = max(len(f"{v:.{p}e}") for v in lst)
            else:
                self.max_width = max(len(f"{v:.0f}") + 1 for v in lst)
        elif vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4:
            self.sci_mode = True
            self.max_width = max(len(f"{v:.{p}e}") for v in lst)
        else:
            self.max_width = max(len(f"{v:.{p}f}") for v in lst)
        if PRINT_OPTS.sci_mode is not None:
            self.sci_mode = PRINT_OPTS.sci_mode

    def format(self, v: Any) -> str:
        p = PRINT_OPTS.precision
        if self.floating:
            if self.sci_mode:
                r = f"{v:{self.max_width}.{p}e}"
            elif self.int_mode:
                r = f"{v:.0f}"
                if not (math.isinf(v) or math.isnan(v)):
                    r += "."
            else:
                r = f"{v:.{p}f}"
        else:
            r = _plain(v)
        return (self.max_width - len(r)) * " " + r


class _ComplexFormatter:
    """PyTorch's complex layout: the real parts and the imaginary parts each get a formatter of
    their own, and an element prints as ``real+imagj`` (``real-imagj`` for a negative part)."""

    def __init__(self, a: np.ndarray) -> None:
        self.re = _Formatter(np.ascontiguousarray(np.real(a)))
        self.im = _Formatter(np.ascontiguousarray(np.imag(a)))
        self.max_width = self.re.max_width + self.im.max_width + 1

    def format(self, v: Any) -> str:
        real_str = self.re.format(v.real)
        imag_str = (self.im.format(v.imag) + "j").lstrip()
        if imag_str[0] in "+-":
            return real_str + imag_str
        return real_str + "+" + imag_str


def _formatter(a: np.ndarray) -> Any:
    return _ComplexFormatter(a) if a.dtype.kind == "c" else _Formatter(a)


def _plain(v: Any) -> str:
    return str(v)


def _summarized(a: np.ndarray) -> np.ndarray:
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate([a[:e], a[-e:]]) if a.shape[0] > 2 * e else a
    if a.shape[0] > 2 * e:
        rows = [_summarized(a[i]) for i in range(e)] + [
            _summarized(a[i]) for i in range(a.shape[0] - e, a.shape[0])
        ]
    else:
        rows = [_summarized(x) for x in a]
    return np.stack(rows)


def _vector(a: np.ndarray, indent: int, summarize: bool, f: Any) -> str:
    e = PRINT_OPTS.edgeitems
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / (f.max_width + 2))))
    if summarize and a.shape[0] > 2 * e:
        data = [f.format(v) for v in a[:e].tolist()] + [" ..."]
        data += [f.format(v) for v in a[-e:].tolist()]
    else:
        data = [f.format(v) for v in a.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a: np.ndarray, indent: int, summarize: bool, f: Any) -> str:
    if a.ndim == 0:
        return f.format(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, f)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        parts = [_nested(a[i], indent + 1, summarize, f) for i in range(e)] + ["..."]
        parts += [
            _nested(a[i], indent + 1, summarize, f) for i in range(a.shape[0] - e, a.shape[0])
        ]
    else:
        parts = [_nested(a[i], indent + 1, summarize, f) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _add_suffixes(s: str, suffixes: list[str], indent: int) -> str:
    out = [s]
    last = len(s) - s.rfind("\n") + 1
    for suf in suffixes:
        if last + len(suf) + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + suf)
            last = indent + len(suf)
        else:
            out.append(", " + suf)
            last += len(suf) + 2
    out.append(")")
    return "".join(out)


def tensor_repr(t: Any, prefix: str = "tensor(") -> str:
    """PyTorch's repr of tensor ``t``: values, then dtype, size and grad suffixes."""
    from chainrule import _dtype

    a = np.asarray(t._backend.to_host(t._data))
    indent = len(prefix)
    suffixes = []
    dt = _dtype.from_np(a.dtype)
    default = _dtype.get_default_dtype()
    if a.size == 0:
        if a.ndim != 1:
            suffixes.append("size=" + str(tuple(a.shape)))
        if dt is not default:
            suffixes.append("dtype=" + repr(dt))
        body = "[]"
    else:
        if dt not in (default, _dtype.complex_of(default), _dtype.int64, _dtype.bool):
            suffixes.append("dtype=" + repr(dt))
        summarize = a.size > PRINT_OPTS.threshold
        f = _formatter(_summarized(a) if summarize else a)
        body = _nested(a, indent, summarize, f)
    if t.device.type != "cpu":
        suffixes.insert(0, f"device='{t.device}'")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
