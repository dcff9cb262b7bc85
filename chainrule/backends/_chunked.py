"""Elementwise and normalization kernels split into parts over chainrule's intra-op pool.

A kernel written over a range ``(start, stop)`` of one dim of its arrays (the samples, or
BatchNorm's channels) runs once over the whole dim with one thread or a small array, else once
per part, the parts shared out by ``backends/_threads.py``'s ``parallel_map`` (NumPy releases
the GIL inside its ufunc loops, matrix products and einsum on large arrays, so the parts run at
the same time). Each element is computed by the same operations whichever part it falls in,
so elementwise results are the same bits split or not; the kernels' reductions (BatchNorm's
statistics and weight grads, PReLU's slope grad) add per-sample dot products in sample order,
which gives the same bits split or not too.

``MIN_ELEMENTS``: below it a kernel runs serially. A split call costs a pool round trip (an
empty ``parallel_map`` of two items: 8 us best, 27 us median of process CPU) and, while both
threads run, a GIL handoff around each of a part's ufunc calls. On the shared 2-core test
machine at load 15-18 (2026-12-03, ``bench/elementwise_split.py``) splitting was slower for
every SRGAN-step shape, wall and CPU: BatchNorm forward + backward on (8, 32, 16, 16) 250 ->
430-480 us wall, PReLU on (8, 32, 32, 32) 350 -> 440-480 us, LeakyReLU 200 -> 310 us (its
second core was another process's). So the threshold is set high, at 256k elements (one
(8, 32, 32, 32) float32 activation and up): re-measure it with that script on a quiet machine.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from chainrule.backends._threads import chunks, num_threads, parallel_map

__all__ = ["MIN_ELEMENTS", "ranges", "run"]

T = TypeVar("T")

MIN_ELEMENTS = 1 << 18


def ranges(n: int, elements: int) -> list[tuple[int, int]]:
    """The parts ``(start, stop)`` of ``range(n)`` for a kernel over ``elements`` elements in
    all: one per thread (at most ``n``), or the whole range below ``MIN_ELEMENTS``."""
    threads = num_threads()
    if threads < 2 or n < 2 or elements < MIN_ELEMENTS:
        return [(0, n)]
    return chunks(n, threads)


def run(fn: Callable[[tuple[int, int]], T], parts: list[tuple[int, int]]) -> list[T]:
    """``[fn(part) for part in parts]``, on the pool when there is more than one part."""
    if len(parts) == 1:
        return [fn(parts[0])]
    return parallel_map(fn, parts)
