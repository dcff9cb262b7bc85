"""Assorted layers and containers: ``CosineSimilarity``, ``PairwiseDistance``,
``ChannelShuffle``, ``UpsamplingNearest2d``/``UpsamplingBilinear2d``, ``ParameterDict``,
``Buffer`` and ``DataParallel`` (a pass-through on a machine without GPUs, as in PyTorch)."""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from chainrule._tensor import Tensor
from chainrule.nn import functional as F
from chainrule.nn.modules.module import Module
from chainrule.nn.modules.reshape import Upsample
from chainrule.nn.parameter import Parameter

__all__ = [
    "CosineSimilarity",
    "PairwiseDistance",
    "ChannelShuffle",
    "UpsamplingNearest2d",
    "UpsamplingBilinear2d",
    "ParameterDict",
    "Buffer",
    "DataParallel",
]


class CosineSimilarity(Module):
    """<x1, x2> / (max(||x1||, eps) max(||x2||, eps)) along ``dim``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """||x1 - x2 + eps||_p along the last dim (``norm`` holds p)."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class ChannelShuffle(Module):
    """Interleave the channels of ``groups`` groups (ShuffleNet)."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class UpsamplingNearest2d(Upsample):
    """``Upsample(mode='nearest')`` of (N, C, H, W) inputs."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(mode='bilinear', align_corners=True)`` of (N, C, H, W) inputs."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class _BufferMeta(type):
    # ``Buffer(t)`` returns a plain Tensor flagged ``_is_buffer``; isinstance reads the flag.
    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor as a buffer: assigned to a ``Module`` attribute it is registered with
    ``register_buffer(name, t, persistent)``. ``Buffer(data)`` returns ``data.detach()``
    flagged as a buffer (``data`` defaults to an empty tensor)."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Any:  # type: ignore[misc]
        if data is None:
            from chainrule._creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): data must be a Tensor, got {type(data).__name__}")
        t = data.detach()
        t._is_buffer = True
        t.persistent = persistent
        return t


class ParameterDict(Module):
    """An ordered dict of parameters (tensors given to it become ``Parameter``s), registered
    under their keys so that the parent sees them."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _check_key(self, key: Any) -> None:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}'). Open an issue on github if you need "
                "non-string keys."
            )

    def __getitem__(self, key: str) -> Any:
        self._check_key(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        self._check_key(key)
        self._keys[key] = None
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, key, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        return ParameterDict({k: self[k] for k in self._keys})

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in list(self._keys):
            del self[k]

    def pop(self, key: str) -> Any:
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        k = next(reversed(self))
        return k, self.pop(k)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> Any:
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterable[Any]:
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        """Add the (key, value) pairs of a mapping or an iterable of pairs."""
        if isinstance(parameters, (dict, ParameterDict)) or hasattr(parameters, "keys"):
            for k in parameters.keys():
                self[k] = parameters[k]
            return
        if not hasattr(parameters, "__iter__"):
            raise TypeError(
                "ParametersDict.update should be called with an iterable of "
                "key/value pairs, but got " + type(parameters).__name__
            )
        for j, p in enumerate(parameters):
            if not hasattr(p, "__iter__") or isinstance(p, (str, Tensor)):
                raise TypeError(
                    f"ParameterDict update sequence element #{j} should be "
                    f"Iterable; is {type(p).__name__}"
                )
            p = tuple(p)
            if len(p) != 2:
                raise ValueError(
                    f"ParameterDict update sequence element #{j} has length {len(p)}; 2 is required"
                )
            self[p[0]] = p[1]

    def __or__(self, other: ParameterDict) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self

    def extra_repr(self) -> str:
        lines = []
        for k, p in self.items():
            if isinstance(p, Tensor):
                size = "x".join(str(s) for s in p.size())
                kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({k}): {kind} containing: [{p.dtype!r} of size {size}]")
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")


class DataParallel(Module):
    """Data parallelism over GPUs. chainrule runs on the CPU only, where PyTorch's
    ``DataParallel`` calls the wrapped ``module`` directly (``device_ids`` is empty); this is
    that behaviour. State-dict keys carry the ``module.`` prefix, as in PyTorch."""

    def __init__(
        self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0
    ) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list[Any] = []

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
