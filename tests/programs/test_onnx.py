"""torch.onnx as a program sees it: importable, is_in_onnx_export() is False outside an export,
and export refuses with torch.onnx's error type and a message that says why."""

from __future__ import annotations

import importlib

import pytest
import torch

import chainrule as cr


def test_onnx_imports_as_a_submodule():
    mod = importlib.import_module("chainrule.onnx")
    assert cr.onnx is mod
    assert cr.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False


def test_onnx_error_is_a_runtime_error_as_in_torch():
    assert issubclass(torch.onnx.OnnxExporterError, RuntimeError)
    assert issubclass(cr.onnx.OnnxExporterError, RuntimeError)


def test_export_refuses_clearly(tmp_path):
    m = cr.nn.Linear(2, 2)
    with pytest.raises(cr.onnx.OnnxExporterError, match="chainrule has no ONNX exporter"):
        cr.onnx.export(m, (cr.randn(1, 2),), str(tmp_path / "m.onnx"))
    assert not (tmp_path / "m.onnx").exists()
