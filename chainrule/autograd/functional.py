"""Derivatives of whole functions: ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``hvp`` and
``vhp``, with PyTorch's signatures, return structures and error messages.

Each takes ``func`` and ``inputs`` (a Tensor or a tuple of Tensors, ``func(*inputs)``) and is
built from reverse sweeps (``autograd.grad``) only:

- ``vjp``: one sweep seeded with ``v`` gives ``v^T J``.
- ``vhp`` / ``hvp``: a differentiable sweep gives the gradient ``g``; a second sweep seeded with
  ``v`` gives ``v^T H``. ``hvp`` returns the same, ``H v = (v^T H)^T`` for a symmetric Hessian.
- ``jvp``: with a dummy cotangent ``u``, ``J^T u`` is linear in ``u``, so sweeping back from it
  with seed ``v`` yields ``J v``.
- ``jacobian``: one sweep per output element; ``hessian`` is the Jacobian of the gradient.

``vectorize`` is accepted and ignored; ``strategy`` must be ``"reverse-mode"``.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

_OUTPUTS = "outputs of the user-provided function"
_V_NEEDS_SCALAR_OUTPUT = (
    "The vector v can only be None if the user-provided function returns a single Tensor with "
    "a single element."
)
_V_NEEDS_SCALAR_INPUT = (
    "The vector v can only be None if the input to the user-provided function is a single "
    "Tensor with a single element."
)


def _output_unreached(i: int) -> str:
    return (
        f"The output of the user-provided function is independent of input {i}. "
        "This is not allowed in strict mode."
    )


def _gradient_unreached(i: int) -> str:
    return (
        f"The gradient with respect to input {i} is independent of the inputs of the "
        "user-provided function. This is not allowed in strict mode."
    )


def _tensors(value: Any, what: str, caller: str) -> tuple[tuple[Any, ...], bool]:
    """Accept a Tensor or a tuple/list of Tensors. Return the tensors as a tuple, and whether a
    sequence was given (results go back to the caller in the same form)."""
    from chainrule._tensor import Tensor

    given_seq = isinstance(value, (tuple, list))
    items = tuple(value) if given_seq else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            culprit = f"the value at index {i}" if given_seq else f"the given {what}"
            raise TypeError(
                f"The {what} given to {caller} must be either a Tensor or a tuple of Tensors "
                f"but {culprit} has type {type(item)}."
            )
    return items, given_seq


def _as_given(items: tuple[Any, ...], given_seq: bool) -> Any:
    """The caller's form: the whole tuple, or its lone element when a bare Tensor was given."""
    return items if given_seq else items[0]


def _sweep_inputs(xs: tuple[Any, ...], create_graph: bool) -> tuple[Any, ...]:
    """The tensors to differentiate with respect to. Under ``create_graph`` an input that
    requires grad is replaced by a view of itself, so results stay connected to the caller's
    graph; every other input becomes a fresh leaf (float ones requiring grad)."""
    return tuple(
        x.view_as(x)
        if create_graph and x.requires_grad
        else x.detach().requires_grad_(x.dtype.is_floating_point)
        for x in xs
    )


def _released(xs: Sequence[Any], create_graph: bool) -> tuple[Any, ...]:
    """Cut results loose from the internal graph unless the caller asked to keep it."""
    if create_graph:
        return tuple(xs)
    return tuple(None if x is None else x.detach() for x in xs)


def _pull_back(
    heads: Sequence[Any],
    targets: Sequence[Any],
    seeds: Sequence[Any] | None,
    create_graph: bool,
    retain_graph: bool | None = True,
) -> tuple[Any, ...]:
    """``sum_k seeds[k]^T d heads[k] / d target`` for each target (None where no head depends
    on it). Heads that are None or outside the graph are skipped; a None seed stands for ones."""
    from chainrule._creation import ones_like
    from chainrule.autograd import _backward as autograd

    if seeds is None:
        seeds = (None,) * len(heads)
    live = [(h, s) for h, s in zip(heads, seeds) if h is not None and h.requires_grad]
    if not live:
        return (None,) * len(targets)
    return tuple(
        autograd.grad(
            [h for h, _ in live],
            list(targets),
            [ones_like(h) if s is None else s for h, s in live],
            retain_graph=retain_graph,
            create_graph=create_graph,
            allow_unused=True,
        )
    )


