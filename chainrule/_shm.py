"""Memory that other processes can map: where ``Tensor.share_memory_`` moves a tensor's data.

Each block is an anonymous file (``memfd_create`` on Linux, an unlinked temporary file
elsewhere) mapped shared. Its file descriptor stays open as long as the mapping lives, so a
tensor sent to another process travels as that descriptor plus shape, strides and offset
(``chainrule.multiprocessing``'s reducers pass it with ``multiprocessing.reduction.DupFd``),
which is PyTorch's ``file_descriptor`` sharing strategy: a child started by *spawn* maps the
same pages, and writes by either process are seen by the other. A forked child inherits the
mapping itself.
"""

from __future__ import annotations

import mmap
import os
import tempfile
import weakref

import numpy as np

__all__ = ["new_block", "attach", "fd_of", "address_of"]

# id(mapping) -> (file descriptor, address of its first byte); entries leave with the mapping.
_BLOCKS: dict[int, tuple[int, int]] = {}


def _open(nbytes: int) -> int:
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("chainrule-shared", os.MFD_CLOEXEC)
    else:  # pragma: no cover - not Linux
        fd, path = tempfile.mkstemp(prefix="chainrule-shared-")
        os.unlink(path)
    try:
        os.ftruncate(fd, nbytes)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _release(key: int, fd: int) -> None:
    _BLOCKS.pop(key, None)
    os.close(fd)


def attach(fd: int, nbytes: int) -> mmap.mmap:
    """Map ``nbytes`` of the file ``fd`` shared; the mapping owns ``fd`` from now on (closed when
    the mapping is collected)."""
    buf = mmap.mmap(fd, nbytes)
    _BLOCKS[id(buf)] = (fd, np.frombuffer(buf, np.uint8).__array_interface__["data"][0])
    weakref.finalize(buf, _release, id(buf), fd)
    return buf


def new_block(nbytes: int) -> mmap.mmap:
    """A new zero-filled shared block of ``nbytes`` (> 0) bytes."""
    return attach(_open(nbytes), nbytes)


def fd_of(buf: object) -> int | None:
    """The file descriptor behind a block made here, or None for any other object."""
    entry = _BLOCKS.get(id(buf))
    return None if entry is None else entry[0]


def address_of(buf: object) -> int:
    """The address of the first byte of a block made here."""
    return _BLOCKS[id(buf)][1]
