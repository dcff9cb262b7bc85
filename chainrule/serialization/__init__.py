"""``save`` and ``load``, as ``torch.save``/``torch.load``.

chainrule's own checkpoints are safetensors files with a JSON structure header
(Note [checkpoint format] in ``_format.py``); objects other than tensors and plain containers
are pickled inside them, behind PyTorch's ``weights_only`` allow-list (Note [pickled nodes] in
``_pickle.py``). ``load`` also reads the zip checkpoints that PyTorch's ``torch.save`` writes,
without torch and without running any code from them (Note [torch checkpoints] in
``_torch_format.py``).

The package's files: ``_format`` (shared constants, errors), ``_save`` (the writer), ``_reader``
(the safetensors header and tensor bytes, checked), ``_decode`` (the structure, and loading a
chainrule file), ``_pickle`` (the pickled parts and the safe-globals allow-list),
``_torch_format`` (PyTorch's zip format).
"""

from __future__ import annotations

import os
from typing import Any

from chainrule.serialization._decode import load_checkpoint
from chainrule.serialization._detect import _seekable, get_unsafe_globals_in_checkpoint
from chainrule.serialization._format import CheckpointError, CheckpointIntegrityError, FileLike
from chainrule.serialization._pickle import (
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)
from chainrule.serialization._save import save

__all__ = [
    "save",
    "load",
    "CheckpointError",
    "CheckpointIntegrityError",
    "add_safe_globals",
    "get_safe_globals",
    "clear_safe_globals",
    "safe_globals",
    "get_unsafe_globals_in_checkpoint",
]


def _resolve_weights_only(weights_only: bool | None, pickle_module: Any) -> bool:
    # PyTorch >= 2.6: True by default, False when a pickle_module is given without it, and an
    # error for both at once.
    if weights_only is None:
        if os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0") not in ("", "0"):
            return False
        return pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    return bool(weights_only)


def load(
    f: FileLike,
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    verify: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Load an object saved by ``save`` (or by PyTorch's ``torch.save``) from a path or a
    binary file object.

    Tensors come back with their dtypes and exact bytes, as Parameters where they were
    Parameters, with ``requires_grad`` as saved. For chainrule's checkpoints the header's
    checksum is always verified and each tensor's bytes are checksummed as they are copied
    out of the file (one copy, straight into the tensor's memory). A checkpoint that holds
    only tensors and plain containers (state dicts, ``{"epoch": 3, "model": ..., "opt":
    ...}``) involves no pickle at all.

    Args:
        f: a path, or a binary file object positioned at the checkpoint.
        map_location: where tensors go, as in ``torch.load``: None (where they were saved
            from), a device or string, a dict of locations (``{'cuda:0': 'cpu'}``) or a
            callable ``f(tensor, location)`` (serialization/_location.py).
        pickle_module: the module whose ``Unpickler`` reads pickled objects (implies
            ``weights_only=False``, as in torch).
        weights_only: as in PyTorch >= 2.6, True by default: pickled objects are loaded only
            if every global they name is a tensor, a plain container, a dtype/size/device or
            was allowed with ``serialization.add_safe_globals``/``safe_globals``. ``False``
            unpickles anything: only for files you trust.
        mmap: as in torch: map the file instead of reading it (``f`` must be a path). The
            tensors view a private copy-on-write mapping (MAP_PRIVATE): they are writable and
            their writes never reach the file; pages are read when first touched.
        verify: checksum every tensor's bytes. Default: True, except with ``mmap=True``,
            where reading every page to checksum it would defeat the mapping.
        pickle_load_args: accepted for torch compatibility (``encoding`` and friends).

    Differs from torch: a PyTorch checkpoint loads with tensors and plain containers only
    (PyTorch's own classes other than tensors, dtypes, sizes and devices are refused even
    with ``weights_only=False``), and its tensors land on the CPU whatever device they were
    saved from.

    Raises:
        pickle.UnpicklingError: "Weights only load failed ...": a pickled part names a global
            that ``weights_only=True`` does not allow (PyTorch's message, naming the global).
        CheckpointError (a RuntimeError): the file is truncated, malformed (any header field
            of the wrong type or out of range, duplicate keys, overlapping data) or not a
            checkpoint; the message names the file, the field and what was expected. Its
            subclass CheckpointIntegrityError: a checksum of the header or of a tensor does
            not match.
        RuntimeError: ``weights_only=True`` together with a ``pickle_module``.
        ValueError: ``mmap=True`` with a file object.
    """
    wo = _resolve_weights_only(weights_only, pickle_module)
    from chainrule.serialization import _torch_format

    f = _seekable(f)
    if _torch_format.is_torch_zip(f):
        return _torch_format.load_torch_zip(f, map_location, wo, mmap)
    return load_checkpoint(f, map_location, wo, pickle_module, mmap, verify)
