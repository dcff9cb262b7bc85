"""Module's state dicts: ``state_dict``, ``load_state_dict`` and the per-module hooks they call
(``_save_to_state_dict``, ``_check_state``), as a base class of ``Module`` (module.py).

Every key and shape is checked before the first copy, so a failed load leaves the module
untouched.
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from typing import Any, Callable, Iterator, Mapping

from chainrule._tensor import Tensor
from chainrule.autograd.grad_mode import no_grad
from chainrule.nn.parameter import Parameter

__all__: list[str] = []

_EXTRA = "_extra_state"
# local_metadata key under which load_state_dict hands its copy plan to chainrule's own
# _load_from_state_dict overrides (marked ``_defers``), so that they are checked before any copy.
_PLAN = "_chainrule_load_plan"
_NEVER = (
    "Reached a code path in Module.{}() that should never be called. Please file an issue at "
    "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to report this bug."
)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it did not find and those it did not use."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _StateDictMixin:
    """The state-dict surface of ``Module``; it reads the registries that Module's ``__init__``
    fills (Note [module registries] in module.py)."""

    _parameters: dict[str, Any]
    _buffers: dict[str, Any]
    _non_persistent_buffers_set: set[str]
    _modules: dict[str, Any]
    modules: Callable[[], Iterator[Any]]  # Module's

    def _get_name(self) -> str:
        """The class name, as ``repr`` and the load errors show it."""
        return type(self).__name__

    def get_extra_state(self) -> Any:
        """What ``state_dict`` saves under ``_extra_state``, for a subclass that overrides it."""
        raise RuntimeError(_NEVER.format("get_extra_state"))

    def set_extra_state(self, state: Any) -> None:
        """Takes back what ``get_extra_state`` returned, from ``load_state_dict``."""
        raise RuntimeError(_NEVER.format("set_extra_state"))

    def _save_to_state_dict(
        self, destination: dict[str, Any], prefix: str, keep_vars: bool
    ) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not _StateDictMixin.get_extra_state:
            destination[prefix + _EXTRA] = self.get_extra_state()

    def state_dict(
        self, *args: Any, destination: Any = None, prefix: str = "", keep_vars: bool = False
    ) -> dict[str, Any]:
        """Ordered ``{dotted_name: tensor}`` of parameters and persistent buffers.

        The tensors are detached but share memory with the module (as in PyTorch); clone them
        to keep a snapshot.
        """
        if args:
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        meta = {"version": getattr(self, "_version", 1)}
        if hasattr(destination, "_metadata"):
            # PyTorch's per-module versions, keyed by the module's dotted name ("" the root).
            destination._metadata[prefix[:-1]] = meta
        hooks = self.__dict__.get("_state_dict_hooks")
        pre = self.__dict__.get("_state_dict_pre_hooks")
        if pre:
            for hook in list(pre.values()):
                hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        if hooks:
            for hook in list(hooks.values()):
                res = hook(self, destination, prefix, meta)
                if getattr(hook, "_from_public_api", False):
                    if res is not None:
                        raise RuntimeError("state_dict post-hook must return None")
                elif res is not None:
                    destination = res
        return destination

    def _check_state(
        self,
        state_dict: Mapping[str, Any],
        prefix: str,
        missing: list[str],
        unexpected: list[str],
        errors: list[str],
        plan: list[tuple[Any, str, Any, Any]],
        assign: bool = False,
    ) -> None:
        """Collect this module's copy plan and problems without changing anything."""
        local = {k: v for k, v in self._parameters.items() if v is not None}
        local.update(
            (k, v)
            for k, v in self._buffers.items()
            if v is not None and k not in self._non_persistent_buffers_set
        )
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                missing.append(key)
                continue
            src = state_dict[key]
            if not isinstance(src, Tensor):
                errors.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(src)}"
                )
                continue
            if param.ndim == 0 and src.ndim == 1 and src.shape[0] == 1:
                src = src[0]
            if src.shape != param.shape:
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {src.shape} from "
                    f"checkpoint, the shape in current model is {param.shape}."
                )
                continue
            if (
                assign
                and isinstance(param, Parameter)
                and param.requires_grad
                and not src.is_floating_point()
            ):
                # torch's text; checked here, before anything is replaced, so that a bad
                # entry never leaves the module half assigned.
                errors.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {param.shape} and whose dimensions in the checkpoint are {src.shape}, "
                    "an exception occurred : ('Only Tensors of floating point and complex dtype "
                    "can require gradients',)."
                )
                continue
            plan.append((self, name, param, src))
        if type(self).set_extra_state is not _StateDictMixin.set_extra_state:
            local[_EXTRA] = None
            if prefix + _EXTRA in state_dict:
                plan.append((self, _EXTRA, None, state_dict[prefix + _EXTRA]))
            else:
                missing.append(prefix + _EXTRA)
        for key in state_dict:
            if key.startswith(prefix):
                head = key[len(prefix) :].split(".", 1)
                if len(head) > 1:
                    if head[0] not in self._modules:
                        unexpected.append(key)
                elif head[0] not in local:
                    unexpected.append(key)

    def _load_from_state_dict(
        self,
        state_dict: Mapping[str, Any],
        prefix: str,
        local_metadata: dict[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        """Load this module's own entries (not its children's) from ``state_dict``, noting the
        problems in the lists. ``load_state_dict`` calls it for a subclass that overrides it
        (to rename or convert old entries, then call this); otherwise it checks every module
        before it copies anything."""
        deferred = local_metadata.get(_PLAN)
        plan: list[tuple[Any, str, Any, Any]] = [] if deferred is None else deferred
        n = len(error_msgs)
        assign = bool(local_metadata.get("assign_to_params_buffers", False))
        self._check_state(
            state_dict, prefix, missing_keys, unexpected_keys, error_msgs, plan, assign
        )
        if deferred is None and len(error_msgs) == n:
            _apply_plan(plan, assign)

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        """Copy tensors from ``state_dict`` into this module's parameters and buffers.

        Returns ``_IncompatibleKeys(missing_keys, unexpected_keys)``. With ``strict`` either list
        being non-empty is an error; a size mismatch or a non-tensor value always is. Every check
        runs before the first copy, so on error nothing has changed. With ``assign`` the
        module's tensors are replaced by the given ones (as Parameters where they were).
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        plan: list[tuple[Any, str, Any, Any]] = []

        # Walk _modules without de-duplication, as state_dict() does: a module shared under two
        # names is loaded under both.
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)  # the load pre-hooks may change it
        if metadata is not None:
            state_dict._metadata = metadata  # type: ignore[attr-defined]
        # A load post-hook sees its module loaded and may edit the key lists before the strict
        # check (PyTorch's contract): with post-hooks in the tree, each module is copied as soon
        # as it is checked and its post-hooks run after its children, in PyTorch's order (a
        # failed load then leaves the modules before the failure loaded, as PyTorch's does).
        # Without them, everything is checked before the first copy.
        eager = any(m.__dict__.get("_load_state_dict_post_hooks") for m in self.modules())
        result = _IncompatibleKeys(missing, unexpected)

        def walk(m: Any, prefix: str) -> None:
            start, n_err = len(plan), len(errors)
            # The checkpoint's metadata for this module (its version when saved), as torch's.
            meta = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                meta["assign_to_params_buffers"] = assign
            for hook in list(m.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
                hook(m, state_dict, prefix, meta, strict, missing, unexpected, errors)
            impl = type(m)._load_from_state_dict
            if impl is _StateDictMixin._load_from_state_dict:
                m._check_state(state_dict, prefix, missing, unexpected, errors, plan, assign)
            elif getattr(impl, "_defers", False):  # chainrule's own (BatchNorm): into the plan
                impl(
                    m,
                    state_dict,
                    prefix,
                    {**meta, _PLAN: plan},
                    strict,
                    missing,
                    unexpected,
                    errors,
                )
            else:  # a user's override loads its module at once, as in PyTorch
                m._load_from_state_dict(
                    state_dict, prefix, meta, strict, missing, unexpected, errors
                )
            if eager:
                if len(errors) == n_err:
                    _apply_plan(plan[start:], assign)
                del plan[start:]
            for name, child in m._modules.items():
                if child is not None:
                    walk(child, prefix + name + ".")
            if eager:
                _run_load_post_hooks(m, result)

        walk(self, "")
        if strict:
            _add_strict_errors(errors, missing, unexpected)
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    self._get_name(), "\n\t".join(errors)
                )
            )
        _apply_plan(plan, assign)
        return _IncompatibleKeys(missing, unexpected)


def _add_strict_errors(errors: list[str], missing: list[str], unexpected: list[str]) -> None:
    """PyTorch's strict-mode messages, first in the error list."""
    if unexpected:
        keys = ", ".join(f'"{k}"' for k in unexpected)
        errors.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
    if missing:
        keys = ", ".join(f'"{k}"' for k in missing)
        errors.insert(0, f"Missing key(s) in state_dict: {keys}. ")


def _run_load_post_hooks(m: Any, result: _IncompatibleKeys) -> None:
    """The module's ``register_load_state_dict_post_hook`` hooks, with the (mutable) key lists."""
    for hook in list(m.__dict__.get("_load_state_dict_post_hooks", {}).values()):
        if hook(m, result) is not None:
            raise RuntimeError("load_state_dict post-hook must return None")


def _apply_plan(plan: list[tuple[Any, str, Any, Any]], assign: bool) -> None:
    """Copy (or with ``assign`` put) each checked entry into its module."""
    with no_grad():
        for mod, name, dest, src in plan:
            if dest is None:
                mod.set_extra_state(src)
            elif assign:
                if isinstance(dest, Parameter) and not isinstance(src, Parameter):
                    src = Parameter(src, requires_grad=dest.requires_grad)
                elif isinstance(src, Parameter):
                    src.requires_grad_(dest.requires_grad)
                setattr(mod, name, src)
            else:
                dest.copy_(src)
