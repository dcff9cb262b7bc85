"""What a compiled call depends on: the scope it reads and the guard signature of one call.

Why this file is over 600 lines: the scope walk, its cached plan and the signature are one
mechanism (the plan's fields are what the signature reads), each guard with its Note beside
it.

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
    scalar's type and value; an object's identity), each external tensor (identity, type,
    shape, dtype, ``requires_grad``, whether it has a history, whether its ``.grad`` is None
    and the ``.grad``'s shape, dtype and ``requires_grad``), each module's ``training``, each
    optimizer's state size, the Python numbers and strings among the roots, the code object
    run, and each module's plain attributes that a forward may read as Python values (numbers,
    strings, None, tuples of them, by value; functions and methods by identity). Captures are
    kept by signature; a call whose signature has none captures anew.
"""

from __future__ import annotations

import types
import weakref
from collections import OrderedDict
from itertools import chain, compress, repeat
from operator import attrgetter, is_, is_not, itemgetter
from typing import Any

import numpy as np

from chainrule._tensor import Tensor
from chainrule.autograd import grad_mode
from chainrule.autograd._hooks import _hooks_any
from chainrule.autograd.anomaly import _anomaly_enabled
from chainrule.nn.modules import _global_hooks as _gh
from chainrule.nn.modules.module import Module
from chainrule.optim.optimizer import Optimizer

__all__ = ["Scope", "GuardState", "guard", "discover", "structure"]

_state = grad_mode._state
_MISSING = object()


class Scope:
    """The objects one call reads: argument leaves, external tensors, modules, optimizers."""

    __slots__ = ("tensors", "n_args", "modules", "optimizers", "leaves", "scalars", "plan")

    def __init__(self) -> None:
        self.tensors: list[Tensor] = []  # argument tensors first, then the others
        self.n_args = 0
        self.modules: list[Module] = []
        self.optimizers: list[Optimizer] = []
        self.leaves: list[Any] = []  # the flattened argument values
        self.scalars: list[Any] = []  # Python numbers and strings among the roots
        self.plan: Any = None  # the _Plan it was read from (Note [scope plan])


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


class _Roots:
    """How ``fn``'s roots are read on each call (Note [compile scope]): the objects fixed by
    ``fn`` itself (a compiled module, a bound method's ``self``), its closure cells, its
    globals and the names its code reads there."""

    __slots__ = ("fn", "module", "func", "code", "pre", "cells", "glob", "names")

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.module = isinstance(fn, Module)
        pre: list[Any] = []
        f = fn
        if self.module:
            pre.append(fn)
            f = type(fn).forward
        owner = getattr(f, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):
            pre.append(owner)
        f = getattr(f, "__func__", f)
        self.func = f
        self.pre = pre
        code = getattr(f, "__code__", None)
        self.code = code
        if code is None:
            self.cells: tuple[Any, ...] = ()
            self.glob: dict[str, Any] = {}
            self.names: tuple[str, ...] = ()
        else:
            self.cells = getattr(f, "__closure__", None) or ()
            self.glob = getattr(f, "__globals__", {})
            self.names = _global_names(code)

    def read(self) -> list[Any] | None:
        """The roots now, in Note [compile scope]'s order (an empty cell and a name the
        globals lack are kept as ``_MISSING``, so that the list lines up call after call);
        None when ``fn`` now runs another function or code (a module's ``forward`` or a
        function's ``__code__`` reassigned): read a new _Roots."""
        f = self.func
        if self.module:
            now = type(self.fn).forward
            if getattr(now, "__func__", now) is not f:
                return None
        if self.code is not None and f.__code__ is not self.code:
            return None
        try:
            cells = list(map(_CELL, self.cells))
        except ValueError:  # an empty cell
            cells = [_cell(c) for c in self.cells]
        return [*self.pre, *cells, *map(self.glob.get, self.names, repeat(_MISSING))]


def _cell(c: Any) -> Any:
    try:
        return c.cell_contents
    except ValueError:
        return _MISSING


