"""``gradcheck`` and ``gradgradcheck``: compare backward-pass Jacobians with central
differences, as ``torch.autograd.gradcheck`` does.

The numerical Jacobian column for input element j is (f(x + eps e_j) - f(x - eps e_j)) / 2 eps.
The analytical Jacobian row for output element k is one backward with a one-hot gradient. In
``fast_mode`` only v^T J u is compared, for random unit u and v: two evaluations and one backward.

Complex inputs and outputs are checked as PyTorch checks them: as pairs of real numbers. A
complex input element contributes two columns (its real part moved by eps, then its imaginary
part), a complex output element two rows; the analytical rows of output element k come from
two backward passes, with gradient 1 (d Re(out_k)) and 1j (d Im(out_k)), each read as
dL/dx + i dL/dy (Note [Wirtinger gradients] in ops/complex_numbers.py).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from chainrule import _kinds

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when a Jacobian mismatch is found."""


def _tensors(x: Any) -> tuple[Any, ...]:
    from chainrule._tensor import Tensor

    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _outputs(func: Callable[..., Any], inputs: Sequence[Any]) -> tuple[Any, ...]:
    from chainrule._tensor import Tensor

    out = func(*inputs)
    outs = (out,) if isinstance(out, Tensor) else tuple(out)
    return tuple(o for o in outs if isinstance(o, Tensor))


def _float_outputs(outs: tuple[Any, ...]) -> list[int]:
    return [k for k, o in enumerate(outs) if _kinds.is_inexact(o._data)]


def _host(a: Any) -> np.ndarray:
    """``a`` as a host array: NumPy data as it is, a device array copied to the host (the
    Jacobians are assembled and compared on the host)."""
    if isinstance(a, np.ndarray) or not hasattr(a, "shape"):
        return np.asarray(a)
    from chainrule.backends import backend_of

    return backend_of(a).to_host(a)


def _on_device_of(ref: Any, a: np.ndarray) -> Any:
    """Host array ``a`` on the device of array ``ref`` (``a`` itself for a NumPy ``ref``)."""
    if isinstance(ref, np.ndarray):
        return a
    from chainrule.backends import backend_of

    be = backend_of(ref)
    return be.from_host(a, be.device_index(ref))


def _as_real(a: Any) -> np.ndarray:
    """A float64 vector (a copy) of ``a``'s values; a complex element becomes (real, imag)."""
    a = _host(a)
    if _kinds.is_complex(a):
        return np.stack([a.real, a.imag], -1).astype(np.float64).reshape(-1)
    return np.array(a, dtype=np.float64).reshape(-1)


def _rsize(a: Any) -> int:
    """The number of real coordinates of array ``a``."""
    return a.size * (2 if _kinds.is_complex(a) else 1)


def _numerical(
    func: Callable[..., Any], inputs: Sequence[Any], diff: list[int], out_idx: list[int], eps: float
) -> list[list[np.ndarray]]:
    """J[o][i] of shape (numel(input i), numel(output o)) by central differences."""
    # Not under no_grad: func may itself call autograd (gradgradcheck's does).
    base = _outputs(func, inputs)
    jac = [
        [np.zeros((_rsize(inputs[i]._data), _rsize(base[o]._data))) for i in diff] for o in out_idx
    ]
    for ci, i in enumerate(diff):
        x = inputs[i]._data
        steps = (eps, eps * 1j) if x.dtype.kind == "c" else (eps,)
        for j in range(x.size):
            idx = np.unravel_index(j, x.shape)
            orig = x[idx].item()
            for si, step in enumerate(steps):
                x[idx] = orig + step
                plus = [_as_real(o._data) for o in _outputs(func, inputs)]
                x[idx] = orig - step
                minus = [_as_real(o._data) for o in _outputs(func, inputs)]
                x[idx] = orig
                for co, o in enumerate(out_idx):
                    jac[co][ci][j * len(steps) + si] = (plus[o] - minus[o]) / (2 * eps)
    return jac


