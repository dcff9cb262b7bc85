"""``torch.nn.factory_kwargs``: the device / dtype / memory_format keywords of a module's
constructor, checked and gathered for the tensor factories."""

from __future__ import annotations

from typing import Any

__all__ = ["factory_kwargs"]

_KEYS = {"device", "dtype", "memory_format"}


def factory_kwargs(kwargs: dict[str, Any] | None) -> dict[str, Any]:
    """``{device, dtype, memory_format}`` from ``kwargs`` (or its ``factory_kwargs`` entry,
    which may not repeat a key given directly); any other key is a TypeError."""
    if kwargs is None:
        return {}
    simple = _KEYS | {"factory_kwargs"}
    unexpected = set(kwargs) - simple
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    r = {k: v for k, v in kwargs.items() if k in _KEYS}
    extra = kwargs.get("factory_kwargs", {})
    if extra:
        bad = set(extra) - _KEYS
        if bad:
            raise TypeError(f"unexpected kwargs {bad}")
        for k, v in extra.items():
            if k in r:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = v
    return r
