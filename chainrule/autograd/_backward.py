"""``backward``, ``grad`` and ``Variable``: the entry points into the engine
(``engine.run_backward``), re-exported by ``chainrule.autograd``.

``backward`` accumulates vector-Jacobian products into leaves' ``.grad``; ``grad`` returns them
instead.
"""

from __future__ import annotations

import warnings
from typing import Any

from chainrule import _kinds

__all__ = ["backward", "grad", "Variable"]


def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    from chainrule._tensor import Tensor

    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _make_grads(outputs: list[Any], grads: list[Any], is_grads_batched: bool = False) -> list[Any]:
    """Validate given root gradients, or make ones for one-element outputs (PyTorch's rules)."""
    from chainrule._tensor import Tensor, _new_tensor

    if len(grads) != len(outputs):
        raise RuntimeError(
            "grad can be implicitly created only for scalar outputs"
            if not grads
            else f"Mismatch in number of gradients: got {len(grads)} gradients for "
            f"{len(outputs)} outputs"
        )
    res = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if out._requires_grad:
                if out._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not _kinds.is_inexact(out._data):
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{out.dtype}"
                    )
                be = out._backend
                with be.array_device(out._data):  # CuPy makes *_like on the current GPU
                    g = _new_tensor(be.xp.ones_like(out._data))
            res.append(g)
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        if tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                f"has a shape of {out.shape}. Pass a gradient of the output's shape (for a "
                "scalar loss, omit it)."
            )
        if _kinds.is_complex(g._data) != _kinds.is_complex(out._data):
            raise RuntimeError(
                f"For complex Tensors, both grad_output and output are required to have the same "
                f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and "
                f"output[{i}] has a dtype of {out.dtype}."
            )
        res.append(g)
    return res


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """Accumulate the gradients of ``tensors`` (contracted with ``grad_tensors``) into the
    ``.grad`` of the graph's leaves (or only of ``inputs``)."""
    from chainrule.autograd.engine import run_backward

    outs = _as_list(tensors)
    if grad_variables is not None:
        grad_tensors = grad_variables
    grads = _as_list(grad_tensors)
    if not grads:
        grads = [None] * len(outs)
    if inputs is not None:
        inputs = _as_list(inputs)
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    for i, t in enumerate(outs):
        if not t._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
    root_grads = _make_grads(outs, grads)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the "
            "parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after use "
            "to break the cycle and avoid the leak.",
            UserWarning,
            stacklevel=3,
        )
    run_backward(outs, root_grads, retain_graph, create_graph, inputs=inputs, accumulate=True)


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Any, ...]:
    """Return d(outputs)/d(inputs) contracted with ``grad_outputs``, without touching ``.grad``.

    Example:
        >>> import chainrule as torch
        >>> x = torch.tensor(3.0, requires_grad=True)
        >>> (dy,) = torch.autograd.grad(x ** 3, x, create_graph=True)
        >>> dy, torch.autograd.grad(dy, x)[0]
        (tensor(27., grad_fn=<MulBackward0>), tensor(18.))
    """
    from chainrule._tensor import _new_tensor
    from chainrule.autograd.engine import run_backward

    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported by chainrule")
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but "
            "got: allow_unused=False."
        )
    gos = _as_list(grad_outputs)
    if not gos:
        gos = [None] * len(outs)
    for i, t in enumerate(outs):
        if not t._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
    root_grads = _make_grads(outs, gos)
    if retain_graph is None:
        retain_graph = create_graph
    res = run_backward(
        outs,
        root_grads,
        retain_graph,
        create_graph,
        inputs=ins,
        allow_unused=allow_unused,
        accumulate=False,
    )
    assert res is not None
    if materialize_grads:
        res = tuple(
            _new_tensor(i._backend.xp.zeros_like(i._data)) if g is None else g
            for g, i in zip(res, ins)
        )
    return res


def Variable(data: Any, requires_grad: bool = False, volatile: bool = False) -> Any:
    """The pre-0.4 wrapper, kept for old code: returns a Tensor.

    ``volatile`` has no effect (as in PyTorch 2.x) and warns; use ``with no_grad():``.
    """
    from chainrule._creation import tensor
    from chainrule._tensor import Tensor

    if volatile:
        warnings.warn(
            "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
            UserWarning,
            stacklevel=2,
        )
    if not isinstance(data, Tensor):
        data = tensor(data)
    t = data.detach()
    if requires_grad:
        t.requires_grad_(True)
    return t
