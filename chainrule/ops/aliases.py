"""Functions of torch's namespace that are other names or plain forms of existing ops: axis
swaps (``swapaxes``, ``swapdims``), ``ravel``, the split variants (``split_with_sizes`` and
the ``unsafe_*`` forms, which differ from ``split``/``chunk`` only in skipping PyTorch's
view checks), the ``*_copy`` forms of the view ops (a view followed by a copy), ``resolve_neg`` (its
input), ``adjoint`` (the conjugate transpose of the last two dims), the
predicates ``is_complex``/``is_neg``/``is_nonzero``/``is_same_size``/
``is_signed``/``is_inference``, ``unravel_index``, and the torch-level forms of Tensor
methods (``torch.detach(x)``, ``torch.as_strided(x, ...)``, the in-place ``torch.acos_(x)``
...).

The conjugation family and the parts of complex tensors are in ops/complex_numbers.py.
Gradients come from the ops they call; the recorded nodes are those ops'.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from chainrule import _kinds
from chainrule._scalar_convert import nan_to_num_args

__all__ = [
    "swapaxes",
    "swapdims",
    "ravel",
    "split_with_sizes",
    "unsafe_split",
    "unsafe_chunk",
    "unsafe_split_with_sizes",
    "alias_copy",
    "detach_copy",
    "diagonal_copy",
    "expand_copy",
    "permute_copy",
    "select_copy",
    "slice_copy",
    "split_copy",
    "split_with_sizes_copy",
    "squeeze_copy",
    "t_copy",
    "transpose_copy",
    "unbind_copy",
    "unfold_copy",
    "unsqueeze_copy",
    "view_copy",
    "as_strided_copy",
    "narrow_copy",
    "resolve_neg",
    "adjoint",
    "is_complex",
    "is_neg",
    "is_nonzero",
    "is_same_size",
    "is_signed",
    "is_inference",
    "unravel_index",
    "detach",
    "as_strided",
    "get_device",
    "unfold",
]


def _ops() -> Any:
    from chainrule._dispatch import ops

    return ops


def swapaxes(input: Any, axis0: int, axis1: int) -> Any:
    """Alias of ``transpose(input, axis0, axis1)`` (NumPy's name): a view."""
    return _ops().transpose(input, axis0, axis1)


def swapdims(input: Any, dim0: int, dim1: int) -> Any:
    """Alias of ``transpose(input, dim0, dim1)``: a view."""
    return _ops().transpose(input, dim0, dim1)


def ravel(input: Any) -> Any:
    """The elements of ``input`` as a 1-D tensor: a view when ``input`` is contiguous, a copy
    otherwise (``reshape(-1)``)."""
    return _ops().reshape(input, (-1,))


def split_with_sizes(input: Any, split_sizes: Sequence[int], dim: int = 0) -> tuple[Any, ...]:
    """Views of ``input`` split along ``dim`` into pieces of ``split_sizes`` (which must sum
    to the dim's size)."""
    from chainrule.ops._broadcast import wrap_dim

    sizes = [int(s) for s in split_sizes]
    d = wrap_dim(int(dim), input.ndim)
    n = input.shape[d]
    if sum(sizes) != n or any(s < 0 for s in sizes):
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
            f"at dimension {dim}), but got split_sizes={sizes}"
        )
    return tuple(_ops().split(input, sizes, d))


def unsafe_split(input: Any, split_size: int, dim: int = 0) -> tuple[Any, ...]:
    """``split(input, split_size, dim)``; in PyTorch the outputs skip the view checks that
    make in-place changes to them errors, which chainrule's views do not make either."""
    return tuple(_ops().split(input, split_size, dim))


def unsafe_chunk(input: Any, chunks: int, dim: int = 0) -> tuple[Any, ...]:
    """``chunk(input, chunks, dim)`` (see :func:`unsafe_split`)."""
    return tuple(_ops().chunk(input, chunks, dim))


