"""The op registry, in parts, one topic each (this module gathers their names for the op
families and for code that imported them from here):

- ops/_opdef.py: op declaration, ``OpDef``, ``unary`` / ``binary`` / ``defop``, ``REGISTRY`` and
  ``ns`` (never imports ``Tensor``);
- ops/_apply.py: dispatch and promotion, ``apply_op`` / ``apply_unary`` / ``apply_binary``;
- ops/_record.py: node building, the generic ``_record``;
- ops/_record_gen.py: code generation, the record written out for one op from one template;
- ops/views.py: in-place ops and views.

Imports point one way: _opdef -> _record_gen -> _record -> _apply.
"""

from __future__ import annotations

from chainrule.ops._apply import _CATEGORY as _CATEGORY
from chainrule.ops._apply import _legacy_name as _legacy_name
from chainrule.ops._apply import _state as _state
from chainrule.ops._apply import apply_binary as apply_binary
from chainrule.ops._apply import apply_op
from chainrule.ops._apply import apply_unary as apply_unary
from chainrule.ops._opdef import REGISTRY, OpDef, binary, defop, ns, unary
from chainrule.ops._record import _record as _record
from chainrule.ops._record_gen import _first_record as _first_record

__all__ = ["OpDef", "unary", "binary", "defop", "apply_op", "ns", "REGISTRY"]
