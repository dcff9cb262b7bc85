"""One node for a function that chainrule composes of several ops but PyTorch records as one
(``AvgPool2DBackward0``, ``NativeGroupNormBackward0``...), so that a graph walk prints
PyTorch's node (Note [node classes] in chainrule/autograd/_nodes.py).

Note [composite nodes]
    ``composite(node, fn, inputs)`` runs ``fn`` (a function of Tensors, composed of
    chainrule's differentiable ops) without recording, and records one node named ``node``
    whose edges are ``inputs``; it saves the inputs. Its VJP runs ``fn`` again on the saved
    inputs with recording on and differentiates that small graph (``autograd.grad``), so the
    gradient is exactly the composed function's, and under ``create_graph`` that inner
    backward is itself recorded: higher derivatives are the composed function's too. The cost
    is one more forward of ``fn`` per backward, which PyTorch's own kernels avoid; the
    functions that use it are the pooling, resampling and normalization layers where the
    node's name is what users inspect. The ops are ``composite1`` ... ``composite3`` (by the
    number of Tensor inputs); ``name_fn`` gives the node's name from the parameters. A linear
    function (``composite_linear``: average pooling, resampling, im2col) saves nothing, as
    PyTorch's kernels: its VJP is taken at zeros of the input's shape.

    ``composite(..., reads=...)`` saves only what each gradient reads, as PyTorch's kernels
    (Note [saved only when needed] in chainrule/ops/_opdef.py): ``"affine"``, the last input
    enters ``fn`` additively (a bias: ``fn`` is some function of the others plus a linear map
    of it), so it is never saved, and the others are saved as by ``composite``
    (``NativeGroupNormBackward0`` keeps the input and weight, not the bias); ``"bilinear"``,
    ``fn`` is linear in each of its two inputs, so each is saved only for the other's gradient
    (the per-sample weights of an embedding bag); ``"trilinear"``, the same for three inputs
    (``bilinear``'s ``TrilinearBackward0``). The VJP recomputes ``fn`` with zeros of its
    shape in place of an input not saved: the gradients that are needed do not read it.
"""

from __future__ import annotations

from typing import Any, Callable

from chainrule._tensor import Tensor
from chainrule.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from chainrule.ops._registry import OpDef, apply_op, defop

__all__: list[str] = []


def _as_tensor(v: Any) -> Tensor:
    return v if isinstance(v, Tensor) else Tensor._wrap(v)


def _forward(fn: Callable[..., Any], arrays: tuple[Any, ...], keep: Any) -> Any:
    with no_grad():
        out = fn(*(Tensor._wrap(a) for a in arrays))
    if isinstance(out, tuple):  # (the output, values that get no gradient: argmax indices)
        keep.append(out[1:])
        out = out[0]
    return out._data


def _joint_vjp(ctx: Any, g: Any, n: int) -> tuple[Any, ...]:
    cg = is_grad_enabled()  # the engine runs a VJP under create_graph's mode
    need = ctx.needs_input_grad
    saved = [getattr(ctx, f"x{i}", None) for i in range(n)]
    from chainrule.autograd import grad as _grad

    if any(v is None for v in saved):  # not saved: no needed gradient reads it (reads=)
        from chainrule.backends import backend_of

        xp = backend_of(g._data if isinstance(g, Tensor) else g).xp
        dt = (g._data if isinstance(g, Tensor) else g).dtype
        shapes = ctx.shapes  # the inputs' shapes, a parameter of the reads= ops
        saved = [xp.zeros(shapes[i], dtype=dt) if v is None else v for i, v in enumerate(saved)]

    with enable_grad():
        xs = []
        for v, nd in zip(saved, need):
            t = _as_tensor(v)
            if not cg or not t.requires_grad:
                t = t.detach()
                if nd:
                    t.requires_grad_(True)
            xs.append(t)
        out = ctx.fn(*xs)
        if isinstance(out, tuple):
            out = out[0]
        wrt = [x for x, nd in zip(xs, need) if nd]
        got = iter(_grad(out, wrt, _as_tensor(g), create_graph=cg, allow_unused=True))
    res: list[Any] = []
    for nd in need:
        r = next(got) if nd else None
        res.append(r if r is None or cg else r._data)
    return tuple(res)


def _name(p: dict[str, Any]) -> str:
    return p["node"]


@defop(name="composite1", saves=("x0",), promote=None, name_fn=_name)
def _composite1(xp: Any, x0: Any, *, node: str, fn: Callable[..., Any], keep: Any) -> Any:
    """fn(x0), recorded as one node named ``node`` (Note [composite nodes])."""
    return _forward(fn, (x0,), keep)


@defop(name="composite2", saves=("x0", "x1"), promote=None, name_fn=_name)
def _composite2(xp: Any, x0: Any, x1: Any, *, node: str, fn: Callable[..., Any], keep: Any) -> Any:
    """fn(x0, x1), recorded as one node named ``node`` (Note [composite nodes])."""
    return _forward(fn, (x0, x1), keep)


@defop(name="composite3", saves=("x0", "x1", "x2"), promote=None, name_fn=_name)
def _composite3(
    xp: Any, x0: Any, x1: Any, x2: Any, *, node: str, fn: Callable[..., Any], keep: Any
) -> Any:
    """fn(x0, x1, x2), recorded as one node named ``node`` (Note [composite nodes])."""
    return _forward(fn, (x0, x1, x2), keep)


