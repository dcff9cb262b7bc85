"""Every registered op has a row in the op table (or a named indirect test)."""

from __future__ import annotations

from chainrule.ops import REGISTRY
from tests.opinfo.registry import INDIRECT, all_rows


def test_every_registered_op_has_a_row() -> None:
    covered = set()
    for row in all_rows():
        covered.update(row.covers)
    missing = sorted(set(REGISTRY) - covered - set(INDIRECT))
    assert missing == [], f"ops without an OpInfo row: {missing}"


def test_row_names_are_unique() -> None:
    names = [r.name for r in all_rows()]
    assert len(names) == len(set(names))
