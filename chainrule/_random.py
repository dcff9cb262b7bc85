"""Random number generation: ``Generator``, ``manual_seed`` and the default generator.

Differs from torch: the streams come from NumPy's PCG64, so ``manual_seed(0); randn(3)`` is
reproducible within chainrule but does not give PyTorch's numbers.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from chainrule._dispatch import recorder as _recorder

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "default_generator"]


class Generator:
    """A seeded source of random numbers, as ``torch.Generator``."""

    def __init__(self, device: Any = "cpu") -> None:
        self._seed = 67280421310721  # torch's default initial seed
        self._rng = np.random.default_rng(self._seed)

    def manual_seed(self, seed: int) -> Generator:
        """Reset the generator to a fixed state; returns the generator, as in PyTorch."""
        self._seed = int(seed)
        self._rng = np.random.default_rng(self._seed & 0xFFFFFFFFFFFFFFFF)
        return self

    def seed(self) -> int:
        """Seed from OS entropy; returns the new seed."""
        entropy = np.random.SeedSequence().entropy
        assert isinstance(entropy, int)  # drawn from the OS: one int
        s = entropy & 0xFFFFFFFFFFFFFFFF
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Mapping[str, Any]:
        return self._rng.bit_generator.state

    def set_state(self, state: Mapping[str, Any]) -> None:
        self._rng.bit_generator.state = state

    @property
    def rng(self) -> np.random.Generator:
        return self._rng


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (randn, rand, dropout, init, shuffling) and, as PyTorch
    does, every GPU's (applied when a GPU is first used; CuPy is not imported here)."""
    from chainrule.backends import seed_cuda

    seed_cuda(seed)
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def rng_of(generator: Generator | None) -> np.random.Generator:
    """The NumPy generator behind ``generator`` (the default one for None); while
    ``chainrule.compile`` captures, one whose draws it records (Note [recorder slot] in
    _dispatch.py)."""
    rec = _recorder[0]
    if rec is not None:
        return rec.rng(generator)
    return (generator or default_generator)._rng


def rng_of_eager(generator: Generator | None) -> np.random.Generator:
    """The NumPy generator behind ``generator``, never a recording one."""
    return (generator or default_generator)._rng
