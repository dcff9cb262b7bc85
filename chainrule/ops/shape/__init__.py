"""The shape family, one module per group:

- ``reshaping``: reshape/view, flatten/unflatten, squeeze/unsqueeze, expand;
- ``axes``: transpose, t, permute, movedim/moveaxis;
- ``joining``: stack/unbind, cat/concat/concatenate, split/chunk;
- ``slicing``: narrow, select;
- ``rearranging``: repeat/tile, flip/roll;
- ``triangular``: tril/triu (and in place), diagonal, diag;
- ``padding``: pad (torch.nn.functional's);
- ``conversion``: clone, to_dtype, to_device, one_hot (torch.nn.functional's).

Views share the base's version counter (``view=True``). Each op is declared once, in its
group's module; this module is the family that ``chainrule.ops`` lists (``FAMILIES``) and
re-exports. ``pad`` and ``one_hot`` are torch.nn.functional's; chainrule.nn.functional
re-exports them.
"""

from __future__ import annotations

from chainrule.ops.shape.axes import moveaxis, movedim, permute, t, transpose
from chainrule.ops.shape.conversion import clone, one_hot, to_device, to_dtype
from chainrule.ops.shape.joining import cat, chunk, concat, concatenate, split, stack, unbind
from chainrule.ops.shape.padding import pad
from chainrule.ops.shape.rearranging import flip, repeat, roll, tile
from chainrule.ops.shape.reshaping import (
    expand,
    flatten,
    reshape,
    squeeze,
    unflatten,
    unsqueeze,
    view,
)
from chainrule.ops.shape.slicing import narrow, select
from chainrule.ops.shape.triangular import diag, diagonal, tril, tril_, triu, triu_

__all__ = [
    "reshape",
    "view",
    "transpose",
    "t",
    "permute",
    "squeeze",
    "unsqueeze",
    "expand",
    "flatten",
    "stack",
    "unbind",
    "clone",
    "to_dtype",
    "to_device",
    "unflatten",
    "movedim",
    "moveaxis",
    "repeat",
    "tile",
    "flip",
    "roll",
    "cat",
    "concat",
    "concatenate",
    "split",
    "chunk",
    "narrow",
    "select",
    "tril",
    "triu",
    "tril_",
    "triu_",
    "diag",
    "diagonal",
    "pad",
    "one_hot",
]
