"""Tensor: one array plus autograd metadata.

This file is long because ``Tensor`` carries PyTorch's whole method surface. Every math method
is a one-line call into ``chainrule.ops``, reached through the op table of ``_dispatch.py`` (this
module imports nothing above it; docs/architecture.md, "Layers"); the only logic here is
metadata: grad, hooks, versions, conversion and construction.

Hot fields are ``__slots__``; rarely used ones (hooks, views, retain_grad) are class-level
defaults that an instance overrides in its ``__dict__`` only when it uses them, so creating a
tensor sets four attributes (the version counter ``_vc`` is a slot, None until the tensor is
saved for backward or aliased: every saved value writes it).
"""

from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import numpy as np

from chainrule import _dtype, _kinds
from chainrule._device import CPU, device, parse_to
from chainrule._device import device as _device_cls
from chainrule._dispatch import autograd as _autograd
from chainrule._dispatch import creation as _creation
from chainrule._dispatch import defs as _defs
from chainrule._dispatch import ops as _ops
from chainrule._grad_state import _state
from chainrule._methods._base import _TYPE_NAMES, Size, TensorBase
from chainrule._methods._base import foreign as _foreign
from chainrule._methods._base import type_name as _type_name
from chainrule._methods.composite import CompositeMethods
from chainrule._methods.elementwise import ElementwiseMethods
from chainrule._methods.indexing import IndexingMethods
from chainrule._methods.inplace import InplaceMethods
from chainrule._methods.inplace_generated import GeneratedInplaceMethods
from chainrule._methods.linalg import LinalgMethods
from chainrule._methods.names import NamesMethods
from chainrule._methods.nn import NnMethods
from chainrule._methods.reduction import ReductionMethods
from chainrule._methods.sampling import SamplingMethods
from chainrule._methods.shape import ShapeMethods
from chainrule._methods.sorting import SortingMethods
from chainrule._methods.special import SpecialMethods
from chainrule._methods.spectral import SpectralMethods
from chainrule._methods.stochastic import StochasticMethods
from chainrule._methods.storage import StorageMethods
from chainrule._methods.surface import SurfaceMethods
from chainrule.backends import backend_of, get_backend
from chainrule.utils.hooks import RemovableHandle

if TYPE_CHECKING:
    from chainrule.autograd.graph import AccumulateGrad, VersionCounter

__all__ = ["Tensor", "Size"]

_from_np = _dtype.from_np

NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If "
    "you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead."
)

REQUIRES_GRAD_DTYPE_MSG = "Only Tensors of floating point and complex dtype can require gradients"


_new = object.__new__


def _mark_inference(t: Tensor) -> None:
    """Make ``t`` an inference tensor (made under ``inference_mode``): it shares the one
    counter of all inference tensors (_dispatch.AutogradHooks.inference_vc)."""
    t.__dict__["_is_inference"] = True
    t._vc = _autograd.inference_vc


def _new_tensor(data: Any) -> Tensor:
    """Wrap an array as a Tensor without copying or validation (trusted internal callers)."""
    t = _new(Tensor)
    t._data = data
    t._requires_grad = False
    t.grad_fn = None
    t._vc = None
    return t


