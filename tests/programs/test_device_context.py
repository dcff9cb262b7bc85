"""``with torch.device(...):`` as a context manager (the changing_default_device and
module_load_state_dict_tips recipes of pytorch/tutorials): the factory calls inside the block
use that device, blocks nest, and leaving a block (also by an exception) restores the default
that was there before. Compared with torch."""

from __future__ import annotations

import pytest
import torch

import chainrule as cr


def _trace(m):
    seen = []
    m.set_default_device(None)
    with m.device("cpu") as d:
        seen.append(repr(d))
        seen.append(str(m.get_default_device()))
        seen.append(str(m.nn.Linear(2, 3).weight.device))
        seen.append(str(m.zeros(2).device))
        with m.device("cpu"):
            seen.append(str(m.ones(1, device="cpu").device))
        seen.append(str(m.get_default_device()))
    seen.append(str(m.get_default_device()))
    try:
        with m.device("cpu"):
            raise ValueError("inside")
    except ValueError:
        pass
    seen.append(str(m.get_default_device()))
    return seen


def test_device_block_sets_and_restores_the_default():
    assert _trace(cr) == _trace(torch)


def test_a_cuda_block_fails_at_the_first_factory_call_as_torch_does():
    if torch.cuda.is_available() or cr.cuda.is_available():
        pytest.skip("a GPU is present")
    errors = []
    for m in (torch, cr):
        with pytest.raises(AssertionError) as e:
            with m.device("cuda"):
                m.nn.Linear(2, 3)
        errors.append(str(e.value))
        assert str(m.get_default_device()) == "cpu"
    assert errors[1].startswith(errors[0])


def test_set_default_device_inside_a_block_is_undone_on_leaving_it():
    # torch: the block's mode is popped on exit, whatever set_default_device did inside.
    outs = []
    for m in (torch, cr):
        m.set_default_device(None)
        with m.device("cpu"):
            m.set_default_device("cpu")
        outs.append(str(m.get_default_device()))
        m.set_default_device(None)
    assert outs[0] == outs[1]
