"""chainrule's own intra-op thread pool, and the intra-op thread count that it shares with BLAS.

NumPy runs elementwise work on one core and OpenBLAS does not split the small matrix products
of a convolution (a few hundred columns per sample); PyTorch's kernels use every core. Kernels
that can split their work into independent parts (a convolution's samples) run the parts on
this pool: NumPy releases the GIL inside BLAS calls and inside ufuncs on large arrays, so the
parts run at the same time.

The count follows PyTorch: ``torch.set_num_threads(n)`` (``chainrule._runtime`` sets this count
and BLAS's pool through threadpoolctl), else ``OMP_NUM_THREADS``, else the cores this process
may run on. The pool is a ``concurrent.futures.ThreadPoolExecutor`` of ``count - 1`` workers
(the calling thread takes parts too, and the threads take the next part left as they come
free), made on first use and remade when the count changes or after a ``fork``. A kernel
running on a worker runs its inner kernels serially, so parts never wait on parts.

``one_blas_thread()`` holds OpenBLAS at one thread for a region (the conv ops' forwards,
parallel regions): OpenBLAS's own threads, once a product splits, spin on the cores the pool
needs (see ``_OneBlasThread``); ``blas_threads()`` gives BLAS its count back inside a region
for a product over a whole batch.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = [
    "num_threads",
    "set_threads",
    "parallel_map",
    "chunks",
    "one_blas_thread",
    "blas_threads",
]

T = TypeVar("T")

# The count given to set_threads (None: the default); the pool and the count it was made for;
# the default count once read; the BLAS libraries' thread-count functions once found.
_state: dict[str, Any] = {
    "count": None,
    "pool": None,
    "pool_size": 0,
    "default": None,
    "blas": None,
}
_lock = threading.Lock()
_local = threading.local()


def default_threads() -> int:
    """``OMP_NUM_THREADS`` when it is a positive integer, else the number of cores this process
    may run on (PyTorch's default). Read once, as PyTorch does at startup (``_forget_pool``
    and the tests clear the cached value)."""
    n = _state.get("default")
    if n is None:
        n = _state["default"] = _read_default()
    return n


def _read_default() -> int:
    env = os.environ.get("OMP_NUM_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


def num_threads() -> int:
    """The intra-op thread count: the last ``set_threads`` value, else ``default_threads()``."""
    n = _state["count"]
    return default_threads() if n is None else n


def set_threads(n: int | None) -> None:
    """Use ``n`` threads for chainrule's intra-op work (``None``: back to the default)."""
    _state["count"] = n


def _pool(workers: int) -> ThreadPoolExecutor:
    # Imported here: concurrent.futures costs `import chainrule` several milliseconds.
    from concurrent.futures import ThreadPoolExecutor

    with _lock:
        pool = _state["pool"]
        if pool is None or _state["pool_size"] != workers:
            if pool is not None:
                pool.shutdown(wait=False)
            pool = _state["pool"] = ThreadPoolExecutor(workers, thread_name_prefix="chainrule")
            _state["pool_size"] = workers
        return pool


def _forget_pool() -> None:
    # A forked child inherits the executor object but not its threads (nor, maybe, the
    # parent's CPU affinity).
    _state["pool"] = None
    _state["pool_size"] = 0
    _state["default"] = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def in_worker() -> bool:
    """Whether this thread is one of the pool's workers (its kernels then run serially)."""
    return getattr(_local, "worker", False)


def _blas_controls() -> list[tuple[Any, Any]]:
    """(get, set) thread-count functions of each BLAS library NumPy loaded, found once through
    threadpoolctl (imported here, on the first parallel region)."""
    found = _state.get("blas")
    if found is None:
        from threadpoolctl import ThreadpoolController

        found = []
        for lib in ThreadpoolController().lib_controllers:
            if lib.user_api == "blas" and lib.internal_api == "openblas":
                get = lib._get_symbol("openblas_get_num_threads")
                if get is not None:
                    found.append((get, lib.set_num_threads))
        _state["blas"] = found
    return found


