"""``GradScaler``: dynamic loss scaling, as ``torch.amp.GradScaler``.

The loss is multiplied by ``scale`` before backward; ``unscale_`` divides the optimizer's
gradients by it and records whether any is inf or NaN; ``step`` skips the optimizer step when one
was; ``update`` multiplies the scale by ``backoff_factor`` after a skipped step and by
``growth_factor`` after ``growth_interval`` clean steps in a row. A scaler for ``'cuda'`` on a
machine without a GPU warns and disables itself, as PyTorch's does; a disabled scaler passes
everything through (``scale(loss)`` is ``loss``, ``step`` is ``optimizer.step()``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from chainrule.autograd.grad_mode import no_grad
from chainrule.backends import cuda_available

__all__ = ["GradScaler"]

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """Dynamic loss scaler (see the module docstring for the update rule)."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device == "cuda" and not cuda_available():
            warnings.warn(
                "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                UserWarning,
                stacklevel=2,
            )
            self._enabled = False
        if growth_factor <= 1.0:
            raise ValueError("The growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise ValueError("The backoff factor must be < 1.0.")
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer: dict[int, dict[str, Any]] = {}

    def is_enabled(self) -> bool:
        """Whether the scaler scales (False when disabled or when CUDA was asked for and absent)."""
        return self._enabled

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def scale(self, outputs: Any) -> Any:
        """``outputs * scale`` for a tensor or a (nested) list/tuple of tensors."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale

    def _state(self, optimizer: Any) -> dict[str, Any]:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": 0.0})

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place, once per step."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv = 1.0 / self._scale
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    g = p.grad
                    g.mul_(inv)
                    if not bool(np.isfinite(g.numpy()).all()):
                        found = True
        state["found_inf"] = 1.0 if found else 0.0
        state["stage"] = _UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale if not done yet, then ``optimizer.step()`` unless a gradient was inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        result = None
        if not state["found_inf"]:
            result = optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale: Any = None) -> None:
        """Adjust the scale from this step's inf checks (or set it to ``new_scale``)."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if hasattr(new_scale, "item") else new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer.values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer = {}

    def state_dict(self) -> dict[str, Any]:
        """The scaler's state (empty when disabled), with PyTorch's keys."""
        if not self._enabled:
            return {}
        return {
            "scale": self._scale,
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state written by :meth:`state_dict`."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