def _zeros_where_missing(
    grads: Sequence[Any], like: Sequence[Any], strict: bool, complaint: Callable[[int], str]
) -> tuple[Any, ...]:
    """Replace each None by zeros shaped like its partner in ``like``; in strict mode a None is
    an error worded by ``complaint(index)``."""
    from chainrule._creation import zeros_like

    filled = []
    for i, (g, ref) in enumerate(zip(grads, like)):
        if g is None:
            if strict:
                raise RuntimeError(complaint(i))
            g = zeros_like(ref)
        filled.append(g)
    return tuple(filled)


def _seeds(v: Any, against: tuple[Any, ...], caller: str, none_error: str) -> Any:
    """Validate ``v`` against the tensors it pairs with: one per tensor, same shapes. None is
    allowed only when ``against`` is a single one-element tensor (the seed is then 1)."""
    if v is None:
        if len(against) != 1 or against[0].numel() != 1:
            raise RuntimeError(none_error)
        return None
    vs, _ = _tensors(v, "v", caller)
    if len(vs) != len(against):
        raise RuntimeError(
            f"v is a tuple of invalid length: should be {len(against)} but got {len(vs)}."
        )
    for i, (given, ref) in enumerate(zip(vs, against)):
        if tuple(given.shape) != tuple(ref.shape):
            raise RuntimeError(
                f"Entry {i} in v has invalid size: should be {ref.shape} but got {given.shape}."
            )
    return vs


def _require_one_element(ys: tuple[Any, ...], caller: str) -> None:
    if len(ys) != 1 or ys[0].numel() != 1:
        raise RuntimeError(
            f"The function given to {caller} should return a single Tensor with a single element."
        )


def _reverse_product(
    func: Callable[..., Any],
    inputs: Any,
    v: Any,
    create_graph: bool,
    strict: bool,
    caller: str,
    through_gradient: bool,
) -> tuple[Any, Any]:
    """Shared driver of ``vjp`` (one sweep seeded with ``v`` from the outputs) and of
    ``vhp``/``hvp`` (``through_gradient``: sweep once for the gradient of a one-element
    output, keeping it differentiable, then sweep from the gradient seeded with ``v``)."""
    from chainrule.autograd import grad_mode

    with grad_mode.enable_grad():
        xs, inputs_seq = _tensors(inputs, "inputs", caller)
        xs = _sweep_inputs(xs, create_graph)
        if through_gradient:
            vs = _seeds(v, xs, caller, _V_NEEDS_SCALAR_INPUT)
        ys, outputs_seq = _tensors(func(*xs), _OUTPUTS, caller)
        if through_gradient:
            _require_one_element(ys, caller)
            first = _pull_back(ys, xs, None, create_graph=True)
        else:
            vs = _seeds(v, ys, caller, _V_NEEDS_SCALAR_OUTPUT)
            first = _pull_back(ys, xs, vs, create_graph)
        result = _zeros_where_missing(first, xs, strict, _output_unreached)
        if through_gradient:
            second = _pull_back(result, xs, vs, create_graph, retain_graph=None)
            result = _zeros_where_missing(second, xs, strict, _gradient_unreached)
    ys = _released(ys, create_graph)
    value = ys[0] if through_gradient else _as_given(ys, outputs_seq)
    return value, _as_given(_released(result, create_graph), inputs_seq)


def vjp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: the vector-Jacobian product of ``func`` at ``inputs``."""
    return _reverse_product(func, inputs, v, create_graph, strict, "vjp", through_gradient=False)


def vhp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)`` for a ``func`` with one one-element output."""
    return _reverse_product(func, inputs, v, create_graph, strict, "vhp", through_gradient=True)


