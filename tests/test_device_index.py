"""An integer device (``device(0)``, ``device=0``, ``to(0)``) is the accelerator's index: without
a GPU backend it raises PyTorch's RuntimeError (issue #15); with one it means ``cuda:N``."""

from __future__ import annotations

from typing import Any, Callable

import pytest
import torch

import chainrule as cr
from tests._fakecupy.plugin import fake_cuda  # noqa: F401

# Each form, as a function of the library module (torch or chainrule).
FORMS: dict[str, Callable[[Any], Any]] = {
    "device(0)": lambda m: m.device(0),
    "device(1)": lambda m: m.device(1),
    "ones(device=0)": lambda m: m.ones(2, device=0),
    "empty(device=0)": lambda m: m.empty(2, device=0),
    "tensor(device=0)": lambda m: m.tensor([1.0], device=0),
    "t.to(0)": lambda m: m.ones(2).to(0),
    "t.to(0, float64)": lambda m: m.ones(2).to(0, m.float64),
    "t.to(device=0)": lambda m: m.ones(2).to(device=0),
    "t.to(device(0))": lambda m: m.ones(2).to(m.device(0)),
    "t.cuda(0)": lambda m: m.ones(2).cuda(0),
    "Module.to(0)": lambda m: m.nn.Linear(1, 1).to(0),
    "Module.cuda(0)": lambda m: m.nn.Linear(1, 1).cuda(0),
    "set_default_device(0)": lambda m: m.set_default_device(0),
    "Generator(device=0)": lambda m: m.Generator(device=0),
}


def _error(f: Callable[[], Any]) -> tuple[type, str]:
    with pytest.raises(Exception) as e:
        f()
    return type(e.value), str(e.value)


@pytest.mark.skipif(torch.cuda.is_available(), reason="compares with a CPU-only torch")
@pytest.mark.parametrize("form", list(FORMS))
def test_integer_device_without_accelerator_raises_as_torch(form: str) -> None:
    try:
        got = _error(lambda: FORMS[form](cr))
    finally:
        cr.set_default_device(None)
    want = _error(lambda: FORMS[form](torch))
    assert want == (RuntimeError, "Cannot access accelerator device when none is available.")
    assert got == want


@pytest.mark.parametrize("m", [torch, cr], ids=["torch", "chainrule"])
def test_negative_index_and_named_cuda(m: Any) -> None:
    assert _error(lambda: m.device(-1)) == (RuntimeError, "Device index must not be negative")
    # A named 'cuda' device still parses without a GPU; using it is torch's AssertionError.
    assert str(m.device("cuda", 0)) == "cuda:0"
    if not torch.cuda.is_available():
        for f in (lambda: m.ones(2).cuda(), lambda: m.ones(2).to("cuda")):
            kind, msg = _error(f)
            assert kind is AssertionError and msg.startswith("Torch not compiled with CUDA enabled")


def test_integer_device_is_cuda_n_with_a_gpu_backend(fake_cuda: Any) -> None:  # noqa: F811
    assert cr.device(0) == cr.device("cuda", 0) and cr.device(0).type == "cuda"
    assert repr(cr.device(1)) == "device(type='cuda', index=1)"
    x = cr.ones(2, device=0)
    assert str(x.device) == "cuda:0" and x.is_cuda
    for y in (
        cr.ones(2).to(0),
        cr.ones(2).to(device=0),
        cr.ones(2).to(cr.device(0)),
        cr.ones(2).cuda(0),
    ):
        assert str(y.device) == "cuda:0"
        assert y.cpu().tolist() == [1.0, 1.0]
    z = cr.ones(2).to(0, cr.float64)
    assert z.dtype == cr.float64 and str(z.device) == "cuda:0"
    m = cr.nn.Linear(1, 1).to(0)
    assert str(m.weight.device) == "cuda:0"