class Tensor(
    ElementwiseMethods,
    ReductionMethods,
    ShapeMethods,
    IndexingMethods,
    LinalgMethods,
    NnMethods,
    InplaceMethods,
    SortingMethods,
    CompositeMethods,
    SpecialMethods,
    SpectralMethods,
    StochasticMethods,
    SamplingMethods,
    SurfaceMethods,
    StorageMethods,
    GeneratedInplaceMethods,
    TensorBase,
    NamesMethods,
):
    """A multi-dimensional array that can record operations for automatic differentiation.

    Construct tensors with ``chainrule.tensor(data)`` and the factory functions. Calling
    ``Tensor(...)`` directly is the legacy constructor: ``Tensor([1, 2])`` gives float32 data
    and ``Tensor(2, 3)`` an uninitialised 2x3 float32 tensor.

    ``requires_grad`` leaves accumulate gradients in ``.grad``; results of ops on them record a
    ``grad_fn`` node. ``is_leaf`` means ``grad_fn is None``.
    """

    __slots__ = ("_data", "_requires_grad", "grad_fn", "_vc", "__dict__", "__weakref__")

    # Class-level defaults; see the module docstring.
    _grad: Tensor | None = None
    _output_nr = 0
    _base: Tensor | None = None
    _view_chain: tuple[Any, ...] = ()
    _fn_view: str | None = None  # Note [custom Function views] in autograd/function.py
    _accum: Any = None
    _backward_hooks: OrderedDict[int, Callable[..., Any]] | None = None
    _post_acc_hooks: OrderedDict[int, Callable[..., Any]] | None = None
    _retain_handle: Any = None
    _is_inference = False
    _is_param = False
    __array_priority__ = 1000  # make ndarray (op) Tensor defer to Tensor's reflected ops

    def __new__(cls, *args: Any, **kwargs: Any) -> Tensor:
        return _legacy_new(cls, *args, **kwargs)

    # Internal constructors -------------------------------------------------------------------
    @staticmethod
    def _wrap(data: Any) -> Tensor:
        if not isinstance(data, np.ndarray) and not hasattr(data, "__cuda_array_interface__"):
            data = np.asarray(data)
        return _new_tensor(data)

    @staticmethod
    def _from_node(data: Any, node: Any, output_nr: int) -> Tensor:
        t = _new_tensor(data)
        t._requires_grad = True
        t.grad_fn = node
        if output_nr:
            t._output_nr = output_nr
        return t

    @classmethod
    def _make_subclass(cls, data: Tensor, requires_grad: bool = False) -> Tensor:
        """A ``cls`` instance sharing ``data``'s array and version counter, without history."""
        t = _new(cls)
        t._data = data._data
        t._requires_grad = False
        t.grad_fn = None
        t._vc = None
        t._vc = data._get_vc()
        if requires_grad:
            t.requires_grad_(True)
        return t

    def _get_vc(self) -> VersionCounter:
        vc = self._vc
        if vc is None:
            vc = self._vc = _autograd.VersionCounter()
        return vc

    def _get_accumulator(self) -> AccumulateGrad:
        """This leaf's AccumulateGrad node, made on first use and held weakly."""
        ref = self._accum
        if ref is not None:
            acc = ref()
            if acc is not None:
                return acc
        return _autograd.new_accumulator(self)

    # Autograd metadata -----------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether gradients are computed for this tensor."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place on a leaf; returns self."""
        if self.grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and not _kinds.is_inexact(self._data):
            raise RuntimeError(REQUIRES_GRAD_DTYPE_MSG)
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded op (``grad_fn is None``)."""
        return self.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        """Accumulated gradient of a leaf (or of a non-leaf after ``retain_grad()``)."""
        if self.grad_fn is not None and self._retain_handle is None and self._grad is None:
            warnings.warn(NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value.shape != self.shape:
                raise RuntimeError(
                    "assigned grad has data of a different size: expected "
                    f"{list(self.shape)}, got {list(value.shape)}"
                )
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    "attempting to assign a gradient with dtype "
                    f"'{_CPP_NAMES.get(value._data.dtype.name, value._data.dtype.name)}' to a "
                    f"tensor with grad_dtype '{_type_name(self._data.dtype)[:-6]}'. The gradient "
                    "must match the tensor's dtype."
                )
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def _version(self) -> int:
        vc = self._vc
        return 0 if vc is None else vc.value

    def _bump_version(self) -> None:
        self._get_vc().value += 1

    def is_inference(self) -> bool:
        """Whether this tensor was made inside ``inference_mode()`` (it cannot be saved for
        backward)."""
        return self._is_inference

    @property
    def retains_grad(self) -> bool:
        """Whether ``retain_grad()`` was called on this non-leaf."""
        return self._retain_handle is not None

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf after backward (a no-op on leaves)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retain_handle is not None:
            return
        ref = weakref.ref(self)

        def hook(g: Tensor) -> None:
            t = ref()
            if t is None:
                return
            g = g.detach() if not _state.enabled else g
            with _autograd.grad_lock:  # backwards in other threads may add at once
                if t._grad is None:
                    t._grad = g.clone()
                else:
                    t._grad = t._grad + g

        hooks = self.grad_fn._get_hooks()
        hooks.retain[self._output_nr] = hook
        self._retain_handle = True

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Register ``hook(grad) -> Tensor or None`` to run when this tensor's gradient is
        computed; a returned tensor replaces the gradient. Returns a removable handle.

        Example:
            >>> import chainrule as torch
            >>> v = torch.tensor([0., 0., 0.], requires_grad=True)
            >>> h = v.register_hook(lambda grad: grad * 2)
            >>> v.backward(torch.tensor([1., 2., 3.]))
            >>> v.grad
            tensor([2., 4., 6.])
            >>> h.remove()
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._register_tensor_hook(self._output_nr, hook)
        if self._backward_hooks is None:
            self._backward_hooks = OrderedDict()
        return RemovableHandle(self._backward_hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]) -> RemovableHandle:
        """Register ``hook(tensor)`` to run on a leaf after its ``.grad`` was accumulated."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        if self._post_acc_hooks is None:
            self._post_acc_hooks = OrderedDict()
        return RemovableHandle(self._post_acc_hooks, hook)

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Sequence[Tensor] | Tensor | None = None,
        **kwargs: Any,
    ) -> None:
        """Accumulate d(self)/d(leaf), contracted with ``gradient``, into each leaf's ``.grad``.

        ``gradient`` may be omitted only for a one-element tensor. Saved buffers are freed
        afterwards unless ``retain_graph`` (default: ``create_graph``) is set.
        """
        if kwargs:
            _reject_backward_kwargs(kwargs)
        _autograd.backward(
            self, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs
        )

    def detach(self) -> Tensor:
        """A tensor sharing this one's data and version counter, outside the graph."""
        t = _new_tensor(self._data)
        t._vc = self._get_vc()
        if self._is_inference:
            t._is_inference = True
        return t

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (its ``_base``)."""
        return self._base is not None

    def detach_(self) -> Tensor:
        """Detach this tensor from the graph in place (it becomes a leaf)."""
        if (self._base is not None and self._base._requires_grad) or self._fn_view:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is "
                "set as True, gradients are views of DDP buckets, and hence detach_() cannot "
                "be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
            )
        self.grad_fn = None
        self._requires_grad = False
        if "_output_nr" in self.__dict__:
            del self._output_nr
        return self

    @property
    def data(self) -> Tensor:
        """A tensor sharing storage with this one, outside the graph; in-place changes through
        it are not seen by autograd's version checks (as in PyTorch)."""
        t = _new_tensor(self._data)
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._data = value._data

    # Shape and type --------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Any:
        """The shape as a ``Size``, or the length of dimension ``dim``."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def dtype(self) -> _dtype.dtype:
        return _from_np(self._data.dtype)

    @property
    def _backend(self) -> Any:
        return backend_of(self._data)

    @property
    def device(self) -> device:
        b = backend_of(self._data)
        return CPU if b.device == "cpu" else device("cuda", b.device_index(self._data))

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    @property
    def is_mps(self) -> bool:
        return False

    @property
    def is_xpu(self) -> bool:
        return False

    @property
    def is_meta(self) -> bool:
        return False

    def get_device(self) -> int:
        """The GPU index of a CUDA tensor; -1 for a CPU tensor, as PyTorch."""
        d = self.device
        return -1 if d.type == "cpu" else (d.index or 0)

    def is_floating_point(self) -> bool:
        return _kinds.is_floating(self._data)

    def is_contiguous(self) -> bool:
        return bool(self._data.flags.c_contiguous)

    def contiguous(self) -> Tensor:
        return self if self._data.flags.c_contiguous else _ops.clone(self)

    def stride(self, dim: int | None = None) -> Any:
        d = self._data
        if d.size == 0 and not any(d.strides):  # NumPy gives 0 strides; PyTorch C ones
            st, n = [], 1
            for k in reversed(d.shape):
                st.insert(0, n)
                n *= max(k, 1)
            st = tuple(st)
        else:
            st = tuple(s // d.itemsize for s in d.strides)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim)]

    def type(self, dtype: Any = None) -> Any:
        """Without arguments, the legacy type name ('torch.FloatTensor', kept for old code);
        with a dtype or type name, a converted tensor."""
        if dtype is None:
            return "torch." + _type_name(self._data.dtype)
        if isinstance(dtype, str):
            name = dtype.split(".")[-1]
            for k, v in _TYPE_NAMES.items():
                if v == name:
                    return self.to(_dtype._BY_NAME[k])
            raise ValueError(f"invalid type: '{dtype}'")
        return self.to(dtype)

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """Convert device and/or dtype: ``to(dtype)``, ``to(device, dtype)``, ``to(other)``,
        each with ``non_blocking`` and ``copy`` (see ``_device.parse_to``). Returns ``self``
        when nothing changes and ``copy`` is False; the copy is differentiable (the gradient
        goes back to ``self``'s device and dtype). ``'cuda'`` with no index means the current
        GPU. ``non_blocking`` is accepted; copies are synchronous."""
        dev, dt, _, copy = parse_to(args, kwargs, Tensor)
        t = self
        if dev is not None:
            d = self._data
            src = backend_of(d)
            be = get_backend(dev)
            index = None
            if be.device != "cpu":
                index = be.check_device(dev.index)  # type: ignore[attr-defined]
            if be is not src or (index is not None and index != src.device_index(d)):
                t = _ops.to_device(t, backend=be, index=index)
        if dt is not None:
            dt = _dtype.to_dtype(dt)
            if dt.np != t._data.dtype:
                t = _ops.to_dtype(t, dtype=dt.np)
        if copy and t is self:
            t = _ops.clone(t)
        return t

    def cpu(self, memory_format: Any = None) -> Tensor:
        """A copy on the CPU (``self`` when already there)."""
        return self.to("cpu")

    def cuda(
        self, device: Any = None, non_blocking: bool = False, memory_format: Any = None
    ) -> Tensor:
        """A copy on GPU ``device`` (an index, ``'cuda:1'``, a device; the current GPU when
        None); ``self`` when already there."""
        if device is None:
            device = "cuda"
        elif isinstance(device, int) and not isinstance(device, bool):
            device = _device_cls(device)  # 'cuda:N' (RuntimeError without a GPU backend)
        elif _device_cls(device).type != "cuda":
            raise RuntimeError(f"Invalid device, must be cuda device, got {device}")
        return self.to(device, non_blocking=non_blocking)

    def float(self) -> Tensor:
        return self.to(_dtype.float32)

    def double(self) -> Tensor:
        return self.to(_dtype.float64)

    def half(self) -> Tensor:
        return self.to(_dtype.float16)

    def bfloat16(self) -> Tensor:
        return self.to(_dtype.bfloat16)

    def long(self) -> Tensor:
        return self.to(_dtype.int64)

    def int(self) -> Tensor:
        return self.to(_dtype.int32)

    def short(self) -> Tensor:
        return self.to(_dtype.int16)

    def bool(self) -> Tensor:
        return self.to(_dtype.bool)

    def byte(self) -> Tensor:
        return self.to(_dtype.uint8)

    # Conversion to Python / NumPy -------------------------------------------------------------
    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._backend.to_host(self._data).reshape(()).item()

    def tolist(self) -> Any:
        return self._backend.to_host(self._data).tolist()

    def numpy(self, force: bool = False) -> np.ndarray:
        """The NumPy array behind this CPU tensor (shared memory)."""
        if self._requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        if self.device.type != "cpu":
            raise TypeError(
                f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to "
                "copy the tensor to host memory first."
            )
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self._backend.to_host(self._data)
        return a if dtype is None else a.astype(dtype)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(_ops.unbind(self, 0))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous"
                if self._data.size > 1
                else "Boolean value of Tensor with no values is ambiguous"
            )
        return bool(self._data.reshape(()).item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if not _kinds.is_integral(self._data, include_bool=True) or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        from chainrule._formatting import tensor_repr

        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        # As PyTorch: a 0-d tensor formats as its number (f"{loss}" prints 0.25), others as repr.
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return repr(self)

    def __reduce_ex__(self, proto: Any) -> Any:
        raise TypeError(
            "chainrule tensors are not pickled; use chainrule.save / chainrule.load "
            "(safetensors), or tensor.detach().numpy()"
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        if self.grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment.  If you were attempting to deepcopy a module, "
                "this may be because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001"
            )
        t = _new(type(self))
        d = self._data
        if type(d) is np.ndarray:
            t._data = d.copy()
        else:  # CuPy copies onto the current GPU: make the array's own GPU current (PyTorch
            # keeps a deep copy on its tensor's device)
            with backend_of(d).array_device(d):
                t._data = d.copy()
        t._requires_grad = self._requires_grad
        t.grad_fn = None
        t._vc = None
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        for k, v in self.__dict__.items():
            if k not in ("_vc", "_accum", "_grad", "_backward_hooks", "_post_acc_hooks"):
                t.__dict__[k] = v
        memo[id(self)] = t
        return t

    # Arithmetic operators ---------------------------------------------------------------------
    #
    # Note [hot methods]
    #     The operators and methods that most programs run per element op (+ - * /, neg, abs,
    #     exp, log, sqrt, sin, cos, tanh, sigmoid, relu) call the dispatcher's entry point with
    #     the op's OpDef, ``_ops.apply_unary(_defs.exp, self)``: the one call that the public
    #     ``chainrule.exp`` makes, so the method costs no Python frame more than calling the op
    #     function would (ARCHITECTURE.md 5a). Each is a plain ``unary``/``binary`` op (one
    #     output, no view, no aux), which those entry points require.
    #
    # Note [foreign operands]
    #     With an operand that is no tensor, number, array or sequence (a str, None, any other
    #     object), an operator returns NotImplemented, so that Python tries the other operand's
    #     reflected method and then raises its own TypeError ("unsupported operand type(s) for
    #     +: 'Tensor' and 'str'"), as PyTorch does; == and != then fall back to identity. The
    #     binary operators find out only when the op fails (a try block costs nothing on the
    #     hot path), == and != before (NumPy compares anything elementwise).
    def __add__(self, other: Any) -> Tensor:
        try:
            return _ops.apply_binary(_defs.add, self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    def __radd__(self, other: Any) -> Tensor:
        try:
            return _ops.apply_binary(_defs.add, self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    def __sub__(self, other: Any) -> Tensor:
        try:
            return _ops.sub(self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    def __rsub__(self, other: Any) -> Tensor:
        try:
            return _ops.rsub(self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    def __mul__(self, other: Any) -> Tensor:
        try:
            return _ops.apply_binary(_defs.mul, self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    def __rmul__(self, other: Any) -> Tensor:
        try:
            return _ops.apply_binary(_defs.mul, self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    def __truediv__(self, other: Any) -> Tensor:
        try:
            return _ops.apply_binary(_defs.div, self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    def __rtruediv__(self, other: Any) -> Tensor:
        try:
            return _ops.apply_binary(_defs.rdiv, self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    def __pow__(self, other: Any) -> Tensor:
        try:
            return _ops.pow(self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    def __rpow__(self, other: Any) -> Tensor:
        try:
            return _ops.rpow(self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    def __matmul__(self, other: Any) -> Tensor:
        try:
            return _ops.matmul(self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    def __rmatmul__(self, other: Any) -> Tensor:
        try:
            return _ops.matmul(other, self)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    def __neg__(self) -> Tensor:
        return _ops.apply_unary(_defs.neg, self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return _ops.apply_unary(_defs.abs, self)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        if _foreign(other):  # Note [foreign operands]
            return NotImplemented
        return _ops.eq(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        if _foreign(other):  # Note [foreign operands]
            return NotImplemented
        return _ops.ne(self, other)

    def __lt__(self, other: Any) -> Tensor:
        try:
            return _ops.lt(self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    def __le__(self, other: Any) -> Tensor:
        try:
            return _ops.le(self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    def __gt__(self, other: Any) -> Tensor:
        try:
            return _ops.gt(self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    def __ge__(self, other: Any) -> Tensor:
        try:
            return _ops.ge(self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    def __and__(self, other: Any) -> Tensor:
        try:
            return _ops.bitwise_and(self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    __rand__ = __and__

    def __or__(self, other: Any) -> Tensor:
        try:
            return _ops.bitwise_or(self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    __ror__ = __or__

    def __xor__(self, other: Any) -> Tensor:
        try:
            return _ops.bitwise_xor(self, other)
        except Exception:
            if _foreign(other):  # Note [foreign operands]
                return NotImplemented
            raise

    __rxor__ = __xor__

    def __invert__(self) -> Tensor:
        if not _kinds.is_integral(self._data, include_bool=True):
            raise TypeError(
                "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
            )
        return _ops.bitwise_not(self)

    def __iadd__(self, other: Any) -> Tensor:
        return self.add_(other)

    def __isub__(self, other: Any) -> Tensor:
        return self.sub_(other)

    def __imul__(self, other: Any) -> Tensor:
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> Tensor:
        return self.div_(other)

    def __getitem__(self, index: Any) -> Tensor:
        return _ops.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        _ops.setitem(self, index, value)

    # Math methods (one line each) -------------------------------------------------------------
    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _ops.add(self, other, alpha=alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _ops.sub(self, other, alpha=alpha)

    def mul(self, other: Any) -> Tensor:
        return _ops.apply_binary(_defs.mul, self, other)

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return _ops.div(self, other, rounding_mode=rounding_mode)

    def pow(self, exponent: Any) -> Tensor:
        return _ops.pow(self, exponent)

    def matmul(self, other: Tensor) -> Tensor:
        return _ops.matmul(self, other)

    def neg(self) -> Tensor:
        return _ops.apply_unary(_defs.neg, self)

    def exp(self) -> Tensor:
        return _ops.apply_unary(_defs.exp, self)

    def log(self) -> Tensor:
        return _ops.apply_unary(_defs.log, self)

    def sqrt(self) -> Tensor:
        return _ops.apply_unary(_defs.sqrt, self)

    def sin(self) -> Tensor:
        return _ops.apply_unary(_defs.sin, self)

    def cos(self) -> Tensor:
        return _ops.apply_unary(_defs.cos, self)

    def tanh(self) -> Tensor:
        return _ops.apply_unary(_defs.tanh, self)

    def sigmoid(self) -> Tensor:
        return _ops.apply_unary(_defs.sigmoid, self)

    def relu(self) -> Tensor:
        return _ops.apply_unary(_defs.relu, self)

    def abs(self) -> Tensor:
        return _ops.apply_unary(_defs.abs, self)

    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        return _ops.sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        return _ops.mean(self, dim, keepdim, dtype=dtype)

    def sum_to_size(self, *size: Any) -> Tensor:
        return _ops.sum_to_size(self, _shape_arg(size))

    def reshape(self, *shape: Any) -> Tensor:
        return _ops.reshape(self, _shape_arg(shape))

    def view(self, *shape: Any) -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], (_dtype.dtype, type)):
            raise NotImplementedError("view(dtype) is not supported; use .to(dtype)")
        return _ops.view(self, _shape_arg(shape))

    def view_as(self, other: Tensor) -> Tensor:
        return _ops.view(self, other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return _ops.reshape(self, other.shape)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        return _ops.transpose(self, dim0, dim1)

    def t(self) -> Tensor:
        return _ops.t(self)

    @property
    def T(self) -> Tensor:
        if self._data.ndim not in (0, 2):
            warnings.warn(
                "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
                "deprecated and it will throw an error in a future release. Consider `x.mT` to "
                "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` "
                "to reverse the dimensions of a tensor.",
                UserWarning,
                stacklevel=2,
            )
        return _ops.permute(self, tuple(range(self._data.ndim - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:
        return _ops.transpose(self, -2, -1)

    def permute(self, *dims: Any) -> Tensor:
        return _ops.permute(self, _shape_arg(dims))

    def squeeze(self, dim: Any = None) -> Tensor:
        return _ops.squeeze(self, dim)

    def unsqueeze(self, dim: int) -> Tensor:
        return _ops.unsqueeze(self, dim)

    def expand(self, *sizes: Any) -> Tensor:
        return _ops.expand(self, _shape_arg(sizes))

    def expand_as(self, other: Tensor) -> Tensor:
        return _ops.expand(self, other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        return _ops.flatten(self, start_dim, end_dim)

    def clone(self, *, memory_format: Any = None) -> Tensor:
        return _ops.clone(self)

    def eq(self, other: Any) -> Tensor:
        return _ops.eq(self, other)

    def ne(self, other: Any) -> Tensor:
        return _ops.ne(self, other)

    def lt(self, other: Any) -> Tensor:
        return _ops.lt(self, other)

    def le(self, other: Any) -> Tensor:
        return _ops.le(self, other)

    def gt(self, other: Any) -> Tensor:
        return _ops.gt(self, other)

    def ge(self, other: Any) -> Tensor:
        return _ops.ge(self, other)

    # In-place methods ---------------------------------------------------------------------------
    def zero_(self) -> Tensor:
        return _ops.fill_(self, 0)

    def fill_(self, value: Any) -> Tensor:
        return _ops.fill_(self, value)

    def copy_(self, src: Any, non_blocking: bool = False) -> Tensor:
        """Copy ``src``'s values into ``self`` (broadcast, cast); ``src`` may be on another
        device, as in PyTorch (it is moved first; the gradient goes back to it)."""
        if isinstance(src, Tensor):
            d, s = self._data, src._data
            if type(s) is not type(d) or (type(d) is not np.ndarray and src.device != self.device):
                src = src.to(self.device)
        return _ops.copy_(self, src)

    def add_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _ops.add_(self, other, alpha=alpha)

    def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _ops.sub_(self, other, alpha=alpha)

    def mul_(self, other: Any) -> Tensor:
        return _ops.mul_(self, other)

    def div_(self, other: Any) -> Tensor:
        return _ops.div_(self, other)


def _wrap_dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim + n if dim < 0 else dim


def _shape_arg(args: tuple[Any, ...]) -> tuple[int, ...]:
    """Accept ``f(2, 3)``, ``f((2, 3))`` and ``f(Size)``; elements may be 1-element tensors."""
    if len(args) == 1 and not isinstance(args[0], (int, np.integer, Tensor)):
        args = tuple(args[0])
    return tuple(int(a) for a in args)


def _reject_backward_kwargs(kwargs: dict[str, Any]) -> None:
    key = next(iter(kwargs))
    hint = ""
    if key == "retain_variables":
        hint = (
            " (retain_variables was removed from PyTorch long ago; use retain_graph=True to "
            "keep the graph's saved buffers for another backward)"
        )
    raise TypeError(f"Tensor.backward() got an unexpected keyword argument '{key}'{hint}")


def _legacy_new(cls: type, *args: Any, **kwargs: Any) -> Tensor:
    """``Tensor(data)`` / ``Tensor(*sizes)``: PyTorch's legacy constructor (float32)."""
    dev = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"Tensor() got unexpected keyword arguments {sorted(kwargs)}")
    if dev is not None and device(dev).type != "cpu":
        get_backend(dev)
    dt = _dtype.get_default_dtype().np
    if len(args) == 1 and isinstance(args[0], Tensor):
        src = args[0]
        if src._data.dtype != dt:
            raise TypeError(f"expected {_type_name(dt)} (got {_type_name(src._data.dtype)})")
        data = src._data
    elif len(args) == 0:
        data = np.empty((0,), dt)
    elif all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        data = np.empty(tuple(int(a) for a in args), dt)
    elif len(args) == 1 and isinstance(args[0], Size):
        data = np.empty(tuple(args[0]), dt)
    elif len(args) == 1:
        data = _creation._to_array(args[0]).astype(dt)
    else:
        raise TypeError(f"Tensor(): invalid arguments {args!r}")
    t = _new(cls)
    t._data = data
    t._requires_grad = False
    t.grad_fn = None
    t._vc = None
    return t


_CPP_NAMES = _dtype.CPP_NAMES
