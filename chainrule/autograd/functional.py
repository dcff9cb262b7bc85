"""Higher-level differentiation of functions: ``vjp``, ``jvp``, ``jacobian``, ``hessian``,
``hvp``, ``vhp``, with PyTorch's signatures and return structures.

Everything is built from reverse mode (``autograd.grad``). ``jvp`` uses the double-vjp trick:
with ``u`` a dummy cotangent, ``g(u) = J^T u`` is linear in ``u``, so the vjp of ``g`` with
``v`` is ``J v``. ``vectorize`` is accepted and ignored (Jacobians are built row by row);
only ``strategy="reverse-mode"`` is supported.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(x: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple[Any, ...]]:
    from chainrule._tensor import Tensor

    is_tuple = isinstance(x, (tuple, list))
    xs = tuple(x) if is_tuple else (x,)
    for i, e in enumerate(xs):
        if not isinstance(e, Tensor):
            if is_tuple:
                raise TypeError(
                    f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                    f"Tensors but the value at index {i} has type {type(e)}."
                )
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but the given {arg_name} has type {type(e)}."
            )
    return is_tuple, xs


def _tuple_postprocess(res: Any, to_unpack: Any) -> Any:
    if isinstance(to_unpack, tuple):
        assert len(to_unpack) == 2
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    else:
        if not to_unpack:
            res = res[0]
    return res


def _prep_inputs(inputs: tuple[Any, ...], create_graph: bool) -> tuple[Any, ...]:
    # With create_graph, keep the link to the caller's graph (a view stands for the input);
    # otherwise differentiate with respect to fresh leaves.
    res = []
    for x in inputs:
        if create_graph and x.requires_grad:
            res.append(x.view_as(x))
        else:
            res.append(x.detach().requires_grad_(x.dtype.is_floating_point))
    return tuple(res)


def _post(xs: tuple[Any, ...], create_graph: bool) -> tuple[Any, ...]:
    return tuple(x if (create_graph or x is None) else x.detach() for x in xs)


def _grad(outs: Any, ins: Any, gos: Any, create_graph: bool, retain_graph: bool = True) -> Any:
    from chainrule import autograd

    outs = [o for o in outs]
    keep = [i for i, o in enumerate(outs) if o.requires_grad]
    if not keep:
        return (None,) * len(ins)
    return autograd.grad(
        [outs[i] for i in keep],
        ins,
        [gos[i] for i in keep] if gos is not None else None,
        retain_graph=retain_graph,
        create_graph=create_graph,
        allow_unused=True,
    )


def _fill_zeros(grads: tuple[Any, ...], refs: tuple[Any, ...], strict: bool, what: str) -> Any:
    from chainrule import zeros_like

    res = []
    for i, (g, r) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(
                    f"The output of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode."
                    if what == "in"
                    else f"The gradient with respect to input {i} is independent of the inputs "
                    "of the user-provided function. This is not allowed in strict mode."
                )
            g = zeros_like(r)
        res.append(g)
    return tuple(res)


def _check_v(v: tuple[Any, ...], refs: tuple[Any, ...], fn: str, what: str) -> None:
    if len(v) != len(refs):
        raise RuntimeError(
            f"v is a tuple of invalid length: should be {len(refs)} but got {len(v)}."
        )
    for i, (a, b) in enumerate(zip(v, refs)):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(
                f"Entry {i} in v has invalid size: should be {b.shape} but got {a.shape}."
            )


def vjp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: the vector-Jacobian product of ``func`` at ``inputs``."""
    from chainrule.autograd import grad_mode

    with grad_mode.enable_grad():
        is_in_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
        ins = _prep_inputs(ins, create_graph)
        outputs = func(*ins)
        is_out_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        if v is not None:
            _, vs = _as_tuple(v, "v", "vjp")
            _check_v(vs, outs, "vjp", "outputs")
        else:
            if len(outs) != 1 or outs[0].numel() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the user-provided function returns a "
                    "single Tensor with a single element."
                )
            vs = None
        grads = _grad(outs, ins, vs, create_graph)
        grads = _fill_zeros(grads, ins, strict, "in")
    outs_p = _post(outs, create_graph)
    return (
        _tuple_postprocess(outs_p, is_out_tuple),
        _tuple_postprocess(_post(grads, create_graph), is_in_tuple),
    )


