"""``chainrule.device``: where a tensor's array lives ('cpu', or 'cuda' with CuPy)."""

from __future__ import annotations

from typing import Any

__all__ = ["device", "set_default_device", "get_default_device"]


class device:
    """A device, as ``torch.device``: ``device('cpu')``, ``device('cuda', 0)``,
    ``device('cuda:1')``."""

    __slots__ = ("type", "index")

    def __init__(self, type: Any, index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        s = str(type)
        if ":" in s:
            s, idx = s.split(":", 1)
            index = int(idx)
        if s not in ("cpu", "cuda"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {type}"
            )
        self.type = s
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


CPU = device("cpu")


_DEFAULT: list[device | None] = [None]


def set_default_device(device: Any) -> None:  # noqa: F811 - PyTorch's argument name
    """Make ``device`` where factory functions put tensors when given no ``device=``.

    ``None`` restores the CPU. As in PyTorch, a device that cannot be used (``'cuda'`` without a
    GPU backend) is accepted here and fails at the first factory call.
    """
    _DEFAULT[0] = None if device is None else _device_cls(device)


def get_default_device() -> device:
    """The device factory functions use when given none (``device('cpu')`` unless set)."""
    return _DEFAULT[0] or _device_cls("cpu")


_device_cls = device
