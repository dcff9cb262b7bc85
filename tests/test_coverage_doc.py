"""docs/coverage.md lists the PyTorch names chainrule has; none of them may go missing."""

from __future__ import annotations

import os
import re

import pytest

import chainrule as cr

DOC = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "coverage.md"
)

OBJECTS = {
    "torch": lambda: cr,
    "torch.Tensor": lambda: cr.Tensor,
    "torch.nn": lambda: cr.nn,
    "torch.nn.Module": lambda: cr.nn.Module,
    "torch.nn.functional": lambda: cr.nn.functional,
    "torch.optim": lambda: cr.optim,
    "torch.optim.lr_scheduler": lambda: cr.optim.lr_scheduler,
}


def _present() -> list[tuple[str, str]]:
    with open(DOC) as f:
        text = f.read()
    out = []
    for label, body in re.findall(r"<!-- present:(\S+) -->\n(.*?)\n<!-- end -->", text, re.S):
        out += [(label, n) for n in re.findall(r"`([^`]+)`", body)]
    return out


PRESENT = _present()


def test_document_lists_every_namespace():
    assert {label for label, _ in PRESENT} == set(OBJECTS)


@pytest.mark.parametrize("label", sorted(OBJECTS))
def test_no_listed_name_goes_missing(label):
    obj = OBJECTS[label]()
    missing = [n for lab, n in PRESENT if lab == label and not hasattr(obj, n)]
    assert missing == [], f"{label}: names listed as present in docs/coverage.md are gone"
