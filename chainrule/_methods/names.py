"""Tensor methods of the numeric, scattering and aliases families (ops/numeric.py,
ops/scattering.py, ops/aliases.py), their in-place ``_`` forms, the in-place forms of the
special functions, the shape-changing in-place ops (``t_``, ``transpose_``, ``squeeze_``,
``unsqueeze_``, ``swapaxes_``, ``resize_``), the legacy ``new``/``char``, the layout
attributes, and Tensor forms of the older torch linear-algebra functions (see
chainrule/_methods/__init__.py).

Why this file is over 400 lines: it is one family's list of one-line wrappers, kept together
so that the lead can move it as a unit.

An in-place form ``x.f_(*args)`` computes ``x.f(*args)`` through ``inplace_compute`` (the
mechanism of every in-place op: PyTorch's leaf/view/version checks, the history rebased).
A shape-changing in-place op swaps ``x``'s array for the new-shaped view of the same memory and
gives ``x`` the history of the out-of-place op, as PyTorch's ``t_`` (node ``TBackward1``...)
does.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import numpy as np

from chainrule import _dtype
from chainrule._dispatch import creation as _creation
from chainrule._dispatch import ops as _ops
from chainrule._dispatch import upper as _upper
from chainrule._grad_state import _state
from chainrule._methods._base import Size, TensorAttrs, TensorBase
from chainrule._scalar_convert import int_operand

if TYPE_CHECKING:
    from chainrule._tensor import Tensor


def _inplace(
    self: Any, compute: Callable[[Any], Any], *others: Any, differentiable: bool = True
) -> Any:
    inplace_compute = _ops.inplace_compute
    ts = [o for o in others if isinstance(o, TensorBase)]
    if not differentiable:

        def plain(a: Any) -> Any:
            r = compute(a)
            return a * 0 + r.to(a.dtype) if a.requires_grad else r

        return inplace_compute(self, plain, ts)
    return inplace_compute(self, compute, ts)


@contextmanager
def _no_grad() -> Iterator[None]:
    # autograd.no_grad's effect, from below autograd: the thread's grad-mode flag.
    prev = _state.enabled
    _state.enabled = False
    try:
        yield
    finally:
        _state.enabled = prev


_VIEW_MSG = (
    "{name}(): chainrule cannot change the shape in place of a tensor that is a view or has "
    "views (their recorded view chains would no longer fit); use the out-of-place {base}() "
    "instead."
)


def _reshape_inplace(
    self: Any, name: str, base: str, make: Callable[[Any], Any], node: str | None = None
) -> Any:
    """Give ``self`` the shape of ``make(self)`` (a view op), in place: same memory, new
    metadata; when recorded, ``self``'s history becomes that op's node, shown under PyTorch's
    name ``node`` for the in-place form (``TransposeBackward1`` for ``transpose_``: the node's
    class only, Note [node classes] in chainrule/autograd/_nodes.py; it computes as the op's)."""
    _ops.check_inplace(self)
    if self._base is not None or self.__dict__.get("_views"):
        raise RuntimeError(_VIEW_MSG.format(name=name, base=base))
    if _state.enabled and self.requires_grad:
        result = make(_ops.history_alias(self, False))
        self._data = result._data
        fn = result.grad_fn
        if node is not None and fn is not None:
            fn._show_as(node)
        self.grad_fn = fn
        if "_output_nr" in self.__dict__:
            del self.__dict__["_output_nr"]
    else:
        with _no_grad():
            self._data = make(self)._data
    self._bump_version()
    return self


class NamesMethods(TensorAttrs):
    __slots__ = ()

    # Inverse hyperbolic functions -------------------------------------------------------
    def asinh(self) -> Tensor:
        return _ops.asinh(self)

    def asinh_(self) -> Tensor:
        return _inplace(self, _ops.asinh)

    def arcsinh(self) -> Tensor:
        return _ops.asinh(self)

    def arcsinh_(self) -> Tensor:
        return _inplace(self, _ops.asinh)

    def acosh(self) -> Tensor:
        return _ops.acosh(self)

    def acosh_(self) -> Tensor:
        return _inplace(self, _ops.acosh)

    def arccosh(self) -> Tensor:
        return _ops.acosh(self)

    def arccosh_(self) -> Tensor:
        return _inplace(self, _ops.acosh)

    def atanh(self) -> Tensor:
        return _ops.atanh(self)

    def atanh_(self) -> Tensor:
        return _inplace(self, _ops.atanh)

    def arctanh(self) -> Tensor:
        return _ops.atanh(self)

    def arctanh_(self) -> Tensor:
        return _inplace(self, _ops.atanh)

    # Integer and floating-point functions -----------------------------------------------
    def gcd(self, other: Any) -> Tensor:
        _tensor_arg("gcd", other)
        return _ops.gcd(self, other)

    def gcd_(self, other: Any) -> Tensor:
        _tensor_arg("gcd_", other)
        return _inplace(self, lambda a: _ops.gcd(a, other), other, differentiable=False)

    def lcm(self, other: Any) -> Tensor:
        _tensor_arg("lcm", other)
        return _ops.lcm(self, other)

    def lcm_(self, other: Any) -> Tensor:
        _tensor_arg("lcm_", other)
        return _inplace(self, lambda a: _ops.lcm(a, other), other, differentiable=False)

    def bitwise_left_shift(self, other: Any) -> Tensor:
        return _ops.bitwise_left_shift(self, other)

    def bitwise_left_shift_(self, other: Any) -> Tensor:
        return _inplace(
            self, lambda a: _ops.bitwise_left_shift(a, other), other, differentiable=False
        )

    def bitwise_right_shift(self, other: Any) -> Tensor:
        return _ops.bitwise_right_shift(self, other)

    def bitwise_right_shift_(self, other: Any) -> Tensor:
        return _inplace(
            self, lambda a: _ops.bitwise_right_shift(a, other), other, differentiable=False
        )

    def __lshift__(self, other: Any) -> Tensor:
        return _ops.bitwise_left_shift(self, other)

    def __rlshift__(self, other: Any) -> Tensor:
        return _ops.bitwise_left_shift(_scalar_like(other, self), self)

    def __ilshift__(self, other: Any) -> Tensor:
        return self.bitwise_left_shift_(other)

    def __rshift__(self, other: Any) -> Tensor:
        return _ops.bitwise_right_shift(self, other)

    def __rrshift__(self, other: Any) -> Tensor:
        return _ops.bitwise_right_shift(_scalar_like(other, self), self)

    def __irshift__(self, other: Any) -> Tensor:
        return self.bitwise_right_shift_(other)

    def nextafter(self, other: Any) -> Tensor:
        _tensor_arg("nextafter", other)
        return _ops.nextafter(self, other)

    def nextafter_(self, other: Any) -> Tensor:
        _tensor_arg("nextafter_", other)
        return _inplace(self, lambda a: _ops.nextafter(a, other), other, differentiable=False)

    def frexp(self) -> Any:
        return _ops.frexp(self)

    def ldexp(self, other: Any) -> Tensor:
        return _ops.ldexp(self, other)

    def ldexp_(self, other: Any) -> Tensor:
        return _inplace(self, lambda a: _ops.ldexp(a, other), other)

    def vdot(self, other: Any) -> Tensor:
        return _ops.vdot(self, other)

    def cross(self, other: Any, dim: int | None = None) -> Tensor:
        return _ops.cross(self, other, dim)

    # In-place special functions -----------------------------------------------------------
    def i0_(self) -> Tensor:
        return _inplace(self, _ops.i0)

    def lgamma_(self) -> Tensor:
        return _inplace(self, _ops.lgamma)

    def digamma_(self) -> Tensor:
        return _inplace(self, _ops.digamma)

    def erfinv_(self) -> Tensor:
        return _inplace(self, _ops.erfinv)

    def logit_(self, eps: float | None = None) -> Tensor:
        return _inplace(self, lambda a: _ops.logit(a, eps))

    def xlogy_(self, other: Any) -> Tensor:
        return _inplace(self, lambda a: _ops.xlogy(a, other), other)

    def igamma_(self, other: Any) -> Tensor:
        return _inplace(self, lambda a: _ops.igamma(a, other), other)

    def igammac_(self, other: Any) -> Tensor:
        return _inplace(self, lambda a: _ops.igammac(a, other), other)

    def mvlgamma_(self, p: int) -> Tensor:
        return _inplace(self, lambda a: _ops.mvlgamma(a, p))

    def polygamma_(self, n: int) -> Tensor:
        return _inplace(self, lambda a: _ops.polygamma(n, a))

    # Scatters, index writes and order statistics --------------------------------------------
    def scatter_reduce(
        self, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True
    ) -> Tensor:
        return _ops.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)

    def scatter_reduce_(
        self, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True
    ) -> Tensor:
        return _inplace(
            self,
            lambda a: _ops.scatter_reduce(a, dim, index, src, reduce, include_self=include_self),
            src,
        )

    def index_reduce(
        self, dim: int, index: Any, source: Any, reduce: str, *, include_self: bool = True
    ) -> Tensor:
        return _ops.index_reduce(self, dim, index, source, reduce, include_self=include_self)

    def index_reduce_(
        self, dim: int, index: Any, source: Any, reduce: str, *, include_self: bool = True
    ) -> Tensor:
        return _inplace(
            self,
            lambda a: _ops.index_reduce(a, dim, index, source, reduce, include_self=include_self),
            source,
        )

    def index_copy(self, dim: int, index: Any, source: Any) -> Tensor:
        return _ops.index_copy(self, dim, index, source)

    def index_copy_(self, dim: int, index: Any, source: Any) -> Tensor:
        return _inplace(self, lambda a: _ops.index_copy(a, dim, index, source), source)

    def index_fill(self, dim: int, index: Any, value: Any) -> Tensor:
        return _ops.index_fill(self, dim, index, value)

    def index_fill_(self, dim: int, index: Any, value: Any) -> Tensor:
        return _inplace(self, lambda a: _ops.index_fill(a, dim, index, value), value)

    def masked_scatter(self, mask: Any, source: Any) -> Tensor:
        return _ops.masked_scatter(self, mask, source)

    def masked_scatter_(self, mask: Any, source: Any) -> Tensor:
        _expandable(mask, tuple(self.shape))
        return _inplace(self, lambda a: _ops.masked_scatter(a, mask, source), source)

    def put(self, index: Any, source: Any, accumulate: bool = False) -> Tensor:
        return _ops.put(self, index, source, accumulate)

    def put_(self, index: Any, source: Any, accumulate: bool = False) -> Tensor:
        return _inplace(self, lambda a: _ops.put(a, index, source, accumulate), source)

    def diagonal_scatter(self, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        return _ops.diagonal_scatter(self, src, offset, dim1, dim2)

    def select_scatter(self, src: Any, dim: int, index: int) -> Tensor:
        return _ops.select_scatter(self, src, dim, index)

    def slice_scatter(
        self,
        src: Any,
        dim: int = 0,
        start: int | None = None,
        end: int | None = None,
        step: int = 1,
    ) -> Tensor:
        return _ops.slice_scatter(self, src, dim, start, end, step)

    def fill_diagonal_(self, fill_value: Any, wrap: bool = False) -> Tensor:
        """Fill the main diagonal (all indices equal) of a tensor of 2 or more dims with
        ``fill_value``, in place; ``wrap``: in a tall matrix, restart after every ``N + 1``
        rows (NumPy's ``fill_diagonal``)."""
        shape = tuple(self.shape)
        if len(shape) < 2:
            raise RuntimeError("dimensions must larger than 1")
        if len(shape) > 2 and len(set(shape)) != 1:
            raise RuntimeError("all dimensions of input must be of equal length")
        mask = np.zeros(shape, dtype=bool)
        np.fill_diagonal(mask, True, wrap=bool(wrap))
        m = _creation.tensor(mask, device=self.device)
        return _inplace(self, lambda a: a.masked_fill(m, fill_value), fill_value)

    def quantile(
        self,
        q: Any,
        dim: int | None = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
    ) -> Tensor:
        return _ops.quantile(self, q, dim, keepdim, interpolation=interpolation)

    def nanquantile(
        self,
        q: Any,
        dim: int | None = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
    ) -> Tensor:
        return _ops.nanquantile(self, q, dim, keepdim, interpolation=interpolation)

    def histogram(
        self,
        bins: Any = 100,
        *,
        range: Sequence[float] | None = None,
        weight: Any = None,
        density: bool = False,
    ) -> Any:
        return _ops.histogram(self, bins, range=range, weight=weight, density=density)

    # Aliases and copies -------------------------------------------------------------------
    def swapaxes(self, axis0: int, axis1: int) -> Tensor:
        return _ops.swapaxes(self, axis0, axis1)

    def swapdims(self, dim0: int, dim1: int) -> Tensor:
        return _ops.swapdims(self, dim0, dim1)

    def swapaxes_(self, axis0: int, axis1: int) -> Tensor:
        return _reshape_inplace(
            self,
            "swapaxes_",
            "swapaxes",
            lambda a: _ops.transpose(a, axis0, axis1),
            "TransposeBackward1",
        )

    def swapdims_(self, dim0: int, dim1: int) -> Tensor:
        return _reshape_inplace(
            self,
            "swapdims_",
            "swapdims",
            lambda a: _ops.transpose(a, dim0, dim1),
            "TransposeBackward1",
        )

    def transpose_(self, dim0: int, dim1: int) -> Tensor:
        return _reshape_inplace(
            self,
            "transpose_",
            "transpose",
            lambda a: _ops.transpose(a, dim0, dim1),
            "TransposeBackward1",
        )

    def t_(self) -> Tensor:
        return _reshape_inplace(self, "t_", "t", _ops.t, "TBackward1")

    def squeeze_(self, dim: Any = None) -> Tensor:
        node = f"SqueezeBackward{3 if dim is None else 4 if isinstance(dim, int) else 5}"
        return _reshape_inplace(self, "squeeze_", "squeeze", lambda a: _ops.squeeze(a, dim), node)

    def unsqueeze_(self, dim: int) -> Tensor:
        return _reshape_inplace(
            self, "unsqueeze_", "unsqueeze", lambda a: _ops.unsqueeze(a, dim), "UnsqueezeBackward1"
        )

    def ravel(self) -> Tensor:
        return _ops.ravel(self)

    def unfold(self, dimension: int, size: int, step: int) -> Tensor:
        return _ops.unfold(self, dimension, size, step)

    def split_with_sizes(self, split_sizes: Sequence[int], dim: int = 0) -> Any:
        return _ops.split_with_sizes(self, split_sizes, dim)

    def unsafe_split(self, split_size: int, dim: int = 0) -> Any:
        return _ops.unsafe_split(self, split_size, dim)

    def unsafe_chunk(self, chunks: int, dim: int = 0) -> Any:
        return _ops.unsafe_chunk(self, chunks, dim)

    def unsafe_split_with_sizes(self, split_sizes: Sequence[int], dim: int = 0) -> Any:
        return _ops.unsafe_split_with_sizes(self, split_sizes, dim)

    def narrow_copy(self, dim: int, start: int, length: int) -> Tensor:
        return _ops.narrow_copy(self, dim, start, length)

    def conj(self) -> Tensor:
        return _ops.conj(self)

    def resolve_conj(self) -> Tensor:
        return _ops.resolve_conj(self)

    def resolve_neg(self) -> Tensor:
        return _ops.resolve_neg(self)

    def conj_physical(self) -> Tensor:
        return _ops.conj_physical(self)

    def conj_physical_(self) -> Any:
        """In-place conjugation (nothing to change in a real tensor)."""
        _ops.check_inplace(self)
        if self._data.dtype.kind != "c":
            return self
        return _ops.copy_(self, _ops.conj_physical(self))  # type: ignore[arg-type]

    def adjoint(self) -> Tensor:
        return _ops.adjoint(self)

    @property
    def mH(self) -> Tensor:  # noqa: N802 - PyTorch's name
        """The conjugate transpose of the last two dims (for real tensors, ``mT``)."""
        if self.ndim < 2:
            raise RuntimeError(
                "tensor.mH is only supported on matrices or batches of matrices. "
                f"Got {self.ndim}-D tensor."
            )
        return _ops.adjoint(self)

    @property
    def H(self) -> Any:  # noqa: N802 - PyTorch's name
        """The conjugate transpose of a matrix (a 0-D tensor: itself, with PyTorch's
        deprecation warning)."""
        if self.ndim == 0:
            import warnings

            warnings.warn(
                "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                UserWarning,
                stacklevel=2,
            )
            return self
        if self.ndim != 2:
            hint = " For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""
            raise RuntimeError(
                f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D "
                f"tensor.{hint}"
            )
        return _ops.adjoint(self)

    def is_complex(self) -> bool:
        return _ops.is_complex(self)

    def is_conj(self) -> bool:
        return False

    def is_neg(self) -> bool:
        return False

    def is_nonzero(self) -> bool:
        return _ops.is_nonzero(self)

    def is_same_size(self, other: Any) -> bool:
        return _ops.is_same_size(self, other)

    def is_signed(self) -> bool:
        return _ops.is_signed(self)

    # nn.functional's (imported at call time: nn.functional is a layer above Tensor).
    def hardshrink(self, lambd: float = 0.5) -> Tensor:
        return _upper.hardshrink(self, lambd)

    def prelu(self, weight: Any) -> Tensor:
        return _upper.prelu(self, weight)

    # Layout attributes and legacy constructors ------------------------------------------------
    @property
    def layout(self) -> Any:
        """The memory layout: always ``torch.strided`` (dense)."""
        return _upper.strided

    @property
    def is_sparse(self) -> bool:
        return False

    # A class flag, not a property: torch.mm/matmul/addmm read it on their operands
    # (chainrule/sparse/, docs/sparse.md); True on SparseTensor.
    _sparse = False

    def to_sparse(self, *args: Any, **kwargs: Any) -> Any:
        """The sparse COO form of this dense tensor: its entries that are not zero."""
        return _upper.to_sparse(self, *args, **kwargs)

    def to_sparse_coo(self) -> Any:
        return _upper.to_sparse(self)

    def sparse_mask(self, mask: Any) -> Any:
        """This tensor read at the stored indices of the sparse ``mask`` (a sparse tensor with
        ``mask``'s indices)."""
        return _upper.sparse_mask(self, mask)

    def to_dense(self, dtype: Any = None, *, masked_grad: bool | None = None) -> Any:
        """A dense tensor is its own dense form (cast to ``dtype`` if given)."""
        return self if dtype is None or dtype is self.dtype else self.to(dtype)  # type: ignore[attr-defined]

    # The sparse COO queries on a dense tensor, as PyTorch answers them (docs/sparse.md).
    def sparse_dim(self) -> int:
        return 0

    def dense_dim(self) -> int:
        return self.ndim  # type: ignore[attr-defined]

    def is_coalesced(self) -> bool:
        raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got Strided")

    def coalesce(self) -> Any:
        raise RuntimeError("coalesce expected sparse coordinate tensor layout but got Strided")

    def indices(self) -> Any:
        raise RuntimeError("indices expected sparse coordinate tensor layout but got Strided")

    def values(self) -> Any:
        raise RuntimeError("values expected sparse tensor layout but got Strided")

    @property
    def is_sparse_csr(self) -> bool:
        return False

    # The compressed layouts' parts (chainrule/sparse/_csr.py): PyTorch's layout errors here.
    def _compressed_part(self, name: str, kind: str) -> Any:
        got = _upper.layout_name(self.layout)
        raise RuntimeError(f"{name} expected sparse {kind} compressed tensor layout but got {got}")

    def crow_indices(self) -> Any:
        return self._compressed_part("crow_indices", "row")

    def col_indices(self) -> Any:
        return self._compressed_part("col_indices", "row")

    def ccol_indices(self) -> Any:
        return self._compressed_part("ccol_indices", "column")

    def row_indices(self) -> Any:
        return self._compressed_part("row_indices", "column")

    def smm(self, mat: Any) -> Any:
        """``torch.smm``: this sparse COO matrix times dense ``mat``, sparse."""
        return _upper.smm(self, mat)

    def sspaddmm(self, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        """``torch.sspaddmm``: ``beta * self + alpha * (mat1 @ mat2)``, sparse."""
        return _upper.sspaddmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def resize_as_sparse_(self, the_template: Any) -> Any:
        """``torch.resize_as_sparse_``: this sparse tensor takes ``the_template``'s sizes."""
        return _upper.resize_as_sparse_(self, the_template)

    def to_sparse_csr(self, dense_dim: int | None = None) -> Any:
        """The CSR form of this dense (or COO) tensor: its entries that are not zero."""
        return _upper.to_compressed(self, _upper.sparse_csr, dense_dim)

    def to_sparse_csc(self, dense_dim: int | None = None) -> Any:
        """The CSC form of this dense (or COO) tensor: its entries that are not zero."""
        return _upper.to_compressed(self, _upper.sparse_csc, dense_dim)

    def to_sparse_bsr(self, blocksize: Any, dense_dim: int | None = None) -> Any:
        """The BSR form of this matrix: its ``blocksize`` blocks that hold a nonzero."""
        return _upper.to_blocked(self, _upper.sparse_bsr, blocksize, dense_dim)

    def to_sparse_bsc(self, blocksize: Any, dense_dim: int | None = None) -> Any:
        """The BSC form of this matrix: its ``blocksize`` blocks that hold a nonzero."""
        return _upper.to_blocked(self, _upper.sparse_bsc, blocksize, dense_dim)

    @property
    def name(self) -> None:
        """A tensor's name in a named-tensor dim (PyTorch: None for ordinary tensors)."""
        return None

    def char(self) -> Tensor:
        """Cast to int8."""
        return self.to(_dtype.int8)

    def new(self, *args: Any, **kwargs: Any) -> Any:
        """Legacy constructor: ``x.new(2, 3)`` (uninitialised, as ``new_empty``), ``x.new(size)``
        for a ``Size``, ``x.new(data)`` (as ``new_tensor``), ``x.new()`` (empty 1-D); in
        ``x``'s dtype and device."""

        if kwargs.keys() - {"device", "dtype"}:
            bad = sorted(kwargs.keys() - {"device", "dtype"})[0]
            raise TypeError(f"new() got an unexpected keyword argument '{bad}'")
        if not args:
            return self.new_empty((0,), **kwargs)
        if len(args) == 1 and isinstance(args[0], TensorBase):
            return args[0].to(dtype=self.dtype).detach()
        if all(isinstance(a, (int, np.integer)) for a in args) or (
            len(args) == 1 and isinstance(args[0], Size)
        ):
            size = tuple(args[0]) if isinstance(args[0], Size) else tuple(int(a) for a in args)
            return self.new_empty(size, **kwargs)
        if len(args) == 1:
            return self.new_tensor(args[0], **kwargs)
        raise TypeError("new(): invalid arguments: expected sizes (ints) or one data argument")

    def new_empty_strided(
        self,
        size: Sequence[int],
        stride: Sequence[int],
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        layout: Any = None,
        pin_memory: bool = False,
    ) -> Tensor:
        """An uninitialised tensor with the given sizes and strides (``torch.empty_strided``),
        in ``self``'s dtype and device by default."""
        return _upper.empty_strided(
            size,
            stride,
            dtype=dtype or self.dtype,
            device=device or self.device,
            requires_grad=requires_grad,
        )

    def resize_(self, *sizes: Any, memory_format: Any = None) -> Any:
        """Give ``self`` the shape ``sizes`` in place, keeping its first elements (in memory
        order) and extending it with uninitialised ones (here zeros) when it grows. Not
        allowed on tensors that require grad (PyTorch's error)."""
        if (
            len(sizes) == 1
            and isinstance(sizes[0], (tuple, list))
            or (len(sizes) == 1 and hasattr(sizes[0], "__iter__"))
        ):
            sizes = tuple(sizes[0])
        size = tuple(int(s) for s in sizes)
        if any(s < 0 for s in size):
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {min(size)}: {list(size)}"
            )
        if self.requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        _ops.check_inplace(self)
        if self._base is not None or self.__dict__.get("_views"):
            raise RuntimeError(_VIEW_MSG.format(name="resize_", base="reshape"))
        d = self._data
        xp = self._backend.xp
        n = int(np.prod(size, dtype=np.int64))
        flat = xp.ascontiguousarray(d).reshape(-1)
        if n <= flat.size and d.flags.c_contiguous:
            new = flat[:n].reshape(size)
        else:
            new = xp.zeros(n, dtype=d.dtype)
            k = min(n, flat.size)
            new[:k] = flat[:k]
            new = new.reshape(size)
        self._data = new
        self._bump_version()
        return self

    def resize_as_(self, the_template: Any, *, memory_format: Any = None) -> Tensor:
        """``self.resize_(the_template.shape)``."""
        return self.resize_(tuple(the_template.shape))

    # Complex parts, devices chainrule lacks, and older API ---------------------------------
    @property
    def real(self) -> Any:
        """The real parts, a view (a real tensor itself)."""
        return _ops.real(self)

    @real.setter
    def real(self, value: Any) -> None:
        _ops.real(self).copy_(value)

    @property
    def imag(self) -> Tensor:
        """The imaginary parts, a view (PyTorch's error for real tensors)."""
        return _ops.imag(self)

    @imag.setter
    def imag(self, value: Any) -> None:
        _ops.imag(self).copy_(value)

    def cfloat(self, memory_format: Any = None) -> Any:
        """``self.to(chainrule.complex64)``."""
        d = self._data.dtype
        return self if d == np.complex64 else _ops.to_dtype(self, _dtype.complex64.np)

    def chalf(self, memory_format: Any = None) -> Any:
        """``self.to(chainrule.complex32)``: raises TypeError, NumPy having no 32-bit complex
        type (chainrule/_shell_dtypes.py; docs/complex.md)."""
        raise TypeError(_dtype.NO_COMPLEX32)

    def cdouble(self, memory_format: Any = None) -> Any:
        """``self.to(chainrule.complex128)``."""
        d = self._data.dtype
        return self if d == np.complex128 else _ops.to_dtype(self, _dtype.complex128.np)

    def angle(self) -> Tensor:
        return _ops.angle(self)

    def matrix_exp(self) -> Tensor:
        return _ops.matrix_exp(self)

    def qr(self, some: bool = True) -> Any:
        return _ops.qr(self, some)

    def nonzero_static(self, *, size: int, fill_value: int = -1) -> Tensor:
        return _ops.nonzero_static(self, size=size, fill_value=fill_value)

    def is_distributed(self) -> bool:
        return False

    is_ipu = property(lambda self: False, doc="Whether on an IPU (never).")
    is_maia = property(lambda self: False, doc="Whether on a MAIA device (never).")
    is_mtia = property(lambda self: False, doc="Whether on an MTIA device (never).")
    is_vulkan = property(lambda self: False, doc="Whether on a Vulkan device (never).")
    is_xla = property(lambda self: False, doc="Whether on an XLA device (never).")

    def xpu(self, device: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
        """Copy to an XPU: PyTorch's error on a build without XPU support."""
        raise AssertionError("Torch not compiled with XPU enabled")

    def ipu(self, device: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
        """Copy to an IPU: PyTorch's error on a build without IPU support."""
        raise RuntimeError("PyTorch is not linked with support for ipu devices")

    def mtia(self, device: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
        """Copy to an MTIA device: PyTorch's error on a build without MTIA support."""
        raise AssertionError(
            "Torch not compiled with MTIA enabled. Ensure you have `import "
            "mtia.host_runtime.torch_mtia.dynamic_library` in your python src "
            "file and include `//mtia/host_runtime/torch_mtia:torch_mtia` as "
            "your target dependency!"
        )

    def is_set_to(self, tensor: Any) -> bool:
        """Whether ``self`` and ``tensor`` are the same view of the same memory (storage,
        offset, sizes and strides)."""
        a, b = self._data, tensor._data
        if a.shape != b.shape or a.strides != b.strides or a.dtype != b.dtype:
            return False
        return a.__array_interface__["data"][0] == b.__array_interface__["data"][0]

    def map2_(self, x: Any, y: Any, callable: Callable[[Any, Any, Any], Any]) -> Any:
        """``self[i] = callable(self[i], x[i], y[i])`` elementwise over Python numbers, with
        ``x`` and ``y`` broadcast to ``self`` (no gradient)."""
        shape = tuple(self.shape)
        xa = np.broadcast_to(_host_of(x), shape) if _fits(x, shape) else _expandable(x, shape)
        ya = np.broadcast_to(_host_of(y), shape) if _fits(y, shape) else _expandable(y, shape)
        d = self._data
        flat = [
            callable(a, b, c)
            for a, b, c in zip(
                d.reshape(-1).tolist(),
                np.asarray(xa).reshape(-1).tolist(),
                np.asarray(ya).reshape(-1).tolist(),
            )
        ]
        d[...] = np.asarray(flat, dtype=d.dtype).reshape(shape)
        self._bump_version()
        return self

    def resize(self, *sizes: Any) -> Tensor:
        """Deprecated (warns): ``self`` with the shape ``sizes`` (same number of elements), a
        differentiable reshape."""
        import warnings

        warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
        if len(sizes) == 1 and hasattr(sizes[0], "__iter__"):
            sizes = tuple(sizes[0])
        size = tuple(int(s) for s in sizes)
        n = int(np.prod(size, dtype=np.int64))
        if n != self.numel():
            have = "x".join(str(s) for s in self.shape)
            want = "x".join(str(s) for s in size)
            raise RuntimeError(
                f"requested resize to {want} ({n} elements in total), but the given tensor has "
                f"a size of {have} ({self.numel()} elements). autograd's resize can only change "
                "the shape of a given tensor, while preserving the number of elements. "
            )
        return _ops.reshape(self, size)

    def resize_as(self, tensor: Any) -> Any:
        """Deprecated (warns): ``self.resize(tensor.shape)``."""
        import warnings

        warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return self.resize(tuple(tensor.shape))

    @property
    def volatile(self) -> bool:
        """Removed with Variables: always False (warns, as PyTorch)."""
        import warnings

        warnings.warn(
            "volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2
        )
        return False

    def module_load(self, other: Any, assign: bool = False) -> Tensor:
        """How ``Module.load_state_dict`` turns ``other`` into this parameter's new value:
        ``other`` detached with ``assign``, else ``self`` after copying ``other`` into it."""
        if assign:
            return other.detach()
        with _no_grad():
            self.copy_(other)
        return self.detach()

    @property
    def grad_dtype(self) -> Any:
        """The dtype a gradient of ``self`` has: ``self``'s (unless set)."""
        return self.__dict__.get("_grad_dtype", self.dtype)

    @grad_dtype.setter
    def grad_dtype(self, value: Any) -> None:
        self.__dict__["_grad_dtype"] = value

    def as_strided_(
        self, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
    ) -> Tensor:
        """In place: give ``self`` the sizes, strides and offset over its storage."""
        return _reshape_inplace(
            self,
            "as_strided_",
            "as_strided",
            lambda a: a.as_strided(size, stride, storage_offset),
            "AsStridedBackward1",
        )

    # The older torch linear-algebra functions -----------------------------------------------
    def cholesky(self, upper: bool = False) -> Tensor:
        return _upper.cholesky(self, upper)

    def cholesky_solve(self, input2: Any, upper: bool = False) -> Tensor:
        return _upper.cholesky_solve(self, input2, upper)

    def cholesky_inverse(self, upper: bool = False) -> Tensor:
        return _upper.cholesky_inverse(self, upper)

    def pinverse(self, rcond: float = 1e-15) -> Tensor:
        return _upper.pinverse(self, rcond)

    def svd(self, some: bool = True, compute_uv: bool = True) -> Any:
        return _upper.svd(self, some, compute_uv)

    def triangular_solve(
        self, A: Any, upper: bool = True, transpose: bool = False, unitriangular: bool = False
    ) -> Any:
        return _upper.triangular_solve(self, A, upper, transpose, unitriangular)

    def lstsq(self, A: Any) -> Any:
        return _upper.lstsq(self, A)

    def solve(self, A: Any) -> Any:
        return _upper.solve(self, A)

    def symeig(self, eigenvectors: bool = False, upper: bool = True) -> Any:
        return _upper.symeig(self, eigenvectors, upper)

    def eig(self, eigenvectors: bool = False) -> Any:
        return _upper.eig(self, eigenvectors)


def _expandable(mask: Any, shape: tuple[int, ...]) -> Any:
    """Raise PyTorch's ``expand`` errors unless ``mask`` broadcasts to ``shape``."""
    ms = tuple(mask.shape)
    if len(ms) > len(shape):
        raise RuntimeError(
            f"expand(CPUBoolType{{{list(ms)}}}, size={list(shape)}): the number of sizes "
            f"provided ({len(shape)}) must be greater or equal to the number of dimensions in "
            f"the tensor ({len(ms)})"
        )
    off = len(shape) - len(ms)
    for i, n in enumerate(ms):
        if n != 1 and n != shape[off + i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({shape[off + i]}) must match the existing "
                f"size ({n}) at non-singleton dimension {off + i}.  Target sizes: "
                f"{list(shape)}.  Tensor sizes: {list(ms)}"
            )


def _host_of(x: Any) -> Any:
    return x._backend.to_host(x._data) if hasattr(x, "_data") else np.asarray(x)


def _fits(x: Any, shape: tuple[int, ...]) -> bool:
    try:
        return np.broadcast_shapes(np.shape(_host_of(x)), shape) == shape
    except ValueError:
        return False


def _tensor_arg(name: str, other: Any) -> None:
    if not hasattr(other, "_data"):
        raise TypeError(
            f"{name}(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}"
        )


def _scalar_like(x: Any, t: Any) -> Any:
    if type(x) is int and not 0 <= x <= 127:  # (PyTorch's Scalar: int64 or uint64)
        x = int_operand(x, _INT64, t._data.dtype.kind)
    return _creation.tensor(x, device=t.device)


_INT64 = np.dtype(np.int64)
