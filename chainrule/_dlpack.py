"""DLPack interchange: ``chainrule.from_dlpack`` (and ``chainrule.utils.dlpack``).

A tensor exports its memory with ``Tensor.__dlpack__``; ``from_dlpack`` imports any object with
``__dlpack__`` (a NumPy array, a PyTorch tensor, another chainrule tensor) or a bare DLPack
capsule, without copying: NumPy's ``from_dlpack`` does the work, and the tensor wraps its array.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["from_dlpack", "to_dlpack"]


class _Capsule:
    """Gives a bare capsule (from ``to_dlpack``) the protocol NumPy's ``from_dlpack`` reads;
    capsules carry no device field, and chainrule's capsules are CPU memory (kDLCPU = 1)."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


def from_dlpack(ext_tensor: Any) -> Any:
    """A tensor sharing memory with ``ext_tensor`` (an object with ``__dlpack__`` or a DLPack
    capsule). The capsule is consumed: it can be imported once, as in PyTorch."""
    from chainrule import _dtype
    from chainrule._tensor import Tensor, _new_tensor

    if isinstance(ext_tensor, Tensor):
        ext_tensor = ext_tensor._data
    if not hasattr(ext_tensor, "__dlpack__"):
        if type(ext_tensor).__name__ != "PyCapsule":
            raise TypeError(
                f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got "
                f"{type(ext_tensor).__name__}"
            )
        ext_tensor = _Capsule(ext_tensor)
    arr = np.from_dlpack(ext_tensor)
    _dtype.from_np(arr.dtype)  # an unsupported dtype fails here with chainrule's error
    return _new_tensor(arr)


def to_dlpack(tensor: Any) -> Any:
    """A DLPack capsule of ``tensor``'s memory (``tensor.__dlpack__()``)."""
    return tensor.__dlpack__()
