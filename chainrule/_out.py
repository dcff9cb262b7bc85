"""``out=`` for the torch functions that take it, as one wrapper around each function.

``torch.f(*args, out=t)`` computes ``f(*args)`` and writes the result into ``t`` with PyTorch's
rules: no autograd through it (an error when grad mode is on and any argument or ``out``
requires grad), the result cast into ``out``'s dtype when its category (bool < int < float)
does not rise, ``out`` resized when its shape differs (with PyTorch's deprecation warning when
it had elements), its version bumped, and ``out`` itself returned (a tuple of outs for ops with
several results). Factories (``zeros``, ``arange`` ...) make their result in ``out``'s dtype.

The wrappers replace only the top-level ``chainrule.<name>`` functions (``install``); Tensor
methods and the ops' internal calls keep calling the plain functions, so the hot path gains
nothing.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

import numpy as np

from chainrule import _kinds
from chainrule._dtype import CPP_NAMES

__all__ = ["install", "OUT_OPS", "OUT_FACTORIES"]

OUT_OPS = (
    "add",
    "sub",
    "subtract",
    "mul",
    "multiply",
    "div",
    "divide",
    "true_divide",
    "pow",
    "matmul",
    "mm",
    "bmm",
    "mv",
    "dot",
    "cat",
    "concat",
    "concatenate",
    "stack",
    "sum",
    "mean",
    "prod",
    "max",
    "min",
    "amax",
    "amin",
    "maximum",
    "minimum",
    "clamp",
    "clip",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "abs",
    "neg",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "where",
    "cumsum",
    "argmax",
    "argmin",
    "floor",
    "ceil",
    "round",
    "sign",
    "log1p",
    "expm1",
    "remainder",
    "fmod",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_and",
    "logical_or",
    "logical_not",
    "sort",
    "topk",
    "nan_to_num",
    "addcmul",
    "addcdiv",
)
OUT_FACTORIES = ("zeros", "ones", "empty", "full", "arange", "linspace", "eye", "rand", "randn")

_CAT_MSG = "torch.cat(): input types can't be cast to the desired output type {}"
# Ops whose out must have the result's dtype exactly: PyTorch's message for each ({rc}/{oc}:
# the C++ element type names of _dtype.CPP_NAMES; {r}/{o}: the ScalarType names).
_STRICT = {
    **dict.fromkeys(
        ("matmul", "mm", "bmm", "mv"),
        ("Expected out tensor to have dtype {rc}, but got {oc} instead"),
    ),
    "dot": "result dtype {o} does not match input dtype {r}",
    **dict.fromkeys(("clamp", "clip"), "Found dtype {o} but expected {r}"),
    "where": "Expected out type to be {r} but got {o}",
    "nan_to_num": "nan_to_num: dtype of out: {o} should be same as input: {r}",
}
_UNCHECKED = {"sum"}  # PyTorch casts sum's result into any out dtype
_CAST_ERRORS = {  # PyTorch words a few ops' cast errors its own way
    **dict.fromkeys(("cat", "concat", "concatenate", "stack"), (TypeError, _CAT_MSG)),
    "mean_all": (
        RuntimeError,
        "mean.dtype_out(): input types can't be cast to the desired output type {}",
    ),
}


def _requires_grad(args: Any) -> bool:
    from chainrule._tensor import Tensor

    for a in args:
        if isinstance(a, Tensor) and a.requires_grad:
            return True
        if isinstance(a, (list, tuple)) and _requires_grad(a):
            return True
    return False


def _write(name: str, result: Any, out: Any) -> None:
    from chainrule._tensor import Tensor
    from chainrule.ops._registry import _legacy_name

    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    src, dst = np.asanyarray(result._data), out._data
    if name in _STRICT and src.dtype != dst.dtype:
        raise RuntimeError(
            _STRICT[name].format(
                r=_legacy_name(src.dtype),
                o=_legacy_name(dst.dtype),
                rc=CPP_NAMES.get(src.dtype.name, src.dtype.name),
                oc=CPP_NAMES.get(dst.dtype.name, dst.dtype.name),
            )
        )
    if (
        src.dtype != dst.dtype
        and name not in _UNCHECKED
        and _kinds.category(src) > _kinds.category(dst)
    ):
        kind, msg = _CAST_ERRORS.get(
            name,
            (
                RuntimeError,
                f"result type {_legacy_name(src.dtype)} can't be cast to the "
                "desired output type {}",
            ),
        )
        raise kind(msg.format(_legacy_name(dst.dtype)))
    if src.shape == dst.shape:
        np.copyto(dst, src, casting="unsafe")
    else:
        if dst.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(dst.shape)}, which does not match the required output shape "
                f"{list(src.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).",
                UserWarning,
                stacklevel=4,
            )
        out._data = src.astype(dst.dtype, copy=True)
    out._bump_version()


def _wrap_op(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if out is None:
            return fn(*args, **kwargs)
        from chainrule.autograd.grad_mode import _state

        outs = out if isinstance(out, (list, tuple)) else (out,)
        if _state.enabled and _requires_grad((*args, *kwargs.values(), *outs)):
            raise RuntimeError(
                f"{name}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad."
            )
        from chainrule.autograd.grad_mode import no_grad

        with no_grad():
            result = fn(*args, **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        if len(results) != len(outs):
            raise TypeError(
                f"{name}(): argument 'out' must be a tuple of {len(results)} Tensors, got "
                f"{len(outs)}"
                if len(results) > 1
                else f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}"
            )
        # mean over all elements is its own overload in PyTorch, with its own message
        key = "mean_all" if name == "mean" and len(args) < 2 and "dim" not in kwargs else name
        for r, o in zip(results, outs):
            _write(key, r, o)
        if isinstance(result, tuple):
            # the op's result type's `_out` twin (return_types.max_out ...) holding the outs
            return _out_tuple(result, outs)
        return out

    wrapper.__wrapped_for_out__ = True  # type: ignore[attr-defined]
    return wrapper


def _out_tuple(result: tuple[Any, ...], outs: Any) -> tuple[Any, ...]:
    """The ``out=`` tensors in the result's ``_out`` twin type (PyTorch returns
    ``torch.return_types.max_out`` for ``max(..., out=)``; histogramdd has no twin), or a plain
    tuple where the result was one."""
    from chainrule import return_types

    cls = type(result)
    if isinstance(result, return_types._StructSeq):  # pyright: ignore[reportPrivateUsage]
        twin: Any = getattr(return_types, f"{cls.__name__}_out", cls)
        return twin._make_of(*outs)
    return tuple(outs)


def _wrap_factory(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if out is None:
            return fn(*args, **kwargs)
        from chainrule import _dtype
        from chainrule._tensor import Tensor

        if not isinstance(out, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        dt = kwargs.get("dtype")
        if dt is not None and _dtype.to_dtype(dt) != out.dtype:
            from chainrule.ops._registry import _legacy_name

            raise RuntimeError(
                f"dtype {_legacy_name(_dtype.to_dtype(dt).np)} does not match dtype of out "
                f"parameter ({_legacy_name(out._data.dtype)})"
            )
        kwargs["dtype"] = out.dtype
        _write(name, fn(*args, **kwargs), out)
        if kwargs.get("requires_grad"):
            out.requires_grad_(True)
        return out

    wrapper.__wrapped_for_out__ = True  # type: ignore[attr-defined]
    return wrapper


def install(namespace: dict[str, Any]) -> None:
    """Replace the functions of ``namespace`` (chainrule's globals) named in ``OUT_OPS`` and
    ``OUT_FACTORIES`` by their ``out=``-taking wrappers (once)."""
    for names, wrap in ((OUT_OPS, _wrap_op), (OUT_FACTORIES, _wrap_factory)):
        for n in names:
            fn = namespace.get(n)
            if callable(fn) and not getattr(fn, "__wrapped_for_out__", False):
                namespace[n] = wrap(n, fn)
