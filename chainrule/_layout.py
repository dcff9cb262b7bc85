"""Layouts and memory formats, as PyTorch's ``torch.layout`` and ``torch.memory_format``
objects, and ``empty_strided``.

``strided`` is every dense tensor's layout; ``sparse_coo``, ``sparse_csr``, ``sparse_csc``,
``sparse_bsr`` and ``sparse_bsc`` are those of chainrule/sparse/'s tensors (docs/sparse.md).
The memory formats are accepted where PyTorch takes them (``memory_format=``); chainrule keeps
its arrays in row-major order whatever the format names.
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = [
    "layout",
    "memory_format",
    "strided",
    "sparse_coo",
    "sparse_csr",
    "sparse_csc",
    "sparse_bsr",
    "sparse_bsc",
    "contiguous_format",
    "preserve_format",
    "channels_last",
    "channels_last_3d",
    "legacy_contiguous_format",
    "empty_strided",
    "empty_permuted",
]


class _Named:
    """An interned, picklable named constant printing as ``torch.<name>``."""

    __slots__ = ("_name",)
    _registry: dict[str, Any] = {}

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"cannot create 'torch.{cls.__name__}' instances")

    @classmethod
    def _make(cls, name: str) -> Any:
        obj = object.__new__(cls)
        obj._name = name
        cls._registry[name] = obj
        return obj

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self) -> Any:
        return (_lookup, (self._name,))


def _lookup(name: str) -> Any:
    return _Named._registry[name]


class layout(_Named):  # noqa: N801 - PyTorch's name
    """A tensor's memory layout (``torch.strided``: dense; the sparse ones: docs/sparse.md)."""

    __slots__ = ()


class memory_format(_Named):  # noqa: N801 - PyTorch's name
    """A memory format name, accepted where PyTorch takes ``memory_format=``."""

    __slots__ = ()


strided = layout._make("strided")
sparse_coo = layout._make("sparse_coo")  # chainrule/sparse/ (docs/sparse.md)
sparse_csr = layout._make("sparse_csr")
sparse_csc = layout._make("sparse_csc")
sparse_bsr = layout._make("sparse_bsr")  # blocked: chainrule/sparse/_bsr.py
sparse_bsc = layout._make("sparse_bsc")
contiguous_format = memory_format._make("contiguous_format")
preserve_format = memory_format._make("preserve_format")
channels_last = memory_format._make("channels_last")
channels_last_3d = memory_format._make("channels_last_3d")
legacy_contiguous_format = contiguous_format  # the same object in PyTorch


def empty_strided(
    size: Sequence[int],
    stride: Sequence[int],
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Any:
    """An uninitialised tensor (here zeros) of ``size`` whose elements lie ``stride`` elements
    apart in a storage of the smallest size that holds them, as PyTorch's."""
    from chainrule._creation import zeros
    from chainrule._dtype import get_default_dtype

    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(
            f"dimensionality of sizes ({len(size)}) must match dimensionality of "
            f"strides ({len(stride)})"
        )
    if any(s < 0 for s in size):
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(size)}: {list(size)}"
        )
    n = 0 if 0 in size else 1 + sum((k - 1) * st for k, st in zip(size, stride))
    dt = dtype if dtype is not None else get_default_dtype()
    storage = zeros((max(n, 1),), dtype=dt, device=device)
    if size == () or 0 in size or stride == tuple(_contiguous(size)):
        out = zeros(size, dtype=dt, device=device)
    else:
        out = storage.as_strided(size, stride, 0)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _contiguous(size: tuple[int, ...]) -> list[int]:
    st, acc = [], 1
    for k in reversed(size):
        st.append(acc)
        acc *= max(k, 1)
    return list(reversed(st))


def empty_permuted(
    size: Sequence[int],
    physical_layout: Sequence[int],
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Any:
    """An uninitialised tensor (here zeros) of ``size`` whose dims lie in memory in the order
    ``physical_layout`` (outermost first): ``empty(size[p] for p in layout).permute(inverse)``."""
    from chainrule._creation import zeros
    from chainrule._dtype import get_default_dtype

    size, order = tuple(int(s) for s in size), tuple(int(p) for p in physical_layout)
    if sorted(order) != list(range(len(size))):
        raise RuntimeError(
            f"Number of dimensions in size does not match the length of the "
            f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
            f"len(physical_layout) = {len(order)}"
            if len(order) != len(size)
            else "Dimension out of range"
        )
    dt = dtype if dtype is not None else get_default_dtype()
    phys = zeros(tuple(size[p] for p in order), dtype=dt, device=device)
    inverse = [order.index(d) for d in range(len(size))]
    out = phys.permute(*inverse) if size else phys
    if requires_grad:
        out.requires_grad_(True)
    return out