@defop(name="composite_linear", promote=None, name_fn=_name)
def _composite_linear(xp: Any, x0: Any, *, node: str, fn: Callable[..., Any], keep: Any) -> Any:
    """fn(x0) for a linear ``fn`` (pooling by averages, resampling, im2col), recorded as one
    node named ``node`` that saves nothing, as PyTorch's (Note [composite nodes])."""
    return _forward(fn, (x0,), keep)


@_composite_linear.vjp
def _composite_linear_vjp(ctx: Any, g: Any) -> tuple[Any, ...]:
    """A linear map's VJP does not depend on where it is taken: fn's, at zeros."""
    from chainrule.autograd import grad as _grad
    from chainrule.backends import backend_of

    cg = is_grad_enabled()
    gt = _as_tensor(g)
    xp = backend_of(gt._data).xp
    with enable_grad():
        z = Tensor._wrap(xp.zeros(ctx.input_shapes[0], dtype=gt._data.dtype))
        z.requires_grad_(True)
        out = ctx.fn(z)
        if isinstance(out, tuple):
            out = out[0]
        (r,) = _grad(out, [z], gt, create_graph=cg, allow_unused=True)
    return (r if r is None or cg else r._data,)


@defop(name="composite_affine2", saves={"x0": "x0"}, promote=None, name_fn=_name)
def _composite_affine2(
    xp: Any, x0: Any, x1: Any, *, node: str, fn: Callable[..., Any], keep: Any, shapes: Any
) -> Any:
    """fn(x0, x1), additive in x1 (not saved), as one node (Note [composite nodes])."""
    return _forward(fn, (x0, x1), keep)


@defop(
    name="composite_affine3",
    saves={"x0": ("x0", "x1"), "x1": "x0"},
    promote=None,
    name_fn=_name,
)
def _composite_affine3(
    xp: Any, x0: Any, x1: Any, x2: Any, *, node: str, fn: Callable[..., Any], keep: Any, shapes: Any
) -> Any:
    """fn(x0, x1, x2), additive in x2 (not saved), as one node (Note [composite nodes])."""
    return _forward(fn, (x0, x1, x2), keep)


@defop(name="composite_bilinear2", saves={"x0": "x1", "x1": "x0"}, promote=None, name_fn=_name)
def _composite_bilinear2(
    xp: Any, x0: Any, x1: Any, *, node: str, fn: Callable[..., Any], keep: Any, shapes: Any
) -> Any:
    """fn(x0, x1), linear in each, as one node saving each input only for the other's
    gradient (Note [composite nodes])."""
    return _forward(fn, (x0, x1), keep)


@defop(
    name="composite_trilinear3",
    saves={"x0": ("x1", "x2"), "x1": ("x0", "x2"), "x2": ("x0", "x1")},
    promote=None,
    name_fn=_name,
)
def _composite_trilinear3(
    xp: Any, x0: Any, x1: Any, x2: Any, *, node: str, fn: Callable[..., Any], keep: Any, shapes: Any
) -> Any:
    """fn(x0, x1, x2), linear in each, as one node saving each input only for the others'
    gradients (``TrilinearBackward0``; Note [composite nodes])."""
    return _forward(fn, (x0, x1, x2), keep)


_OPS: dict[int, OpDef] = {1: _composite1, 2: _composite2, 3: _composite3}
_READS: dict[tuple[str, int], OpDef] = {
    ("affine", 2): _composite_affine2,
    ("affine", 3): _composite_affine3,
    ("bilinear", 2): _composite_bilinear2,
    ("trilinear", 3): _composite_trilinear3,
}
for _n, _op in [*_OPS.items(), *((k[1], v) for k, v in _READS.items())]:
    _op.vjp(lambda ctx, g, _n=_n: _joint_vjp(ctx, g, _n))


def composite(
    node: str,
    fn: Callable[..., Any],
    inputs: tuple[Any, ...],
    linear: bool = False,
    reads: str | None = None,
) -> Any:
    """``fn(*inputs)`` (1 to 3 Tensors) recorded as one node named ``node`` when a node is
    needed; without one (no input requires grad, or grad mode is off) just ``fn(*inputs)``.
    ``fn`` may return a tuple: its first element is the output, the others (indices) get no
    gradient and are returned after it, as they came. ``linear``: ``fn`` is linear in its one
    input, so the node saves nothing (its VJP is taken at zeros). ``reads``: ``"affine"`` (2 or
    3 inputs, the last one additive), ``"bilinear"`` (2 inputs) or ``"trilinear"`` (3): save
    less (Note [composite nodes])."""
    if not is_grad_enabled() or not any(getattr(t, "requires_grad", False) for t in inputs):
        return fn(*inputs)
    keep: list[Any] = []
    if reads is not None:
        op = _READS[reads, len(inputs)]
    else:
        op = _composite_linear if linear else _OPS[len(inputs)]
    params: dict[str, Any] = {"node": node, "fn": fn, "keep": keep}
    if reads is not None:
        params["shapes"] = tuple(tuple(t.shape) for t in inputs)
    out = apply_op(op, inputs, params)
    if keep:
        return (out, *keep.pop())
    return out
