"""What a compiled call depends on: the scope it reads and the guard signature of one call.

Note [compile scope]
    A capture reads tensors from three places: the call's arguments (tensors, Python scalars,
    modules, optimizers, nested in tuples, lists and dicts), the object a compiled module or
    bound method belongs to, and the closure variables and module globals that the function's
    code names (and the code of the functions nested in it). Modules contribute their
    parameters and buffers, optimizers their parameters, and a tensor itself. These are the
    capture's external tensors: a replay reads their arrays (and their gradients' arrays) live,
    and writes back what the eager run changed (``_data``, ``.grad``, versions).

    The guard signature of a call is a tuple built from that scope: grad mode, each argument
    (a tensor's shape, dtype, ``requires_grad`` and whether it has a history; a Python
    scalar's type and value; an object's identity), each external tensor (identity, shape,
    dtype, ``requires_grad``, whether its ``.grad`` is None and its shape), each module's
    ``training`` and each optimizer's state size. Captures are kept by signature; a call
    whose signature has none captures anew.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from chainrule._tensor import Tensor
from chainrule.autograd import grad_mode
from chainrule.autograd._hooks import _hooks_any
from chainrule.autograd.anomaly import _anomaly_enabled
from chainrule.nn.modules.module import Module
from chainrule.optim.optimizer import Optimizer

__all__ = ["Scope", "discover", "signature", "structure", "hooks_reason"]

_state = grad_mode._state
_MISSING = object()


class Scope:
    """The objects one call reads: argument leaves, external tensors, modules, optimizers."""

    __slots__ = ("tensors", "n_args", "modules", "optimizers", "leaves", "scalars")

    def __init__(self) -> None:
        self.tensors: list[Tensor] = []  # argument tensors first, then the others
        self.n_args = 0
        self.modules: list[Module] = []
        self.optimizers: list[Optimizer] = []
        self.leaves: list[Any] = []  # the flattened argument values
        self.scalars: list[Any] = []  # Python numbers and strings among the roots


_ndarray = np.ndarray


def _code_names(code: types.CodeType, out: set[str]) -> None:
    out.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, out)


_NAMES: dict[types.CodeType, tuple[str, ...]] = {}


def _global_names(code: types.CodeType) -> tuple[str, ...]:
    """The names that ``code`` and the code nested in it read, sorted (cached per code)."""
    names = _NAMES.get(code)
    if names is None:
        found: set[str] = set()
        _code_names(code, found)
        names = tuple(sorted(found))
        if len(_NAMES) > 4096:
            _NAMES.clear()
        _NAMES[code] = names
    return names


def _roots_of(fn: Any) -> list[Any]:
    roots: list[Any] = []
    if isinstance(fn, Module):
        roots.append(fn)
        fn = type(fn).forward
    self = getattr(fn, "__self__", None)
    if self is not None and not isinstance(self, types.ModuleType):
        roots.append(self)
    f = getattr(fn, "__func__", fn)
    code = getattr(f, "__code__", None)
    if code is None:
        return roots
    for cell in getattr(f, "__closure__", None) or ():
        try:
            roots.append(cell.cell_contents)
        except ValueError:  # an empty cell
            pass
    g = getattr(f, "__globals__", {})
    for n in _global_names(code):
        v = g.get(n, _MISSING)
        if v is not _MISSING:
            roots.append(v)
    return roots


def _add_tensor(scope: Scope, seen: set[int], t: Tensor) -> None:
    if id(t) not in seen:
        seen.add(id(t))
        scope.tensors.append(t)


def _tree(mod: Module, memo: set[int], out: list[Module]) -> None:
    """``mod.modules()``'s order (depth first, each module once), read from ``_modules``
    directly: no dotted names, no generators (Note [scope walk])."""
    memo.add(id(mod))
    out.append(mod)
    for m in mod._modules.values():
        if m is not None and id(m) not in memo:
            _tree(m, memo, out)


def _add_module(scope: Scope, seen: set[int], mod: Module) -> None:
    if id(mod) in seen:
        return
    seen.add(id(mod))
    tree: list[Module] = []
    _tree(mod, set(), tree)
    mods = scope.modules
    for m in tree:
        if id(m) not in seen or m is mod:
            seen.add(id(m))
            mods.append(m)
    # mod.parameters() then mod.buffers(), each tensor once (_add_tensor dedupes).
    ts = scope.tensors
    for m in tree:
        for t in m._parameters.values():
            if t is not None and id(t) not in seen:
                seen.add(id(t))
                ts.append(t)
    for m in tree:
        for t in m._buffers.values():
            if t is not None and id(t) not in seen:
                seen.add(id(t))
                ts.append(t)


# Note [scope walk]
#     Every call walks its scope (Note [compile scope]), so the walk reads the module tree's
#     dicts directly instead of through ``modules()``/``parameters()``/``buffers()``, whose
#     generators build a dotted name per module and per tensor (and record ``_param_name``):
#     about a fifth of a replayed MLP step's Python work. It visits the same objects in the
#     same order, and nothing is cached, so a submodule added or replaced, a parameter
#     reassigned or a buffer registered between two calls is seen by the next call's walk and
#     changes its signature exactly as before. tests/compile/test_compile_guards.py checks the
#     walk against ``modules()``/``parameters()``/``buffers()`` on shared and nested trees.


def _add_optimizer(scope: Scope, seen: set[int], opt: Optimizer) -> None:
    if id(opt) in seen:
        return
    seen.add(id(opt))
    scope.optimizers.append(opt)
    for group in opt.param_groups:
        for p in group["params"]:
            _add_tensor(scope, seen, p)


def _add(scope: Scope, seen: set[int], obj: Any, depth: int) -> None:
    """Add what ``obj`` contributes to the scope (Note [compile scope]); containers are
    followed ``depth`` levels down."""
    if isinstance(obj, Tensor):
        _add_tensor(scope, seen, obj)
    elif isinstance(obj, Module):
        _add_module(scope, seen, obj)
    elif isinstance(obj, Optimizer):
        _add_optimizer(scope, seen, obj)
    elif depth > 0 and type(obj) in (list, tuple, dict):
        for o in obj.values() if type(obj) is dict else obj:
            _add(scope, seen, o, depth - 1)


def _flatten(obj: Any, out: list[Any]) -> None:
    t = type(obj)
    if t is tuple or t is list:
        out.append((t, len(obj)))
        for o in obj:
            _flatten(o, out)
    elif t is dict:
        out.append((dict, tuple(obj)))
        for o in obj.values():
            _flatten(o, out)
    else:
        out.append(obj)


def discover(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Scope:
    """The scope of one call (Note [compile scope])."""
    scope = Scope()
    seen: set[int] = set()
    leaves: list[Any] = []
    _flatten(args, leaves)
    _flatten(kwargs, leaves)
    scope.leaves = leaves
    for x in leaves:
        if isinstance(x, Tensor):
            if id(x) not in seen:
                seen.add(id(x))
                scope.tensors.append(x)
    scope.n_args = len(scope.tensors)
    for x in leaves:
        if isinstance(x, (Module, Optimizer)):
            _add(scope, seen, x, 0)
    for r in _roots_of(fn):
        if r is None or type(r) in (int, float, bool, str):
            scope.scalars.append(r)  # baked into the program: guarded
        else:
            _add(scope, seen, r, 2)
    return scope


def _tensor_sig(t: Tensor) -> tuple[Any, ...]:
    d = t._data
    g = t._grad
    gs = None if g is None else (g._data.shape, g._data.dtype.str, g._requires_grad)
    # The device guard: a CUDA array's dtype entry also names its GPU (cpu <-> cuda:i).
    dt = d.dtype.str if type(d) is _ndarray else (d.dtype.str, type(d), _gpu(d))
    return (type(t), d.shape, dt, t._requires_grad, t.grad_fn is None, gs)


def _gpu(d: Any) -> Any:
    dev = getattr(d, "device", None)
    return getattr(dev, "id", None)


def signature(scope: Scope) -> tuple[Any, ...]:
    """The guard signature of a call (Note [compile scope])."""
    arg: list[Any] = []
    for x in scope.leaves:
        if isinstance(x, Tensor):
            arg.append(_tensor_sig(x))
        elif x is None or type(x) in (int, float, bool, str, complex) or type(x) is tuple:
            arg.append((type(x), x))  # a (type, length) marker of a tuple or list is a tuple
        else:
            arg.append(("id", id(x)))
    ext = tuple((id(t),) + _tensor_sig(t) for t in scope.tensors[scope.n_args :])
    return (
        _state.enabled,
        _state.inference,
        tuple(arg),
        ext,
        tuple(m.training for m in scope.modules),
        tuple(len(o.state) for o in scope.optimizers),
        tuple(scope.scalars),
    )


def structure(sig: tuple[Any, ...]) -> tuple[Any, ...]:
    """The signature with each argument tensor's shape replaced by its number of dimensions:
    the key under which ``dynamic=True`` keeps one capture (Note [dynamic shapes] in api.py)."""
    args = tuple(
        (a[0], len(a[1])) + a[2:] if type(a) is tuple and len(a) == 6 and a[0] is not tuple else a
        for a in sig[2]
    )
    return sig[:2] + (args,) + sig[3:]


def device_reason(scope: Scope) -> str | None:
    """Why a call whose tensors are neither NumPy nor CuPy arrays runs eagerly, or None: the
    capture records NumPy arrays (Note [tracing arrays] in _tracer.py) and CuPy arrays (Note
    [CUDA tracing arrays]), nothing else (docs/gpu.md)."""
    for t in scope.tensors:
        d = t._data
        if type(d) is not _ndarray and not isinstance(d, _ndarray) and not _is_cupy(d):
            return (
                f"a tensor is on {t.device}: the capture records NumPy and CuPy arrays only, "
                f"not {type(d).__name__}"
            )
    return None


def _is_cupy(d: Any) -> bool:
    from chainrule.backends import loaded_cuda_backend

    b = loaded_cuda_backend()
    return b is not None and isinstance(d, b.ndarray)


def hooks_reason(scope: Scope) -> str | None:
    """Why this call must run eagerly before any capture (hooks, anomaly mode), or None."""
    if _anomaly_enabled[0]:
        return "anomaly mode is on"
    if _hooks_any[0]:
        return "saved-tensor hooks are set"
    for m in scope.modules:
        # ``_backward_hooks`` is no Module attribute: read the instance's and class's dicts,
        # not through Module.__getattr__ (which searches three dicts and raises).
        bh = m.__dict__.get("_backward_hooks") or getattr(type(m), "_backward_hooks", None)
        if m._forward_hooks or m._forward_pre_hooks or bh:
            return f"{type(m).__name__} has module hooks"
    for t in scope.tensors:
        if t._backward_hooks or t._post_acc_hooks:
            return "a tensor has hooks"
    return None
