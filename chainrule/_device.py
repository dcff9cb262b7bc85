"""``chainrule.device``: where a tensor's array lives ('cpu', or 'cuda' with CuPy)."""

from __future__ import annotations

from builtins import type as builtins_type
from typing import Any, Callable

__all__ = ["device", "set_default_device", "get_default_device", "parse_to", "register_accelerator"]

# Whether an accelerator (a GPU backend) can be used: registered by ``chainrule.backends``
# (``cuda_available``) when it is imported, since this leaf may not import the backends. None
# until then (no accelerator assumed). Read by ``device(<int>)``, PyTorch's index-only form.
_ACCELERATOR: list[Callable[[], bool] | None] = [None]

_NO_ACCELERATOR = "Cannot access accelerator device when none is available."


def register_accelerator(probe: Callable[[], bool]) -> None:
    """Make ``probe`` (True when a GPU backend is usable) the test that ``device(<int>)`` runs."""
    _ACCELERATOR[0] = probe


def _accelerator_index(index: int) -> int:
    """``index`` as the accelerator's device index: PyTorch's ``device(0)``, ``to(0)``,
    ``device=0`` mean the current accelerator's device ``index`` ('cuda:0' here), and raise
    RuntimeError when there is no accelerator (a CPU-only build or machine)."""
    if index < 0:
        raise RuntimeError("Device index must not be negative")
    probe = _ACCELERATOR[0]
    if probe is None or not probe():
        raise RuntimeError(_NO_ACCELERATOR)
    return index


class device:
    """A device, as ``torch.device``: ``device('cpu')``, ``device('cuda', 0)``,
    ``device('cuda:1')``."""

    __slots__ = ("type", "index")

    def __init__(self, type: Any, index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):  # device(1): 'cuda:1'
            self.type, self.index = "cuda", _accelerator_index(type)
            return
        if not isinstance(type, str):
            name = "NoneType" if type is None else builtins_type(type).__name__
            raise TypeError(
                f"device() received an invalid combination of arguments - got ({name}), but "
                "expected one of:\n * (torch.device device)\n      didn't match because some of "
                f"the arguments have invalid types: (!{name}!)\n * (str type, int index = -1)\n"
            )
        s = type
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

    def __enter__(self) -> device:
        """``with torch.device('cuda'):`` makes this the default device of the factory calls
        inside the block (as ``set_default_device``); leaving the block restores the one
        before, so blocks nest."""
        _ENTERED.append(_DEFAULT[0])
        _DEFAULT[0] = self
        return self

    def __exit__(self, *exc: object) -> None:
        _DEFAULT[0] = _ENTERED.pop()


CPU = device("cpu")


_DEFAULT: list[device | None] = [None]
# The default devices that ``with device(...)`` blocks replaced, innermost last.
_ENTERED: list[device | None] = []


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


def _is_dtype(a: Any) -> bool:
    from chainrule import _dtype

    return isinstance(a, _dtype.dtype) or a is float or a is int or a is bool


def _is_device(a: Any) -> bool:
    return isinstance(a, (str, device)) or (isinstance(a, int) and not isinstance(a, bool))


def parse_to(
    args: tuple[Any, ...], kwargs: dict[str, Any], tensor_type: type
) -> tuple[device | None, Any, bool, bool]:
    """The arguments of ``Tensor.to`` / ``Module.to`` in PyTorch's overloads, as
    ``(device, dtype, non_blocking, copy)`` (None where not given):

    - ``to(dtype, non_blocking=False, copy=False, memory_format=...)``
    - ``to(device=None, dtype=None, non_blocking=False, copy=False, memory_format=...)``
    - ``to(other, non_blocking=False, copy=False)``: ``other``'s device and dtype.

    A device is a ``device``, a string (``'cuda:1'``) or a GPU index (``to(0)`` is
    ``'cuda:0'``; without a GPU backend, RuntimeError as in PyTorch). ``memory_format`` is
    accepted and ignored (arrays are C-ordered).
    """
    kw = dict(kwargs)
    dev = kw.pop("device", None)
    dt = kw.pop("dtype", None)
    non_blocking = kw.pop("non_blocking", False)
    copy = kw.pop("copy", False)
    kw.pop("memory_format", None)
    if kw:
        raise TypeError(
            "to() received an invalid combination of arguments - got an unexpected keyword "
            f"argument '{next(iter(kw))}'"
        )
    rest = list(args)
    if rest:
        a = rest[0]
        if isinstance(a, tensor_type):
            dev, dt = a.device, a.dtype  # type: ignore[attr-defined]
            rest.pop(0)
        elif _is_dtype(a):
            dt = rest.pop(0)
        elif a is None or _is_device(a):
            dev = rest.pop(0)
            if rest and (rest[0] is None or _is_dtype(rest[0])):
                dt = rest.pop(0)
        else:
            raise TypeError(
                "to() received an invalid combination of arguments - got "
                f"({type(a).__name__}), but expected one of: (torch.device device = None, "
                "torch.dtype dtype = None, bool non_blocking = False, bool copy = False), "
                "(torch.dtype dtype, bool non_blocking = False, bool copy = False), "
                "(Tensor tensor, bool non_blocking = False, bool copy = False)"
            )
    if rest:
        non_blocking = rest.pop(0)
    if rest:
        copy = rest.pop(0)
    if rest:
        raise TypeError(f"to() takes at most 4 positional arguments ({len(args)} given)")
    if dev is not None:
        dev = device(dev)  # an int: the accelerator's index (RuntimeError without one)
    return dev, dt, bool(non_blocking), bool(copy)
