"""``torch.return_types``: the named tuples that functions with several results return.

Each type is a ``tuple`` subclass with one read-only attribute per field, made by one factory
(:func:`structseq`) from the table below, which lists PyTorch 2.13's types and field orders.
They behave as PyTorch's ``structseq`` types do: ``torch.return_types.max((values, indices))``
builds one from a sequence of exactly ``n_fields`` items (else ``TypeError``), ``n_fields``,
``n_sequence_fields`` and ``n_unnamed_fields`` are class attributes, equality and hashing are
the tuple's, the repr names ``torch.return_types.<name>``, and pickling keeps the type.

The library builds its results with ``cls._make_of(*values)`` (no length check: the callers
give the right count), which is cheaper than going through a sequence.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, ClassVar

__all__ = ["all_return_types", "structseq"]


class _StructSeq(tuple):
    """The common base of the return types (a tuple with named fields)."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    n_fields: ClassVar[int] = 0
    n_sequence_fields: ClassVar[int] = 0
    n_unnamed_fields: ClassVar[int] = 0

    def __new__(cls, sequence: Any = (), dict: Any = None) -> Any:  # noqa: A002 - CPython's name
        try:
            values = tuple(sequence)
        except TypeError:
            raise TypeError("constructor requires a sequence") from None
        if len(values) != cls.n_fields:
            raise TypeError(
                f"torch.return_types.{cls.__name__}() takes a {cls.n_fields}-sequence "
                f"({len(values)}-sequence given)"
            )
        return tuple.__new__(cls, values)

    @classmethod
    def _make_of(cls, *values: Any) -> Any:
        """The library's constructor: one argument per field, in field order."""
        return tuple.__new__(cls, values)

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"torch.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self) -> Any:
        return (type(self), (tuple(self), {}))


class _ValuesIndices(_StructSeq):
    """The base of the ``(values, indices)`` types (max, min, sort, topk...), whose fields the
    type checker can then see."""

    __slots__ = ()
    values = property(itemgetter(0), doc="Field 0 of the result, ``values``.")
    indices = property(itemgetter(1), doc="Field 1 of the result, ``indices``.")


def structseq(name: str, fields: tuple[str, ...]) -> type:
    """A ``torch.return_types``-style tuple type called ``name`` with ``fields`` in order."""
    base = _ValuesIndices if fields == ("values", "indices") else _StructSeq
    ns: dict[str, Any] = {
        "__slots__": (),
        "__module__": __name__,
        "__qualname__": name,
        "_fields": fields,
        "n_fields": len(fields),
        "n_sequence_fields": len(fields),
    }
    for i, f in enumerate(fields):
        ns[f] = property(itemgetter(i), doc=f"Field {i} of the result, ``{f}``.")
    return type(name, (base,), ns)


# PyTorch 2.13's return types and their fields (each `<name>_out` has the same fields).
_TABLE: dict[str, tuple[str, ...]] = {
    "aminmax": ("min", "max"),
    "cummax": ("values", "indices"),
    "cummin": ("values", "indices"),
    "frexp": ("mantissa", "exponent"),
    "geqrf": ("a", "tau"),
    "histogram": ("hist", "bin_edges"),
    "histogramdd": ("hist", "bin_edges"),
    "kthvalue": ("values", "indices"),
    "linalg_cholesky_ex": ("L", "info"),
    "linalg_eig": ("eigenvalues", "eigenvectors"),
    "linalg_eigh": ("eigenvalues", "eigenvectors"),
    "linalg_inv_ex": ("inverse", "info"),
    "linalg_ldl_factor": ("LD", "pivots"),
    "linalg_ldl_factor_ex": ("LD", "pivots", "info"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_lu": ("P", "L", "U"),
    "linalg_lu_factor": ("LU", "pivots"),
    "linalg_lu_factor_ex": ("LU", "pivots", "info"),
    "linalg_qr": ("Q", "R"),
    "linalg_slogdet": ("sign", "logabsdet"),
    "linalg_solve_ex": ("result", "info"),
    "linalg_svd": ("U", "S", "Vh"),
    "lu_unpack": ("P", "L", "U"),
    "max": ("values", "indices"),
    "median": ("values", "indices"),
    "min": ("values", "indices"),
    "mode": ("values", "indices"),
    "nanmedian": ("values", "indices"),
    "qr": ("Q", "R"),
    "slogdet": ("sign", "logabsdet"),
    "sort": ("values", "indices"),
    "svd": ("U", "S", "V"),
    "topk": ("values", "indices"),
    "triangular_solve": ("solution", "cloned_coefficient"),
}
# PyTorch has no `histogramdd_out` type.
_NO_OUT = frozenset({"histogramdd"})

all_return_types: list[type] = []
for _name, _fields in _TABLE.items():
    for _n in (_name,) if _name in _NO_OUT else (_name, f"{_name}_out"):
        globals()[_n] = _t = structseq(_n, _fields)
        all_return_types.append(_t)
all_return_types.sort(key=lambda t: t.__name__)  # PyTorch's order
__all__ += [t.__name__ for t in all_return_types]  # pyright: ignore[reportUnsupportedDunderAll]


def __getattr__(name: str) -> type[_StructSeq]:
    # Only for the type checker's benefit: the types are module globals made above.
    raise AttributeError(f"module 'torch.return_types' has no attribute '{name}'")
