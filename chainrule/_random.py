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
        # the device kind whose tensors it draws for ("cpu" or "cuda"; PyTorch checks it)
        self._device_type, self._index = _generator_device(device)
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

    def clone_state(self) -> Generator:
        """A new generator of the same device, seed and position in its stream: the two then
        draw the same numbers, independently."""
        g = Generator.__new__(Generator)
        g._device_type, g._index, g._seed = self._device_type, self._index, self._seed
        bits = type(self._rng.bit_generator)()
        bits.state = self._rng.bit_generator.state
        g._rng = np.random.Generator(bits)
        return g

    def get_offset(self) -> int:
        """PyTorch's Philox offset, which only its CUDA generators keep."""
        raise RuntimeError(self._no_offset())

    def set_offset(self, offset: int) -> Generator:
        """PyTorch's Philox offset, which only its CUDA generators keep."""
        raise RuntimeError(self._no_offset())

    def _no_offset(self) -> str:
        if self._device_type == "cpu":
            return "CPU Generator does not use offset"
        return (
            "chainrule's CUDA generators draw on the host (docs/gpu.md, random numbers) and "
            "keep no Philox offset"
        )

    def graphsafe_get_state(self) -> Generator:
        """CUDA-graph state capture, which PyTorch's CPU generators refuse too."""
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state: Generator) -> None:
        """CUDA-graph state capture, which PyTorch's CPU generators refuse too."""
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    @property
    def rng(self) -> np.random.Generator:
        return self._rng

    @property
    def device(self) -> Any:
        """The device it draws for: ``device('cpu')`` or ``device('cuda', i)``."""
        from chainrule._device import device

        return device(self._device_type, self._index)


# torch 2.13 (CPU build) refuses a generator for a device it has no backend for, with these
# texts (from at::globalContext().defaultGenerator / getNewGenerator); 'cuda' when no GPU is
# usable gets _NO_CUDA_GENERATOR.
_NO_CUDA_GENERATOR = (
    "Cannot get CUDA generator without ATen_cuda library. PyTorch splits its backend into two "
    "shared libraries: a CPU library and a CUDA library; this error has occurred because you "
    "are trying to use some CUDA functionality, but the CUDA library has not been loaded by "
    "the dynamic linker for some reason.  The CUDA library MUST be loaded, EVEN IF you don't "
    "directly use any symbols from the CUDA library! One common culprit is a lack of "
    "-Wl,--no-as-needed in your link arguments; many dynamic linkers will delete dynamic "
    "library dependencies if you don't depend on any of their symbols.  You can check if this "
    "has occurred by using ldd on your binary to see if there is a dependency on *_cuda.so "
    "library."
)
_NOT_ACCELERATOR = ("meta", "lazy", "ipu", "ve", "vulkan", "fpga", "maia", "mkldnn", "opengl")
_NOT_ACCELERATOR += ("opencl", "ideep")
_NO_GENERATOR = {
    "mps": "Cannot execute getNewGenerator() without MPS backend.",
    "mtia": "Cannot execute getNewGenerator() without MTIA backend.",
    "xpu": "Cannot get XPU generator without ATen_xpu library.",
    "hip": "Backend doesn`t support getNewGenerator()",
    "hpu": "Backend doesn`t support getNewGenerator()",
    "privateuseone": "Please register PrivateUse1HooksInterface by "
    "`RegisterPrivateUse1HooksInterface` first.",
    "xla": "Cannot get XLA generator without torch_xla library. This error has occurred because "
    "you are trying to use some XLA functionality, but the XLA library has not been loaded by "
    "the dynamic linker. You must load xla libraries by `import torch_xla`",
}
_DEVICE_TYPES = (
    "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
    "vulkan, mps, meta, hpu, mtia, privateuseone"
)


def _generator_device(device: Any) -> tuple[str, int | None]:
    """``(type, index)`` of a ``Generator(device=...)``, or torch's error: a CUDA generator
    needs a usable GPU (the index defaults to the current GPU, as torch's), an integer is an
    accelerator index, and the other device types have no generator here."""
    if device is None or device == "cpu":
        return "cpu", None
    from chainrule.backends import cuda_available, get_backend

    if isinstance(device, int) and not isinstance(device, bool):
        if not cuda_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        kind, index = "cuda", device
    else:
        kind = str(getattr(device, "type", device))
        index = None if isinstance(device, str) else getattr(device, "index", None)
        if ":" in kind:
            kind, _, rest = kind.partition(":")
            index = int(rest)
    if kind == "cpu":
        return "cpu", None
    if kind == "cuda":
        if not cuda_available():
            raise RuntimeError(_NO_CUDA_GENERATOR)
        be: Any = get_backend("cuda")  # the CUDA backend (check_device is its own)
        return "cuda", be.check_device(index)
    if kind in _NOT_ACCELERATOR:
        raise RuntimeError(f"{kind.upper()} device type not an accelerator.")
    if kind in _NO_GENERATOR:
        raise RuntimeError(_NO_GENERATOR[kind])
    raise RuntimeError(
        f"Expected one of {_DEVICE_TYPES} device type at start of device string: {device}"
    )


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (randn, rand, dropout, init, shuffling) and, as PyTorch
    does, every GPU's (applied when a GPU is first used; CuPy is not imported here)."""
    from chainrule.backends import seed_cuda

    seed_cuda(seed)
    seed_cuda_generators(seed)
    return default_generator.manual_seed(seed)


