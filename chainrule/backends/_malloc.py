"""Keep the memory of freed large arrays in the process (glibc's malloc), so that a training
step does not fault its pages in again every step.

A step allocates and frees the same large arrays (activations, im2col columns, gradients) each
time. With glibc's defaults, a block above the mmap threshold (128 KiB at start, raised
dynamically up to 32 MiB as blocks are freed) is given back to the kernel when freed, and the
top of the heap is trimmed once 128 KiB of it is free; the next step's arrays then fault every
page in again and the kernel zeroes them (measured 2026-12-03, one thread: the SRGAN step
~5,000 minor page faults per step, the CNN step ~1,000; with the settings below about 10 and 0).
PyTorch avoids the same cost with its own CPU allocator; NumPy uses malloc.

At import, chainrule sets two of glibc's malloc parameters with ``mallopt``, the in-process
equivalent of the ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` variables, so the user
need not set them: blocks up to MMAP_THRESHOLD come from the heap, and up to TRIM_THRESHOLD of
free memory at the heap's top is kept. The peak resident memory is unchanged (SRGAN step: 81 MB
either way); what is kept between steps is memory the next step reuses. Setting both matters:
fixing the trim threshold alone stops glibc's dynamic raise of the mmap threshold (measured:
27,855 faults per SRGAN step).

Nothing is changed when the C library is not glibc, when the user already tunes malloc
(``GLIBC_TUNABLES`` naming a malloc parameter, or the ``MALLOC_*_`` variables), or when
``CHAINRULE_MALLOC_TUNING=0``.
"""

from __future__ import annotations

import os

__all__ = ["tune_malloc"]

MMAP_THRESHOLD = 32 << 20  # glibc's own ceiling for its dynamic threshold on 64-bit
TRIM_THRESHOLD = 128 << 20
_M_TRIM_THRESHOLD = -1  # mallopt's parameter numbers (malloc.h)
_M_MMAP_THRESHOLD = -3

_USER_VARS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")

# Whether tune_malloc changed the settings (for the tests and diagnostics).
state = {"tuned": False, "why_not": "not called"}


def _why_not() -> str | None:
    if os.environ.get("CHAINRULE_MALLOC_TUNING", "").strip() == "0":
        return "CHAINRULE_MALLOC_TUNING=0"
    if any(v in os.environ for v in _USER_VARS) or "malloc" in os.environ.get("GLIBC_TUNABLES", ""):
        return "the environment tunes malloc"
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return "not glibc"
    except (AttributeError, ValueError, OSError):
        return "not glibc"
    return None


def tune_malloc() -> bool:
    """Set glibc's mmap and trim thresholds (see above); whether they were set."""
    why = _why_not()
    if why is None:
        try:
            import ctypes  # already imported by NumPy: free

            mallopt = ctypes.CDLL(None).mallopt
            ok = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
            ok = mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and ok
            why = None if ok else "mallopt refused"
        except (OSError, AttributeError):
            why = "no mallopt"
    state["tuned"] = why is None
    state["why_not"] = why or ""
    return why is None
