"""Random sampling functions of torch's namespace and their in-place Tensor forms, and
``finfo``/``iinfo``.

Top level: ``multinomial``, ``bernoulli``, ``normal``, ``poisson``. In place (Tensor methods):
``normal_``, ``uniform_``, ``bernoulli_``, ``exponential_``, ``random_``, ``geometric_``,
``cauchy_``, ``log_normal_``. Samples come from chainrule's generators (NumPy's PCG64), so the
numbers differ from PyTorch's for one seed; distributions, dtypes, shapes and errors are
PyTorch's. The in-place forms write through ``copy_``, so leaf, version-counter and view rules
are those of every in-place op. Sampling records no gradient (as in PyTorch, where these
functions' derivatives are zero or undefined).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import _dispatch, _dtype, _kinds
from chainrule._tensor import Tensor, _new_tensor
from chainrule.backends import backend_of

__all__ = ["multinomial", "bernoulli", "normal", "poisson", "finfo", "iinfo", "fill_sampled"]


def rng(generator: Any, ref: Any = None) -> np.random.Generator:
    """The NumPy generator behind ``generator``; for None, the default one of the device of
    Tensor ``ref`` (the CPU's, or its GPU's: Note [one generator per GPU] in _random.py)."""
    from chainrule._creation import rng_of

    return rng_of(generator, ref if isinstance(ref, Tensor) else "cpu")


# Note [sampling on the host]
#     Samples are drawn from chainrule's generators on the host, from parameters read there
#     (one copy from a GPU), and the result is copied to the device of the tensor that gave
#     the parameters: a CUDA tensor gets the same numbers as a CPU tensor under one seed.


def _host(t: Tensor) -> np.ndarray:
    """``t``'s values on the host, as float64."""
    return backend_of(t._data).to_host(t._data).astype(np.float64)


def _like(values: np.ndarray, t: Tensor) -> Tensor:
    """A tensor of the host array ``values`` on ``t``'s device."""
    d = t._data
    if type(d) is np.ndarray:
        return _new_tensor(values)
    be = backend_of(d)
    return _new_tensor(be.from_host(values, be.device_index(d)))


def _np_dtype(t: Tensor) -> np.dtype:
    return t._data.dtype