def _roots_of(fn: Any) -> list[Any]:
    return [r for r in _Roots(fn).read() or () if r is not _MISSING]


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
#     The walk reads the module tree's dicts directly instead of through
#     ``modules()``/``parameters()``/``buffers()``, whose generators build a dotted name per
#     module and per tensor (and record ``_param_name``). It visits the same objects in the
#     same order. tests/compile/test_compile_guards.py checks the walk against
#     ``modules()``/``parameters()``/``buffers()`` on shared and nested trees. The walk runs
#     only when Note [scope plan]'s check fails.


def _add_optimizer(scope: Scope, seen: set[int], opt: Optimizer) -> None:
    if id(opt) in seen:
        return
    seen.add(id(opt))
    scope.optimizers.append(opt)
    for group in opt.param_groups:
        for p in group["params"]:
            _add_tensor(scope, seen, p)


def _add(scope: Scope, seen: set[int], obj: Any, depth: int, conts: list[Any]) -> None:
    """Add what ``obj`` contributes to the scope (Note [compile scope]); containers are
    followed ``depth`` levels down (and kept in ``conts``, for Note [scope plan])."""
    if isinstance(obj, Tensor):
        _add_tensor(scope, seen, obj)
    elif isinstance(obj, Module):
        _add_module(scope, seen, obj)
    elif isinstance(obj, Optimizer):
        _add_optimizer(scope, seen, obj)
    elif depth > 0 and type(obj) in (list, tuple, dict):
        conts.append(obj)
        for o in obj.values() if type(obj) is dict else obj:
            _add(scope, seen, o, depth - 1, conts)


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


# Note [scope plan]
#     Walking the scope (Note [scope walk]) was about a third of a replayed MLP step's Python
#     work, so a compiled function keeps the result of its last walk, a _Plan, with everything
#     the walk read to find it, and walks again only when some of that changed. Before each
#     call the plan is checked, by identity and length only, against what the objects hold
#     now:
#
#     - the key: the Module and Optimizer arguments, the ``fn`` it reads roots for (and its
#       code: a reassigned ``forward`` or ``__code__`` is seen), the closure cells' contents
#       and the globals its code names;
#     - every list, tuple and dict among the roots that the walk followed: their lengths and
#       items;
#     - every module reached: its ``__dict__`` object and that dict's values (so ``training``,
#       any plain attribute, and the ``_modules``/``_parameters``/``_buffers`` and hook dicts
#       themselves, reassigned or not), and the lengths and values of those seven dicts (so a
#       submodule, parameter or buffer added, removed or replaced, by ``__setattr__``,
#       ``register_*`` or by writing the dict, and a hook registered or removed);
#     - every optimizer reached: its ``param_groups`` list, each group's ``params`` list and
#       their lengths and items.
#
#     The items are read through live views (``dict.values()``, the lists themselves), and
#     compared with ``map(operator.is_, ...)``: a few C calls, whatever the tree's size. A
#     value the plan saw is held by it, so no new object can take its id while the plan
#     lives. What the walk cannot cache is read on every call: each tensor's shape, dtype,
#     ``requires_grad``, history, ``.grad``, hooks and device (a tensor has no version of its
#     metadata), each optimizer's state size and the global hooks. A plan that fails its check
#     is replaced by a new walk; the signature is computed from the plan either way, so a
#     cached plan gives the signature a walk would give. tests/compile/test_guard_scope.py
#     changes each of these between calls.

_flat = chain.from_iterable
_CELL = attrgetter("cell_contents")
_DICT = attrgetter("__dict__")
_PG = attrgetter("param_groups")
_PARAMS = itemgetter("params")
_STATE = attrgetter("state")
_META = attrgetter("_data.shape", "_data.dtype.str", "_requires_grad")
_GRAD = attrgetter("_grad")
_GFN = attrgetter("grad_fn")
_DATA = attrgetter("_data")
_THOOKS = attrgetter("_backward_hooks")
_TPOST = attrgetter("_post_acc_hooks")
_ACCUM = attrgetter("_accum")
_deref = weakref.ReferenceType.__call__
_MOD_DICTS = (
    "_modules",
    "_parameters",
    "_buffers",
    "_forward_pre_hooks",
    "_forward_hooks",
    "_backward_pre_hooks",
    "_backward_hooks",
)
_HOOK_KINDS = {
    "_forward_pre_hooks": "forward pre-hooks",
    "_forward_hooks": "forward hooks",
    "_backward_pre_hooks": "backward pre-hooks",
    "_backward_hooks": "backward hooks",
}
_SCALARS = (int, float, bool, str, complex, type(None))
# Module attributes that the signature has elsewhere or that only hook registration reads.
_NOT_ATTRS = frozenset({"training", "_is_full_backward_hook"})
_LIVE_TYPES = (list, dict, set)
# The containers Module.__init__ sets, and those layers derive from guarded attributes
# (convolutions' padding list, the RNNs' weight names).
_MODULE_OWN = frozenset(Module().__dict__) | {
    "_reversed_padding_repeated_twice",
    "_flat_weights_names",
    "_all_weights",
}
_CALLABLES = (
    types.FunctionType,
    types.MethodType,
    types.BuiltinFunctionType,
    types.BuiltinMethodType,
    np.ufunc,
)


