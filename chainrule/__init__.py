"""chainrule: reverse-mode automatic differentiation on NumPy, with PyTorch's API.

``import chainrule as torch`` runs ordinary PyTorch autograd code.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import numpy as _np

from chainrule import (
    _dispatch,  # noqa: E402
    _dtype,  # noqa: F401  (chainrule._dtype, reached as an attribute)
    _sampling,  # noqa: F401  (registers the samplers, _dispatch.py)
    autograd,
)
from chainrule import ops as _ops_pkg
from chainrule._creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    scalar_tensor,
    tensor,
    zeros,
    zeros_like,
)
from chainrule._device import device
from chainrule._dtype import (
    bfloat16,
    bool,
    double,
    dtype,
    float,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    set_default_dtype,
    short,
    uint8,
    uint16,
    uint32,
    uint64,
)
from chainrule._formatting import set_printoptions
from chainrule._legacy import (
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)
from chainrule._tensor import Size, Tensor
from chainrule.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from chainrule.backends import _malloc

_malloc.tune_malloc()  # before the program's first large array (backends/_malloc.py)

# The ops' public functions (chainrule.exp, chainrule.matmul, ...), family by family.
_OP_NAMES = [
    n
    for n in _ops_pkg.__all__
    if n not in ("REGISTRY", "OpDef", "apply_op", "ns") and n not in _ops_pkg.NOT_TOP_LEVEL
]
globals().update({n: getattr(_ops_pkg, n) for n in _OP_NAMES})

__version__ = "0.1.0"

# PyTorch computes log(0) = -inf, 0/0 = nan and friends silently; NumPy warns. Match PyTorch.
# Differs from torch: this sets NumPy's error state for the importing thread's context, so plain
# NumPy code in that thread stops warning too.
_np.seterr(all="ignore")

__all__ = [
    "Tensor",
    "Size",
    "dtype",
    "device",
    "Generator",
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "BFloat16Tensor",
    "LongTensor",
    "IntTensor",
    "ShortTensor",
    "CharTensor",
    "ByteTensor",
    "BoolTensor",
    "bool",
    "double",
    "float",
    "float16",
    "float32",
    "float64",
    "half",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "long",
    "short",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bfloat16",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "get_default_dtype",
    "set_default_dtype",
    "promote_types",
    "set_printoptions",
    "manual_seed",
    "seed",
    "initial_seed",
    "default_generator",
    "tensor",
    "as_tensor",
    "from_numpy",
    "scalar_tensor",
    "zeros",
    "ones",
    "full",
    "empty",
    "arange",
    "linspace",
    "eye",
    "rand",
    "randn",
    "randint",
    "randperm",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "save",
    "load",
    "autograd",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    *_OP_NAMES,
    "is_tensor",
    "numel",
    "is_floating_point",
    "from_dlpack",
]

subtract, multiply, divide, true_divide, negative = (
    _ops_pkg.sub,
    _ops_pkg.mul,
    _ops_pkg.div,
    _ops_pkg.div,
    _ops_pkg.neg,
)

from chainrule._out import install as _install_out  # noqa: E402  (out= wrappers, _out.py)

_install_out(globals())


def is_tensor(obj: Any) -> Any:
    """True if ``obj`` is a chainrule Tensor."""
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:  # type: ignore[valid-type]
    """Number of elements of ``input``."""
    return input.numel()


def is_floating_point(input: Tensor) -> Any:
    """True if ``input`` has a floating dtype."""
    return input.is_floating_point()


_LAZY = {
    "nn",
    "optim",
    "utils",
    "cuda",
    "testing",
    "viz",
    "linalg",
    "special",
    "accelerator",
    "amp",
    "jit",
    "compiler",
    "hub",
    "distributions",
}
_LAZY.add("func")
_LAZY |= {"serialization"}
_LAZY |= {"sparse"}  # torch.sparse (chainrule/sparse/, docs/sparse.md)
_LAZY |= {"fft"}  # torch.fft (chainrule/fft.py)  # torch.serialization.add_safe_globals and friends
_LAZY |= {"futures", "cpu"}  # torch.futures, torch.cpu (docs/storage.md)
_LAZY |= {"multiprocessing"}  # torch.multiprocessing (chainrule/multiprocessing.py)
_LAZY |= {"onnx"}  # torch.onnx: is_in_onnx_export, export refuses (chainrule/onnx.py)

from chainrule import _nn_aliases, return_types  # noqa: E402,F401  (torch.return_types)
from chainrule._nn_aliases import (  # noqa: E402,F401  (torch.<name> forms of nn.functional's)
    batch_norm,
    bilinear,
    cosine_similarity,
    dropout,
    embedding,
    group_norm,
    layer_norm,
    pixel_shuffle,
    pixel_unshuffle,
)

__all__ += _nn_aliases.__all__

from chainrule._dtype import cdouble, cfloat, complex64, complex128  # noqa: E402

__all__ += ["complex64", "complex128", "cfloat", "cdouble"]


# Names whose modules load on first use (numpy.random alone is a sixth of the import time).
if TYPE_CHECKING:  # names of __all__ that __getattr__ loads on first use (_LAZY_ATTRS)
    from chainrule._dlpack import from_dlpack
    from chainrule._random import Generator, default_generator, initial_seed, manual_seed, seed
    from chainrule.serialization import load, save

from chainrule import _lazy_names  # noqa: E402

_LAZY_ATTRS = {
    "Generator": "chainrule._random",
    "default_generator": "chainrule._random",
    "initial_seed": "chainrule._random",
    "manual_seed": "chainrule._random",
    "seed": "chainrule._random",
    "save": "chainrule.serialization",
    "from_dlpack": "chainrule._dlpack",
    "load": "chainrule.serialization",
    "compile": "chainrule.compiler",
    "autocast": "chainrule.amp",
    **{
        n: "chainrule._sampling"
        for n in ("multinomial", "bernoulli", "normal", "poisson", "finfo", "iinfo")
    },
    "set_default_device": "chainrule._device",
    "get_default_device": "chainrule._device",
    **{
        n: "chainrule._runtime"
        for n in (
            "set_num_threads",
            "get_num_threads",
            "set_num_interop_threads",
            "get_num_interop_threads",
            "use_deterministic_algorithms",
            "are_deterministic_algorithms_enabled",
            "is_deterministic_algorithms_warn_only_enabled",
            "set_deterministic_debug_mode",
            "get_deterministic_debug_mode",
            "set_float32_matmul_precision",
            "get_float32_matmul_precision",
        )
    },
    **{
        n: "chainrule._layout"
        for n in (
            "layout",
            "memory_format",
            "strided",
            "contiguous_format",
            "preserve_format",
            "channels_last",
            "channels_last_3d",
            "legacy_contiguous_format",
            "empty_strided",
            "empty_permuted",
            "sparse_coo",
            "sparse_csr",
            "sparse_csc",
            "sparse_bsr",
            "sparse_bsc",
        )
    },
    "sparse_coo_tensor": "chainrule.sparse._coo",
    **{
        n: "chainrule.sparse._ops"
        for n in ("spmm", "smm", "hspmm", "sspaddmm", "dsmm", "saddmm", "hsmm", "resize_as_sparse_")
    },
    **{  # sparse compressed layouts (docs/sparse.md)
        n: "chainrule.sparse._csr_build"
        for n in ("sparse_compressed_tensor", "sparse_csr_tensor", "sparse_csc_tensor")
        + ("sparse_bsr_tensor", "sparse_bsc_tensor")
        + ("crow_indices_copy", "col_indices_copy", "ccol_indices_copy", "row_indices_copy")
        + ("values_copy", "indices_copy")
    },
    **{
        n: "chainrule._linalg_legacy"
        for n in (
            "cholesky",
            "cholesky_solve",
            "cholesky_inverse",
            "pinverse",
            "svd",
            "triangular_solve",
            "solve",
            "lstsq",
            "symeig",
            "eig",
            "matrix_rank",
            "frobenius_norm",
            "nuclear_norm",
            "norm_except_dim",
        )
    },
    "GradScaler": "chainrule.amp",
    **{  # float8 scaled products (chainrule/nn/_scaled_mm.py)
        n: "chainrule.nn._scaled_mm"
        for n in ("_scaled_mm", "_scaled_mm_v2", "_scaled_grouped_mm", "_scaled_grouped_mm_v2")
    },
    # The torch-level topic modules (chainrule/_lazy_names.py, written by tools/lazy_names.py
    # from their __all__): mapped without importing them.
    **{n: m for m, names in _lazy_names.NAMES.items() for n in names},
}


# Tensor methods whose implementation lives in a module loaded on first use reach it through
# this table (chainrule/_dispatch.py, ``upper``): Tensor sits below those modules.
_dispatch.register_lazy(
    _dispatch.upper,
    {
        **{
            n: _LAZY_ATTRS[n]
            for n in (
                "cholesky",
                "cholesky_solve",
                "cholesky_inverse",
                "pinverse",
                "svd",
                "triangular_solve",
                "solve",
                "lstsq",
                "symeig",
                "eig",
                "strided",
                "empty_strided",
            )
        },
        "hardshrink": "chainrule.nn.functional",
        "prelu": "chainrule.nn.functional",
        "compile_module": "chainrule._compile.api",
        "register_tensor_reducers": "chainrule.multiprocessing",
        "complex32": "chainrule._shell_dtypes",
        **{
            n: "chainrule.storage"
            for n in (
                "storage_of",
                "typed_storage_of",
                "storage_type_of",
                "array_on",
                "cpp_type_name",
            )
        },
        **{
            n: "chainrule._misc_api" for n in ("hash_tensor", "as_strided_scatter", "slice_inverse")
        },
        **{n: "chainrule._layout" for n in ("sparse_coo", "sparse_csr", "sparse_csc")},
        **{n: "chainrule._layout" for n in ("sparse_bsr", "sparse_bsc")},
        **{n: "chainrule.sparse._coo" for n in ("to_sparse", "to_dense", "SparseTensor")},
        **{n: "chainrule.sparse._csr" for n in ("to_compressed", "layout_name")},
        **{
            n: "chainrule.sparse._bsr"
            for n in ("blocked_coo_of", "to_blocked", "blocked_transpose")
        },
        **{
            n: "chainrule.sparse._csr_ops"
            for n in ("compressed_mm", "compressed_sum", "compressed_mul", "compressed_add")
            + ("compressed_transpose", "compressed_sparse_mask")
        },
        "sparse_rows": "chainrule.sparse._grad",
        **{
            n: "chainrule.sparse._ops"
            for n in ("sparse_mm", "sparse_matmul", "sparse_addmm", "sparse_add", "sparse_mul")
            + ("sparse_sum", "sparse_transpose", "sparse_sum_keepdim", "sparse_mask")
            + ("smm", "sspaddmm", "resize_as_sparse_")
        },
    },
)


def __getattr__(name: str) -> Any:
    # Subpackages and a few names load on first use so that ``import chainrule`` stays fast.
    if name in _LAZY:
        return importlib.import_module(f"chainrule.{name}")
    mod = _LAZY_ATTRS.get(name)
    if mod is not None:
        value = getattr(importlib.import_module(mod), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'chainrule' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What ``dir(torch)`` and tab completion show: the loaded names and those loaded on first
    use (``nn``, ``fft``, the lazily homed functions), as PyTorch lists them all."""
    return sorted(set(globals()) | _LAZY | set(_LAZY_ATTRS))
