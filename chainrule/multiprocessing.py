"""``chainrule.multiprocessing``: ``torch.multiprocessing``, Python's ``multiprocessing`` plus
``spawn``/``start_processes``.

Every name of the standard ``multiprocessing`` module is reachable here (``Process``, ``Queue``,
``get_context`` ...), as in PyTorch. Tensors travel between processes through
``multiprocessing``'s own pickler (a ``Process``'s arguments, ``Queue`` items), for which this
module registers reducers (Note [tensors across processes]): a tensor in shared memory
(``share_memory_()``, ``Module.share_memory()``) travels as the file descriptor of its memory,
so the receiver updates the same values (Hogwild training); any other tensor travels by value.
The sharing strategies are accepted names only (the descriptor route is always taken).
``spawn(fn, args, nprocs)``
starts ``nprocs`` processes running ``fn(i, *args)`` for ``i`` in ``range(nprocs)`` and waits
for all of them; the first one to fail ends the others and raises ``ProcessRaisedException``
(with the child's traceback) or ``ProcessExitedException``, with PyTorch's messages.

``chainrule.distributed`` runs over MPI, so its process groups are made by
``python -m chainrule.distributed.run`` (docs/distributed.md), not by ``spawn``.
"""

from __future__ import annotations

import mmap as _mmap
import multiprocessing as _mp
import multiprocessing.connection as _mp_connection
import multiprocessing.reduction as _mp_reduction
import signal as _signal
import sys as _sys
import traceback as _traceback
from typing import Any, Callable

import numpy as _np

from chainrule import _shm
from chainrule._tensor import Tensor as _Tensor
from chainrule._tensor import _new
from chainrule.nn.parameter import Parameter as _Parameter

__all__ = [
    "spawn",
    "start_processes",
    "ProcessContext",
    "SpawnContext",
    "ProcessRaisedException",
    "ProcessExitedException",
    "get_sharing_strategy",
    "set_sharing_strategy",
    "get_all_sharing_strategies",
    "register_tensor_reducers",
]

_STRATEGIES = {"file_descriptor", "file_system"} if _sys.platform != "darwin" else {"file_system"}
_strategy = ["file_descriptor" if _sys.platform != "darwin" else "file_system"]


def __getattr__(name: str) -> Any:
    """The standard ``multiprocessing`` module's names (``Process``, ``Queue``, ...)."""
    try:
        return getattr(_mp, name)
    except AttributeError:
        raise AttributeError(
            f"module 'chainrule.multiprocessing' has no attribute '{name}'"
        ) from None


def get_all_sharing_strategies() -> set[str]:
    """The sharing strategies this platform names."""
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    """The current sharing strategy's name."""
    return _strategy[0]


def set_sharing_strategy(new_strategy: str) -> None:
    """Choose a sharing strategy by name (one of ``get_all_sharing_strategies()``)."""
    if new_strategy not in _STRATEGIES:
        raise AssertionError(
            f"invalid sharing strategy {new_strategy!r}, expected one of {_STRATEGIES}"
        )
    _strategy[0] = new_strategy


