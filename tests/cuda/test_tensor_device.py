"""Tensors made with ``device='cuda'`` on the CuPy stand-in: where they live and what reads
them back (the ops themselves move to the CUDA backend in a later step)."""

from __future__ import annotations

import pytest

import chainrule as cr


def test_factories_put_tensors_on_the_requested_gpu(fake_cuda):
    t = cr.tensor([1.0, 2.5], device="cuda:1")
    assert t.device == cr.device("cuda", 1) and t.is_cuda and not t.is_cpu
    assert t.get_device() == 1
    z = cr.zeros(2, 3, device="cuda")
    assert z.device == cr.device("cuda", 0) and z.shape == (2, 3) and z.dtype == cr.float32
    assert cr.randn(4, device=cr.device("cuda", 0)).is_cuda
    with cr.cuda.device(1):
        assert cr.ones(2, device="cuda").get_device() == 1  # 'cuda' means the current GPU


def test_reading_values_back(fake_cuda):
    t = cr.tensor([[1.0, 2.5]], device="cuda")
    assert t.tolist() == [[1.0, 2.5]] and cr.tensor(3.0, device="cuda").item() == 3.0
    assert repr(t) == "tensor([[1.0000, 2.5000]], device='cuda:0')"
    with pytest.raises(TypeError) as e:
        t.numpy()
    assert str(e.value) == (
        "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
        "to host memory first."
    )


def test_invalid_device_ordinal(fake_cuda):
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        cr.ones(3, device="cuda:5")
