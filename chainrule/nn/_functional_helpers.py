"""The last names of ``torch.nn.functional``: ``conv_tbc``, the ``__torch_function__``
helpers, ``boolean_dispatch``, ``assert_int_or_pair``, the TorchScript typing names and the
docstring note tables.

``__torch_function__``: chainrule's own functions do not dispatch to it (a Tensor subclass or
an object defining ``__torch_function__`` is not consulted by ``F.relu`` and friends). The
helpers here implement PyTorch's protocol for code that calls them itself, as a library
written against PyTorch does at the top of its functions: for plain tensors
``has_torch_function*`` is False (so such code takes its ordinary path), and
``handle_torch_function`` calls the ``__torch_function__`` of the arguments that define one,
subclasses first, until one does not return ``NotImplemented`` (NEP-18 order, as
``torch.overrides.handle_torch_function``).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from chainrule._tensor import Tensor
from chainrule.nn._functional.conv import conv1d

__all__ = [
    "conv_tbc",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "handle_torch_function",
    "boolean_dispatch",
    "assert_int_or_pair",
    "BroadcastingList1",
    "BroadcastingList2",
    "BroadcastingList3",
    "DType",
    "Optional",
    "reproducibility_notes",
    "tf32_notes",
    "sparse_support_notes",
]


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-d convolution over (time, batch, channels) input:
    out[t, b, o] = bias[o] + sum_{k, c} x[t + k - pad, b, c] weight[k, c, o] (zeros outside),
    weight (kernel width, in_channels, out_channels), out (T + 2 pad - K + 1, B, out_channels).
    It is ``conv1d`` on the (B, C, T) view, so its gradients are conv1d's."""
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError(
            "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels."
        )
    if bias.ndim != 1:
        raise RuntimeError("Bias tensor must have 1 dim")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    t_out = input.shape[0] + 2 * int(pad) - weight.shape[0] + 1
    if t_out < 0:
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {t_out}: "
            f"[{t_out}, {input.shape[1]}, {weight.shape[2]}]"
        )
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=int(pad))
    return out.permute(2, 0, 1)


def _overrides(arg: Any) -> bool:
    """Whether ``arg``'s type defines ``__torch_function__`` (chainrule's Tensor does not, so a
    plain tensor or Parameter never does)."""
    return getattr(type(arg), "__torch_function__", None) is not None


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """True when some argument's type defines ``__torch_function__`` (False for tensors,
    numbers and None)."""
    return any(_overrides(a) for a in relevant_args)


def has_torch_function_unary(arg: Any) -> bool:
    """:func:`has_torch_function` of the single argument ``arg``."""
    return _overrides(arg)


def has_torch_function_variadic(*args: Any) -> bool:
    """:func:`has_torch_function` of the positional arguments."""
    return any(_overrides(a) for a in args)


def _overloaded_args(relevant_args: Iterable[Any]) -> list[Any]:
    """One argument per distinct overriding type, subclasses before their bases, otherwise in
    argument order (``torch.overrides._get_overloaded_args``)."""
    types: set[type] = set()
    out: list[Any] = []
    for arg in relevant_args:
        t = type(arg)
        if t in types or not _overrides(arg):
            continue
        types.add(t)
        index = len(out)
        for i, old in enumerate(out):
            if issubclass(t, type(old)):
                index = i
                break
        out.insert(index, arg)
    return out


def handle_torch_function(
    public_api: Callable[..., Any], relevant_args: Iterable[Any], *args: Any, **kwargs: Any
) -> Any:
    """Call ``__torch_function__(public_api, types, args, kwargs)`` of the overriding
    arguments in precedence order; the first result that is not ``NotImplemented`` is
    returned. Raises TypeError (PyTorch's text) when there is none."""
    overloaded = _overloaded_args(relevant_args)
    types = tuple(map(type, overloaded))
    for arg in overloaded:
        result = arg.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    func_name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(
        f"no implementation found for '{func_name}' on types that implement "
        f"__torch_function__: {[type(arg) for arg in overloaded]}"
    )


boolean_dispatched: dict[Callable[..., Any], dict[str, Any]] = {}


def boolean_dispatch(
    arg_name: str,
    arg_index: int,
    default: bool,
    if_true: Callable[..., Any],
    if_false: Callable[..., Any],
    module_name: str | None,
    func_name: str | None,
) -> Callable[..., Any]:
    """A function calling ``if_true`` or ``if_false`` by the boolean argument ``arg_name``
    (keyword, else position ``arg_index``, else ``default``), as PyTorch builds
    ``F.max_pool2d`` from its ``return_indices`` flag. The docstring is the one of the two that
    has one (both having one is an error)."""

    def fn(*args: Any, **kwargs: Any) -> Any:
        flag = default
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        doc = if_true.__doc__ = if_false.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is not None:
        doc = if_false.__doc__ = if_true.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is None:
        doc = None
    else:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = doc
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    boolean_dispatched[fn] = {
        "if_true": if_true,
        "if_false": if_false,
        "index": arg_index,
        "default": default,
        "arg_name": arg_name,
    }
    return fn


def assert_int_or_pair(arg: Any, arg_name: str, message: str) -> None:
    """Raise AssertionError(message.format(arg_name)) unless ``arg`` is an int or has two
    entries."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


class _BroadcastingList:
    """TorchScript's ``BroadcastingListN[T]``: in Python, subscripting gives nothing (None),
    as PyTorch's does; the names exist for annotations."""

    def __getitem__(self, types: Any) -> None:
        return None


BroadcastingList1 = _BroadcastingList()
BroadcastingList2 = _BroadcastingList()
BroadcastingList3 = _BroadcastingList()

# ``torch.nn.functional.DType`` is ``int`` (TorchScript's stand-in for a dtype argument).
DType = int

reproducibility_notes: dict[str, str] = {
    "forward_reproducibility_note": "This operation may behave nondeterministically when "
    "given tensors on a CUDA device. See :doc:`/notes/randomness` for more information.",
    "backward_reproducibility_note": "This operation may produce nondeterministic gradients "
    "when given tensors on a CUDA device. See :doc:`/notes/randomness` for more information.",
    "cudnn_reproducibility_note": "In some circumstances when given tensors on a CUDA device "
    "and using CuDNN, this operator may select a nondeterministic algorithm to increase "
    "performance. If this is undesirable, you can try to make the operation deterministic "
    "(potentially at a performance cost) by setting "
    "``torch.backends.cudnn.deterministic = True``. See :doc:`/notes/randomness` for more "
    "information.",
}
tf32_notes: dict[str, str] = {
    "tf32_note": "This operator supports :ref:`TensorFloat32<tf32_on_ampere>`."
}
sparse_support_notes: dict[str, str] = {
    "sparse_beta_warning": "\n.. warning::\n    Sparse support is a beta feature and some "
    "layout(s)/dtype/device combinations may not be supported,\n    or may not have autograd "
    "support. If you notice missing functionality please\n    open a feature request.",
}
