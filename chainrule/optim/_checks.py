"""Argument checks shared by the optimizers' constructors."""

from __future__ import annotations

__all__ = ["check_nonnegative", "check_betas", "check_flags", "check_capturable"]


def check_nonnegative(*settings: tuple[str, float]) -> None:
    """Each ``(label, value)`` must satisfy ``0 <= value`` (NaN fails); the first that does not
    raises PyTorch's ``ValueError("Invalid <label>: <value>")``."""
    for label, value in settings:
        if not 0.0 <= value:
            raise ValueError(f"Invalid {label}: {value}")


def check_flags(
    *, differentiable: bool = False, fused: bool | None = None, foreach: bool | None = None
) -> None:
    """Constructor checks of the execution flags every optimizer takes (Note [optimizer flags]).

    Note [optimizer flags]
    ``foreach`` and ``fused`` choose among PyTorch's kernels (one tensor at a time, a list of
    tensors at once, one fused kernel); chainrule has one NumPy implementation that follows the
    single-tensor path, so both are accepted and change nothing but these checks, which PyTorch
    makes too. ``capturable`` is for CUDA graphs: on CPU PyTorch accepts it at construction and
    fails the first ``step()`` with an ``AssertionError``; chainrule does the same
    (``check_capturable``). ``differentiable=True`` asks for a step recorded by autograd (so that
    one can differentiate through the update); chainrule's steps write arrays outside autograd,
    so it is refused at construction with ``NotImplementedError`` rather than ignored.
    ``maximize`` works everywhere: the update ascends.
    """
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if fused and differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")
    if differentiable:
        raise NotImplementedError(
            "differentiable=True is not supported by chainrule's optimizers: the update runs "
            "on arrays outside autograd, so it cannot be differentiated through (PyTorch also "
            "refuses it for leaf parameters that require grad)"
        )


def check_capturable(group: dict, what: str = "params and state_steps") -> None:
    """Raise PyTorch's CPU error for ``capturable=True`` (see Note [optimizer flags])."""
    if group.get("capturable", False):
        raise AssertionError(
            f"If capturable=True, {what} must be on supported devices: ['cuda', 'xpu', 'hpu', "
            "'privateuseone', 'xla']. chainrule runs on the CPU only, so capturable must be "
            "False."
        )


def check_betas(betas: tuple[float, float]) -> None:
    """PyTorch's checks ``0 <= beta_i < 1``."""
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