def unsafe_split_with_sizes(
    input: Any, split_sizes: Sequence[int], dim: int = 0
) -> tuple[Any, ...]:
    """:func:`split_with_sizes` (see :func:`unsafe_split`)."""
    return split_with_sizes(input, split_sizes, dim)


# The *_copy forms: the view op's result, copied (a new tensor that shares no memory) ---------


def _copy(view: Any) -> Any:
    return _ops().clone(view)


def alias_copy(input: Any) -> Any:
    """A copy of ``input``."""
    return _ops().clone(input)


def detach_copy(input: Any) -> Any:
    """A copy of ``input`` detached from the graph."""
    return _ops().clone(input.detach())


def diagonal_copy(input: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    """A copy of ``diagonal(input, offset, dim1, dim2)``."""
    return _copy(_ops().diagonal(input, offset, dim1, dim2))


def expand_copy(input: Any, size: Sequence[int], *, implicit: bool = False) -> Any:
    """A copy of ``input.expand(size)``."""
    return _copy(input.expand(*size))


def permute_copy(input: Any, dims: Sequence[int]) -> Any:
    """A copy of ``permute(input, dims)``."""
    return _copy(_ops().permute(input, dims))


def select_copy(input: Any, dim: int, index: int) -> Any:
    """A copy of ``select(input, dim, index)``."""
    return _copy(_ops().select(input, dim, index))


def slice_copy(
    input: Any, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
) -> Any:
    """A copy of ``input``'s slice ``start:end:step`` along ``dim``."""
    from chainrule.ops._broadcast import wrap_dim

    d = wrap_dim(int(dim), input.ndim)
    return _copy(input[(slice(None),) * d + (slice(start, end, step),)])


def split_copy(input: Any, split_size: Any, dim: int = 0) -> tuple[Any, ...]:
    """Copies of ``split(input, split_size, dim)``."""
    return tuple(_copy(p) for p in _ops().split(input, split_size, dim))


def split_with_sizes_copy(input: Any, split_sizes: Sequence[int], dim: int = 0) -> tuple[Any, ...]:
    """Copies of :func:`split_with_sizes`."""
    return tuple(_copy(p) for p in split_with_sizes(input, split_sizes, dim))


def squeeze_copy(input: Any, dim: Any = None) -> Any:
    """A copy of ``squeeze(input, dim)``."""
    return _copy(_ops().squeeze(input, dim))


def t_copy(input: Any) -> Any:
    """A copy of ``t(input)``."""
    return _copy(_ops().t(input))


def transpose_copy(input: Any, dim0: int, dim1: int) -> Any:
    """A copy of ``transpose(input, dim0, dim1)``."""
    return _copy(_ops().transpose(input, dim0, dim1))


def unbind_copy(input: Any, dim: int = 0) -> tuple[Any, ...]:
    """Copies of ``unbind(input, dim)``."""
    return tuple(_copy(p) for p in _ops().unbind(input, dim))


def unfold_copy(input: Any, dimension: int, size: int, step: int) -> Any:
    """A copy of ``input.unfold(dimension, size, step)``."""
    return _copy(unfold(input, dimension, size, step))


def unsqueeze_copy(input: Any, dim: int) -> Any:
    """A copy of ``unsqueeze(input, dim)``."""
    return _copy(_ops().unsqueeze(input, dim))


def view_copy(input: Any, size: Any) -> Any:
    """A copy of ``input.view(size)`` (a shape; dtype views are not supported)."""
    if not isinstance(size, (tuple, list)) and not hasattr(size, "__iter__"):
        raise TypeError(
            f"view_copy(): argument 'size' must be a sequence of ints, not {type(size).__name__}"
        )
    return _copy(input.view(*size))


def as_strided_copy(
    input: Any, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> Any:
    """A copy of ``input.as_strided(size, stride, storage_offset)``."""
    return _copy(input.as_strided(size, stride, storage_offset))


def narrow_copy(input: Any, dim: int, start: int, length: int) -> Any:
    """A copy of ``narrow(input, dim, start, length)``."""
    return _copy(_ops().narrow(input, dim, start, length))


def unfold(input: Any, dimension: int, size: int, step: int) -> Any:
    """All windows of ``size`` elements, ``step`` apart, along ``dimension``: that dim becomes
    the number of windows and a new last dim of ``size`` holds each window (PyTorch's
    ``Tensor.unfold``). A view of ``input``'s storage (``as_strided``); its gradient adds each
    window's gradient back into the elements it covers."""
    from chainrule.ops._broadcast import wrap_dim

    nd = input.ndim
    d = wrap_dim(int(dimension), nd) if nd else 0
    n = input.shape[d] if nd else 1
    size, step = int(size), int(step)
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if nd == 0:
        return input.reshape(1)
    shape, strides = list(input.shape), list(input.stride())
    count = (n - size) // step + 1
    new_shape = shape[:d] + [count] + shape[d + 1 :] + [size]
    new_strides = strides[:d] + [strides[d] * step] + strides[d + 1 :] + [strides[d]]
    return input.as_strided(new_shape, new_strides, input.storage_offset())


# Negation, the adjoint, and predicates ---------------------------------------------------------


def resolve_neg(input: Any) -> Any:
    """``input`` with a pending negation applied; chainrule has none: ``input``."""
    return input


def adjoint(input: Any) -> Any:
    """The conjugate transpose of the last two dims (for real tensors ``input.mT``)."""
    if input.ndim == 0:
        import warnings

        warnings.warn(
            "adjoint() is deprecated on 0-D tensors. Consider using x.conj().",
            UserWarning,
            stacklevel=2,
        )
        return input
    if input.ndim < 2:
        raise RuntimeError(
            "tensor.adjoint() is only supported on matrices or batches of "
            f"matrices. Got {input.ndim}-D tensor."
        )
    return _ops().conj(_ops().transpose(input, -2, -1))


def is_complex(input: Any) -> bool:
    """Whether ``input`` has a complex dtype."""
    return _kinds.is_complex(input._data)


def is_neg(input: Any) -> bool:
    """Whether ``input`` carries a pending negation (never in chainrule)."""
    return False


def is_nonzero(input: Any) -> bool:
    """Whether the single element of ``input`` is non-zero (PyTorch's errors for more or no
    elements)."""
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


def is_same_size(input: Any, other: Any) -> bool:
    """Whether ``input`` and ``other`` have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input: Any) -> bool:
    """Whether ``input``'s dtype is signed (floats and signed integers; not the unsigned
    integers, bool or float8_e8m0fnu, a power of two without a sign bit)."""
    d = input._data.dtype
    if _kinds.is_inexact(d):
        return d.name != "float8_e8m0fnu"
    return _kinds.is_integral(d) and bool(np.issubdtype(d, np.signedinteger))


def is_inference(input: Any) -> bool:
    """Whether ``input`` was made in inference mode."""
    return input.is_inference()


def detach(input: Any) -> Any:
    """``input.detach()``: the same data, cut from the graph."""
    return input.detach()


def as_strided(
    input: Any, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> Any:
    """``input.as_strided(size, stride, storage_offset)``."""
    return input.as_strided(size, stride, storage_offset)


def get_device(input: Any) -> int:
    """``input.get_device()``: -1 for CPU tensors, else the device index."""
    return input.get_device()


def unravel_index(indices: Any, shape: Any) -> tuple[Any, ...]:
    """The coordinates in ``shape`` of the flat ``indices`` (a tuple of int64 tensors, one per
    dim, each of ``indices``' shape); negative indices count from the end."""
    from chainrule._creation import tensor

    if not hasattr(indices, "_data"):
        raise TypeError("expected 'indices' to be a tensor, but got " + type(indices).__name__)
    a = indices._backend.to_host(indices._data)
    if not _kinds.is_integral(a):
        raise TypeError(f"expected 'indices' to be integer dtype, but got torch.{a.dtype.name}")
    dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if any(s < 0 for s in dims):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(dims)}")
    total = int(np.prod(dims, dtype=np.int64))
    # PyTorch peels the coordinates off by division and remainder, which wraps any index
    # (negative ones from the end) modulo the number of elements.
    flat = np.mod(a.astype(np.int64), total) if total else a.astype(np.int64)
    coords = np.unravel_index(flat, dims) if dims else ()
    return tuple(tensor(np.asarray(c, dtype=np.int64), device=indices.device) for c in coords)


# The torch-level in-place functions: torch.f_(input, *args) is input.f_(*args) ------------

_INPLACE_FUNCTIONS = (
    "acos_",
    "arccos_",
    "asin_",
    "arcsin_",
    "atan_",
    "arctan_",
    "asinh_",
    "arcsinh_",
    "acosh_",
    "arccosh_",
    "atanh_",
    "arctanh_",
    "cosh_",
    "sinh_",
    "tan_",
    "ceil_",
    "floor_",
    "round_",
    "trunc_",
    "fix_",
    "frac_",
    "erf_",
    "erfc_",
    "exp2_",
    "expm1_",
    "log10_",
    "log1p_",
    "log2_",
    "rsqrt_",
    "reciprocal_",
    "square_",
    "sinc_",
    "deg2rad_",
    "rad2deg_",
    "negative_",
    "nan_to_num_",
    "addmv_",
    "detach_",
    "i0_",
    "logit_",
    "xlogy_",
    "gcd_",
    "lcm_",
    "ldexp_",
    "as_strided_",
    "resize_as_",
    "conj_physical_",
)


def _inplace_function(name: str) -> Any:
    def fn(input: Any, *args: Any, **kwargs: Any) -> Any:
        if name == "nan_to_num_":  # the parser's errors count ``input`` as position 1
            args, kwargs = nan_to_num_args(name, 1, args, kwargs), {}
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``input.{name}(*args, **kwargs)``: the in-place ``{name[:-1]}``."
    return fn


for _n in _INPLACE_FUNCTIONS:
    globals()[_n] = _inplace_function(_n)
    __all__.append(_n)
del _n


# Other small forms ----------------------------------------------------------------------------


def nonzero_static(input: Any, *, size: int, fill_value: int = -1) -> Any:
    """The indices of the non-zero elements as :func:`nonzero` gives them, cut or padded with
    ``fill_value`` rows to exactly ``size`` rows."""
    from chainrule._creation import tensor

    size = int(size)
    if size < 0:
        raise RuntimeError(
            f"nonzero_static: 'size' must be an non-negative integer, but got {size}"
        )
    nz = _ops().nonzero(input)._data[:size]
    pad = np.full((size - nz.shape[0], nz.shape[1]), fill_value, dtype=np.int64)
    return tensor(np.concatenate([nz, pad]), device=input.device)


def fill(input: Any, value: Any) -> Any:
    """A tensor like ``input`` filled with ``value`` (a number or a 0-d tensor, which then gets
    the sum of the gradient; ``input`` gets none)."""
    from chainrule._creation import tensor

    if hasattr(value, "_data"):
        if value.ndim != 0:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        if value._data.dtype != input._data.dtype:
            value = value.to(input.dtype)
    mask = tensor(np.ones(tuple(input.shape), dtype=bool), device=input.device)
    return input.masked_fill(mask, value)


def constant_pad_nd(input: Any, pad: Sequence[int], value: float = 0) -> Any:
    """``input`` padded with ``value``: ``pad`` gives (before, after) amounts from the last dim
    backwards, as ``nn.functional.pad``'s constant mode."""
    return _ops().pad(input, tuple(int(p) for p in pad), "constant", value)


__all__ += ["nonzero_static", "fill", "constant_pad_nd"]
