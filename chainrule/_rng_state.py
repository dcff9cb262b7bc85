"""The default generator's state as a ByteTensor (``get_rng_state``/``set_rng_state``) and
``binomial`` sampling."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "get_rng_state",
    "set_rng_state",
    "binomial",
]


def get_rng_state() -> Any:
    """The default generator's state as a uint8 tensor (for :func:`set_rng_state`)."""
    from chainrule._random import default_generator

    return generator_state(default_generator)


def set_rng_state(new_state: Any) -> None:
    """Restore the default generator from a state of :func:`get_rng_state`."""
    from chainrule._random import default_generator

    restore_generator(default_generator, new_state)


def generator_state(gen: Any) -> Any:
    """``gen``'s seed and state as a uint8 CPU tensor (for :func:`restore_generator`)."""
    import json

    from chainrule._creation import tensor

    blob = json.dumps({"seed": gen.initial_seed(), "state": gen.get_state()}).encode()
    return tensor(np.frombuffer(blob, dtype=np.uint8).copy())


def restore_generator(gen: Any, new_state: Any) -> None:
    """Restore ``gen`` from a state of :func:`generator_state`, with PyTorch's errors."""
    import json

    from chainrule._tensor import Tensor

    if not isinstance(new_state, Tensor):
        raise TypeError("expected a torch.ByteTensor, but got " + type(new_state).__name__)
    if new_state._data.dtype != np.uint8:
        raise TypeError("expected a torch.ByteTensor, but got " + new_state.type())
    try:
        data = new_state._backend.to_host(new_state._data)
        obj = json.loads(bytes(data.tobytes()).decode())
        gen.set_state(obj["state"])
        gen._seed = int(obj["seed"])
    except (ValueError, KeyError, TypeError) as err:
        raise RuntimeError("Invalid RNG state: not a state made by get_rng_state") from err


def binomial(count: Any, prob: Any, generator: Any = None) -> Any:
    """Samples of Binomial(count, prob), elementwise (broadcast), in ``count``'s float dtype.
    Not differentiable (PyTorch defines no derivative)."""
    from chainrule._creation import rng_of, tensor

    if not count.is_floating_point():
        names = {
            "int64": "Long",
            "int32": "Int",
            "int16": "Short",
            "int8": "Char",
            "uint8": "Byte",
            "bool": "Bool",
        }
        raise ValueError(
            "binomial only supports floating-point dtypes for count, got: "
            + names.get(str(count.dtype).split(".")[-1], str(count.dtype))
        )
    c = count._backend.to_host(count._data)
    p = prob._backend.to_host(prob._data)
    draws = rng_of(generator, count).binomial(c.astype(np.int64), np.clip(p, 0, 1))
    return tensor(draws.astype(c.dtype), device=count.device)
