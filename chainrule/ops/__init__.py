"""All ops, by family. Each family module lists its public functions in ``__all__``; this
package re-exports them, and ``chainrule`` re-exports this package's ``__all__``.
Adding an op touches its family's files only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chainrule import _dispatch
from chainrule.ops import (
    aliases,
    binary,
    cholesky,
    complex_numbers,
    composite,
    conv,
    factorizations,
    indexing,
    inplace,
    linalg,
    lowrank,
    matfun,
    nn,
    numeric,
    order_stats,
    reduction,
    scattering,
    shape,
    short_time,
    sorting,
    special,
    spectral,
    stacking,
    unary,
)
from chainrule.ops._registry import REGISTRY, OpDef, apply_binary, apply_op, apply_unary, ns
from chainrule.ops.views import check_inplace, history_alias, inplace_compute

FAMILIES = (
    unary,
    binary,
    reduction,
    shape,
    linalg,
    indexing,
    inplace,
    nn,
    conv,
    sorting,
    stacking,
    composite,
    special,
    cholesky,
    numeric,
    scattering,
    order_stats,
    aliases,
    matfun,
    complex_numbers,
    spectral,
    short_time,
    factorizations,
    lowrank,
)

__all__ = ["REGISTRY", "OpDef", "apply_op", "ns"]

# Op functions that PyTorch offers only as Tensor methods or in torch.nn.functional, or that are
# internal helpers: chainrule.ops has them, the top-level chainrule namespace does not.
NOT_TOP_LEVEL = frozenset(
    {
        "logsigmoid",
        "softplus",
        "relu6",
        "leaky_relu",
        "elu",
        "gelu",
        "silu",
        "mish",
        "hardtanh",
        "hardsigmoid",
        "hardswish",
        "rdiv",
        "rpow",
        "sum_to_size",
        "view",
        "expand",
        "to_dtype",
        "to_device",
        "repeat",
        "tril_",
        "triu_",
        "pad",
        "one_hot",
        "getitem",
        "setitem",
        "scatter_",
        "scatter_add_",
        "index_add_",
        "masked_fill_",
        "copy_",
        "add_",
        "sub_",
        "mul_",
        "div_",
        "pow_",
        "linalg_qr",
    }
)


def _reexport() -> None:
    g = globals()
    for fam in FAMILIES:
        for name in fam.__all__:
            if name in g and g[name] is not getattr(fam, name):
                raise ImportError(f"op {name!r} is defined by two families")
            g[name] = getattr(fam, name)
            __all__.append(name)


_reexport()

# Type checkers cannot follow _reexport(), which binds every family's ``__all__`` here at run
# time; these imports (never executed) show them the same names. A test checks that the two
# agree (tests/test_dispatch.py).
if TYPE_CHECKING:
    from chainrule.ops.aliases import *  # noqa: F403
    from chainrule.ops.binary import *  # noqa: F403
    from chainrule.ops.cholesky import *  # noqa: F403
    from chainrule.ops.complex_numbers import *  # noqa: F403
    from chainrule.ops.composite import *  # noqa: F403
    from chainrule.ops.conv import *  # noqa: F403
    from chainrule.ops.factorizations import *  # noqa: F403
    from chainrule.ops.indexing import *  # noqa: F403
    from chainrule.ops.inplace import *  # noqa: F403
    from chainrule.ops.linalg import *  # noqa: F403
    from chainrule.ops.lowrank import *  # noqa: F403
    from chainrule.ops.matfun import *  # noqa: F403
    from chainrule.ops.nn import *  # noqa: F403
    from chainrule.ops.numeric import *  # noqa: F403
    from chainrule.ops.order_stats import *  # noqa: F403
    from chainrule.ops.reduction import *  # noqa: F403
    from chainrule.ops.scattering import *  # noqa: F403
    from chainrule.ops.shape import *  # noqa: F403
    from chainrule.ops.short_time import *  # noqa: F403
    from chainrule.ops.sorting import *  # noqa: F403
    from chainrule.ops.special import *  # noqa: F403
    from chainrule.ops.spectral import *  # noqa: F403
    from chainrule.ops.stacking import *  # noqa: F403
    from chainrule.ops.unary import *  # noqa: F403

from chainrule.ops import _complex_refusals  # noqa: E402,F401  (after every op is registered)

# Tensor methods reach the ops through these tables (chainrule/_dispatch.py): every public op
# function, the dispatcher's entry points, and each declared op's OpDef by name.
_dispatch.register(_dispatch.ops, {n: globals()[n] for n in __all__})
_dispatch.register(
    _dispatch.ops,
    {
        "apply_unary": apply_unary,
        "apply_binary": apply_binary,
        "inplace_compute": inplace_compute,
        "check_inplace": check_inplace,
        "history_alias": history_alias,
    },
)
_dispatch.register(_dispatch.defs, REGISTRY)
