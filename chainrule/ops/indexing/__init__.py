"""The indexing family, one module per group:

- ``subscript``: ``x[idx]`` (getitem) and ``x[idx] = v`` (setitem, index_put_/index_put);
- ``gather_scatter``: gather, scatter/scatter_, scatter_add/scatter_add_, take_along_dim;
- ``selecting``: index_select, index_add/index_add_, masked_fill/masked_fill_, masked_select.

Basic indices (ints, slices, None, Ellipsis) give views; integer arrays and boolean masks give
copies. The VJP of indexing scatters g into zeros of the input's shape (``index_grad``), whose
own VJP is indexing again, so higher derivatives work.
"""

from __future__ import annotations

from chainrule.ops.indexing.gather_scatter import (
    gather,
    scatter,
    scatter_,
    scatter_add,
    scatter_add_,
    take_along_dim,
)
from chainrule.ops.indexing.selecting import (
    index_add,
    index_add_,
    index_select,
    masked_fill,
    masked_fill_,
    masked_select,
)
from chainrule.ops.indexing.subscript import _getitem as _getitem
from chainrule.ops.indexing.subscript import (
    getitem,
    index_put,
    index_put_,
    setitem,
)

__all__ = [
    "getitem",
    "setitem",
    "index_put_",
    "gather",
    "scatter",
    "scatter_",
    "scatter_add",
    "scatter_add_",
    "index_add_",
    "masked_fill_",
    "index_put",
    "index_select",
    "index_add",
    "masked_fill",
    "masked_select",
    "take_along_dim",
]
