"""Telling a file's format and listing its pickles without unpickling them (for ``load``
and ``get_unsafe_globals_in_checkpoint``)."""

from __future__ import annotations

import os
from typing import Any

from chainrule.serialization import _decode, _pickle, _torch_format
from chainrule.serialization._format import FileLike

__all__ = ["get_unsafe_globals_in_checkpoint"]


def _seekable(f: FileLike) -> FileLike:
    """``f``, or its bytes in memory if it is a stream that cannot seek (the format checks
    look at its first bytes before reading it)."""
    if isinstance(f, (str, os.PathLike)):
        return f
    try:
        f.seek(f.tell())  # type: ignore[union-attr]
        return f
    except (AttributeError, OSError, ValueError):
        import io

        return io.BytesIO(f.read())  # type: ignore[union-attr]


def _pickled_payloads(f: FileLike) -> list[tuple[bytes, dict[str, Any]]]:
    """The pickles in a checkpoint, each with the extra globals its reader resolves itself
    (for ``get_unsafe_globals_in_checkpoint``); nothing is unpickled."""
    f = _seekable(f)
    if _torch_format.is_torch_zip(f):
        return [_torch_format.data_pickle(f)]
    return [(p, {}) for p in _decode.pickles_of(f)]


def get_unsafe_globals_in_checkpoint(f: Any) -> list[str]:
    """The globals a checkpoint's pickled parts name that ``weights_only=True`` would refuse
    (none for a checkpoint of tensors and plain containers). Nothing is unpickled."""
    allowed = set(_pickle._builtin_allowed())
    allowed.update(_pickle._global_name(g)[0] for g in _pickle._user_globals)
    out: list[str] = []
    for data, extra in _pickled_payloads(f):
        out += [g for g in _pickle.globals_in_pickle(data) if g not in allowed and g not in extra]
    return list(dict.fromkeys(out))
