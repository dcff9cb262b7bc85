"""``Optimizer``: parameter groups, per-parameter state, ``zero_grad`` and state dicts.

Note [optimizer updates]
Each optimiser is written twice over (ARCHITECTURE.md section 7): a pure function
``<name>_update(xp, param, grad, <state arrays>, *, <hyper-parameters>)`` that changes the
arrays in place and states the equations, and a class that keeps ``param_groups`` and
``state`` and calls it. ``step()`` runs under ``no_grad``, hands the update the parameter's own
array (``param._data``) so that the parameter changes in place, then bumps the parameter's
version counter so that autograd sees the write. The arithmetic follows torch.optim's
single-tensor (CPU) path operation by operation, so float32 trajectories agree with PyTorch's
to rounding.

Why this file is over 400 lines: ``Optimizer`` is one class, PyTorch's whole base surface
(parameter groups, state dicts and the checks on loading them, the step and state-dict hooks).
"""

from __future__ import annotations

import copy
import functools
from collections import OrderedDict, defaultdict
from itertools import chain
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from chainrule._dispatch import recorder as _recorder
from chainrule._tensor import Tensor
from chainrule.autograd.grad_mode import enable_grad, no_grad
from chainrule.backends import multi_gpu_backend
from chainrule.optim._devices import run_on_param_devices
from chainrule.sparse._coo import SEEN as _SPARSE_SEEN
from chainrule.utils.hooks import RemovableHandle

__all__ = [
    "Optimizer",
    "OptimizerStateKeyError",
    "register_optimizer_step_post_hook",
    "register_optimizer_step_pre_hook",
    "required",
]

# Step hooks of every optimizer (Note [optimizer hooks]).
_global_optimizer_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
_global_optimizer_post_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()

_HOOK_DICTS = (
    "_optimizer_step_pre_hooks",
    "_optimizer_step_post_hooks",
    "_optimizer_state_dict_pre_hooks",
    "_optimizer_state_dict_post_hooks",
    "_optimizer_load_state_dict_pre_hooks",
    "_optimizer_load_state_dict_post_hooks",
)


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` before every optimizer's ``step``; it may return
    ``(new_args, new_kwargs)``."""
    return RemovableHandle(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` after every optimizer's ``step``."""
    return RemovableHandle(_global_optimizer_post_hooks, hook)


def _with_step_hooks(step: Callable[..., Any]) -> Callable[..., Any]:
    """``step`` wrapped to run the global and per-optimizer step hooks around it.

    Note [optimizer hooks]
    Every subclass's ``step`` is wrapped when the class is made (``__init_subclass__``), as
    PyTorch patches it: global pre-hooks, then the optimizer's own, each called with
    ``(optimizer, args, kwargs)`` where ``args`` starts with the optimizer; a pre-hook may
    return ``(new_args, new_kwargs)``. After the step, the optimizer's post-hooks, then the
    global ones. A ``step`` that calls its parent's (wrapped) ``step`` runs the hooks once.
    During a ``chainrule.compile`` capture the outermost step hands itself, hooks and all, to
    the recorder (``_dispatch.recorder``), which runs it unrecorded: a replay calls ``step()``
    there (a sync point, docs/compile.md).
    """

    @functools.wraps(step)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        self = args[0]
        d = self.__dict__
        if d.get("_in_step_hooks"):
            return step(*args, **kwargs)
        rec = _recorder[0]
        if rec is not None:  # a compile capture replays the whole step by calling it
            closure = args[1] if len(args) > 1 else kwargs.get("closure")
            return rec.optimizer_step(self, closure, lambda: hooked(*args, **kwargs))
        return hooked(*args, **kwargs)

    def hooked(*args: Any, **kwargs: Any) -> Any:
        self = args[0]
        d = self.__dict__
        pre = d.get("_optimizer_step_pre_hooks") or {}
        post = d.get("_optimizer_step_post_hooks") or {}
        if not (pre or post or _global_optimizer_pre_hooks or _global_optimizer_post_hooks):
            d["_in_step_hooks"] = True
            try:
                return step(*args, **kwargs)
            finally:
                d["_in_step_hooks"] = False
        for hook in list(chain(_global_optimizer_pre_hooks.values(), pre.values())):
            result = hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(
                        f"{step} must return None or a tuple of (new_args, new_kwargs), but "
                        f"got {result}."
                    )
        d["_in_step_hooks"] = True
        try:
            out = step(*args, **kwargs)
        finally:
            d["_in_step_hooks"] = False
        for hook in list(chain(post.values(), _global_optimizer_post_hooks.values())):
            hook(self, args, kwargs)
        return out

    wrapper._step_hooked = True  # type: ignore[attr-defined]
    return wrapper


