"""Module backward hooks (``register_full_backward_hook``/``_pre_hook``), as PyTorch does them:
an identity ``autograd.Function`` (``BackwardHookFunction``, node ``BackwardHookFunctionBackward``)
wraps the Tensor inputs and the Tensor outputs of one call of the module. The node of the
outputs sees the gradients w.r.t. the outputs (the pre-hooks run there and may replace them);
the node of the inputs sees those w.r.t. the inputs (the full hooks run there and may replace
them). Each call of a hooked module makes one ``_BackwardHook``; ``Module.__call__`` uses it only
when the module has backward hooks, so unhooked calls pay nothing.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

from chainrule._creation import zeros
from chainrule._tensor import Tensor
from chainrule.autograd import grad_mode
from chainrule.autograd.function import Function

__all__: list[str] = []


class BackwardHookFunction(Function):
    """Identity on its Tensor arguments; the node it records is where the hooks sit."""

    @staticmethod
    def forward(ctx: Any, *args: Any) -> Any:
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        return grads


def _spread(where: list[int], values: Any, size: int) -> tuple[Any, ...]:
    """A ``size``-tuple holding ``values`` at the positions ``where`` and None elsewhere."""
    out: list[Any] = [None] * size
    for i, v in zip(where, values):
        out[i] = v
    return tuple(out)


def _replaced(
    hooks: list[Callable[..., Any]], call: Callable[..., Any], grads: Any, what: str, kind: str
) -> Any:
    """Run each hook as ``call(hook, grads)``; a hook's non-None return replaces ``grads`` (of
    the same length, else PyTorch's error naming ``what`` and ``kind``)."""
    for h in hooks:
        new = call(h, grads)
        if new is None:
            continue
        if len(new) != len(grads):
            raise RuntimeError(
                f"{what} returned an invalid number of {kind}, "
                f"got {len(new)}, but expected {len(grads)}"
            )
        grads = new
    return grads


class _BackwardHook:
    """The backward hooks of one call of ``module``."""

    def __init__(
        self, module: Any, hooks: list[Callable[..., Any]], pre_hooks: list[Callable[..., Any]]
    ) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_inputs = -1
        self.input_index: list[int] | None = None
        self.inputs: list[Any] = []
        self.n_outputs = -1
        self.output_index: list[int] | None = None

    def _wrap(self, args: tuple[Any, ...], attach: Callable[[Any], None]) -> Any:
        """Pass the Tensors of ``args`` through ``BackwardHookFunction`` and give its node to
        ``attach``; ``(args, None)`` unchanged when no Tensor needs a gradient."""
        where = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in where]
        if not (grad_mode.is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return args, None
        new = BackwardHookFunction.apply(*tensors)
        node = next(t.grad_fn for t in new if t.grad_fn is not None)
        attach(node)
        out = list(args)
        for i, t in zip(where, new):
            out[i] = t
        return tuple(out), where

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        def attach(node: Any) -> None:
            def hook(grad_inputs: Any, _: Any) -> Any:
                if self.grad_outputs is None:
                    # the outputs' node did not run (no gradient flowed through the module)
                    return None
                assert self.input_index is not None
                # The node passes no gradient on to an input that needs none; PyTorch's hooks
                # see the identity's (materialized) zeros there.
                grads = [
                    zeros(t.shape, dtype=t.dtype, device=t.device) if g is None else g
                    for g, t in zip(grad_inputs, self.inputs)
                ]
                res = _spread(self.input_index, grads, self.n_inputs)
                res = _replaced(
                    self.hooks,
                    lambda h, r: h(self.module, r, self.grad_outputs),
                    res,
                    "Backward hook",
                    "grad_input",
                )
                self.grad_outputs = None
                return tuple(
                    None if g is None else res[i] for g, i in zip(grad_inputs, self.input_index)
                )

            node.register_hook(hook)

        res, self.input_index = self._wrap(args, attach)
        self.n_inputs = len(args)
        if self.input_index is not None:
            self.inputs = [args[i].detach() for i in self.input_index]
        return res

    def setup_output_hook(self, result: Any) -> Any:
        def attach(node: Any) -> None:
            def hook(_: Any, grad_outputs: Any) -> Any:
                assert self.output_index is not None
                local = _spread(self.output_index, grad_outputs, self.n_outputs)
                self.grad_outputs = local
                local = _replaced(
                    self.pre_hooks,
                    lambda h, g: h(self.module, g),
                    local,
                    "Backward pre hook",
                    "grad_output",
                )
                self.grad_outputs = local
                if self.input_index is None:
                    # No input needs a gradient: the full hooks run here, with None inputs.
                    warnings.warn(
                        "Full backward hook is firing when gradients are computed with respect "
                        "to module outputs since no inputs require gradients. See "
                        "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                        "#torch.nn.Module.register_full_backward_hook for more details.",
                        stacklevel=5,
                    )
                    none = (None,) * self.n_inputs
                    for h in self.hooks:
                        r = h(self.module, none, self.grad_outputs)
                        if r is not None and not (
                            isinstance(r, tuple) and all(e is None for e in r)
                        ):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires gradient "
                                "should always return None or None for all gradients."
                            )
                    self.grad_outputs = None
                return tuple(local[i] for i in self.output_index)

            node.register_hook(hook)

        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        res, self.output_index = self._wrap(outs, attach)
        self.n_outputs = len(outs)
        return res[0] if single else res


def backward_hook_of(
    module: Any, hooks: list[Callable[..., Any]], pre_hooks: list[Callable[..., Any]]
) -> _BackwardHook | None:
    """The ``_BackwardHook`` of one call of ``module`` with these full backward hooks and
    pre-hooks (the global ones first); None when there are none."""
    if not hooks and not pre_hooks:
        return None
    return _BackwardHook(module, hooks, pre_hooks)


def attach_old_backward_hooks(module: Any, result: Any, hooks: list[Callable[..., Any]]) -> None:
    """``register_backward_hook``'s hooks, as post-hooks of the node that made the first Tensor
    of ``result`` (its first element, recursively; a dict's first value)."""
    var = result
    while not isinstance(var, Tensor):
        if isinstance(var, dict):
            var = next(v for v in var.values() if isinstance(v, Tensor))
        else:
            var = var[0]
    node = var.grad_fn
    if node is None:
        return
    for hook in hooks:
        node.register_hook(functools.partial(_call_old_hook, hook, module))


def _call_old_hook(hook: Any, module: Any, grad_inputs: Any, grad_outputs: Any) -> Any:
    return hook(module, grad_inputs, grad_outputs)
