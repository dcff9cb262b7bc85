"""The thread-local grad-mode flags, below ``Tensor`` (``autograd/grad_mode.py`` holds the
context managers that set them; ops and ``Tensor`` read them on every call)."""

from __future__ import annotations

import threading

__all__ = ["_State", "_state"]


class _State(threading.local):
    # Class attributes are the per-thread defaults: a new thread starts with grad enabled.
    enabled = True
    inference = False


_state = _State()