class ProcessException(Exception):
    """A spawned process failed; ``error_index`` is its ``i``, ``pid`` its process id."""

    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg: str, error_index: int, pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception; the message carries its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code or was killed by a signal."""

    __slots__ = ["exit_code"]

    def __init__(
        self,
        msg: str,
        error_index: int,
        error_pid: int,
        exit_code: int,
        signal_name: str | None = None,
    ) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self) -> Any:
        return (
            type(self),
            (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name),
        )


def _wrap(fn: Callable[..., Any], i: int, args: tuple[Any, ...], error_queue: Any) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent is ending us
    except Exception:
        error_queue.put(_traceback.format_exc())
        _sys.exit(1)


class ProcessContext:
    """The processes ``start_processes`` started; ``join()`` waits for them."""

    def __init__(self, processes: list[Any], error_queues: list[Any]) -> None:
        self.error_queues = error_queues
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list[int]:
        """The process ids, in order of ``i``."""
        return [int(p.pid) for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for the processes; True once all ended well.

        Raises ``ProcessRaisedException`` or ``ProcessExitedException`` for the first one
        that failed, after ending the others.
        """
        if not self.sentinels:
            return True
        ready = _mp_connection.wait(list(self.sentinels), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return not self.sentinels
        for process in self.processes:
            if process.is_alive():
                process.terminate()
            process.join()
        failed = self.processes[error_index]
        if self.error_queues[error_index].empty():
            exitcode = failed.exitcode
            if exitcode < 0:
                try:
                    name = _signal.Signals(-exitcode).name
                except ValueError:
                    name = f"<Unknown signal {-exitcode}>"
                raise ProcessExitedException(
                    f"process {error_index} terminated with signal {name}",
                    error_index=error_index,
                    error_pid=failed.pid,
                    exit_code=exitcode,
                    signal_name=name,
                )
            raise ProcessExitedException(
                f"process {error_index} terminated with exit code {exitcode}",
                error_index=error_index,
                error_pid=failed.pid,
                exit_code=exitcode,
            )
        original_trace = self.error_queues[error_index].get()
        msg = f"\n\n-- Process {error_index} terminated with the following error:\n"
        msg += original_trace
        raise ProcessRaisedException(msg, error_index, failed.pid)


class SpawnContext(ProcessContext):
    """The context ``spawn(join=False)`` returns."""


def start_processes(
    fn: Callable[..., Any],
    args: tuple[Any, ...] = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> ProcessContext | None:
    """Start ``nprocs`` processes (``start_method``: "spawn", "fork" or "forkserver"), each
    running ``fn(i, *args)``; with ``join`` wait for them all, else return their context."""
    ctx: Any = _mp.get_context(start_method)
    error_queues = []
    processes = []
    for i in range(nprocs):
        error_queue = ctx.SimpleQueue()
        process = ctx.Process(target=_wrap, args=(fn, i, args, error_queue), daemon=daemon)
        process.start()
        error_queues.append(error_queue)
        processes.append(process)
    context = ProcessContext(processes, error_queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(
    fn: Callable[..., Any],
    args: tuple[Any, ...] = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> ProcessContext | None:
    """``start_processes`` with the "spawn" start method (PyTorch warns and uses it for any
    other)."""
    if start_method != "spawn":
        import warnings

        warnings.warn(
            f"This method only supports start_method=spawn (got: {start_method}).\n"
            "To use a different start_method use:\n\t\t"
            " torch.multiprocessing.start_processes(...)",
            FutureWarning,
            stacklevel=2,
        )
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")


# Note [tensors across processes]
#     ``Tensor.__reduce_ex__`` refuses ordinary pickling (chainrule.save is the file format), but
#     multiprocessing's ``ForkingPickler`` consults its own dispatch table first, so tensors
#     sent to other processes take these reducers instead (PyTorch registers its own the same
#     way). The table is keyed by exact type: Tensor and Parameter are registered (a Buffer is a
#     Tensor); a
#     user's Tensor subclass still meets the refusal. A shared tensor's memory is a block of
#     chainrule/_shm.py; ``DupFd`` hands its descriptor to a spawned child at start-up or, for a
#     queue, through multiprocessing's resource sharer. As in PyTorch, ``.grad`` and hooks do
#     not travel, and a non-leaf that requires grad is refused.
#     Only the class, the data and ``requires_grad`` travel (PyTorch's metadata), not the
#     tensor's other attributes: a view's link to its base stays behind.


def _rebuild(cls: type, data: Any, requires_grad: bool) -> Any:
    t = _new(cls)
    t._data = data
    t._requires_grad = requires_grad
    t.grad_fn = None
    t._vc = None
    return t


def _rebuild_shared(
    cls: type,
    dupfd: Any,
    nbytes: int,
    dtype: Any,
    shape: tuple[int, ...],
    strides: tuple[int, ...],
    offset: int,
    requires_grad: bool,
) -> Any:
    buf = _shm.attach(dupfd.detach(), nbytes)
    data = _np.ndarray(shape, dtype, buffer=buf, offset=offset, strides=strides)
    return _rebuild(cls, data, requires_grad)


def _shared_block(d: Any) -> Any:
    """The block of chainrule/_shm.py that array ``d`` views, or None."""
    while isinstance(d, _np.ndarray):
        d = d.base
    if isinstance(d, memoryview):
        d = d.obj
    return d if isinstance(d, _mmap.mmap) and _shm.fd_of(d) is not None else None


def _reduce_tensor(t: Any) -> Any:
    if t._requires_grad and t.grad_fn is not None:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, "
            "since autograd does not support crossing process boundaries.  "
            "If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue)."
        )
    d = t._data
    block = _shared_block(d) if isinstance(d, _np.ndarray) else None
    if block is None:  # by value (a GPU array pickles through the host, as CuPy does)
        return (_rebuild, (type(t), d, t._requires_grad))
    offset = d.__array_interface__["data"][0] - _shm.address_of(block)
    args = (len(block), d.dtype, d.shape, d.strides, offset, t._requires_grad)
    fd = _shm.fd_of(block)
    assert fd is not None  # _shared_block only returns blocks of chainrule/_shm.py
    return (_rebuild_shared, (type(t), _mp_reduction.DupFd(fd), *args))


_registered = [False]


def register_tensor_reducers() -> None:
    """Let multiprocessing's pickler send tensors (Note [tensors across processes]); done when
    this module is imported and by ``Tensor.share_memory_``; repeating it costs nothing."""
    if not _registered[0]:
        for cls in (_Tensor, _Parameter):
            _mp_reduction.ForkingPickler.register(cls, _reduce_tensor)
        _registered[0] = True


register_tensor_reducers()
