"""Pickle, only for the objects that are not tensors or plain containers, and only loaded
behind an allow-list unless the caller says ``weights_only=False``.

Note [pickled nodes]
``save`` stores a tensor, a container of tensors and plain values (a state dict, a training
checkpoint) as JSON nodes, with no pickle (Note [checkpoint format]). Any other object (a whole
``nn.Module``, a set, a user's class) becomes a node ``{"t": "pickle", "v": base64, "p": [...]}``
holding a pickle of it in which every tensor is a *persistent id*: the index of an earlier
tensor node, so tensors are still stored in the safetensors part of the file (bytes exact,
checksummed, a tensor shared with the rest of the checkpoint stored once) and the pickle holds
only the objects around them. ``p`` lists the tensor nodes the pickle refers to, so that the
decoder can check them without unpickling.

Loading a pickle node follows PyTorch >= 2.6: with ``weights_only=True`` (the default) the
unpickler's ``find_class`` resolves only the globals of an allow-list (a few builtins and
chainrule's dtype, Size and device, plus what ``add_safe_globals`` added) and refuses any
other with PyTorch's "Weights only load failed" UnpicklingError, before importing its module;
its BUILD opcode (set an object's state) is refused but on fresh objects of allowed classes,
so a file cannot rewrite a dtype singleton or a tensor. ``weights_only=False`` is plain
pickle, which can run any code the file names.
"""

from __future__ import annotations

import builtins
import collections
import io
import pickle
from typing import Any, Callable, Union

__all__ = [
    "add_safe_globals",
    "get_safe_globals",
    "clear_safe_globals",
    "safe_globals",
]

SafeGlobal = Union[Callable[..., Any], "tuple[Callable[..., Any], str]"]

# What add_safe_globals added, in order (PyTorch's get_safe_globals returns a list).
_user_globals: list[SafeGlobal] = []


def add_safe_globals(safe_globals: list[SafeGlobal]) -> None:
    """Allow the given classes and functions in ``load(..., weights_only=True)``.

    An entry is a class or function, or a ``(obj, "module.name")`` pair for an object
    pickled under another name. Only trust objects whose construction from any arguments is
    harmless: the unpickler will call them with whatever the file holds.
    """
    if not isinstance(safe_globals, (list, tuple)):
        raise TypeError(f"Expected a list of safe globals, got {type(safe_globals).__name__}")
    for g in safe_globals:
        _check_entry(g)
    _user_globals.extend(safe_globals)


def get_safe_globals() -> list[SafeGlobal]:
    """The globals added by ``add_safe_globals`` (not the built-in allow-list)."""
    return list(_user_globals)


def clear_safe_globals() -> None:
    """Forget every global added by ``add_safe_globals``."""
    _user_globals.clear()


class safe_globals:
    """Context manager: ``add_safe_globals(globals)`` for the duration of the block only."""

    def __init__(self, safe_globals: list[SafeGlobal]) -> None:
        if not isinstance(safe_globals, (list, tuple)):
            raise TypeError(f"Expected a list of safe globals, got {type(safe_globals).__name__}")
        for g in safe_globals:
            _check_entry(g)
        self.safe_globals = list(safe_globals)

    def __enter__(self) -> None:
        self._n = len(_user_globals)
        _user_globals.extend(self.safe_globals)

    def __exit__(self, *exc: object) -> None:
        del _user_globals[self._n :]


def _check_entry(g: Any) -> None:
    if isinstance(g, tuple):
        if len(g) != 2 or not isinstance(g[1], str):
            raise TypeError(
                f"A safe global given as a tuple must be (object, 'module.name'), got {g!r:.80}"
            )
        return
    if not callable(g) or not hasattr(g, "__qualname__"):
        raise TypeError(f"Expected a class or a function as a safe global, got {g!r:.80}")


def _global_name(g: SafeGlobal) -> tuple[str, Any]:
    if isinstance(g, tuple):
        return g[1], g[0]
    return f"{g.__module__}.{g.__qualname__}", g


