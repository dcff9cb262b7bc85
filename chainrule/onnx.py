"""``chainrule.onnx``: the parts of ``torch.onnx`` a training program touches.

chainrule records no program graph that ONNX could be written from (it runs op by op on NumPy),
so :func:`export` refuses with :class:`OnnxExporterError`, saying so; :func:`is_in_onnx_export`
is truthful (an export is never under way). Programs that ``import torch.onnx`` and export only
on request (pytorch/examples' word_language_model ``--onnx-export``) run unchanged.
"""

from __future__ import annotations

from typing import Any

__all__ = ["OnnxExporterError", "export", "is_in_onnx_export"]


class OnnxExporterError(RuntimeError):
    """Raised when an ONNX export cannot be done (``torch.onnx.OnnxExporterError``)."""


def is_in_onnx_export() -> bool:
    """Whether an ONNX export is running: never, in chainrule."""
    return False


def export(model: Any, args: Any = (), f: Any = None, *rest: Any, **kwargs: Any) -> None:
    """Refuses: chainrule has no ONNX exporter (nothing to trace a graph from)."""
    raise OnnxExporterError(
        "torch.onnx.export: chainrule has no ONNX exporter (it runs op by op on NumPy and "
        "records no graph to write). Save the weights with torch.save(model.state_dict(), path) "
        "and export from PyTorch instead."
    )