def parallel_map(fn: Callable[[Any], T], items: Sequence[Any]) -> list[T]:
    """``[fn(item) for item in items]``, the items shared out at run time between the calling
    thread and up to ``num_threads() - 1`` of the pool's workers; serial on a worker, with one
    item or one thread. Exceptions propagate.

    Each thread takes the next item not yet taken until none is left, so a worker that starts
    late (its core busy with another process, or waiting for the GIL) takes fewer items
    instead of holding back the calling thread, and one that has not started when the calling
    thread has run out of items is withdrawn (its future cancelled) rather than waited for.
    The results are in the items' order whichever thread computed them.

    While the parts run, OpenBLAS runs each call on the calling thread: its own pool is shared
    by the whole process, so parts asking it for threads at the same time would wait on one
    another (and a part's products are sized for one core anyway)."""
    n = len(items)
    helpers = min(num_threads(), n) - 1
    if helpers < 1 or in_worker():
        return [fn(item) for item in items]
    pool = _pool(num_threads() - 1)
    results: list[Any] = [None] * n
    taken = itertools.count()  # next() on it is atomic under the GIL
    failed: list[bool] = []

    def run() -> None:
        _local.worker = True
        try:
            for i in taken:
                if i >= n or failed:
                    return
                results[i] = fn(items[i])
        except BaseException:
            failed.append(True)
            raise
        finally:
            _local.worker = False

    with one_blas_thread():
        futures = [pool.submit(run) for _ in range(helpers)]
        try:
            run()
        finally:
            for f in futures:
                if not f.cancel():
                    f.result()
    return results


# The BLAS thread counts saved by the outermost ``one_blas_thread`` region still open, and how
# many regions are open (over all threads: OpenBLAS's count is process-wide).
_hold: dict[str, Any] = {"depth": 0, "saved": []}


class _OneBlasThread:
    """Context manager: OpenBLAS at one thread inside, its count restored when the outermost
    region (of any thread) ends; nothing to do (no region) when chainrule runs one thread.

    Why: OpenBLAS splits any product from about M*N*K = 262144 (a conv's per-sample
    (32, 96) @ (96, 256) already) over its own threads, which then spin for their timeout after
    the call. Measured (2026-12-03, 2-core AMD EPYC VM, load ~2.4): the SRGAN step at two
    threads, with the row-phase kernels calling OpenBLAS at two threads, used 401 ms of CPU on
    the main thread and 349 ms on OpenBLAS's worker per step (one thread: 161 ms in all);
    with OpenBLAS at one thread, 112 ms. Setting the count costs ~1.2 us a call."""

    __slots__ = ()

    def __enter__(self) -> None:
        # Whether this region holds BLAS, per thread (a region opened at one thread stays a
        # no-op when set_num_threads changes inside it).
        stack = _local.__dict__.setdefault("held", [])
        if num_threads() < 2:
            stack.append(False)
            return
        stack.append(True)
        with _lock:
            if _hold["depth"] == 0:
                saved = []
                for get, set_ in _blas_controls():
                    count = get()
                    if count != 1:
                        set_(1)
                        saved.append((count, set_))
                _hold["saved"] = saved
            _hold["depth"] += 1

    def __exit__(self, *exc: Any) -> None:
        if not _local.held.pop():
            return
        with _lock:
            _hold["depth"] -= 1
            if _hold["depth"] == 0:
                for count, set_ in _hold["saved"]:
                    set_(count)
                _hold["saved"] = []


_ONE_BLAS_THREAD = _OneBlasThread()


def one_blas_thread() -> _OneBlasThread:
    """``with one_blas_thread(): ...`` runs the block with OpenBLAS at one thread (nested
    regions, and regions of several threads at once, keep it there until the last ends)."""
    return _ONE_BLAS_THREAD


@contextlib.contextmanager
def blas_threads() -> Iterator[None]:
    """Inside a ``one_blas_thread`` region, BLAS back at its own thread count for the block
    (a product over a whole batch, large enough for BLAS's threads); elsewhere, nothing."""
    with _lock:
        saved = list(_hold["saved"]) if _hold["depth"] and not in_worker() else []
    for count, set_ in saved:
        set_(count)
    try:
        yield
    finally:
        for _, set_ in saved:
            set_(1)


def chunks(n: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous ranges ``(start, stop)`` covering ``range(n)``, sizes within one."""
    parts = max(1, min(parts, n))
    return [(n * i // parts, n * (i + 1) // parts) for i in range(parts)]