def _builtin_allowed() -> dict[str, Any]:
    """The default allow-list: what PyTorch's weights-only unpickler accepts without asking
    that chainrule can have (tensors never come through pickle here, Note [pickled nodes])."""
    import _codecs

    from chainrule import _dtype
    from chainrule._device import device
    from chainrule._tensor import Size

    allowed = {
        "builtins.set": builtins.set,
        "builtins.complex": builtins.complex,
        "builtins.bytearray": builtins.bytearray,
        # Protocol 2 pickles bytes as _codecs.encode(str, 'latin1'), a pure function.
        "_codecs.encode": _codecs.encode,
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
    }
    for obj in (_dtype._dtype_by_name, device, Size):
        allowed[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return allowed


def _shown(full: str) -> str:
    # PyTorch names a builtin without its module ("GLOBAL range").
    return full[len("builtins.") :] if full.startswith("builtins.") else full


def weights_only_error(detail: str) -> pickle.UnpicklingError:
    """PyTorch's UnpicklingError for a file that needs more than weights_only allows."""
    return pickle.UnpicklingError(
        "Weights only load failed. This file can still be loaded, to do so you have two options, "
        "do those steps only if you trust the source of the checkpoint. \n\t(1) In PyTorch 2.6, "
        "we changed the default value of the `weights_only` argument in `torch.load` from "
        "`False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
        "likely succeed, but it can result in arbitrary code execution. Do it only if you got "
        "the file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` "
        "please check the recommended steps in the following error message.\n\t"
        f"WeightsUnpickler error: {detail}\n\nCheck the documentation of torch.load to learn "
        "more about types accepted by default with weights_only "
        "https://pytorch.org/docs/stable/generated/torch.load.html (chainrule: "
        "docs/serialization.md)."
    )


def unsupported_global(full: str) -> pickle.UnpicklingError:
    name = _shown(full)
    return weights_only_error(
        f"Unsupported global: GLOBAL {name} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{name}])` or the "
        f"`torch.serialization.safe_globals([{name}])` context manager to allowlist this "
        "global if you trust this class/function."
    )


def py3_name(module: str, name: str) -> str:
    """``module.name`` of a pickled global, with Python 2's names (which protocols 0-2 write,
    ``__builtin__.set``) mapped to Python 3's, as ``pickle.Unpickler.find_class`` does."""
    import _compat_pickle

    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    return f"{module}.{name}"


class RestrictedUnpickler(pickle._Unpickler):  # type: ignore[name-defined, misc]
    """An Unpickler whose ``find_class`` resolves only allow-listed names, looked up by name
    *before* anything is imported (importing a module can itself run code), and whose BUILD
    (set an object's state) applies only to fresh objects of allowed classes, never to a
    shared singleton (a dtype) or to a tensor of the checkpoint.

    It is the pure-Python unpickler, whose opcode table can be changed; the pickles it reads
    hold only the objects around the tensors, so its speed does not matter.

    ``persistent_load`` hands back the objects of ``persistent`` (tensors); ``extra`` maps
    further names (PyTorch's own globals, for its files) to objects.
    """

    dispatch: dict[int, Callable[..., Any]] = dict(pickle._Unpickler.dispatch)  # type: ignore[attr-defined]
    stack: list[Any]  # the pure-Python unpickler's stack

    def __init__(
        self,
        data: bytes,
        persistent: Callable[[Any], Any],
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(io.BytesIO(data))
        self._persistent = persistent
        self._allowed = {**_builtin_allowed(), **(extra or {})}
        for g in _user_globals:
            full, obj = _global_name(g)
            self._allowed[full] = obj
        from chainrule._device import device

        self._buildable = {collections.OrderedDict, collections.Counter, device}
        self._buildable.update(o for o in _user_set() if isinstance(o, type))
        self._check_build = True

    def find_class(self, module: str, name: str) -> Any:
        full = py3_name(module, name)
        try:
            return self._allowed[full]
        except KeyError:
            raise unsupported_global(full) from None

    def persistent_load(self, pid: Any) -> Any:
        return self._persistent(pid)

    def _load_build(self) -> None:
        inst = self.stack[-2]  # under the state that BUILD sets
        if self._check_build and type(inst) not in self._buildable:
            raise weights_only_error(
                "Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                f"`add_safe_globals`, but got {type(inst)}"
            )
        pickle._Unpickler.load_build(self)  # type: ignore[attr-defined]

    dispatch[pickle.BUILD[0]] = _load_build


def _user_set() -> set[Any]:
    return {_global_name(g)[1] for g in _user_globals}


class FullUnpickler(pickle.Unpickler):
    """Plain pickle (``weights_only=False``) with the checkpoint's tensors as persistent ids."""

    def __init__(self, data: bytes, persistent: Callable[[Any], Any]) -> None:
        super().__init__(io.BytesIO(data))
        self._persistent = persistent

    def persistent_load(self, pid: Any) -> Any:
        return self._persistent(pid)


def unpickle(
    data: bytes,
    persistent: Callable[[Any], Any],
    weights_only: bool,
    pickle_module: Any = None,
) -> Any:
    """Unpickle ``data`` as Note [pickled nodes] says, turning a malformed pickle into an
    UnpicklingError (never an internal error)."""
    if weights_only:
        up: pickle.Unpickler | RestrictedUnpickler = RestrictedUnpickler(data, persistent)
    elif pickle_module is not None and hasattr(pickle_module, "Unpickler"):

        class _Custom(pickle_module.Unpickler):  # type: ignore[name-defined, misc]
            def persistent_load(self, pid: Any) -> Any:
                return persistent(pid)

        up = _Custom(io.BytesIO(data))
    else:
        up = FullUnpickler(data, persistent)
    try:
        return up.load()
    except pickle.UnpicklingError:
        raise
    except (EOFError, ValueError, IndexError, KeyError, TypeError, AttributeError) as e:
        if weights_only:
            raise weights_only_error(f"{type(e).__name__}: {e}") from None
        raise


def globals_in_pickle(data: bytes) -> list[str]:
    """The ``module.name`` of every GLOBAL/STACK_GLOBAL in ``data``, read with pickletools
    (nothing is unpickled or imported)."""
    import pickletools

    found: list[str] = []
    strings: list[str] = []
    for op, arg, _pos in pickletools.genops(data):
        if op.name == "GLOBAL":
            found.append(py3_name(*str(arg).split(" ", 1)))
        elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8"):
            strings.append(str(arg))
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            found.append(py3_name(strings[-2], strings[-1]))
    return list(dict.fromkeys(found))


def dumps(obj: Any, persistent_id: Callable[[Any], Any], protocol: int, module: Any) -> bytes:
    """Pickle ``obj`` with ``persistent_id`` choosing which objects the pickle refers to."""
    pickler_cls = getattr(module, "Pickler", pickle.Pickler) if module is not None else None
    pickler_cls = pickler_cls or pickle.Pickler

    class _P(pickler_cls):  # type: ignore[misc, valid-type]
        def persistent_id(self, o: Any) -> Any:
            return persistent_id(o)

    buf = io.BytesIO()
    _P(buf, protocol=protocol).dump(obj)
    return buf.getvalue()
