"""Elementwise and normalization kernels split into parts over chainrule's intra-op pool.

A kernel written over a range ``(start, stop)`` of one dim of its arrays (the samples, or
BatchNorm's channels) runs once over the whole dim with one thread or a small array, else once
per part, the parts shared out by ``backends/_threads.py``'s ``parallel_map`` (NumPy releases
the GIL inside its ufunc loops, matrix products and einsum on large arrays, so the parts run at
the same time). Each element is computed by the same operations whichever part it falls in,
so elementwise results are the same bits split or not; a reduction made per part and summed
in the parts' order is deterministic for a given thread count.

``MIN_ELEMENTS``: below it a kernel runs serially. Waking a pool thread and waiting for it
costs about 10-40 us on this project's 2-core test machine, as much as one pass over 256k
float32 elements; the kernels split here make 3-8 passes, so from 64k elements (the SRGAN
step's BatchNorm inputs, (8, 32, 16, 16)) the split pays.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from chainrule.backends._threads import chunks, num_threads, parallel_map

__all__ = ["MIN_ELEMENTS", "ranges", "run"]

T = TypeVar("T")

MIN_ELEMENTS = 1 << 16


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
