"""``torch.utils.checkpoint``: trade compute for memory by recomputing a segment's forward
during backward instead of keeping its activations.

Note [two checkpoints]
PyTorch has two implementations and so does this module, built from public autograd pieces:
  - ``use_reentrant=True`` (``CheckpointFunction``, an ``autograd.Function``): the forward runs
    under ``no_grad``, so the segment records no graph and keeps nothing but its inputs; the
    Function's backward reruns the segment with grad on, from detached copies of the inputs,
    and runs a nested ``autograd.backward`` through that fresh graph. Gradients of the
    segment's parameters are accumulated by that nested backward, so ``autograd.grad`` and
    ``backward(inputs=...)`` are not supported (as in PyTorch).
  - ``use_reentrant=False``: the forward runs normally, recording the graph, but inside
    ``saved_tensors_hooks`` whose pack hook keeps only a numbered handle (with the value's
    shape and dtype) instead of the value. When backward first unpacks a handle, the segment
    is rerun from the kept inputs under a second pack hook that collects every value it saves,
    in order; the n-th value saved by the rerun is the n-th handle's value. So the graph and
    the gradients are exactly those of the plain run (``autograd.grad``, ``inputs=``, double
    backward work), only the saved values are recomputed. A rerun whose saved values differ
    in shape or dtype from the forward's raises ``CheckpointError`` (``determinism_check``).
With ``preserve_rng_state=True`` (the default) the default generator's state at the forward is
restored for the rerun and put back afterwards, so dropout masks are the same both times.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, ContextManager, Iterable

from chainrule import _random
from chainrule import autograd as _autograd
from chainrule._tensor import Tensor
from chainrule.autograd import Function
from chainrule.autograd import grad_mode as _grad_mode
from chainrule.autograd.engine import checkpoint_valid
from chainrule.autograd.graph import saved_tensors_hooks

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "detach_variable",
    "noop_context_fn",
]


class CheckpointError(RuntimeError):
    """A rerun of a checkpointed segment did not save what its forward saved."""


def noop_context_fn() -> tuple[ContextManager[Any], ContextManager[Any]]:
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn, as PyTorch does, when no tensor input requires grad (no gradient will flow)."""
    if not any(isinstance(i, Tensor) and i.requires_grad for i in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Detached copies of the tensors of ``inputs`` that keep their ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


class _rng_restored:
    """Run a block with the default generator at ``state``, then put back the state it had."""

    def __init__(self, state: Any) -> None:
        self.state = state

    def __enter__(self) -> None:
        if self.state is not None:
            self.prev = _random.default_generator.get_state()
            _random.default_generator.set_state(self.state)

    def __exit__(self, *exc: object) -> None:
        if self.state is not None:
            _random.default_generator.set_state(self.prev)


def _rng_state(preserve: bool) -> Any:
    if not preserve:
        return None
    return _random.default_generator.get_state()


class CheckpointFunction(Function):
    """The ``use_reentrant=True`` checkpoint (Note [two checkpoints])."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable[..., Any], preserve: bool, *args: Any) -> Any:
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.rng_state = _rng_state(preserve)
        tensors, ctx.tensor_indices, ctx.inputs = [], [], []
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                tensors.append(a)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(a)
        ctx.save_for_backward(*tensors)
        with _grad_mode.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        if not checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() "
                "or passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument."
            )
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = detach_variable(tuple(inputs))
        with _rng_restored(ctx.rng_state), _grad_mode.enable_grad():
            outputs = ctx.run_function(*detached)
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        outs, gs = [], []
        for o, g in zip(outputs, grads):
            if isinstance(o, Tensor) and o.requires_grad:
                outs.append(o)
                gs.append(g)
        if not outs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        _autograd.backward(outs, gs)
        return (None, None) + tuple(d.grad if isinstance(d, Tensor) else None for d in detached)


class _Handle:
    """What the forward's pack hook keeps for a value: its number, shape and dtype."""

    __slots__ = ("index", "meta")

    def __init__(self, index: int, meta: dict[str, Any]) -> None:
        self.index = index
        self.meta = meta


def _meta(t: Any) -> dict[str, Any]:
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


class _Frame:
    """One non-reentrant checkpoint call: what it needs to rerun its segment."""

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        rng_state: Any,
        recompute_ctx: Callable[[], ContextManager[Any]],
        check: bool,
    ) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.rng_state = rng_state
        self.recompute_ctx = recompute_ctx
        self.check = check
        self.count = 0  # handles given out by the forward
        self.recomputed: dict[int, Any] = {}

    def pack(self, t: Any) -> _Handle:
        h = _Handle(self.count, _meta(t))
        self.count += 1
        return h

    def unpack(self, h: _Handle) -> Any:
        if h.index not in self.recomputed:
            self.recompute()
        t = self.recomputed.pop(h.index, None)
        if t is None:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was not "
                "saved during the recomputation (the checkpointed function saved "
                f"{self.count} tensors in its forward pass)"
            )
        if self.check and _meta(t) != h.meta:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                "different metadata than during the forward pass.\n"
                f"tensor at position {h.index}:\n"
                f"saved metadata: {h.meta}\nrecomputed metadata: {_meta(t)}\n"
            )
        return t

    def recompute(self) -> None:
        got: list[Any] = []

        def collect(t: Any) -> int:
            got.append(t)
            return len(got) - 1

        def refuse(i: int) -> Any:
            raise RuntimeError("a value saved while recomputing a checkpoint was unpacked")

        args = detach_variable(tuple(self.args))
        with (
            _rng_restored(self.rng_state),
            _grad_mode.enable_grad(),
            self.recompute_ctx(),
            saved_tensors_hooks(collect, refuse),
        ):
            self.fn(*args, **self.kwargs)
        if len(got) != self.count and self.check:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{self.count}\nNumber of tensors saved during recomputation: {len(got)}"
            )
        self.recomputed = dict(enumerate(got))


