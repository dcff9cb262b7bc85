"""``torch.cuda``'s random-state functions over the per-GPU generators (Note [one generator per
GPU] in chainrule/_random.py): each GPU's stream is independent of the CPU's and of the other
GPUs'. ``get_rng_state``/``set_rng_state`` take a device (default: the current GPU) and use the
CPU generator's ByteTensor format. Without a GPU each answers as PyTorch's CPU build:
``get_rng_state`` and ``initial_seed`` raise its ``AssertionError``, ``get_rng_state_all`` is
empty, and the seeding functions and ``set_rng_state`` do nothing (PyTorch queues them)."""

from __future__ import annotations

from typing import Any

from chainrule.backends import cuda_available, get_backend, seed_cuda
from chainrule.cuda._devindex import _index

__all__ = [
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "get_rng_state_all",
    "set_rng_state_all",
]


def _gpu(device: Any = "cuda") -> int:
    """The GPU index ``device`` names (``'cuda'``: the current one), checked."""
    be: Any = get_backend("cuda")  # PyTorch's CPU-build AssertionError without a GPU
    idx = _index(device)
    return be.current_device() if idx is None else be.check_device(idx)


def manual_seed(seed: int) -> None:
    """Seed the current GPU's generator; a no-op without a GPU backend (as in PyTorch)."""
    from chainrule._random import seed_cuda_generators

    if cuda_available():
        be: Any = get_backend("cuda")
        idx = be.current_device()
        seed_cuda(int(seed), idx)
        seed_cuda_generators(int(seed), idx)


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator (kept until a GPU is first used, as PyTorch does)."""
    from chainrule._random import seed_cuda_generators

    seed_cuda(int(seed))
    seed_cuda_generators(int(seed))


def seed() -> None:
    """Seed the current GPU's generator from OS entropy (a no-op without a GPU)."""
    if cuda_available():
        manual_seed(_entropy())


def seed_all() -> None:
    """Seed every GPU's generator from one draw of OS entropy (a no-op without a GPU)."""
    if cuda_available():
        manual_seed_all(_entropy())


def _entropy() -> int:
    import numpy as np

    entropy: Any = np.random.SeedSequence().entropy  # an int when none is given
    return int(entropy) & 0xFFFFFFFFFFFFFFFF


def initial_seed() -> int:
    """The seed of the current GPU's generator."""
    from chainrule._random import cuda_generator

    return cuda_generator(_gpu()).initial_seed()


def get_rng_state(device: Any = "cuda") -> Any:
    """The state of GPU ``device``'s generator as a uint8 CPU tensor (for
    :func:`set_rng_state`)."""
    from chainrule._random import cuda_generator
    from chainrule._rng_state import generator_state

    return generator_state(cuda_generator(_gpu(device)))


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    """Restore GPU ``device``'s generator from a state of :func:`get_rng_state`."""
    from chainrule._random import cuda_generator
    from chainrule._rng_state import restore_generator

    if cuda_available():  # without a GPU PyTorch queues the call, which never runs
        restore_generator(cuda_generator(_gpu(device)), new_state)


def get_rng_state_all() -> list[Any]:
    """The states of every GPU's generator, in device order."""
    be: Any = get_backend("cuda") if cuda_available() else None
    n = be.device_count() if be is not None else 0
    return [get_rng_state(i) for i in range(n)]


def set_rng_state_all(new_states: Any) -> None:
    """Restore every GPU's generator from :func:`get_rng_state_all`'s list."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)