def _add_hook(
    hooks: OrderedDict[int, Any], hook: Callable[..., Any], prepend: bool
) -> RemovableHandle:
    handle = RemovableHandle(hooks, hook)
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()

# Settings that newer PyTorch versions added to optimizers: a loaded group that lacks one takes
# the optimizer's default, as torch's ``__setstate__`` does. Any other missing setting is an
# error at load time.
_FILLED_ON_LOAD = frozenset(
    {
        "amsgrad",
        "maximize",
        "foreach",
        "capturable",
        "differentiable",
        "fused",
        "decoupled_weight_decay",
        "nesterov",
        "centered",
    }
)


class OptimizerStateKeyError(KeyError):
    """A key an optimizer needs is missing from a state dict, a parameter group or a
    parameter's state. A ``KeyError``, as PyTorch raises in these cases, but with a message
    that says which key, where, and what nothing was changed."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _typename(obj: Any) -> str:
    from chainrule.nn.modules.module import _typename as tn

    return tn(obj)


def _state_tensor(array: Any) -> Tensor:
    """Wrap a state array as a plain (non-grad) Tensor, as torch.optim keeps its state."""
    return Tensor._wrap(array)


def stepping(
    state: Any, group: dict[str, Any], init: Callable[[Any, Any, dict[str, Any]], dict[str, Any]]
) -> Iterator[tuple[Any, Any, dict[str, Any]]]:
    """The parameters of ``group`` that have a gradient, each with its backend's array module
    and its per-parameter state, for the loop of an element-wise optimizer's step.

    On a parameter's first step its state is made: a float32 ``step`` of 0 and the arrays
    ``init(xp, p, group)`` returns, each wrapped as a state tensor. ``step`` is counted up by one
    before the parameter is yielded, and the parameter's version is bumped after the loop
    body (which wrote its data in place)."""
    for p in group["params"]:
        if p.grad is None:
            continue
        xp = p._backend.xp
        st = state[p]
        if len(st) == 0:
            st["step"] = _state_tensor(np.zeros((), np.float32))
            for k, v in init(xp, p, group).items():
                st[k] = _state_tensor(v)
        st["step"]._data += 1
        yield p, xp, st
        p._bump_version()


class Optimizer:
    """Base class: holds ``param_groups`` (dicts with ``params`` and hyper-parameters) and
    ``state`` (a dict from parameter to its per-parameter state).

    Differs from torch: ``load_state_dict`` also checks that every per-parameter state tensor
    has its parameter's shape, that every group has the settings this optimizer needs and every
    parameter state the keys its step reads, and it copies the loaded tensors rather than
    sharing them; all checks run before anything changes. ``step()`` checks the same before
    its first write, so a step that raises has changed nothing (torch may have updated some
    parameters, or bumped a step counter, by then).

    Subclasses name the per-parameter state their step reads by overriding
    ``_state_keys(group)`` (and set ``_lazy_state = False`` if that state must exist before
    the first step); the checks above use it.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_step_hooked", False):
            cls.step = _with_step_hooks(step)  # type: ignore[method-assign]

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        for name in _HOOK_DICTS:
            setattr(self, name, OrderedDict())
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                "dicts, but got " + _typename(params)
            )
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            self.__dict__.setdefault(name, OrderedDict())

    def _hook_dict(self, name: str) -> OrderedDict[int, Any]:
        d = self.__dict__.get(name)
        if d is None:
            d = self.__dict__[name] = OrderedDict()
        return d

    # Hooks (Note [optimizer hooks]) -------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Run ``hook(optimizer, args, kwargs)`` before this optimizer's ``step``; it may
        return ``(new_args, new_kwargs)``."""
        return RemovableHandle(self._hook_dict("_optimizer_step_pre_hooks"), hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Run ``hook(optimizer, args, kwargs)`` after this optimizer's ``step``."""
        return RemovableHandle(self._hook_dict("_optimizer_step_post_hooks"), hook)

    def register_state_dict_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Run ``hook(optimizer)`` before ``state_dict()`` builds its result."""
        return _add_hook(self._hook_dict("_optimizer_state_dict_pre_hooks"), hook, prepend)

    def register_state_dict_post_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Run ``hook(optimizer, state_dict)`` on ``state_dict()``'s result; a non-None
        return replaces it."""
        return _add_hook(self._hook_dict("_optimizer_state_dict_post_hooks"), hook, prepend)

    def register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Run ``hook(optimizer, state_dict)`` before ``load_state_dict``; a non-None return
        is loaded instead."""
        return _add_hook(self._hook_dict("_optimizer_load_state_dict_pre_hooks"), hook, prepend)

    def register_load_state_dict_post_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Run ``hook(optimizer)`` after ``load_state_dict`` has loaded."""
        return _add_hook(self._hook_dict("_optimizer_load_state_dict_post_hooks"), hook, prepend)

    def __repr__(self) -> str:
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\n"
            s += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own hyper-parameters (missing ones take the
        optimizer's defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        tensors, names = _split_named_params(param_group["params"])
        param_group["params"] = tensors
        if names:
            param_group["param_names"] = names
        if self.param_groups and (
            ("param_names" in param_group) != ("param_names" in self.param_groups[0])
        ):
            with_names = "with" if "param_names" in param_group else "without"
            raise ValueError(
                "all optimizer param groups should be with/without names. cannot add param "
                f"group {with_names} names to the optimizer"
            )
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + _typename(param)
                )
            if not param.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
        if any(id(p) in seen for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop (``set_to_none``) or zero the ``.grad`` of every parameter."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def _run(self, closure: Callable[[], Any] | None, update: Callable[[], None]) -> Any:
        rec = _recorder[0]
        if rec is not None:  # a compile capture replays the step by calling it
            return rec.optimizer_step(self, closure, lambda: self._run_eager(closure, update))
        return self._run_eager(closure, update)

    def _run_eager(self, closure: Callable[[], Any] | None, update: Callable[[], None]) -> Any:
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        # Everything a step reads is checked before the first write, so that a step that
        # fails leaves every parameter and state entry as it was.
        self._check_step()
        if _SPARSE_SEEN[0]:  # a sparse tensor exists: chainrule/optim/_sparse.py
            update = self._sparse_update(update)
        gpus = multi_gpu_backend()  # None unless CuPy is in use with several GPUs
        with no_grad():
            if gpus is None:
                update()
            else:  # Note [a step on its parameters' GPU] in optim/_devices.py
                run_on_param_devices(self, gpus, update)
        return loss

    # Per-parameter state an optimizer's step reads: subclasses name it so that ``step`` and
    # ``load_state_dict`` can check it up front. ``_lazy_state``: a parameter's state may be
    # empty (it is made on its first step).
    _lazy_state = True

    def _state_keys(self, group: dict[str, Any]) -> tuple[str, ...]:
        """The keys a (non-empty) per-parameter state must hold under ``group``'s settings."""
        return ()

    def _missing_state(self, group: dict[str, Any], state: Any) -> list[str]:
        if not isinstance(state, dict):
            return list(self._state_keys(group)) or ["<a dict>"]
        if not state and self._lazy_state:
            return []
        return [k for k in self._state_keys(group) if k not in state]

    # PyTorch's error when a parameter's gradient is sparse (chainrule/optim/_sparse.py); None
    # in the optimizers that take sparse gradients.
    _sparse_error: str | None = "{name} does not support sparse gradients"

    def _sparse_update(self, update: Callable[[], None]) -> Callable[[], None]:
        """The step's update where gradients may be sparse: here PyTorch's error for a sparse
        gradient (``_sparse_error``); SGD and Adagrad return an update that takes them."""
        from chainrule.optim._sparse import check_sparse

        check_sparse(self)
        return update

    def _check_step(self) -> None:
        name = type(self).__name__
        index = 0
        for gi, group in enumerate(self.param_groups):
            missing = [k for k in self.defaults if k not in group]
            if missing:
                raise OptimizerStateKeyError(
                    f"{name}: parameter group {gi} has no {', '.join(map(repr, missing))}; "
                    "no parameter was changed"
                )
            for p in group["params"]:
                if p.grad is not None:
                    lack = self._missing_state(group, self.state.get(p, {}))
                    if lack:
                        raise OptimizerStateKeyError(
                            f"{name}: the state of parameter {index} (group {gi}) has no "
                            f"{', '.join(map(repr, lack))}, which its settings need (was a "
                            "setting such as 'amsgrad' switched on after the first step, or "
                            "the state loaded from another optimizer?); no parameter was "
                            "changed"
                        )
                index += 1

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        raise NotImplementedError

    # State dicts --------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}`` with
        parameters numbered in order across groups, PyTorch's layout. The state tensors are
        shared, not copied. State-dict pre- and post-hooks run around it."""
        for hook in list(self._hook_dict("_optimizer_state_dict_pre_hooks").values()):
            hook(self)
        out = self._state_dict()
        for hook in list(self._hook_dict("_optimizer_state_dict_post_hooks").values()):
            result = hook(self, out)
            if result is not None:
                out = result
        return out

    def _state_dict(self) -> dict[str, Any]:
        mapping: dict[int, int] = {}
        start = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore hyper-parameters and per-parameter state saved by ``state_dict()``.

        The current parameters are kept; state tensors are moved to their parameter's device
        and cast to its dtype (``step`` is neither moved nor cast), as in PyTorch.

        A loaded group that lacks one of the settings PyTorch added over time (``maximize``,
        ``foreach``, ``amsgrad``...) takes this optimizer's default, as in PyTorch.

        Differs from torch: a group that lacks any other setting this optimizer needs (say an
        SGD state dict loaded into Adam, which has no ``betas``), or a parameter state that
        lacks a key the step reads, is refused here; PyTorch accepts the first and fails with
        ``KeyError: 'betas'`` at the next ``step()``.

        Raises:
            TypeError: ``state_dict`` is not a dict, or a group or state entry is not one.
            OptimizerStateKeyError (a KeyError, as torch): the ``'state'`` or
                ``'param_groups'`` key, a group's setting or a parameter state's entry is
                missing.
            ValueError: the group count or a group's size differs, a state index names no
                parameter, or a state tensor's shape differs from its parameter's.
        """
        for hook in list(self._hook_dict("_optimizer_load_state_dict_pre_hooks").values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        self._load_state_dict(state_dict)
        for hook in list(self._hook_dict("_optimizer_load_state_dict_post_hooks").values()):
            hook(self)

    def _load_state_dict(self, state_dict: dict[str, Any]) -> None:
        name = type(self).__name__
        if not isinstance(state_dict, dict):
            raise TypeError(
                f"{name}.load_state_dict expects a dict with 'state' and 'param_groups' keys, "
                f"got {_typename(state_dict)}"
            )
        for key in ("state", "param_groups"):
            if key not in state_dict:
                raise OptimizerStateKeyError(
                    f"{name}.load_state_dict: the state dict has no {key!r} key (an optimizer "
                    "state dict has 'state' and 'param_groups'); nothing was loaded"
                )
        if not isinstance(state_dict["state"], dict):
            raise TypeError(
                f"the state dict's 'state' must be a dict, got {_typename(state_dict['state'])}"
            )
        groups = self.param_groups
        saved_groups = _matching_groups(groups, copy.deepcopy(state_dict["param_groups"]))
        for gi, s in enumerate(saved_groups):
            for key in _FILLED_ON_LOAD.intersection(self.defaults):
                s.setdefault(key, self.defaults[key])
            missing = [k for k in self.defaults if k not in s]
            if missing:
                raise OptimizerStateKeyError(
                    f"{name}.load_state_dict: loaded parameter group {gi} has no "
                    f"{', '.join(map(repr, missing))} (was it saved by another optimizer?); "
                    "nothing was loaded"
                )
        id_map: dict[Any, Tensor] = {}
        group_of: dict[Any, dict[str, Any]] = {}
        for g, s in zip(groups, saved_groups):
            id_map.update(zip(s["params"], g["params"]))
            group_of.update((i, s) for i in s["params"])
        new_state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k not in id_map:
                raise ValueError(
                    f"loaded optimizer state has an entry for parameter index {k!r}, which "
                    "no parameter group lists"
                )
            if not isinstance(v, dict):
                raise TypeError(
                    f"loaded optimizer state for parameter {k!r} must be a dict, got {_typename(v)}"
                )
            lack = self._missing_state(group_of[k], v)
            if lack:
                raise OptimizerStateKeyError(
                    f"{name}.load_state_dict: the state of parameter {k!r} has no "
                    f"{', '.join(map(repr, lack))} (was it saved by another optimizer?); "
                    "nothing was loaded"
                )
            param = id_map[k]
            new_state[param] = self._cast_state(param, v, k)
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
        self.state = new_state
        self.param_groups = saved_groups

    @staticmethod
    def _cast_state(param: Tensor, value: Any, index: Any, key: Any = None) -> Any:
        if isinstance(value, Tensor):
            if key == "step":
                return Tensor._wrap(value._data.copy())
            if value.ndim > 0 and value.shape != param.shape:
                raise ValueError(
                    f"loaded optimizer state '{key}' for parameter {index} has shape "
                    f"{tuple(value.shape)}, but the parameter has shape {tuple(param.shape)}"
                )
            # On the parameter's device (and, for a floating parameter, of its dtype), as
            # PyTorch moves a loaded state; a copy either way.
            v = value.detach()
            if param.is_floating_point():
                v = v.to(device=param.device, dtype=param.dtype, copy=True)
            else:
                v = v.to(device=param.device, copy=True)
            return Tensor._wrap(v._data)
        if isinstance(value, dict):
            return {k: Optimizer._cast_state(param, v, index, k) for k, v in value.items()}
        return copy.deepcopy(value)


def _split_named_params(params: Any) -> tuple[list[Any], list[Any]]:
    """A group's ``params`` as a list of tensors, and their names when given as (name, tensor)
    pairs, as ``named_parameters()`` gives (PyTorch 2.6+; kept in the group's "param_names")."""
    if isinstance(params, Tensor):
        params = [params]
    elif isinstance(params, set):
        raise TypeError(
            "optimizer parameters need to be organized in ordered collections, but the "
            "ordering of tensors in sets will change between runs. Please use a list "
            "instead."
        )
    tensors: list[Any] = []
    names: list[Any] = []
    for param in params:
        if isinstance(param, tuple):
            names.append(param[0])
            tensors.append(param[1])
        else:
            tensors.append(param)
    if names and len(names) != len(tensors):
        raise ValueError(
            "all optimizer params should be with/without names. Some param names are missing"
        )
    return tensors, names


def _matching_groups(groups: list[dict[str, Any]], saved_groups: Any) -> list[dict[str, Any]]:
    """A state dict's 'param_groups', checked to be dicts with 'params' lists that match the
    optimizer's groups in number and sizes."""
    if not isinstance(saved_groups, (list, tuple)) or not all(
        isinstance(s, dict) and isinstance(s.get("params"), (list, tuple)) for s in saved_groups
    ):
        raise TypeError(
            "the state dict's 'param_groups' must be a list of dicts, each with a 'params' list"
        )
    if len(groups) != len(saved_groups):
        raise ValueError("loaded state dict has a different number of parameter groups")
    if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
        raise ValueError(
            "loaded state dict contains a parameter group that doesn't match the size of "
            "optimizer's group"
        )
    return list(saved_groups)
