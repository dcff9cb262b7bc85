"""The ``torch`` namespace: makes ``import torch`` (and ``import torch.nn.functional as F`` ...)
resolve to chainrule's modules, for ``python -m chainrule script.py``.

A finder placed first on ``sys.meta_path`` answers every import of ``torch`` or ``torch.<x>``:
``torch`` is the ``chainrule`` module itself and ``torch.a.b`` is ``chainrule.a.b``, the same module
objects (so ``torch.nn is chainrule.nn`` and a module is never loaded twice under two names). An
import of a part chainrule does not provide fails at the import line with a
``ModuleNotFoundError`` (an ``ImportError``, as a missing module would give) that names the module.

Nothing here runs on ``import chainrule``; only the runner (``chainrule.__main__``) or a caller of
:func:`install` puts the finder in place.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any, Sequence

__all__ = ["install", "uninstall", "TorchAliasFinder"]

_PREFIX = "torch"


def _target(fullname: str) -> str:
    """``torch.nn.functional`` -> ``chainrule.nn.functional``."""
    return "chainrule" + fullname[len(_PREFIX) :]


class _AliasLoader(importlib.abc.Loader):
    """Hands out an already imported chainrule module under its torch name."""

    def __init__(self, module: ModuleType) -> None:
        self._module = module

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        # The import system keeps the module's own __name__/__spec__ (it only fills missing ones),
        # so the module stays chainrule's while sys.modules also lists it as torch.<x>.
        return self._module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the chainrule module is already imported."""


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """Resolves ``torch`` and ``torch.*`` imports to chainrule's modules, or refuses them."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _PREFIX and not fullname.startswith(_PREFIX + "."):
            return None
        name = _target(fullname)
        parts = fullname.split(".")[1:]
        # Private torch modules (torch._C, torch._dynamo ...) are implementation details of
        # PyTorch with no counterpart here; chainrule's own private modules are not them.
        if any(p.startswith("_") for p in parts):
            raise _not_provided(fullname)
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and (exc.name == name or name.startswith(exc.name + ".")):
                raise _not_provided(fullname) from None
            raise
        is_pkg = hasattr(module, "__path__")
        return importlib.util.spec_from_loader(fullname, _AliasLoader(module), is_package=is_pkg)


def _not_provided(fullname: str) -> ModuleNotFoundError:
    err = ModuleNotFoundError(
        f"No module named '{fullname}': chainrule does not provide {fullname} (the script runs "
        f"with 'torch' resolved to chainrule; its README lists what exists)"
    )
    err.name = fullname
    return err


_FINDER = TorchAliasFinder()


def install() -> None:
    """Resolve ``torch`` imports to chainrule from now on (idempotent).

    Any ``torch`` modules already imported (real PyTorch) are dropped from ``sys.modules`` first,
    so that later imports see chainrule's.
    """
    for key in [k for k in sys.modules if k == _PREFIX or k.startswith(_PREFIX + ".")]:
        del sys.modules[key]
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def uninstall() -> None:
    """Undo :func:`install`: drop the finder and the ``torch`` aliases from ``sys.modules``."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for key in [k for k in sys.modules if k == _PREFIX or k.startswith(_PREFIX + ".")]:
        del sys.modules[key]
