"""``chainrule.multiprocessing``: ``torch.multiprocessing``, Python's ``multiprocessing`` plus
``spawn``/``start_processes``.

Every name of the standard ``multiprocessing`` module is reachable here (``Process``, ``Queue``,
``get_context`` ...), as in PyTorch. Tensors travel between processes by pickling (their array
is copied), so the sharing strategies are accepted names only. ``spawn(fn, args, nprocs)``
starts ``nprocs`` processes running ``fn(i, *args)`` for ``i`` in ``range(nprocs)`` and waits
for all of them; the first one to fail ends the others and raises ``ProcessRaisedException``
(with the child's traceback) or ``ProcessExitedException``, with PyTorch's messages.

``chainrule.distributed`` runs over MPI, so its process groups are made by
``python -m chainrule.distributed.run`` (docs/distributed.md), not by ``spawn``.
"""

from __future__ import annotations

import multiprocessing as _mp
import multiprocessing.connection as _mp_connection
import signal as _signal
import sys as _sys
import traceback as _traceback
from typing import Any, Callable

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
