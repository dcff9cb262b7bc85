"""The linear-algebra family, one module per group:

- ``products``: matmul, mm, bmm, mv, dot, outer, addmm, addmv, baddbmm;
- ``einsum``: einsum (one op per number of operands, sharing a forward and a VJP);
- ``primitives``: the torch.linalg primitives that chainrule/linalg.py exposes (inv/inverse,
  det, slogdet/logdet, svd/svdvals, solve);
- ``eigh``: the Hermitian eigendecomposition (eigh, eigvalsh); ``eig``: the general one (eig,
  eigvals); ``ldl``: the Bunch-Kaufman LDL factorization and its solve (not differentiable);
- ``extra``: lstsq (an op) and the torch.linalg functions composed from the others (pinv,
  matrix_rank, cond, inv_ex/solve_ex/cholesky_ex, tensorinv/tensorsolve...);
- ``_common``: LinAlgError and the dtype checks of the products.

Every VJP is written with ``ns`` (Note [ns]) so that double backward works.
"""

from __future__ import annotations

from chainrule.ops.linalg._common import LinAlgError as LinAlgError
from chainrule.ops.linalg._common import _c_name as _c_name
from chainrule.ops.linalg._common import _type_name as _type_name
from chainrule.ops.linalg._common import check_addmm_dtype as check_addmm_dtype
from chainrule.ops.linalg.einsum import (
    einsum,
)
from chainrule.ops.linalg.primitives import (
    det,
    inverse,
    logdet,
    slogdet,
)
from chainrule.ops.linalg.primitives import linalg_det as linalg_det
from chainrule.ops.linalg.primitives import linalg_inv as linalg_inv
from chainrule.ops.linalg.primitives import linalg_slogdet as linalg_slogdet
from chainrule.ops.linalg.primitives import linalg_solve as linalg_solve
from chainrule.ops.linalg.primitives import linalg_svd as linalg_svd
from chainrule.ops.linalg.primitives import linalg_svdvals as linalg_svdvals
from chainrule.ops.linalg.products import (
    addmm,
    addmv,
    baddbmm,
    bmm,
    dot,
    matmul,
    mm,
    mv,
    outer,
)
from chainrule.ops.linalg.products import linear_addmm as linear_addmm

__all__ = [
    "matmul",
    "mm",
    "bmm",
    "mv",
    "dot",
    "outer",
    "einsum",
    "addmm",
    "addmv",
    "baddbmm",
    "det",
    "inverse",
    "slogdet",
    "logdet",
]