def _item_key(x: Any) -> Any:
    t = type(x)
    if t in _SCALARS:
        return x
    if t is tuple and all(type(y) in _SCALARS for y in x):
        return x
    return ("id", id(x))


def _live_key(c: Any) -> Any:
    """A mutable container's contents as the signature keeps them, read on every call
    (Note [mutable containers]): numbers and strings by value, other items by identity."""
    t = type(c)
    if t is set:
        return (t, frozenset(map(_item_key, c)))
    if t is dict:
        return (t, tuple(zip(c, map(_item_key, c.values()))))
    return (t, tuple(map(_item_key, c)))


# Note [mutable containers]
#     A list, dict or set among a module's plain attributes (``self.shape = [2, 8]``,
#     ``self.cfg = {"k": 2.0}``) or among the function's roots (a global list) may be read by
#     the call as Python values that the program bakes in, and may be changed in place
#     between calls without any object the plan holds changing identity. So the plan keeps
#     them (``_Plan.live``) and the signature reads their contents on every call: numbers,
#     strings and tuples of them by value, anything else by identity (a nested list changed
#     in place is not seen). A container the call itself changes (``history.append(x)``)
#     gives every call a new signature: such calls capture (running the Python) until the
#     recompile limit, then run eagerly; a replay never skips the change. The containers
#     The same holds for a plain object among the roots (an ``argparse.Namespace`` read as
#     ``args.scale``, a config object): its attributes are read on every call as a module's
#     plain attributes are (numbers, strings, None and tuples of them by value, functions by
#     identity), so ``cfg.k = 5.0`` re-captures and ``counter.n += 1`` inside the call is done
#     on every call; chainrule's own objects (an LR scheduler) are not read so. The containers
#     ``Module.__init__`` makes (``_parameters``, the hook dicts...) are read by Note [scope
#     plan] already, and the few that layers derive from guarded attributes (a convolution's
#     ``_reversed_padding_repeated_twice``) are not changed by users: neither is kept.


_NOT_PLAIN = (
    types.FunctionType,
    types.MethodType,
    types.BuiltinFunctionType,
    types.ModuleType,
    type,
    Tensor,
    Module,
    Optimizer,
)


def _plain_dict(r: Any) -> dict[str, Any] | None:
    """The attribute dict of a plain object among the roots (an ``argparse.Namespace``, a
    config object), whose numbers and strings the call may bake in (Note [mutable
    containers]), or None."""
    if isinstance(r, _NOT_PLAIN) or type(r) in _LIVE_TYPES or type(r) is tuple:
        return None
    # chainrule's own objects (an LR scheduler, a GradScaler, a DataLoader) feed the program
    # through state the signature reads elsewhere (a group's ``lr`` is read live): an LR
    # scheduler stepped between calls must not re-capture.
    if type(r).__module__.startswith("chainrule."):
        return None
    d = getattr(r, "__dict__", None)
    return d if type(d) is dict else None


def _obj_key(d: dict[str, Any]) -> tuple[Any, ...]:
    return tuple((k, a) for k, v in d.items() if (a := _attr_key(v)) is not _MISSING)


def _attr_key(v: Any) -> Any:
    """A module attribute as the signature keeps it (Note [compile scope]), or _MISSING."""
    t = type(v)
    if t in _SCALARS:
        return (t, v)
    if t is tuple and all(type(x) in _SCALARS for x in v):
        return (t, v)
    if isinstance(v, _CALLABLES):
        return ("id", id(v))
    return _MISSING