# Note [one generator per GPU]
#     As in PyTorch, each GPU has its own default generator, independent of the CPU's: the
#     factories (rand, randn, randint, randperm and their _like forms) and the in-place
#     samplers of a CUDA tensor draw from the generator of the tensor's GPU. It is made on
#     first use, seeded by chainrule.manual_seed / cuda.manual_seed_all (every GPU) or
#     cuda.manual_seed (the current GPU), else with PyTorch's default seed. Its draws are made
#     on the host (the same PCG64 as the CPU's, so one seed gives the CPU's numbers on each
#     device, as the tests use) and copied to the device; PyTorch's CUDA numbers (Philox)
#     differ, as its CPU numbers do.
_CUDA_GENERATORS: dict[int, Generator] = {}
_CUDA_SEED = [67280421310721]  # for every GPU without its own seed
_CUDA_SEEDS: dict[int, int] = {}


def seed_cuda_generators(seed: int, index: int | None = None) -> None:
    """Seed GPU ``index``'s generator (every GPU's when None), now or when first made."""
    seed = int(seed)
    if index is None:
        _CUDA_SEED[0] = seed
        _CUDA_SEEDS.clear()
        for g in _CUDA_GENERATORS.values():
            g.manual_seed(seed)
    else:
        _CUDA_SEEDS[index] = seed
        g = _CUDA_GENERATORS.get(index)
        if g is not None:
            g.manual_seed(seed)


def cuda_generator(index: int) -> Generator:
    """The default generator of GPU ``index`` (Note [one generator per GPU])."""
    g = _CUDA_GENERATORS.get(index)
    if g is None:
        g = _CUDA_GENERATORS[index] = Generator(f"cuda:{index}")
        g.manual_seed(_CUDA_SEEDS.get(index, _CUDA_SEED[0]))
    return g


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


# Note [layer draws for a GPU]
#     A layer built with ``device='cuda:i'`` makes its parameters on the CPU and moves them at
#     the end of ``__init__`` (nn/modules/module.py, _place_after_init); while it runs, the
#     draws of the default generator for CPU tensors come from GPU i's generator instead, so
#     its initial values come from the GPU's stream and leave the CPU's untouched, as in
#     PyTorch (where they are made on the GPU).
_DRAW_FOR_GPU: list[int | None] = [None]


class drawing_for_gpu:
    """Context: default-generator draws for the CPU come from GPU ``index``'s generator
    (Note [layer draws for a GPU])."""

    def __init__(self, index: int | None) -> None:
        self.index = index

    def __enter__(self) -> None:
        self.prev = _DRAW_FOR_GPU[0]
        _DRAW_FOR_GPU[0] = self.index

    def __exit__(self, *exc: object) -> None:
        _DRAW_FOR_GPU[0] = self.prev


def rng_of(generator: Generator | None, cuda_index: int | None = None) -> np.random.Generator:
    """The NumPy generator behind ``generator`` (for None: the default one, or GPU
    ``cuda_index``'s when the draws are for a CUDA tensor, Note [one generator per GPU]);
    while ``chainrule.compile`` captures, one whose draws it records (Note [recorder slot] in
    _dispatch.py)."""
    if generator is not None:
        check_generator(generator, "cpu" if cuda_index is None else "cuda")
    if generator is None and cuda_index is None:
        cuda_index = _DRAW_FOR_GPU[0]
    if generator is None and cuda_index is not None:
        generator = cuda_generator(cuda_index)  # the GPU's, also for a capture to replay
    rec = _recorder[0]
    if rec is not None:
        return rec.rng(generator)
    return (generator or default_generator)._rng


def check_generator(generator: Any, device_type: str) -> None:
    """PyTorch's RuntimeError when ``generator`` is not for ``device_type``'s tensors."""
    found = getattr(generator, "_device_type", "cpu")
    if found != device_type:
        raise RuntimeError(
            f"Expected a '{device_type}' device type for generator but found '{found}'"
        )


def rng_of_eager(generator: Generator | None) -> np.random.Generator:
    """The NumPy generator behind ``generator``, never a recording one."""
    return (generator or default_generator)._rng
