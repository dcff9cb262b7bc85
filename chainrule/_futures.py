"""``torch.futures.Future``, ``torch.fork``/``torch.wait`` (and ``torch.jit.fork``/``wait``),
``collect_all`` and ``wait_all``.

Outside TorchScript, PyTorch's ``fork`` runs the function at once, in the calling thread, and
returns a completed Future (an exception propagates from ``fork`` itself); chainrule does the
same. A Future holds one value or one exception, set once (``set_result``/``set_exception``);
``wait`` returns the value or raises the exception; ``then(fn)`` returns a new Future completed
with ``fn(self)`` when ``self`` completes; ``add_done_callback(fn)`` calls ``fn(self)`` then.
Callbacks run in the thread that completes the Future, as PyTorch's do.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Generic, Sequence, TypeVar

__all__ = ["Future", "fork", "wait"]

T = TypeVar("T")
S = TypeVar("S")

_TWICE = (
    "Attempting to mark a completed Future as complete again. Note that a Future can only be "
    "marked completed once."
)


class Future(Generic[T]):
    """The result of an asynchronous computation: a value or an exception, set once."""

    def __init__(self, *, devices: Sequence[Any] | None = None) -> None:
        self._cond = threading.Condition()
        self._done = False
        self._value: Any = None
        self._exc: BaseException | None = None
        self._callbacks: list[Callable[[Future[T]], Any]] = []

    def done(self) -> bool:
        """Whether the Future holds a value or an exception."""
        return self._done

    def _complete(self, value: Any, exc: BaseException | None) -> None:
        with self._cond:
            if self._done:
                raise RuntimeError(_TWICE)
            self._value, self._exc, self._done = value, exc, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            cb(self)

    def set_result(self, result: T) -> None:
        """Complete the Future with ``result`` and run its callbacks."""
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete the Future with an exception, which ``wait``/``value`` raise."""
        if not isinstance(result, BaseException):
            raise TypeError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def wait(self) -> T:
        """Block until the Future completes, then return its value (or raise its exception)."""
        with self._cond:
            while not self._done:
                self._cond.wait()
        if self._exc is not None:
            raise self._exc
        return self._value

    def value(self) -> T:
        """The value of a completed Future (raises its exception; an error if not done)."""
        if not self._done:
            raise RuntimeError("value() called on a Future that has not completed")
        if self._exc is not None:
            raise self._exc
        return self._value

    def then(self, callback: Callable[[Future[T]], S]) -> Future[S]:
        """A Future completed with ``callback(self)`` once ``self`` completes (or, if
        ``callback`` raises, with a RuntimeError naming that exception, as PyTorch's)."""
        out: Future[S] = Future()

        def run(fut: Future[T]) -> None:
            try:
                r = callback(fut)
            except Exception as e:  # noqa: BLE001 - the exception becomes the Future's
                out.set_exception(
                    RuntimeError(
                        "Got the following error when running the callback: "
                        f"{type(e).__name__}: {e}"
                    )
                )
            else:
                out.set_result(r)

        self.add_done_callback(run)
        return out

    def add_done_callback(self, callback: Callable[[Future[T]], None]) -> None:
        """Call ``callback(self)`` when the Future completes (now, if it has)."""
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)


def fork(func: Callable[..., T], *args: Any, **kwargs: Any) -> Future[T]:
    """Run ``func(*args, **kwargs)`` now and return a completed Future holding its result."""
    fut: Future[T] = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future: Future[T]) -> T:
    """``future.wait()``: the value of a Future made by :func:`fork`."""
    return future.wait()


def collect_all(futures: list[Future[Any]]) -> Future[list[Future[Any]]]:
    """A Future completed with the list ``futures`` once all of them have completed."""
    out: Future[list[Future[Any]]] = Future()
    remaining = [len(futures)]
    lock = threading.Lock()
    if not futures:
        out.set_result([])
        return out

    def one(_: Future[Any]) -> None:
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            out.set_result(list(futures))

    for f in futures:
        f.add_done_callback(one)
    return out


def wait_all(futures: list[Future[Any]]) -> list[Any]:
    """The values of ``futures``, waiting for each (the first exception is raised)."""
    return [f.wait() for f in futures]