class _Plan:
    """One walk of a function's scope and what the walk read (Note [scope plan])."""

    __slots__ = (
        "key",
        "views",
        "lens",
        "flat",
        "dicts",
        "fresh",
        "tensors",
        "ext_ids",
        "ext_idset",
        "modules",
        "optimizers",
        "scalars",
        "training",
        "attrs",
        "groups",
        "module_hooks",
        "live",
        "objs",
        "cacheable",
        "scope",
    )

    def __init__(self, key: list[Any], argobjs: list[Any], roots: list[Any], code: Any) -> None:
        scope = Scope()
        seen: set[int] = set()
        conts: list[Any] = []
        for x in argobjs:
            _add(scope, seen, x, 0, conts)
        scalars: list[Any] = []
        objs: list[dict[str, Any]] = []
        for r in roots:
            if r is _MISSING:
                continue
            if r is None or type(r) in (int, float, bool, str):
                scalars.append(r)  # baked into the program: guarded
            else:
                _add(scope, seen, r, 2, conts)
                d = _plain_dict(r)
                if d is not None:
                    objs.append(d)
        self.key = key
        self.tensors = scope.tensors
        self.ext_ids = tuple(map(id, scope.tensors))
        self.ext_idset = frozenset(self.ext_ids)
        self.modules = scope.modules
        self.optimizers = scope.optimizers
        self.scalars = tuple(scalars)
        self.training = tuple(m.training for m in scope.modules)
        views: list[Any] = [c.values() if type(c) is dict else c for c in conts]
        attrs: list[Any] = [id(code)]
        self.module_hooks: str | None = None
        self.cacheable = True
        self.scope: Scope | None = None  # the Scope of a call without arguments
        dicts = []
        for m in scope.modules:
            d = m.__dict__
            dicts.append(d)
            views.append(d.values())
            for name in _MOD_DICTS:
                sub: Any = d.get(name)
                if type(sub) not in (dict, OrderedDict):
                    self.cacheable = False  # not set up by Module.__init__: walk every call
                    sub = getattr(m, name, None) or {}
                views.append(sub.values())
                if sub and self.module_hooks is None and name in _HOOK_KINDS:
                    self.module_hooks = f"{type(m).__name__} has module {_HOOK_KINDS[name]}"
            attrs.append(
                tuple(
                    (k, a)
                    for k, v in d.items()
                    if k not in _NOT_ATTRS and (a := _attr_key(v)) is not _MISSING
                )
            )
        self.attrs = tuple(attrs)
        # Note [mutable containers]
        live = [c for c in conts if type(c) in _LIVE_TYPES]
        for d in dicts:
            for k, v in d.items():
                if type(v) in _LIVE_TYPES and k not in _MODULE_OWN:
                    live.append(v)
        self.live = live
        self.objs = objs
        self.dicts = dicts
        pgs = [o.param_groups for o in scope.optimizers]
        fresh = pgs + [g["params"] for pg in pgs for g in pg]
        self.fresh = fresh
        # Which parameters each group steps: the capture's notes around a step depend on it.
        groups = tuple(tuple(tuple(map(id, g["params"])) for g in pg) for pg in pgs)
        self.groups = groups
        views += fresh
        self.views = views
        self.lens = list(map(len, views))
        self.flat = list(_flat(views))

    def holds(self, key: list[Any]) -> bool:
        """Whether a walk now would find what this one found (Note [scope plan])."""
        pk = self.key
        if len(key) != len(pk) or not all(map(is_, key, pk)):
            return False
        views = self.views
        try:
            if list(map(len, views)) != self.lens:
                return False
            if not all(map(is_, _flat(views), self.flat)):
                return False
            if not all(map(is_, map(_DICT, self.modules), self.dicts)):
                return False
            opts = self.optimizers
            if opts:
                pgs = list(map(_PG, opts))
                fresh = pgs + list(map(_PARAMS, _flat(pgs)))
                if len(fresh) != len(self.fresh) or not all(map(is_, fresh, self.fresh)):
                    return False
        except Exception:  # something no longer has the shape the walk saw: walk again
            return False
        return True


