"""The optimizer tests run PyTorch on tensors of a few elements; its thread pool only adds
waiting there (seconds per test on a loaded machine), so these tests run it on one thread."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True)
def _torch_one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