def jvp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-vjp trick."""
    from chainrule import zeros_like
    from chainrule.autograd import grad_mode

    with grad_mode.enable_grad():
        is_in_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
        ins = _prep_inputs(ins, create_graph)
        if v is not None:
            _, vs = _as_tuple(v, "v", "jvp")
            _check_v(vs, ins, "jvp", "inputs")
        else:
            if len(ins) != 1 or ins[0].numel() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the input to the user-provided function "
                    "is a single Tensor with a single element."
                )
            vs = None
        outputs = func(*ins)
        is_out_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        us = tuple(zeros_like(o).requires_grad_(True) for o in outs)
        g = _grad(outs, ins, us, create_graph=True)
        g_used = [(gi, vi) for gi, vi in zip(g, vs if vs is not None else (None,) * len(g))
                  if gi is not None and gi.requires_grad]
        if g_used:
            from chainrule import autograd, ones_like

            gs = [gi for gi, _ in g_used]
            gv = [vi if vi is not None else ones_like(gi) for gi, vi in g_used]
            res = autograd.grad(gs, us, gv, create_graph=create_graph, allow_unused=True)
        else:
            res = (None,) * len(outs)
        res = _fill_zeros(res, outs, strict, "out")
    return (
        _tuple_postprocess(_post(outs, create_graph), is_out_tuple),
        _tuple_postprocess(_post(res, create_graph), is_out_tuple),
    )


def jacobian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of ``func`` at ``inputs``: for output ``i`` and input ``j``, a tensor of
    shape ``outputs[i].shape + inputs[j].shape`` (nested tuples as in PyTorch)."""
    from chainrule import stack, zeros
    from chainrule.autograd import grad_mode

    if strategy != "reverse-mode":
        raise NotImplementedError("chainrule's jacobian supports strategy='reverse-mode' only")
    with grad_mode.enable_grad():
        is_in_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _prep_inputs(ins, create_graph)
        outputs = func(*ins)
        is_out_tuple, outs = _as_tuple(
            outputs, "outputs of the user-provided function", "jacobian"
        )
        jac: list[tuple[Any, ...]] = []
        for out in outs:
            rows: list[list[Any]] = [[] for _ in ins]
            flat = out.reshape(-1)
            n = flat.numel()
            for k in range(n):
                if out.requires_grad:
                    gs = _grad([flat[k]], ins, None, create_graph)
                else:
                    gs = (None,) * len(ins)
                for j, (g, x) in enumerate(zip(gs, ins)):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {outs.index(out)} of the user-provided function is "
                                f"independent of input {j}. This is not allowed in strict mode."
                            )
                        g = zeros(tuple(x.shape), dtype=x.dtype)
                    rows[j].append(g)
            per_in = []
            for j, x in enumerate(ins):
                if n:
                    J = stack(rows[j], 0).reshape(tuple(out.shape) + tuple(x.shape))
                else:
                    J = zeros(tuple(out.shape) + tuple(x.shape), dtype=x.dtype)
                per_in.append(J if create_graph else J.detach())
            jac.append(tuple(per_in))
    return _tuple_postprocess(tuple(jac), (is_out_tuple, is_in_tuple))


def hessian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of the scalar function ``func`` at ``inputs`` (the Jacobian of its
    gradient); nested tuples as in PyTorch when ``inputs`` is a tuple."""
    is_in_tuple, ins = _as_tuple(inputs, "inputs", "hessian")

    def jac_func(*inp: Any) -> Any:
        def ensure_single(*a: Any) -> Any:
            out = func(*a)
            is_t, t = _as_tuple(out, "outputs of the user-provided function", "hessian")
            if len(t) != 1 or t[0].numel() != 1:
                raise RuntimeError(
                    "The function given to hessian should return a single Tensor with a single "
                    "element."
                )
            return t[0].squeeze()

        return jacobian(ensure_single, inp, create_graph=True, strict=strict)

    res = jacobian(jac_func, ins, create_graph=create_graph, strict=strict)
    return _tuple_postprocess(res, (is_in_tuple, is_in_tuple))


def vhp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)`` for a scalar ``func``."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), H v)`` for a scalar ``func`` (equal to ``vhp`` for twice
    continuously differentiable functions, whose Hessian is symmetric)."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(
    func: Callable[..., Any], inputs: Any, v: Any, create_graph: bool, strict: bool, name: str
) -> tuple[Any, Any]:
    from chainrule.autograd import grad_mode

    with grad_mode.enable_grad():
        is_in_tuple, ins = _as_tuple(inputs, "inputs", name)
        ins = _prep_inputs(ins, create_graph)
        if v is not None:
            _, vs = _as_tuple(v, "v", name)
            _check_v(vs, ins, name, "inputs")
        else:
            if len(ins) != 1 or ins[0].numel() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the input to the user-provided function "
                    "is a single Tensor with a single element."
                )
            vs = None
        outputs = func(*ins)
        _, outs = _as_tuple(outputs, "outputs of the user-provided function", name)
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError(
                f"The function given to {name} should return a single Tensor with a single "
                "element."
            )
        g = _grad(outs, ins, None, create_graph=True)
        g = _fill_zeros(g, ins, strict, "in")
        used = [(gi, vi) for gi, vi in zip(g, vs if vs is not None else (None,) * len(g))]
        from chainrule import autograd, ones_like

        gs = [gi for gi, _ in used if gi.requires_grad]
        gv = [vi if vi is not None else ones_like(gi) for gi, vi in used if gi.requires_grad]
        if gs:
            res = autograd.grad(gs, ins, gv, create_graph=create_graph, allow_unused=True)
        else:
            res = (None,) * len(ins)
        res = _fill_zeros(res, ins, strict, "grad")
    return (
        _post(outs, create_graph)[0],
        _tuple_postprocess(_post(res, create_graph), is_in_tuple),
    )