def _analytical(
    outs: tuple[Any, ...], inputs: Sequence[Any], diff: list[int], out_idx: list[int]
) -> list[list[np.ndarray]]:
    from chainrule._tensor import _new_tensor
    from chainrule.autograd import _backward as autograd

    jac = [
        [np.zeros((_rsize(inputs[i]._data), _rsize(outs[o]._data))) for i in diff] for o in out_idx
    ]
    dins = [inputs[i] for i in diff]
    for co, o in enumerate(out_idx):
        out = outs[o]
        if not out._requires_grad:
            continue
        seeds = (1, 1j) if out._data.dtype.kind == "c" else (1,)
        for k in range(out._data.size):
            for si, seed in enumerate(seeds):
                g = np.zeros(out._data.shape, out._data.dtype)
                g.reshape(-1)[k] = seed
                g = _on_device_of(out._data, g)
                grads = autograd.grad(
                    out, dins, _new_tensor(g), retain_graph=True, allow_unused=True
                )
                for ci, gr in enumerate(grads):
                    if gr is not None:
                        if tuple(gr.shape) != tuple(dins[ci].shape):
                            raise GradcheckError(
                                f"Gradient has wrong shape: got {list(gr.shape)}, expected "
                                f"{list(dins[ci].shape)} for input {diff[ci]}"
                            )
                        jac[co][ci][:, k * len(seeds) + si] = _as_real(gr._data)
    return jac


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against finite differences.

    Every input tensor with ``requires_grad=True`` is checked (use float64: float32 differences
    are too coarse). Passes when ``|analytical - numerical| <= atol + rtol * |numerical|``
    elementwise. The backward is also run twice and must agree within ``nondet_tol``.

    Returns True on success; on failure raises ``GradcheckError`` (or returns False when
    ``raise_exception=False``). The batched/forward-AD options are accepted and ignored.
    """
    inputs = _tensors(inputs)
    from chainrule._tensor import Tensor

    if any(getattr(x, "_sparse", False) for x in inputs):
        func, inputs = _sparse_as_dense(func, inputs, masked)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._requires_grad]
    if not diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, "
            "but none of the them have requires_grad=True."
        )
    try:
        outs = _outputs(func, inputs)
        out_idx = _float_outputs(outs)
        if not out_idx:
            return True
        if fast_mode:
            _fast_check(func, inputs, outs, diff, out_idx, eps, atol, rtol)
        else:
            num = _numerical(func, inputs, diff, out_idx, eps)
            ana = _analytical(outs, inputs, diff, out_idx)
            ana2 = _analytical(outs, inputs, diff, out_idx)
            for co, o in enumerate(out_idx):
                for ci, i in enumerate(diff):
                    a, n, a2 = ana[co][ci], num[co][ci], ana2[co][ci]
                    if not np.allclose(a, a2, rtol=0, atol=nondet_tol):
                        raise GradcheckError(
                            f"Backward is not reentrant, i.e., running backward with same input "
                            f"and grad_output multiple times gives different values, although "
                            f"analytical gradient matches numerical gradient.The tolerance for "
                            f"nondeterminism was {nondet_tol}."
                        )
                    if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                        raise GradcheckError(
                            f"Jacobian mismatch for output {o} with respect to input {i},\n"
                            f"numerical:{_fmt(n)}\nanalytical:{_fmt(a)}\n"
                        )
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _sparse_as_dense(
    func: Callable[..., Any], inputs: tuple[Any, ...], masked: bool | None
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """Sparse COO inputs and outputs checked through dense tensors (docs/sparse.md): with
    ``masked=True`` a sparse input's stored values (the specified elements only, PyTorch's
    masked semantics), else its dense form, every element perturbed (a function of
    ``dense.to_sparse()``); a sparse output is PyTorch's error."""
    makers: list[Any] = []
    new: list[Any] = []
    for x in inputs:
        if getattr(x, "_sparse", False) and x.requires_grad:
            if masked:
                new.append(x._values().clone().requires_grad_(True))
                makers.append(x._with_values)
            else:
                new.append(x.detach().to_dense().requires_grad_(True))
                makers.append(lambda d, sd=x.sparse_dim(): d.to_sparse(sd))
        else:
            new.append(x)
            makers.append(None)

    def dense(o: Any) -> Any:
        if getattr(o, "_sparse", False):
            raise ValueError(
                "Sparse output is not supported at gradcheck yet. Please call "
                "to_dense(masked_grad=...) on the output of fn for gradcheck."
            )
        return o

    def wrapped(*args: Any) -> Any:
        out = func(*[mk(a) if mk is not None else a for a, mk in zip(args, makers)])
        return tuple(dense(o) for o in out) if isinstance(out, tuple) else dense(out)

    return wrapped, tuple(new)