class GuardState:
    """A compiled function's guard state: how to read its roots, and its last plan."""

    __slots__ = ("roots", "plan", "walks")

    def __init__(self, fn: Any) -> None:
        self.roots = _Roots(fn)
        self.plan: _Plan | None = None
        self.walks = 0  # how many times the scope was walked (Note [scope plan])


def _global_hooks_reason() -> str | None:
    if _anomaly_enabled[0]:
        return "anomaly mode is on"
    if _hooks_any[0]:
        return "saved-tensor hooks are set"
    if _gh.CALL_HOOKS:
        return "global module hooks are set (nn.modules.module.register_module_*_hook)"
    if (
        _gh.parameter_registration_hooks
        or _gh.buffer_registration_hooks
        or _gh.module_registration_hooks
    ):
        return "global module registration hooks are set"
    return None


def _tensor_hooks_reason(ts: list[Tensor]) -> str | None:
    if any(map(_THOOKS, ts)) or any(map(_TPOST, ts)):
        return "a tensor has hooks"
    refs = [*filter(None, map(_ACCUM, ts))]
    if refs:
        for node in filter(None, map(_deref, refs)):
            h = node._hooks
            if h is not None and (h.pre or h.post or any(h.tensor_pre.values()) or h.retain):
                return "a tensor's AccumulateGrad node has hooks"
    return None


def _device_reason(ts: list[Tensor]) -> str | None:
    """Why a call whose tensors are neither NumPy nor CuPy arrays runs eagerly, or None: the
    capture records NumPy arrays (Note [tracing arrays] in _tracer.py) and CuPy arrays (Note
    [CUDA tracing arrays]), nothing else (docs/gpu.md)."""
    if all(map(isinstance, map(_DATA, ts), repeat(_ndarray))):
        return None
    for t in ts:
        d = t._data
        if not isinstance(d, _ndarray) and not _is_cupy(d):
            return (
                f"a tensor is on {t.device}: the capture records NumPy and CuPy arrays only, "
                f"not {type(d).__name__}"
            )
    return None


def _is_cupy(d: Any) -> bool:
    from chainrule.backends import loaded_cuda_backend

    b = loaded_cuda_backend()
    return b is not None and isinstance(d, b.ndarray)


def _devices(ts: list[Tensor]) -> Any:
    """The device guard of the tensors a call reads outside its arguments: None when all are
    NumPy arrays (the common case, one C-level check), else each array's type and GPU, so a
    model moved between the CPU and a GPU (or between GPUs) is captured again."""
    if all(map(isinstance, map(_DATA, ts), repeat(_ndarray))):
        return None
    return tuple((type(t._data), _gpu(t._data)) for t in ts)


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


_NO_LEAVES = ((tuple, 0), (dict, ()))
_NO_ARG_SIG = tuple((tuple, x) for x in _NO_LEAVES)
_reg_hooks = (
    _gh.parameter_registration_hooks,
    _gh.buffer_registration_hooks,
    _gh.module_registration_hooks,
)


def _arguments(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[Any], list[Tensor], set[int], list[Any], tuple[Any, ...]]:
    """The argument leaves, their tensors (each once) and those tensors' ids, their modules
    and optimizers, and their part of the signature (Note [compile scope])."""
    leaves: list[Any] = []
    _flatten(args, leaves)
    _flatten(kwargs, leaves)
    argts: list[Tensor] = []
    seen: set[int] = set()
    argobjs: list[Any] = []
    arg_sig: list[Any] = []
    for x in leaves:
        if isinstance(x, Tensor):
            arg_sig.append(_tensor_sig(x))
            if id(x) not in seen:
                seen.add(id(x))
                argts.append(x)
        elif x is None or type(x) in (int, float, bool, str, complex) or type(x) is tuple:
            arg_sig.append((type(x), x))  # a (type, length) marker of a tuple or list is a tuple
        else:
            arg_sig.append(("id", id(x)))
            if isinstance(x, (Module, Optimizer)):
                argobjs.append(x)
    return leaves, argts, seen, argobjs, tuple(arg_sig)