def _checkpoint_without_reentrant(
    function: Callable[..., Any],
    preserve_rng_state: bool,
    context_fn: Callable[[], tuple[ContextManager[Any], ContextManager[Any]]],
    determinism_check: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got {determinism_check}"
        )
    forward_ctx, recompute_ctx = context_fn()
    if not _grad_mode.is_grad_enabled():  # nothing is saved, so nothing to recompute
        with forward_ctx:
            return function(*args, **kwargs)
    # The rerun's context manager is made again for each rerun (a second backward with
    # retain_graph=True reruns the segment again); the first comes from this call.
    pending = [recompute_ctx]

    def next_recompute_ctx() -> ContextManager[Any]:
        return pending.pop() if pending else context_fn()[1]

    frame = _Frame(
        function,
        args,
        kwargs,
        _rng_state(preserve_rng_state),
        next_recompute_ctx,
        determinism_check == "default",
    )
    with forward_ctx, saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], tuple[ContextManager[Any], ContextManager[Any]]] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    **kwargs: Any,
) -> Any:
    """Run ``function(*args, **kwargs)`` without keeping its activations for backward;
    backward recomputes them by running it again (Note [two checkpoints]).

    Args:
        function: the segment to run (a module or any callable).
        args: its arguments.
        use_reentrant: which implementation (Note [two checkpoints]); ``False`` is the one
            PyTorch recommends. Not given: a warning, then ``True``, as PyTorch 2.x does.
        context_fn: (``use_reentrant=False`` only) returns two context managers, entered
            around the forward and around the recomputation.
        determinism_check: ``"default"`` checks that the recomputation saves values of the
            shapes and dtypes the forward saved; ``"none"`` does not.
        debug, early_stop: accepted for PyTorch compatibility (the recomputation always runs
            the whole segment).
        kwargs: ``preserve_rng_state`` (default True: the rerun sees the random state of the
            forward, so dropout is the same); with ``use_reentrant=False`` the others are
            passed to ``function``.

    Returns:
        What ``function`` returns.

    With ``use_reentrant=True``, ``autograd.grad`` or ``backward(inputs=...)`` through a
    checkpoint raises PyTorch's RuntimeError (the rerun's backward would write ``.grad``);
    ``use_reentrant=False`` supports both.
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(
        function, preserve, context_fn, determinism_check, args, kwargs
    )


def checkpoint_sequential(
    functions: Any,
    segments: int,
    input: Any,  # noqa: A002 - PyTorch's argument name
    use_reentrant: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Run a sequence of modules (an ``nn.Sequential`` or a list) in ``segments`` chunks,
    checkpointing every chunk but the last (whose activations backward needs first).

    Args:
        functions: the modules, run one after the other.
        segments: how many chunks to split them into.
        input: the first module's input.
        use_reentrant: as in ``checkpoint`` (not given: a warning, then True).
        kwargs: ``preserve_rng_state``, as in ``checkpoint``.
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
            "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is not "
            "passed. use_reentrant=False is recommended, but if you need to preserve the current "
            "default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
            "the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    from chainrule.nn.modules.container import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    functions = list(functions)

    def run_function(start: int, end: int) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(
            run_function(start, end),
            input,
            use_reentrant=use_reentrant,
            preserve_rng_state=preserve,
        )
    return run_function(end + 1, len(functions) - 1)(input)
