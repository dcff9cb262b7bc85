"""Public functions that PyTorch refuses on complex input and that are not one registered op
(so ``_complex_refusals``' table of op forwards cannot reach them): each is decorated at its
definition with ``@refuses_complex(name, nargs)``, which raises PyTorch 2.13's error when one
of its first ``nargs`` positional arguments is a complex tensor. A real call pays one dtype
check per checked argument. The messages come from running PyTorch (``{t}``: its name of the
dtype, ``ComplexFloat`` or ``ComplexDouble``); a callable gives the message from the call's
arguments where PyTorch's kernel name depends on them, or None where PyTorch computes that
call (the median of an empty tensor).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

__all__ = ["PUBLIC_REFUSALS", "refuse_complex_scalar", "refuses_complex"]

_F = TypeVar("_F", bound=Callable[..., Any])


def _nie(kernel: str) -> tuple[type[Exception], str]:
    return (NotImplementedError, f"\"{kernel}\" not implemented for '{{t}}'")


def _median_msg(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    # None (computed) where PyTorch's check comes first: the median of no elements is NaN,
    # and an empty reduced dim raises its IndexError
    x = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    if dim is None:
        return None if x.ndim and x.numel() == 0 else _nie("median_cpu")[1]
    d = int(dim)
    if x.ndim and -x.ndim <= d < x.ndim and x.shape[d] == 0:
        return None
    return _nie("median_out")[1]


def _histc_msg(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    lo = args[2] if len(args) > 2 else kwargs.get("min", 0)
    hi = args[3] if len(args) > 3 else kwargs.get("max", 0)
    return _nie("aminmax_cpu" if float(lo) == float(hi) else "histogram_cpu")[1]


def _unique_msg(dim_pos: int, one_d_plain: bool) -> Callable[..., str]:
    # unique_consecutive of a 1-D input takes PyTorch's plain kernel even with a dim
    def msg(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        dim = args[dim_pos] if len(args) > dim_pos else kwargs.get("dim")
        plain = dim is None or (one_d_plain and args[0].ndim == 1)
        return _nie("unique" if plain else "unique_dim")[1]

    return msg


_ISIN = (RuntimeError, "Unsupported input type encountered for isin(): {t}")
_NANSUM = (RuntimeError, "nansum on CPU does not support complex inputs")

PUBLIC_REFUSALS: dict[str, tuple[type[Exception], str | Callable[..., str | None]]] = {
    "logit": _nie("logit_cpu"),
    "ndtr": _nie("erf_vml_cpu"),
    "mvlgamma": _nie("arange_cpu"),
    "copysign": _nie("copysign_cpu"),
    "hypot": _nie("hypot_cpu"),
    "logaddexp2": _nie("logaddexp2_cpu"),
    "heaviside": (RuntimeError, "heaviside is not yet implemented for complex tensors."),
    "floor_divide": _nie("div_floor_cpu"),
    "signbit": (NotImplementedError, "signbit is not implemented for complex tensors."),
    "isposinf": (RuntimeError, "isposinf does not support complex inputs."),
    "isneginf": (RuntimeError, "isneginf does not support complex inputs."),
    "median": (NotImplementedError, _median_msg),
    "nanmedian": (NotImplementedError, _median_msg),
    "histc": (NotImplementedError, _histc_msg),
    "bincount": _nie("bincount_cpu"),
    "searchsorted": _nie("searchsorted_out_cpu"),
    "bucketize": _nie("searchsorted_out_cpu"),
    "isin": _ISIN,
    "unique": (NotImplementedError, _unique_msg(4, False)),
    "unique_consecutive": (NotImplementedError, _unique_msg(3, True)),
    "aminmax": _nie("aminmax_cpu"),
    "nansum": _NANSUM,
    "nanmean": _NANSUM,
    "glu": _nie("glu_cpu"),
    "hardshrink": _nie("hardshrink_cpu"),
    "softshrink": _nie("softshrink_check"),
    "threshold": _nie("threshold_cpu"),
    "prelu": _nie("prelu_cpu"),
    "fmod": _nie("fmod_cpu"),
    "remainder": _nie("remainder_cpu"),
    "xlogy": _nie("xlogy_cpu"),
    "xlog1py": _nie("xlog1py_cpu"),
    "div_floor": _nie("div_floor_cpu"),
    "div_trunc": _nie("div_trunc_cpu"),
    "gumbel_softmax": (
        RuntimeError,
        "Exponential distribution is a continuous probability distribution. dtype must be a "
        "floating point but you specified {t}",
    ),
}

_TORCH_NAME = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _promoted_name(operands: tuple[Any, ...]) -> str:
    """PyTorch's name of the complex dtype that real tensors and a Python complex promote to
    (complex128 with a float64 tensor, else the default complex dtype)."""
    from chainrule._dtype import result_type

    try:
        name = result_type(*operands).np.name
    except Exception:  # noqa: BLE001 - an operand type promotion does not know
        name = "complex64"
    return _TORCH_NAME.get(name, "ComplexFloat")


def refuses_complex(name: str, nargs: int = 1, *, scalars: bool = False) -> Callable[[_F], _F]:
    """Wrap a public function so that a complex tensor among its first ``nargs`` positional
    arguments raises ``PUBLIC_REFUSALS[name]`` (PyTorch's exception type and message); with
    ``scalars``, so does a Python complex among them (PyTorch promotes the call to complex
    and its kernel refuses)."""
    exc, msg = PUBLIC_REFUSALS[name]

    def deco(fn: _F) -> _F:
        @functools.wraps(fn)
        def checked(*args: Any, **kwargs: Any) -> Any:
            for a in args[:nargs]:
                d = getattr(a, "_data", None)
                if d is not None and d.dtype.kind == "c":
                    text = msg if isinstance(msg, str) else msg(args, kwargs)
                    if text is None:  # this call is computed (the function's own checks)
                        break
                    raise exc(text.format(t=_TORCH_NAME.get(d.dtype.name, d.dtype.name)))
            else:
                if scalars and any(type(a) is complex for a in args[:nargs]):
                    refuse_complex_scalar(name, *args[:nargs])
            return fn(*args, **kwargs)

        return checked  # pyright: ignore[reportReturnType]

    return deco


def refuse_complex_scalar(name: str, *operands: Any) -> None:
    """Raise ``PUBLIC_REFUSALS[name]`` for a call whose operands (real tensors and numbers)
    include a Python complex: for the checks inside a hot function, which a decorator would
    slow (``div``'s rounding modes)."""
    exc, msg = PUBLIC_REFUSALS[name]
    text = msg if isinstance(msg, str) else msg(operands, {})
    if text is not None:
        raise exc(text.format(t=_promoted_name(operands)))