def _scope(plan: _Plan, ts: list[Tensor], n_args: int, leaves: list[Any]) -> Scope:
    scope = Scope()
    scope.tensors = ts
    scope.n_args = n_args
    scope.modules = plan.modules
    scope.optimizers = plan.optimizers
    scope.leaves = leaves
    scope.scalars = list(plan.scalars)
    scope.plan = plan
    return scope


def _eager_reason(plan: _Plan, ts: list[Tensor]) -> tuple[str | None, str | None]:
    """Why a call runs eagerly before any capture (hooks, anomaly mode), or for its devices."""
    why = _global_hooks_reason() or plan.module_hooks or _tensor_hooks_reason(ts)
    return why, (None if why is not None else _device_reason(ts))


def guard(
    state: GuardState, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Scope, Any, str | None, str | None]:
    """The scope of one call and its guard signature (Note [compile scope]), with why the
    call must run eagerly before any capture (hooks, anomaly mode) or why it runs eagerly
    for its devices (each None when it need not); the signature is None when either is set.
    """
    if args or kwargs:
        leaves, argts, seen, argobjs, arg_sig = _arguments(args, kwargs)
    else:
        leaves, argts, seen, argobjs, arg_sig = list(_NO_LEAVES), [], set(), [], _NO_ARG_SIG
    rs = state.roots
    roots = rs.read()
    if roots is None:
        rs = state.roots = _Roots(rs.fn)
        roots = rs.read() or []
    key = [*argobjs, rs, *roots]
    plan = state.plan
    if plan is None or not plan.holds(key):
        state.walks += 1
        plan = _Plan(key, argobjs, roots, rs.code)
        state.plan = plan if plan.cacheable else None
    ext = plan.tensors
    ext_ids = plan.ext_ids
    if argts and not plan.ext_idset.isdisjoint(seen):
        ext = [t for t in ext if id(t) not in seen]
        ext_ids = tuple(map(id, ext))
    if args or kwargs:
        scope = _scope(plan, argts + ext, len(argts), leaves)
    else:  # no arguments: the plan's own scope (nothing writes to a Scope's lists)
        scope = plan.scope
        if scope is None:
            scope = plan.scope = _scope(plan, list(ext), 0, leaves)
    ts = scope.tensors
    # Hooks, anomaly mode and devices, read in one expression of C calls; the reason is
    # worked out only when one of them is set.
    if (
        _anomaly_enabled[0]
        or _hooks_any[0]
        or _gh.CALL_HOOKS
        or any(_reg_hooks)
        or plan.module_hooks
        or any(map(_THOOKS, ts))
        or any(map(_TPOST, ts))
        or any(map(_deref, filter(None, map(_ACCUM, ts))))  # a live AccumulateGrad node
        or not all(map(isinstance, map(_DATA, ts), repeat(_ndarray)))
    ):
        why, dev = _eager_reason(plan, ts)
        if why is not None or dev is not None:
            return scope, None, why, dev
    grads = list(map(_GRAD, ext))
    has_grad = tuple(map(is_not, grads, repeat(None)))
    sig = (
        _state.enabled,
        _state.inference,
        arg_sig,
        (
            ext_ids,
            tuple(map(type, ext)),
            tuple(map(_META, ext)),
            tuple(map(is_, map(_GFN, ext), repeat(None))),
            has_grad,
            tuple(map(_META, compress(grads, has_grad))),
            _devices(ext),
        ),
        plan.training,
        (tuple(map(len, map(_STATE, plan.optimizers))), plan.groups),
        plan.scalars,
        plan.attrs,
        tuple(map(_live_key, plan.live)) if plan.live else (),
        tuple(map(_obj_key, plan.objs)) if plan.objs else (),
    )
    return scope, sig, None, None


def discover(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Scope:
    """The scope of one call (Note [compile scope]), from a fresh walk."""
    return guard(GuardState(fn), args, kwargs)[0]


def structure(sig: tuple[Any, ...]) -> tuple[Any, ...]:
    """The signature with each argument tensor's shape replaced by its number of dimensions:
    the key under which ``dynamic=True`` keeps one capture (Note [dynamic shapes] in api.py)."""
    args = tuple(
        (a[0], len(a[1])) + a[2:] if type(a) is tuple and len(a) == 6 and a[0] is not tuple else a
        for a in sig[2]
    )
    return sig[:2] + (args,) + sig[3:]