def hvp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), H v)`` for a ``func`` with one one-element output. Computed as
    ``v^T H``, which equals ``H v`` whenever the Hessian is symmetric (``func`` twice
    continuously differentiable)."""
    return _reverse_product(func, inputs, v, create_graph, strict, "hvp", through_gradient=True)


def jvp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product, from two reverse sweeps."""
    from chainrule._creation import zeros_like
    from chainrule.autograd import grad_mode

    with grad_mode.enable_grad():
        xs, inputs_seq = _tensors(inputs, "inputs", "jvp")
        xs = _sweep_inputs(xs, create_graph)
        vs = _seeds(v, xs, "jvp", _V_NEEDS_SCALAR_INPUT)
        ys, outputs_seq = _tensors(func(*xs), _OUTPUTS, "jvp")
        # J^T u as a differentiable function of the dummy cotangents u; its value is unused.
        us = tuple(zeros_like(y).requires_grad_(True) for y in ys)
        jt_u = _pull_back(ys, xs, us, create_graph=True)
        j_v = _pull_back(jt_u, us, vs, create_graph, retain_graph=None)
        j_v = _zeros_where_missing(j_v, ys, strict, _gradient_unreached)
    return (
        _as_given(_released(ys, create_graph), outputs_seq),
        _as_given(_released(j_v, create_graph), outputs_seq),
    )


def _jacobian_blocks(
    index: int, y: Any, xs: tuple[Any, ...], create_graph: bool, strict: bool
) -> tuple[Any, ...]:
    """``d y / d x`` for every input ``x``, each of shape ``y.shape + x.shape``: one reverse
    sweep per element of ``y`` gives one row of every block."""
    from chainrule._creation import zeros
    from chainrule._dispatch import ops as _ops  # stack is an op: above autograd

    def unreached(j: int) -> str:
        return (
            f"Output {index} of the user-provided function is independent of input {j}. "
            "This is not allowed in strict mode."
        )

    flat = y.reshape(-1)
    rows: list[list[Any]] = [[] for _ in xs]
    for k in range(flat.numel()):
        grads = _pull_back((flat[k],), xs, None, create_graph)
        for j, g in enumerate(_zeros_where_missing(grads, xs, strict, unreached)):
            rows[j].append(g)
    blocks = []
    for x, row in zip(xs, rows):
        shape = tuple(y.shape) + tuple(x.shape)
        block = _ops.stack(row, 0).reshape(shape) if row else zeros(shape, dtype=x.dtype)
        blocks.append(block)
    return _released(blocks, create_graph)


def jacobian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of ``func`` at ``inputs``: for output ``i`` and input ``j``, a tensor of
    shape ``outputs[i].shape + inputs[j].shape``, nested as outputs-then-inputs where the
    caller gave tuples (as in PyTorch)."""
    from chainrule.autograd import grad_mode

    if strategy != "reverse-mode":
        raise NotImplementedError("chainrule's jacobian supports strategy='reverse-mode' only")
    with grad_mode.enable_grad():
        xs, inputs_seq = _tensors(inputs, "inputs", "jacobian")
        xs = _sweep_inputs(xs, create_graph)
        ys, outputs_seq = _tensors(func(*xs), _OUTPUTS, "jacobian")
        per_output = tuple(
            _as_given(_jacobian_blocks(i, y, xs, create_graph, strict), inputs_seq)
            for i, y in enumerate(ys)
        )
    return _as_given(per_output, outputs_seq)


def hessian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of ``func`` (one one-element output) at ``inputs``: the Jacobian of its
    gradient, nested input-by-input where the caller gave a tuple (as in PyTorch)."""
    xs, inputs_seq = _tensors(inputs, "inputs", "hessian")

    def as_scalar(*args: Any) -> Any:
        ys, _ = _tensors(func(*args), _OUTPUTS, "hessian")
        _require_one_element(ys, "hessian")
        return ys[0].squeeze()

    def gradient(*args: Any) -> Any:
        # A tuple of per-input gradients, kept differentiable for the outer Jacobian.
        return jacobian(as_scalar, args, create_graph=True, strict=strict)

    blocks = jacobian(gradient, xs, create_graph=create_graph, strict=strict)
    return _as_given(tuple(_as_given(row, inputs_seq) for row in blocks), inputs_seq)
