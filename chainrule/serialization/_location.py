"""Where ``load`` puts a tensor: its saved location and ``map_location``, as ``torch.load``.

A saved tensor carries the location it was saved from (``'cpu'``, ``'cuda:0'``).
``map_location`` then decides, as in PyTorch:

- ``None``: the saved location (a CUDA location without a GPU raises PyTorch's error);
- a string or ``device``: that device, for every tensor;
- a dict: ``map_location.get(location, location)`` (locations map to locations);
- a callable ``f(tensor, location)``: its result when it returns a tensor, the device it
  names when it returns a string or device, the saved location when it returns None. It is
  given the tensor read on the CPU (PyTorch gives a CPU storage).
"""

from __future__ import annotations

from typing import Any

__all__ = ["place"]

_NO_CUDA = (
    "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
    "If you are running on a CPU-only machine, please use torch.load with "
    "map_location=torch.device('cpu') to map your storages to the CPU."
)


def place(t: Any, location: str, map_location: Any) -> Any:
    """``t`` (read on the CPU, saved from ``location``) where ``map_location`` puts it."""
    from chainrule._device import device
    from chainrule._tensor import Tensor
    from chainrule.backends import cuda_available

    if map_location is None:
        target: Any = location
    elif callable(map_location) and not isinstance(map_location, (str, device)):
        r = map_location(t, location)
        if isinstance(r, Tensor):
            return r
        target = location if r is None else r
    elif isinstance(map_location, dict):
        target = map_location.get(location, location)
        target = str(target) if isinstance(target, device) else target
    else:
        target = map_location
    d = device(target)
    if d.type == "cpu":
        return t
    if not cuda_available():
        raise RuntimeError(_NO_CUDA)
    return t.to(d)
