"""The seam between ``Tensor`` and the layers above it: tables that those layers fill.

Imports point one way (docs/architecture.md, "Layers"): ``_tensor.py`` and its method mixins
(``_methods/``) import nothing above them, yet ``x.exp()`` must run an op of ``chainrule.ops``
and ``x.backward()`` the engine of ``chainrule.autograd``. So a Tensor method calls through a
table defined here, at the bottom, which the upper layer fills when it is imported, as
PyTorch's ATen reaches autograd through ``VariableHooksInterface`` and its ops through the
dispatcher's registry:

``ops``
    every public op function (``chainrule.ops.__all__``) and the dispatcher's entry points
    that Tensor methods call (``apply_unary``, ``apply_binary``, ``inplace_compute``),
    registered by ``chainrule/ops/__init__.py``.
``defs``
    the ``OpDef`` of each registered op by its name: the hottest Tensor methods (``x.exp()``,
    ``a * b``) call ``ops.apply_unary(defs.exp, x)``, the same one call that ``chainrule.exp``
    makes, so that a method costs no extra Python frame (Note [hot methods] in _tensor.py).
``creation`` / ``sampling``
    the factories of ``chainrule._creation`` and the samplers of ``chainrule._sampling``.
``upper``
    a :class:`LazyTable` of the few cold Tensor methods' implementations that live in
    modules loaded on first use (legacy linear algebra, layouts, two ``nn.functional``
    functions), registered by name by the package ``__init__``.
``autograd``
    ``AutogradHooks``: what Tensor needs of the graph and the engine, registered by
    ``chainrule.autograd``.

Nothing is looked up by string at call time: a table is an object whose attributes are the
registered functions (``ops.exp`` is ``chainrule.ops.exp`` itself), so a method's call costs
the one attribute lookup that reading ``chainrule.ops.exp`` off the module did before. Type
checkers see each table as the module that fills it (the ``TYPE_CHECKING`` block), so
``x.exp()`` is typed by ``chainrule.ops.exp``'s signature.

Registration happens while ``import chainrule`` runs (each layer registers when its module is
imported; any ``import chainrule.x`` runs the package ``__init__`` first), before any tensor
method can be called by user code. Registering a name twice with a different object is an
error, so no function is silently replaced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ContextManager, Mapping, Protocol

__all__ = [
    "Table",
    "LazyTable",
    "AutogradHooks",
    "register",
    "register_lazy",
    "ops",
    "defs",
    "creation",
    "sampling",
    "autograd",
    "upper",
    "recorder",
]


class Table:
    """A namespace of functions that one upper layer registers for the layers below it.

    Read an entry as an attribute (``ops.exp``); fill it with :func:`register`. (No
    ``__getattr__`` for a friendlier error on a missing entry: a class with one is not
    specialised by CPython's attribute cache, which costs every Tensor method a slow lookup.)
    """

    def __init__(self, provider: str) -> None:
        self.__dict__["_provider"] = provider

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("register entries with chainrule._dispatch.register()")

    def __repr__(self) -> str:
        return f"<table of {self.__dict__['_provider']}: {len(self.__dict__) - 1} entries>"


class LazyTable:
    """A table whose entries live in modules that ``import chainrule`` does not load (to keep
    its import time), for the few cold Tensor methods whose implementation sits in such a
    module (``x.cholesky_solve()`` in ``chainrule._linalg_legacy``, ``x.prelu()`` in
    ``nn.functional``...).

    The upper layer registers each entry as the name of the module that defines it
    (:func:`register_lazy`, called by the package ``__init__``, the top layer); the first read
    of an entry imports that module and keeps the function, so later reads cost what a
    :class:`Table` read does. Tensor methods on the hot path never use this table.
    """

    def __init__(self, provider: str) -> None:
        self.__dict__["_provider"] = provider
        self.__dict__["_homes"] = {}

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("register entries with chainrule._dispatch.register_lazy()")

    def __getattr__(self, name: str) -> Any:
        home = self.__dict__["_homes"].get(name)
        if home is None:
            raise AttributeError(f"{name!r} is not registered in the {self._provider} table")
        import importlib

        value = getattr(importlib.import_module(home), name)
        self.__dict__[name] = value
        return value


def register_lazy(table: LazyTable, homes: Mapping[str, str]) -> None:
    """Declare that each entry of ``homes`` (name -> dotted module name) is that module's
    attribute of the same name, imported on first use.

    Raises:
        RuntimeError: a name is already registered with a different module.
    """
    d = table.__dict__["_homes"]
    for name, home in homes.items():
        if d.get(name, home) != home:
            raise RuntimeError(f"{name!r} is registered twice in the {table._provider} table")
        d[name] = home


class AutogradHooks(Protocol):
    """What ``Tensor`` needs of ``chainrule.autograd`` (registered into ``autograd``).

    Attributes:
        VersionCounter: the class of a tensor's version counter (``Tensor._get_vc``).
        inference_vc: the one counter that all inference tensors share.
        grad_lock: the lock under which gradients accumulate (Note [accumulation lock]).
    """

    VersionCounter: type
    inference_vc: Any
    grad_lock: ContextManager[Any]

    def new_accumulator(self, tensor: Any) -> Any:
        """A new ``AccumulateGrad`` node for the leaf ``tensor`` (raising for an inference
        tensor, which cannot be saved for backward)."""

    def backward(
        self,
        tensors: Any,
        grad_tensors: Any = None,
        *,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """``chainrule.autograd.backward`` itself (its warnings' stack levels count on being
        called straight from ``Tensor.backward``)."""


def register(table: Any, entries: Mapping[str, Any]) -> None:
    """Add ``entries`` (name -> object) to ``table``.

    Raises:
        RuntimeError: a name is already registered with a different object.
    """
    d = table.__dict__
    for name, value in entries.items():
        old = d.get(name, value)
        if old is not value:
            raise RuntimeError(f"{name!r} is registered twice in the {d['_provider']} table")
        d[name] = value


# Note [recorder slot]
#     The one hook of ``chainrule.compile`` (chainrule/_compile/) into the layers below it:
#     None, except while a capture runs, when it holds the capture's session. Two cold paths
#     read it with one ``is None`` test: ``_random.rng_of`` (a capture records random draws)
#     and ``Optimizer._run`` (a capture replays an optimizer step by calling it). Every array
#     call else reaches the capture through the arrays themselves (Note [tracing arrays] in
#     chainrule/_compile/_tracer.py), so no hot path reads this slot.
recorder: list[Any] = [None]


if TYPE_CHECKING:
    import chainrule._creation as creation
    import chainrule._sampling as sampling
    import chainrule.ops as ops

    defs: Any
    autograd: AutogradHooks
    upper: Any
else:
    ops = Table("chainrule.ops")
    defs = Table("chainrule.ops")
    creation = Table("chainrule._creation")
    sampling = Table("chainrule._sampling")
    autograd = Table("chainrule.autograd")
    upper = LazyTable("chainrule (modules loaded on first use)")