def _fmt(a: np.ndarray) -> str:
    return "\n" + np.array2string(a.T)


def _fast_check(
    func: Callable[..., Any],
    inputs: Sequence[Any],
    outs: tuple[Any, ...],
    diff: list[int],
    out_idx: list[int],
    eps: float,
    atol: float,
    rtol: float,
) -> None:
    from chainrule._tensor import _new_tensor
    from chainrule.autograd import _backward as autograd

    rng = np.random.default_rng(0)
    us = []
    for i in diff:
        u = _random_like(rng, inputs[i]._data)
        us.append(u / max(np.linalg.norm(u), 1e-12))
    vs = []
    for o in out_idx:
        v = _random_like(rng, outs[o]._data)
        vs.append(v / max(np.linalg.norm(v), 1e-12))
    # Numerical J u for all differentiable inputs moved together.
    saved = [inputs[i]._data.copy() for i in diff]
    steps = [_on_device_of(inputs[i]._data, eps * us[ci]) for ci, i in enumerate(diff)]
    for ci, i in enumerate(diff):
        inputs[i]._data[...] = saved[ci] + steps[ci]
    plus = [_as_real(x._data) for x in _outputs(func, inputs)]
    for ci, i in enumerate(diff):
        inputs[i]._data[...] = saved[ci] - steps[ci]
    minus = [_as_real(x._data) for x in _outputs(func, inputs)]
    for ci, i in enumerate(diff):
        inputs[i]._data[...] = saved[ci]
    # Real inner products: <v, w> = Re(conj(v) w) for complex values.
    num = sum(
        float(np.sum(_as_real(vs[co]) * (plus[o] - minus[o]) / (2 * eps)))
        for co, o in enumerate(out_idx)
    )
    roots = [outs[o] for o in out_idx if outs[o]._requires_grad]
    gos = [
        _new_tensor(_on_device_of(outs[o]._data, vs[co].astype(outs[o]._data.dtype)))
        for co, o in enumerate(out_idx)
        if outs[o]._requires_grad
    ]
    ana = 0.0
    if roots:
        grads = autograd.grad(
            roots, [inputs[i] for i in diff], gos, retain_graph=True, allow_unused=True
        )
        ana = sum(
            float(np.sum(_as_real(g._data) * _as_real(us[ci])))
            for ci, g in enumerate(grads)
            if g is not None
        )
    if not abs(ana - num) <= atol + rtol * abs(num):
        raise GradcheckError(
            f"Jacobian mismatch (fast mode): v^T J u numerical {num!r}, analytical {ana!r}"
        )


def _random_like(rng: np.random.Generator, a: Any) -> np.ndarray:
    """Standard normal values of ``a``'s shape; complex (both parts drawn) for complex ``a``."""
    u = rng.standard_normal(a.shape)
    if a.dtype.kind == "c":
        u = u + 1j * rng.standard_normal(a.shape)
    return u


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: gradcheck of ``(inputs, v) -> d(v . func(inputs))/d inputs``,
    with ``create_graph=True``. Random ``grad_outputs`` are drawn when not given."""
    from chainrule._tensor import Tensor, _new_tensor
    from chainrule.autograd import _backward as autograd

    inputs = _tensors(inputs)
    outs = _outputs(func, inputs)
    out_idx = [k for k in _float_outputs(outs) if outs[k]._requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            _new_tensor(
                _on_device_of(
                    outs[k]._data, _random_like(rng, outs[k]._data).astype(outs[k]._data.dtype)
                )
            ).requires_grad_(True)
            for k in out_idx
        )
    else:
        grad_outputs = _tensors(grad_outputs)
    n_in = len(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._requires_grad]

    def new_func(*args: Any) -> Any:
        ins, gos = args[:n_in], args[n_in:]
        o = _outputs(func, ins)
        roots = [o[k] for k in out_idx]
        grads = autograd.grad(
            roots, [ins[i] for i in diff], gos, create_graph=True, allow_unused=True
        )
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        new_func,
        tuple(inputs) + tuple(grad_outputs),
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        fast_mode=fast_mode,
    )
