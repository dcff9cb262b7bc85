"""The parts of ``expand`` and of the two-way (probs / logits) parametrization that every
family shares."""

from __future__ import annotations

from typing import Any

from chainrule._tensor import Size


def expand_params(
    self: Any,
    cls: type,
    batch_shape: Any,
    _instance: Any,
    names: tuple[str, ...],
    event_shape: Any = None,
) -> Any:
    """A new instance of ``type(self)`` whose parameters ``names`` (those present) are expanded
    to ``batch_shape`` (plus the event shape of each parameter)."""
    new = self._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    for name in names:
        if name in self.__dict__:
            v = self.__dict__[name]
            extra = tuple(v.shape[len(self.batch_shape) :])
            setattr(new, name, v.expand(tuple(batch_shape) + extra))
    for k in ("_param",):
        if k in self.__dict__:
            p = "probs" if "probs" in self.__dict__ else "logits"
            new._param = getattr(new, p)
    es = self.event_shape if event_shape is None else event_shape
    super(cls, new).__init__(batch_shape, es, validate_args=False)
    new._validate_args = self._validate_args
    return new
