"""Helpers shared by the reduction modules: dims, dtypes, node names, empty-input checks and
NumPy's errstate."""

from __future__ import annotations

from typing import Any

from chainrule.ops._broadcast import normalize_dims
from chainrule.ops._registry import ns

__all__ = []


def _reduce_name(base: str) -> Any:
    return lambda p: f"{base}Backward{0 if p.get('dim') is None else 1}"


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "_data")


def _dtype_name(t: Any) -> str:
    """PyTorch's legacy scalar type name (Long, Float...), as its error messages spell it."""
    from chainrule._tensor import _type_name

    return _type_name(t._data.dtype).replace("Tensor", "")


def _cast(input: Any, dtype: Any) -> Any:
    """``input`` converted to ``dtype`` (the ``dtype=`` argument of reductions), if given."""
    if dtype is None:
        return input
    return input.to(dtype)


def _out_dtype(out: Any, dtype: Any) -> Any:
    """An integer result (which the op widened to int64) cast to an explicit ``dtype=``."""
    if dtype is not None and out.dtype != dtype:
        return out.to(dtype)
    return out


def _keep(x: Any, shape: tuple[int, ...], dims: Any, keepdim: bool) -> Any:
    """A reduction's output reshaped with its reduced dims kept (size 1), for broadcasting."""
    if keepdim or len(shape) == 0:
        return x
    kept = tuple(1 if (dims is None or i in dims) else s for i, s in enumerate(shape))
    return ns.reshape(x, shape=kept)


def _dims(dim: Any, ndim: int) -> Any:
    """Normalized reduction dims; a 0-d input accepts dim 0 / -1 and reduces over nothing."""
    d = normalize_dims(dim, ndim)
    return None if ndim == 0 else d


def _check_nonempty(name: str, input: Any, dims: Any) -> None:
    """PyTorch's errors for max/min/amax/argmax-like reductions over an empty slice."""
    shape = input._data.shape
    if dims is None:
        if input._data.size == 0:
            if name in ("argmax", "argmin"):
                raise IndexError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                )
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        return
    for d in dims:
        if len(shape) and shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


class _errstate:
    """NumPy's errstate (ignore 0/0 and x/0) when the backend is NumPy; PyTorch is silent."""

    def __init__(self, xp: Any) -> None:
        self._cm = (
            xp.errstate(divide="ignore", invalid="ignore") if hasattr(xp, "errstate") else None
        )

    def __enter__(self) -> None:
        if self._cm is not None:
            self._cm.__enter__()

    def __exit__(self, *a: Any) -> None:
        if self._cm is not None:
            self._cm.__exit__(*a)
