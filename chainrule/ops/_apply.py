"""Dispatch and promotion: ``apply_op`` and its fast entry points ``apply_unary`` /
``apply_binary``, PyTorch's type promotion, the unrecorded result, view marking, and the ``ns``
functions (Note [ns] in ops/_opdef.py), which run an op on arrays or, given a Tensor, through
``apply_op``.

``apply_op`` is the hot path of every forward: it unwraps Tensors, runs the forward on arrays
and, only when some differentiable input requires grad in grad mode, builds the node
(``op.record``, ops/_record.py and ops/_record_gen.py). Keep it lean (ARCHITECTURE.md 5a).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable
from weakref import ref as _weakref

import numpy as np

from chainrule import _dtype, _kinds
from chainrule._scalar_convert import int_fits as _int_fits
from chainrule._scalar_convert import int_operand
from chainrule._tensor import Tensor, _mark_inference, _new_tensor
from chainrule.autograd import grad_mode
from chainrule.autograd.function import mark_fn_view
from chainrule.autograd.graph import (
    VersionCounter,
)
from chainrule.backends import as_array, backend_of
from chainrule.ops._ext_dtypes import ext_forward

if TYPE_CHECKING:
    from chainrule.ops._opdef import OpDef

__all__ = ["apply_op", "apply_unary", "apply_binary"]


_state = grad_mode._state
_ndarray = np.ndarray
_asarray = as_array
_new = object.__new__
_np = np


def _make_ns_fn(op: OpDef) -> Callable[..., Any]:
    fwd = op.forward
    aux = op.aux

    def f(*args: Any, **params: Any) -> Any:
        for a in args:
            if isinstance(a, Tensor):
                return apply_op(op, args, params)
        a = args[0]
        if type(a) is _ndarray:  # as in _apply_general
            if a.dtype.num >= 256:  # bfloat16, float8 (user-defined dtypes): in float32
                out = ext_forward(op, _np, list(args), params)
                return out[0] if aux else out
            npf = op.np_forward
            if (
                npf is not None
                and not params
                and len(args) == 1
                and _CATEGORY[a.dtype.num] <= op.max_cat
            ):
                return npf(a)
            xp = _np
        else:
            xp = backend_of(a).xp
        out = fwd(xp, *args, **params)
        return out[0] if aux else out

    f.__name__ = op.name
    return f


def _promote(op: OpDef, inputs: tuple[Any, ...], arrays: list[Any]) -> None:
    """Cast the arrays in ``arrays`` to the op's computation dtype, by PyTorch's rules.

    Python scalars stay Python scalars: NumPy treats them as weakly typed, as PyTorch does.
    """
    rt = _dtype.result_type(*inputs)
    if op.promote == "float" and rt._category < 2:
        rt = _dtype.get_default_dtype()
    target = rt.np
    for i, a in enumerate(arrays):
        if isinstance(inputs[i], Tensor) and a.dtype != target:
            arrays[i] = a.astype(target)


# Category of an array's dtype by its dtype number (Note [element kinds] in _kinds.py): 0 bool,
# 1 integer, 2 floating, 3 complex; -1 for the ml_dtypes formats and uint16/32/64, which every
# fast path below leaves to _apply_general (it hands them to ops/_ext_dtypes.py).
_CATEGORY = _kinds.CATEGORY_BY_NUM

# Note [scalar operands]
#     NumPy takes a fast path for two arrays and a slow one (about twice the time on small
#     arrays) for an array and a Python number, which it must first type by NEP 50's weak rule:
#     the number is cast to the array's dtype. The plain arithmetic forwards (``scalar_array``
#     ops: add, sub, mul, div and their reflections) therefore get a 0-d array of the tensor's
#     floating dtype holding the number cast the same way, shared through a small cache. Zeros
#     (0.0 == -0.0 would share a key) and NaN (never equal to its key) are passed as they are.
#     The node saves that 0-d array in place of the number (their VJPs only multiply or divide
#     g by it, which gives the same values); under create_graph, OpNode.apply hands the VJP
#     the number back (``.item()``: the same value once cast to the tensor's dtype), since a
#     Tensor op would not take a raw array as a weak scalar.
# Note [int operands of binary ops] (_scalar_convert.py): the ints a floating tensor takes
# unconverted
_I64, _U64 = -(2**63), 2**64 - 1
_SCALAR_ARRAY_OPS = frozenset({"add", "sub", "rsub", "mul", "div", "rdiv"})
_SCALARS: dict[tuple[Any, Any], Any] = {}


def _scalar_array(key: tuple[Any, Any]) -> Any:
    if len(_SCALARS) >= 1024:
        _SCALARS.clear()
    a = np.array(key[0], dtype=key[1])
    a.flags.writeable = False
    _SCALARS[key] = a
    return a


# complexity: the fast paths for one Tensor and for a Tensor with a Tensor or a number are
# inlined cases of one frame, the forward hot path (ARCHITECTURE 5a); a helper would cost a call.
def apply_op(op: OpDef, inputs: tuple[Any, ...], params: dict[str, Any] | None = None) -> Any:  # noqa: C901
    """Run ``op`` on ``inputs`` (Tensors, Python scalars or None) with keyword ``params``.

    The common shapes of call (one Tensor; a Tensor and a Tensor of the same dtype; a Tensor
    and a Python number that does not change its dtype) skip the general argument walk of
    ``_prepare``; the results are the same.
    """
    n = len(inputs)
    a = inputs[0]
    req = None  # set when a fast path ran the forward
    if n <= 2 and isinstance(a, Tensor):
        da = a._data
        if type(da) is _ndarray:
            cat = _CATEGORY[da.dtype.num]
            promote = op.promote
            if n == 1:
                if cat >= 2 or (cat >= 0 and promote != "float"):
                    out = op.forward(_np, da, **params) if params else op.forward(_np, da)
                    req = a._requires_grad
            else:
                b = inputs[1]
                tb = type(b)
                if isinstance(b, Tensor):
                    db = b._data
                    if (
                        cat >= 0
                        and type(db) is _ndarray
                        and (
                            promote is None
                            or (
                                (db.dtype is da.dtype or db.dtype == da.dtype)
                                and (promote == "same" or cat >= 2)
                            )
                        )
                    ):
                        out = (
                            op.forward(_np, da, db, **params) if params else op.forward(_np, da, db)
                        )
                        req = a._requires_grad or b._requires_grad
                elif (tb is float and (cat >= 2 or (promote is None and cat >= 0))) or (
                    tb is int
                    and (cat >= (2 if promote == "float" else 1) or (promote is None and cat >= 0))
                    and (
                        0 <= b <= 127 or (cat >= 2 and _I64 <= b <= _U64) or _int_fits(b, da.dtype)
                    )
                ):
                    if op.scalar_array and cat >= 2 and b == b and b != 0:
                        # See Note [scalar operands]: the 0-d array is also what the node
                        # saves, so that the VJP's products take NumPy's fast path too.
                        k = (b, da.dtype)
                        b = _SCALARS.get(k)
                        if b is None:
                            b = _scalar_array(k)
                        inputs = (a, b)
                    out = op.forward(_np, da, b, **params) if params else op.forward(_np, da, b)
                    req = a._requires_grad
    if req is None:
        out, req = _apply_general(op, inputs, params)
        if req is _MOVED:  # Note [0-d CPU tensors in a CUDA op]
            inputs = out
            out, req = _apply_general(op, inputs, params)
    aux = None
    if op.aux:
        out, aux = out
    if req and op.differentiable and _state.enabled:
        return op.record(op, inputs, out, params, aux)
    if op.num_outputs == 1:
        if type(out) is not _ndarray:
            out = _asarray(out)
        t = _new(Tensor)
        t._data = out
        t._requires_grad = False
        t.grad_fn = None
        t._vc = None
        if op.view:
            _mark_view(t, inputs[0], op, params)
        if _state.inference:
            _mark_inference(t)
        return t
    res = []
    inf = _state.inference
    for o in out:
        if type(o) is not _ndarray:
            o = _asarray(o)
        t = _new_tensor(o)
        if inf:
            _mark_inference(t)
        res.append(t)
    return tuple(res)


# Note [unary and binary entry points]
#     The public functions of ops declared with unary() and binary() (and so the Tensor
#     operators bound to them) enter through apply_unary / apply_binary: apply_op's fast paths
#     for one Tensor, and for a Tensor with a Tensor or a Python number, written for a known
#     arity with no parameters, so that the tuple of inputs, the arity tests and the
#     parameter handling are skipped. Any other call goes to apply_op, as does an op with aux
#     outputs, several outputs or a view.


def _out_tensor(out: Any) -> Tensor:
    """The result of an unrecorded op, as apply_op makes it."""
    if type(out) is not _ndarray:
        out = _asarray(out)
    t = _new(Tensor)
    t._data = out
    t._requires_grad = False
    t.grad_fn = None
    t._vc = None
    if _state.inference:
        _mark_inference(t)
    return t


def apply_unary(op: OpDef, a: Any) -> Any:
    """``apply_op(op, (a,))`` (Note [unary and binary entry points])."""
    if isinstance(a, Tensor):
        da = a._data
        if type(da) is _ndarray:
            cat = _CATEGORY[da.dtype.num]
            if (cat >= 2 or (cat >= 0 and op.promote != "float")) and cat <= op.max_cat:
                f = op.np_forward
                out = f(da) if f is not None else op.forward(_np, da)
                if a._requires_grad and op.differentiable and _state.enabled:
                    return op.record(op, (a,), out, None, None)
                return _out_tensor(out)
    return apply_op(op, (a,))


def apply_binary(op: OpDef, a: Any, b: Any) -> Any:
    """``apply_op(op, (a, b))`` (Note [unary and binary entry points])."""
    if isinstance(a, Tensor):
        da = a._data
        if type(da) is _ndarray:
            tb = type(b)
            promote = op.promote
            cat = _CATEGORY[da.dtype.num]
            # (an int outside 0..127 that NumPy would not take as PyTorch does goes to
            # apply_op's general path: Note [int operands of binary ops])
            if tb is float or (
                tb is int
                and (0 <= b <= 127 or (cat >= 2 and _I64 <= b <= _U64) or _int_fits(b, da.dtype))
            ):
                if (
                    cat >= 2
                    or (
                        cat >= 0
                        and (promote is None or (tb is int and cat >= 1 and promote != "float"))
                    )
                ) and cat <= op.max_cat:
                    if op.scalar_array and cat >= 2 and b == b and b != 0:
                        k = (b, da.dtype)  # Note [scalar operands]
                        b = _SCALARS.get(k)
                        if b is None:
                            b = _scalar_array(k)
                    f = op.np_forward
                    out = f(da, b) if f is not None else op.forward(_np, da, b)
                    if a._requires_grad and op.differentiable and _state.enabled:
                        return op.record(op, (a, b), out, None, None)
                    return _out_tensor(out)
            elif isinstance(b, Tensor):
                db = b._data
                if (
                    type(db) is _ndarray
                    and 0 <= cat <= op.max_cat
                    and _CATEGORY.get(db.dtype.num, -1) <= op.max_cat
                    and (
                        promote is None
                        or (
                            (db.dtype is da.dtype or db.dtype == da.dtype)
                            and (promote == "same" or cat >= 2)
                        )
                    )
                ):
                    f = op.np_forward
                    try:
                        out = f(da, db) if f is not None else op.forward(_np, da, db)
                    except ValueError:  # shapes that do not broadcast: the forward's error
                        out = op.forward(_np, da, db)
                    if (
                        (a._requires_grad or b._requires_grad)
                        and op.differentiable
                        and _state.enabled
                    ):
                        return op.record(op, (a, b), out, None, None)
                    return _out_tensor(out)
    return apply_op(op, (a, b))


# complexity: the argument walk of every op outside the fast paths, in one frame (its one
# branch per input kind); GPU inputs leave it for _apply_on_device.
def _apply_general(  # noqa: C901
    op: OpDef, inputs: tuple[Any, ...], params: dict[str, Any] | None
) -> tuple[Any, Any]:
    """Unwrap ``inputs``, promote them by PyTorch's rules and run the forward; returns the
    forward's result and whether some Tensor input requires grad (or, for 0-d CPU Tensors
    among GPU ones, the inputs to run again and ``_MOVED``)."""
    arrays = []
    req = False
    first = None  # the first Tensor's array: it picks the backend and the dtype to compare with
    fdt = None
    mixed = False
    ext = False
    device = False  # some Tensor's array is not a NumPy array
    scalar_cat = -1
    wide = False  # some int operand outside 0..127 (Note [int operands of binary ops])
    for x in inputs:
        if isinstance(x, Tensor):
            d = x._data
            if type(d) is not _ndarray:
                device = True
            arrays.append(d)
            if x._requires_grad:
                req = True
            if _CATEGORY.get(d.dtype.num, 0) < 0:
                ext = True
            if first is None:
                first = d
                fdt = d.dtype
            elif d.dtype is not fdt and d.dtype != fdt:
                mixed = True
        else:
            if x is not None and type(x) is not bool:
                if isinstance(x, np.generic):
                    x = x.item()  # a NumPy scalar would be strongly typed; make it weak
                c = 3 if isinstance(x, complex) else 2 if isinstance(x, float) else 1
                if c == 1 and type(x) is int and not 0 <= x <= 127:
                    wide = True
                if c > scalar_cat:
                    scalar_cat = c
            arrays.append(x)
    if first is None:
        raise TypeError(
            f"{op.name}(): expected at least one Tensor argument, got "
            + ", ".join(type(x).__name__ for x in inputs)
        )
    if device:
        for x, a in zip(inputs, arrays):
            if isinstance(a, _ndarray) and isinstance(x, Tensor):  # Tracers: CPU too
                moved = _to_gpu_0d(inputs)
                if moved is not None:
                    return moved, _MOVED
                break
    promote = op.promote
    if promote is not None:
        cat = _kinds.category(fdt)
        if mixed or scalar_cat > cat or (promote == "float" and cat < 2):
            if device:  # the casts run on the inputs' GPU too
                with backend_of(first).array_device(first):
                    _promote(op, inputs, arrays)
            else:
                _promote(op, inputs, arrays)
    if wide and fdt is not None:
        # (PyTorch's rdiv is reciprocal(x) * n: no bool-with-uint64 promotion to refuse)
        _convert_ints(inputs, arrays, "f" if op.name == "rdiv" else fdt.kind)
    if device:
        return _apply_on_device(op, inputs, arrays, params, ext), req
    if ext:
        return ext_forward(op, _np, arrays, params), req
    out = op.forward(_np, *arrays, **params) if params else op.forward(_np, *arrays)
    return out, req


def _convert_ints(inputs: tuple[Any, ...], arrays: list[Any], kind: str) -> None:
    """Replace the Python int operands in ``arrays`` by the numbers PyTorch computes with, in
    the dtype of the (promoted) Tensor operands (Note [int operands of binary ops])."""
    dt = next(a.dtype for x, a in zip(inputs, arrays) if isinstance(x, Tensor))
    for i, x in enumerate(arrays):
        if type(x) is int:
            arrays[i] = int_operand(x, dt, kind)


_MOVED = object()  # _apply_general's answer: run again on these inputs
TO_DEVICE: list[Any] = [None]  # the differentiable copy op (ops/shape/conversion.py sets it)


def _to_gpu_0d(inputs: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """``inputs`` with each CPU Tensor (0-d ones only: PyTorch's mixed-device error
    otherwise) replaced by its differentiable copy on the GPU of the others (Note [0-d CPU
    tensors in a CUDA op]); None when no input is on a GPU (NumPy subclasses, such as a
    compile capture's Tracers, are CPU arrays)."""
    to_device = TO_DEVICE[0]  # ops/shape/conversion.py's, set when it is imported

    tensors = [x._data for x in inputs if isinstance(x, Tensor)]
    be = backend_of(*tensors)  # PyTorch's error for a CPU tensor that is not 0-d
    if be.device == "cpu":
        return None
    idx = be.device_index(next(d for d in tensors if not isinstance(d, _ndarray)))
    return tuple(
        to_device(x, be, idx) if isinstance(x, Tensor) and isinstance(x._data, _ndarray) else x
        for x in inputs
    )


# Note [0-d CPU tensors in a CUDA op]
#     PyTorch lets a 0-d CPU tensor be an operand of a CUDA op (as a scalar), and its engine
#     copies the gradient that comes back to the tensor's device (validate_outputs). Here
#     the 0-d tensor is replaced, before the op runs, by its copy on the op's GPU through the
#     differentiable to_device op (ToCopyBackward0): the op saves and reads GPU arrays only,
#     and the copy's VJP brings the gradient back to the CPU. The graph has that one more
#     node (grad_fn.next_functions names ToCopyBackward0 where PyTorch's names the leaf).


def _apply_on_device(
    op: OpDef, inputs: tuple[Any, ...], arrays: list[Any], params: dict[str, Any] | None, ext: bool
) -> Any:
    """The forward of Tensor inputs on a GPU, run with their GPU current (Note [the inputs'
    device is current]): PyTorch's mixed-device error unless they share one device (0-d CPU
    Tensors were copied to it first, Note [0-d CPU tensors in a CUDA op])."""
    tensors = [a for x, a in zip(inputs, arrays) if isinstance(x, Tensor)]
    be = backend_of(*tensors)
    dev = tensors[0]
    xp = be.xp
    with be.array_device(dev):
        if ext:
            return ext_forward(op, xp, arrays, params)
        return op.forward(xp, *arrays, **params) if params else op.forward(xp, *arrays)


# Note [the inputs' device is current]
#     A CuPy kernel runs on the current GPU, not on its operands' (CuPy raises for an operand
#     on another GPU unless peer access is on, and then still allocates the result on the
#     current one). PyTorch runs an op on its inputs' device, whatever torch.cuda.current_device
#     says; so the forward of a GPU op runs under Backend.array_device(first GPU input), which
#     switches the current GPU only when more than one is visible and the input is not on the
#     current one. The backward of such an op is made of Tensor ops, each dispatched here too.
#     The CPU path never reaches this function (its fast paths and the `device` test above).


def _mark_view(out: Tensor, base: Tensor, op: OpDef, params: Any) -> None:
    """Make ``out`` a view of ``base``'s root: share its version counter and remember the chain
    of view ops from the root, which in-place ops on the view replay (see ops/views.py)."""
    vc = base._vc
    if vc is None:
        vc = base._vc = VersionCounter()
    out._vc = vc
    d = out.__dict__
    root = base._base
    if root is None:
        root = d["_base"] = base
        d["_view_chain"] = ((op, params),)
    else:
        d["_base"] = root
        d["_view_chain"] = base._view_chain + ((op, params),)
    if base._is_inference:
        d["_is_inference"] = True
    if base._fn_view is not None:  # Note [custom Function views] in autograd/function.py
        mark_fn_view(out, base._fn_view)
    # The root lists its views weakly, so that an in-place change through one of them (or to
    # the root) can give the others a history replayed from the root's new one (see
    # ops/views.py, Note [stale views]).
    reg = root.__dict__.get("_views")
    if reg is None:
        reg = root.__dict__["_views"] = _ViewRegistry()
    reg.add(out)


class _ViewRegistry:
    """Weak references to the live views of one root tensor, pruned as they die."""

    __slots__ = ("refs", "limit")

    def __init__(self) -> None:
        self.refs: list[Any] = []
        self.limit = 16

    def add(self, view: Tensor) -> None:
        refs = self.refs
        refs.append(_weakref(view))
        if len(refs) > self.limit:
            refs[:] = [r for r in refs if r() is not None]
            self.limit = max(16, 2 * len(refs))

    def live(self) -> list[Tensor]:
        out = []
        for r in self.refs:
            v = r()
            if v is not None:
                out.append(v)
        return out


_LEGACY = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
    "bfloat16": "BFloat16",
}


def _legacy_name(d: Any) -> str:
    return _LEGACY.get(np.dtype(d).name, str(d))
