"""An optimizer step run with its parameters' GPU current (Note [a step on its parameters' GPU]).

The element-wise optimizers update ``p._data`` with raw array arithmetic, outside the op table,
so nothing there makes the parameters' GPU current; a CuPy kernel runs on the current GPU and
refuses an operand on another one. PyTorch's steps run on the parameters' device whatever
``torch.cuda.current_device()`` says, and so do chainrule's: ``run_on_param_devices`` is
called only when the CUDA backend is in use with several GPUs (``multi_gpu_backend()``, one
call per step otherwise).
"""

from __future__ import annotations

from typing import Any, Callable

# Note [a step on its parameters' GPU]
#     One context per step when every GPU parameter of the optimizer is on one GPU (the usual
#     case); when they span several GPUs, the step's update runs once per GPU, each time over
#     param groups narrowed to that GPU's parameters (shallow copies of the group dicts: a step
#     reads its group's settings and writes only per-parameter state), with that GPU current.
#     CPU parameters go with the first run. The caller's GPU is current again afterwards.


def run_on_param_devices(opt: Any, gpus: Any, update: Callable[[], None]) -> None:
    """``update()`` (a step over ``opt.param_groups``) with each parameter's GPU current."""
    nd = gpus.ndarray
    devices: dict[int, Any] = {}
    for g in opt.param_groups:
        for p in g["params"]:
            a = p._data
            if type(a) is nd:
                devices.setdefault(a.device.id, a)
    if not devices:
        update()
        return
    if len(devices) == 1:
        with gpus.array_device(next(iter(devices.values()))):
            update()
        return
    groups = opt.param_groups
    first = True
    try:
        for dev, a in devices.items():

            def mine(p: Any, dev: int = dev, first: bool = first) -> bool:
                d = p._data
                return d.device.id == dev if type(d) is nd else first

            opt.param_groups = [dict(g, params=[p for p in g["params"] if mine(p)]) for g in groups]
            first = False
            with gpus.array_device(a):
                update()
    finally:
        opt.param_groups = groups
