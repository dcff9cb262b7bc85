"""Complex numbers: the parts of a complex tensor (``real``, ``imag``, ``view_as_real``,
``view_as_complex``), building one (``complex``, ``polar``), conjugation (``conj``,
``conj_physical``, ``resolve_conj``) and ``cj``, the conjugate the other families' VJPs use.

Note [Wirtinger gradients]
    For a real loss L of a complex z = x + iy, PyTorch's gradient is dL/dx + i dL/dy, which is
    2 dL/d(conj z) (the conjugate Wirtinger derivative). A gradient g flowing into a complex
    output w therefore stands for the real loss Re(conj(g) w) locally, and the chain rule gives:
    - for a holomorphic w = f(z): grad_z = g * conj(f'(z)) (mul: g * conj(b); exp: g *
      conj(e**z); matmul: g @ b^H);
    - for a real w of a complex z (``abs``, ``angle``, ``real``): grad_z = g * (dw/dx + i dw/dy);
    - for a complex w of a real x (``complex``, the input side of ``real * complex``):
      grad_x = Re(g * conj(dw/dx)); the engine takes the real part when a complex gradient
      reaches a real input (autograd/engine.py), so VJPs may return the complex value.
    On real tensors every ``cj`` is the identity, and nothing changes.

Differs from torch: ``conj`` of a complex tensor is a conjugated copy, not a lazy view with a
conjugate bit (``is_conj`` is always False), so writing into ``x.conj()`` does not change x.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from chainrule.ops._registry import apply_op, defop, ns

__all__ = [
    "real",
    "imag",
    "view_as_real",
    "view_as_complex",
    "view_as_real_copy",
    "view_as_complex_copy",
    "complex",
    "polar",
    "conj",
    "conj_physical",
    "resolve_conj",
    "is_conj",
]


# Python's and NumPy's real scalar types: conj is the identity on them.
_REAL_SCALARS = frozenset(
    {bool, int, float}
    | {t for t in np.sctypeDict.values() if issubclass(t, (np.integer, np.floating, np.bool_))}
)


def cj(x: Any) -> Any:
    """conj(x) for a complex Tensor, array or number; x itself otherwise (no copy). The
    first test is the ordinary backward's case (a NumPy array), kept short: every VJP of a
    product calls this."""
    if type(x) is _ndarray:
        t = x.dtype
        return _np_conj(x) if t is _C64 or t is _C128 else x
    if type(x) in _REAL_SCALARS:  # a number saved by an op with a scalar, or a 0-d result
        return x
    d = getattr(x, "_data", x)
    dt = getattr(d, "dtype", None)
    if dt is None:
        return x.conjugate() if type(x) is builtins.complex else x
    if dt.kind == "c":
        return ns.conj(x)
    return x


_ndarray = np.ndarray
_np_conj = np.conjugate
_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)


def _is_complex(t: Any) -> bool:
    return t._data.dtype.kind == "c"


def _type_name(t: Any) -> str:
    from chainrule._tensor import _type_name

    return _type_name(t._data.dtype).replace("Tensor", "")


# The parts of a complex tensor ------------------------------------------------------------


@defop(name="real", view=True, promote=None)
def _real(xp: Any, x: Any) -> Any:
    """The real parts, a view (writes go to the input)."""
    return x.real


@_real.vjp
def _real_vjp(ctx: Any, g: Any) -> Any:
    # w = x: grad_z = g (a real g; the engine casts it to the input's complex dtype).
    return (g,)


@defop(name="imag", view=True, promote=None)
def _imag(xp: Any, x: Any) -> Any:
    """The imaginary parts, a view (writes go to the input)."""
    return x.imag


@_imag.vjp
def _imag_vjp(ctx: Any, g: Any) -> Any:
    # w = y: grad_z = i g.
    return (g * 1j,)


def real(input: Any) -> Any:
    """The real part of each element, as a view of ``input`` (a real tensor is returned
    itself, as in PyTorch). VJP: g, as the real part of the complex gradient."""
    if not _is_complex(input):
        return input
    return apply_op(_real, (input,))


def imag(input: Any) -> Any:
    """The imaginary part of each element, as a view of ``input``. VJP: i g.

    Raises:
        RuntimeError: for a real tensor, as PyTorch.
    """
    if not _is_complex(input):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return apply_op(_imag, (input,))


@defop(name="view_as_real", view=True, promote=None)
def _view_as_real(xp: Any, x: Any) -> Any:
    """The (..., 2) real view of a complex x: [..., 0] the real parts, [..., 1] the imaginary."""
    # a VJP may hand a NumPy scalar (a 0-d product): its .real is no view of x's memory
    r = xp.asarray(x).real
    return xp.lib.stride_tricks.as_strided(
        r, shape=r.shape + (2,), strides=r.strides + (r.itemsize,)
    )


@_view_as_real.vjp
def _view_as_real_vjp(ctx: Any, g: Any) -> Any:
    return (ns.view_as_complex(g),)


@defop(name="view_as_complex", view=True, promote=None)
def _view_as_complex(xp: Any, x: Any) -> Any:
    """The complex view of a (..., 2) real x (last dim of stride 1)."""
    if x.size == 0:
        return xp.zeros(x.shape[:-1], dtype=np.result_type(x.dtype, np.complex64))
    if x.strides[-1] != x.itemsize:
        x = xp.ascontiguousarray(x)  # a gradient reaching the VJP may be laid out otherwise
    return x.view(np.complex128 if x.dtype == np.float64 else np.complex64)[..., 0]


@_view_as_complex.vjp
def _view_as_complex_vjp(ctx: Any, g: Any) -> Any:
    return (ns.view_as_real(g),)


def view_as_real(input: Any) -> Any:
    """A real view of a complex tensor with one more dim of size 2 (real, imaginary).
    VJP: view_as_complex(g).

    Raises:
        RuntimeError: for a real tensor, as PyTorch.
    """
    if not _is_complex(input):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return apply_op(_view_as_real, (input,))


def view_as_complex(input: Any) -> Any:
    """A complex view of a float32/float64 tensor whose last dim has size 2 and stride 1
    (pairs of real and imaginary parts). VJP: view_as_real(g).

    Raises:
        RuntimeError: for another dtype, shape or stride, with PyTorch's messages.
    """
    k = input._data.dtype
    if k not in (np.float32, np.float64):
        raise RuntimeError(
            "view_as_complex is only supported for float and double tensors, but got a tensor "
            f"of scalar type: {_type_name(input)}"
        )
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    st = input._data.strides
    if st[-1] != input._data.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any((s // input._data.itemsize) % 2 for s in st[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    return apply_op(_view_as_complex, (input,))


def view_as_real_copy(input: Any) -> Any:
    """``view_as_real(input)`` as a new tensor (not a view). VJP: view_as_complex(g)."""
    return ns.clone(view_as_real(input))


def view_as_complex_copy(input: Any) -> Any:
    """``view_as_complex(input)`` as a new tensor (not a view). VJP: view_as_real(g).

    Differs from torch: differentiable (PyTorch's refuses inputs that require grad)."""
    return ns.clone(view_as_complex(input))


# Building complex tensors -----------------------------------------------------------------


@defop(name="complex", promote=None)
def _complex(xp: Any, a: Any, b: Any) -> Any:
    """a + i b, of the complex dtype of a's precision."""
    # Built as one expression (no writes into attributes), so that compile's tracing arrays
    # record it: the pairs (a, b) side by side, viewed as complex numbers.
    rdt = np.result_type(a.dtype, np.float32)
    cdt = np.result_type(a.dtype, np.complex64)
    ab = xp.stack(xp.broadcast_arrays(a, b), axis=-1).astype(rdt)
    return ab.view(cdt)[..., 0]


@_complex.vjp
def _complex_vjp(ctx: Any, g: Any) -> Any:
    need_a, need_b = ctx.needs_input_grad
    return (ns.real(g) if need_a else None, ns.imag(g) if need_b else None)


def complex(real: Any, imag: Any) -> Any:
    """The complex tensor real + i imag (broadcast), complex64 for float32 parts and
    complex128 for float64. VJP: Re(g) to ``real``, Im(g) to ``imag``.

    Raises:
        RuntimeError: unless both parts are float16/float32/float64 of one dtype, as PyTorch.
    """
    ka, kb = real._data.dtype, imag._data.dtype
    ok = (np.float16, np.float32, np.float64)
    if ka not in ok or kb not in ok:
        raise RuntimeError(
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{_type_name(real)} and {_type_name(imag)}"
        )
    if ka != kb:
        raise RuntimeError(
            f"Expected object of scalar type {_type_name(real)} but got scalar type "
            f"{_type_name(imag)} for second argument"
        )
    return apply_op(_complex, (real, imag))


def polar(abs: Any, angle: Any) -> Any:
    """abs * (cos(angle) + i sin(angle)), built as ``complex(abs cos(angle), abs sin(angle))``;
    gradients flow through those ops (the recorded node is ComplexBackward0; PyTorch's is
    PolarBackward0)."""
    ka, kb = abs._data.dtype, angle._data.dtype
    ok = (np.float32, np.float64)
    if ka not in ok or kb not in ok:
        raise RuntimeError(
            "Expected both inputs to be Float or Double tensors but got "
            f"{_type_name(abs)} and {_type_name(angle)}"
        )
    if ka != kb:
        raise RuntimeError(
            f"Expected object of scalar type {_type_name(abs)} but got scalar type "
            f"{_type_name(angle)} for second argument"
        )
    return complex(abs * ns.cos(angle), abs * ns.sin(angle))


# Conjugation ------------------------------------------------------------------------------


@defop(name="conj", promote=None)
def _conj(xp: Any, x: Any) -> Any:
    """The elementwise complex conjugate x - iy (a copy)."""
    return xp.conj(x)


@_conj.vjp
def _conj_vjp(ctx: Any, g: Any) -> Any:
    return (ns.conj(g),)


@defop(name="conj_physical", promote=None)
def _conj_physical(xp: Any, x: Any) -> Any:
    """The elementwise complex conjugate, always a new tensor."""
    return xp.conj(x) if x.dtype.kind == "c" else x.copy()


@_conj_physical.vjp
def _conj_physical_vjp(ctx: Any, g: Any) -> Any:
    return (ns.conj(g),)


def conj(input: Any) -> Any:
    """The complex conjugate x - iy; a real tensor is returned itself, as PyTorch. VJP: conj(g).

    Differs from torch: a conjugated copy, not a lazy conjugate view."""
    if not _is_complex(input):
        return input
    return apply_op(_conj, (input,))


def conj_physical(input: Any) -> Any:
    """A conjugated copy (a copy of a real tensor). VJP: conj(g)."""
    return apply_op(_conj_physical, (input,))


def resolve_conj(input: Any) -> Any:
    """``input`` with a pending conjugation applied; chainrule's conjugation is never lazy, so
    ``input`` itself."""
    return input


def is_conj(input: Any) -> builtins.bool:
    """Whether ``input`` carries a lazy conjugate bit: never, in chainrule (``conj`` copies)."""
    return False
