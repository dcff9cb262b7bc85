"""Reading a GPU index out of the forms ``torch.cuda`` functions accept (shared by
``chainrule.cuda`` and ``cuda/streams.py``, below both)."""

from __future__ import annotations

from typing import Any

__all__ = ["_index"]


def _index(device: Any, optional: bool = True) -> int | None:
    """The GPU index in ``device`` (int, ``'cuda:1'``, ``'cuda'``, ``chainrule.device``, None).

    ``None`` and ``'cuda'`` mean the current device (returned as None when ``optional``).
    """
    if device is None:
        return None
    if isinstance(device, bool):
        raise ValueError(
            f"Expected a torch.device with a specified index or an integer, but got:{device}"
        )
    if isinstance(device, int):
        return device
    kind = getattr(device, "type", None)
    if kind is not None:
        idx = device.index
    else:
        s = str(device)
        kind, _, rest = s.partition(":")
        try:
            idx = int(rest) if rest else None
        except ValueError:
            raise RuntimeError(f"Invalid device string: '{device}'") from None
    if kind != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {device}")
    return idx
