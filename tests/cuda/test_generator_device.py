"""``Generator(device=...)``: PyTorch's CPU-build errors without a GPU, and the GPU's index on
the CuPy stand-in (issue 17)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch

import chainrule as cr


def _outcome(lib: Any, device: Any) -> tuple[str, str]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns for 'mkldnn' as a device type
            g = lib.Generator(device=device) if device is not None else lib.Generator()
        return ("ok", str(g.device))
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return (type(e).__name__, str(e))


@pytest.mark.parametrize(
    "device",
    [
        None,
        "cpu",
        "cpu:1",
        "cuda",
        "cuda:0",
        "cuda:1",
        0,
        "meta",
        "mps",
        "xpu",
        "hip",
        "hpu",
        "xla",
        "lazy",
        "mkldnn",
        "vulkan",
        "mtia",
        "privateuseone",
        "foo",
    ],
)
def test_without_gpu_matches_torch_cpu_build(device: Any) -> None:
    assert _outcome(cr, device) == _outcome(torch, device)
    if device == "cuda":
        assert _outcome(cr, cr.device("cuda")) == _outcome(torch, torch.device("cuda"))


def test_on_the_stand_in_a_cuda_generator_is_for_one_gpu(fake_cuda: Any) -> None:
    assert cr.Generator(device="cuda").device == cr.device("cuda", 0)
    assert cr.Generator(device="cuda:1").device == cr.device("cuda", 1)
    assert cr.Generator(device=1).device == cr.device("cuda", 1)  # an accelerator index
    assert cr.Generator().device == cr.device("cpu")
    with cr.cuda.device(1):  # 'cuda' without an index: the current GPU, as torch's
        assert cr.Generator(device=cr.device("cuda")).device == cr.device("cuda", 1)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        cr.Generator(device="cuda:2")
    g = cr.Generator(device="cuda").manual_seed(3)
    a = cr.randn(4, device="cuda", generator=g)
    g.manual_seed(3)
    assert (a == cr.randn(4, device="cuda", generator=g)).all()
