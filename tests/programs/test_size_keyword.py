"""Factories take the shape as ``size=`` too (``torch.empty(size=(n, m))``, as graph-attention
code writes it), with PyTorch's errors when the shape comes twice or is not a sequence."""

from __future__ import annotations

import pytest
import torch

import chainrule as cr

NAMES = ["empty", "zeros", "ones", "rand", "randn"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("size", [(2, 3), [4], (), (1, 0, 2)])
def test_size_keyword_gives_the_shape(name, size):
    t = getattr(torch, name)(size=size)
    c = getattr(cr, name)(size=size)
    assert tuple(c.shape) == tuple(t.shape) and c.dtype.name == str(t.dtype).split(".")[1]


@pytest.mark.parametrize("name", ["zeros", "ones"])
def test_size_keyword_values(name):
    t = getattr(torch, name)(size=(2, 2), dtype=torch.float64)
    c = getattr(cr, name)(size=(2, 2), dtype=cr.float64)
    assert c.tolist() == t.tolist()


@pytest.mark.parametrize("name", NAMES)
def test_size_given_twice_or_as_int_is_a_type_error(name):
    for call in (lambda m: getattr(m, name)(2, size=(3,)), lambda m: getattr(m, name)(size=2)):
        with pytest.raises(TypeError) as te:
            call(torch)
        with pytest.raises(TypeError) as ce:
            call(cr)
        assert (
            str(ce.value)
            .splitlines()[0]
            .rstrip(":")
            .startswith(str(te.value).splitlines()[0].rstrip(":").split(", but expected")[0])
        )