def multinomial(
    input: Tensor, num_samples: int, replacement: bool = False, *, generator: Any = None
) -> Tensor:
    """``num_samples`` category indices per row of the (1-d or 2-d) non-negative weights
    ``input``, drawn with or without replacement (int64). Without replacement the draws are
    sequential (the Gumbel-top-k construction, which has that distribution)."""
    p = _host(input)  # Note [sampling on the host]
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not _kinds.is_floating(input._data):
        raise RuntimeError(
            "multinomial only supports floating-point dtypes for input, got: "
            f"{str(input.dtype).split('.')[-1].capitalize()}"
        )
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    rows = p.reshape(-1, p.shape[-1])
    n = rows.shape[1]
    if not replacement and num_samples > n:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if not np.isfinite(rows).all() or (rows < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    sums = rows.sum(1)
    if (sums <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    gen = rng(generator, input)
    out = np.empty((rows.shape[0], num_samples), dtype=np.int64)
    for r in range(rows.shape[0]):
        w = rows[r] / sums[r]
        if replacement:
            out[r] = gen.choice(n, size=num_samples, replace=True, p=w)
        else:
            if num_samples > int((w > 0).sum()):
                raise RuntimeError(
                    "invalid multinomial distribution (with replacement=False, "
                    "not enough non-negative category to sample)"
                )
            with np.errstate(divide="ignore"):
                keys = np.log(w) - np.log(-np.log(gen.random(n)))
            out[r] = np.argsort(-keys, kind="stable")[:num_samples]
    return _like(out.reshape(p.shape[:-1] + (num_samples,)), input)


def bernoulli(input: Tensor, p: Any = None, *, generator: Any = None) -> Tensor:
    """0/1 samples, 1 with probability ``input`` elementwise (or the scalar ``p``), of
    ``input``'s dtype."""
    prob = (
        _host(input)  # Note [sampling on the host]
        if p is None
        else np.full(tuple(input.shape), float(p))
    )
    if ((prob < 0) | (prob > 1)).any() or np.isnan(prob).any():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    draws = rng(generator, input).random(prob.shape) < prob
    return _like(draws.astype(_np_dtype(input)), input)


def normal(
    mean: Any,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Normal samples with elementwise ``mean`` and ``std`` (tensors or numbers, broadcast),
    or of ``size`` when both are numbers."""
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mt and not st:
        from chainrule._creation import rng_of

        gen = rng_of(generator, device)
        if size is None:
            raise TypeError('normal() missing 1 required positional arguments: "size"')
        dt = _dtype.to_dtype(dtype if dtype is not None else _dtype.get_default_dtype()).np
        if float(std) < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std)}")
        shape = tuple(size) if not isinstance(size, int) else (size,)
        out = _new_tensor((gen.standard_normal(shape) * float(std) + float(mean)).astype(dt))
        if device is not None:
            out = out.to(device)
        return out.requires_grad_() if requires_grad else out
    # Note [sampling on the host]
    m = _host(mean) if mt else np.asarray(mean, dtype=np.float64)
    s = _host(std) if st else np.asarray(std, dtype=np.float64)
    if (s < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    ref = mean if mt else std
    gen = rng(generator, ref)
    shape = np.broadcast_shapes(m.shape, s.shape)
    return _like((gen.standard_normal(shape) * s + m).astype(_np_dtype(ref)), ref)


def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """Poisson samples with elementwise rate ``input``, of ``input``'s dtype."""
    lam = _host(input)  # Note [sampling on the host]
    if (lam < 0).any() or np.isnan(lam).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return _like(rng(generator, input).poisson(lam).astype(_np_dtype(input)), input)


def fill_sampled(t: Tensor, values: np.ndarray) -> Tensor:
    """Write sampled ``values`` into ``t`` in place (through ``copy_``)."""
    from chainrule.autograd.grad_mode import no_grad

    src = _new_tensor(values.astype(_np_dtype(t), copy=False))
    if t.requires_grad and t.grad_fn is None:
        from chainrule.autograd.grad_mode import is_grad_enabled

        if is_grad_enabled():
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        with no_grad():
            return t.copy_(src)
    return t.copy_(src)


def float_only(t: Tensor, name: str) -> None:
    if not _kinds.is_floating(t._data):
        raise RuntimeError(
            f"\"{name}\" not implemented for '{str(t.dtype).split('.')[-1].capitalize()}'"
        )


class finfo:
    """Machine limits of a floating dtype, as ``torch.finfo``."""

    def __init__(self, type: Any = None) -> None:  # noqa: A002 - PyTorch's argument name
        dt = _dtype.get_default_dtype() if type is None else type
        if isinstance(dt, _dtype.dtype) and dt.is_complex:  # a complex dtype: its parts'
            to_real = getattr(dt, "to_real", None)  # complex32's (a shell dtype)
            dt = to_real() if to_real is not None else _dtype.real_of(dt)
        npdt = np.dtype(_dtype.to_dtype(dt).np)
        if not _kinds.is_floating(npdt):
            raise TypeError(
                f"torch.finfo() requires a floating point input type. Use "
                f"torch.iinfo to handle '{type}'"
            )
        f = np.finfo(npdt)
        self.dtype = _dtype.to_dtype(dt).name
        self.bits = int(f.bits)
        # PyTorch's numeric_limits<Float8_e5m2fnuz>::epsilon() is 2**-3, not the 2**-2 its two
        # mantissa bits give (ml_dtypes' value); chainrule reports PyTorch's.
        self.eps = 0.125 if self.dtype == "float8_e5m2fnuz" else float(f.eps)
        self.max = float(f.max)
        self.min = float(f.min)
        self.tiny = float(f.tiny)
        self.smallest_normal = float(f.tiny)
        # 10**-digits10, digits10 = floor(mantissa bits * log10(2)), as PyTorch computes it.
        self.resolution = 10.0 ** -int(f.nmant * 0.30102999566398120)

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
            f"tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:
    """Machine limits of an integer dtype, as ``torch.iinfo``."""

    def __init__(self, type: Any) -> None:  # noqa: A002
        npdt = np.dtype(_dtype.to_dtype(type).np)
        if not _kinds.is_integral(npdt, include_bool=True):
            raise TypeError(
                f"torch.iinfo() requires an integer input type. Use torch.finfo to handle '{type}'"
            )
        if _kinds.is_bool(npdt):
            raise TypeError("torch.bool is not supported by torch.iinfo")
        i = np.iinfo(npdt)
        self.dtype = _dtype.to_dtype(type).name
        self.bits = int(i.bits)
        self.max = int(i.max)
        self.min = int(i.min)

    def __repr__(self) -> str:
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


# The sampling Tensor methods (_methods/sampling.py) reach these through chainrule/_dispatch.py.
_dispatch.register(
    _dispatch.sampling,
    {
        "multinomial": multinomial,
        "bernoulli": bernoulli,
        "fill_sampled": fill_sampled,
        "float_only": float_only,
        "rng": rng,
    },
)
