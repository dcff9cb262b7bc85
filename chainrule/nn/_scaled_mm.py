"""Scaled matrix products of float8 matrices: ``torch._scaled_mm``, ``torch._scaled_mm_v2``,
``nn.functional.scaled_mm`` with its ``ScalingType`` / ``SwizzleType`` recipes, and the grouped
forms, which PyTorch has no CPU kernel for (they raise its ``NotImplementedError``).

What PyTorch's CPU kernel computes (``_scaled_mm_out_cpu_emulated``): with the matrices a (M, K)
and b (K, N) of a float8 dtype and float32 scales,

    out = cast((float32(a) * scale_a) @ (float32(b) * scale_b) + bias [/ scale_result])

where a scale is one number ("tensor-wise") or, "row-wise", scale_a of shape (M, 1) and scale_b
of shape (1, N); ``scale_result`` divides only a float8 (e4m3fn, e5m2) result that ``out_dtype``
asks for, and the result's dtype is ``out_dtype``: a's dtype when None; ``scaled_mm``'s default
is bfloat16.
The values and errors here are that kernel's. On a CPU with AMX and oneDNN enabled, PyTorch's
``_scaled_mm`` (not ``scaled_mm``) runs oneDNN's kernel instead, which accepts float64 scales
and refuses float64 and integer outputs (``itensor_view_from_dense expects ...``); chainrule
always behaves as the portable kernel (``torch.backends.mkldnn.flags(enabled=False)``).

The results carry no gradient: PyTorch has no derivative for these ops (its backward raises
``derivative for aten::_scaled_mm is not implemented``); here they are computed as constants.
"""

from __future__ import annotations

import enum
from typing import Any, Sequence

from chainrule import _dtype
from chainrule import ops as _ops
from chainrule._tensor import Tensor
from chainrule.autograd.grad_mode import no_grad

__all__ = ["ScalingType", "SwizzleType", "scaled_mm", "scaled_grouped_mm"]


class _ScalingType(enum.Enum):
    """How a float8 matrix was scaled (PyTorch's ``nn.functional.ScalingType``)."""

    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class _SwizzleType(enum.Enum):
    """The memory layout of a block-wise scale (PyTorch's ``nn.functional.SwizzleType``)."""

    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


_ScalingType.__module__ = _SwizzleType.__module__ = "chainrule.nn.functional"
ScalingType = _ScalingType
SwizzleType = _SwizzleType

_FLOAT8 = frozenset(
    {"float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"}
)
# The float8 results that ``scale_result`` divides (PyTorch checks these two only).
_SCALED_RESULT = frozenset({"float8_e4m3fn", "float8_e5m2"})


def _name(t: Tensor) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


def _c_name(t: Tensor) -> str:
    """PyTorch's C++ ScalarType name of t's dtype (``Float8_e4m3fn``, ``Float``)."""
    return _dtype._TORCH_C_NAMES[_name(t)]


def _is_f8(t: Tensor) -> bool:
    return _name(t) in _FLOAT8


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(str(n) for n in t.shape) + "]"


def _strides(t: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.stride()) + "]"


def _tensorwise(t: Tensor, s: Tensor) -> bool:
    return _is_f8(t) and _name(s) == "float32" and s.numel() == 1


def _rowwise(t: Tensor, s: Tensor) -> bool:
    """scale (rows of t, 1), float32, contiguous: the row-wise scale of t (b is checked as b.t()
    against scale_b.t())."""
    return (
        _is_f8(t)
        and _name(s) == "float32"
        and s.ndim == 2
        and t.ndim >= 1
        and s.shape[0] == t.shape[0]
        and s.shape[1] == 1
        and s.is_contiguous()
    )


def _invalid(a: Tensor, b: Tensor, sa: Tensor, sb: Tensor) -> ValueError:
    return ValueError(
        "Invalid scaling configuration.\n"
        "- For TensorWise scaling, a and b should be float8, scales should be float and "
        "singletons.\n"
        "- For RowWise scaling, a and b should be float8, scales should be float, scale_a should "
        f"be ({a.shape[0]}, 1) and scale_b should be (1, {b.shape[-1]}), and both should be "
        "contiguous.\n"
        f"Got mat_a.dtype()={_c_name(a)}, scale_a.dtype()={_c_name(sa)}, "
        f"scale_a.size()={_sizes(sa)}, scale_a.stride()={_strides(sa)}, "
        f"mat_b.dtype()={_c_name(b)}, scale_b.dtype()={_c_name(sb)}, "
        f"scale_b.size()={_sizes(sb)} and scale_b.stride()={_strides(sb)}"
    )


def _emulated(
    a: Tensor,
    b: Tensor,
    sa: Tensor,
    sb: Tensor,
    bias: Tensor | None,
    scale_result: Tensor | None,
    out_dtype: Any,
    rowwise: bool,
) -> Tensor:
    """PyTorch's CPU kernel once the checks passed: float32 products of the scaled matrices,
    plus bias, divided by ``scale_result`` for a float8 result, cast to ``out_dtype``."""
    f32 = _dtype.float32
    with no_grad():
        if rowwise:
            fa, fb = a.to(f32) * sa, b.to(f32) * sb
        else:
            fa, fb = a.to(f32) * float(sa.item()), b.to(f32) * float(sb.item())
        out = _ops.matmul(fa, fb)
        if bias is not None:
            out = out + bias.to(f32)
        if scale_result is not None and str(out_dtype).rsplit(".", 1)[-1] in _SCALED_RESULT:
            out = out * (1.0 / float(scale_result.to(f32).item()))
        return out.to(out_dtype)


def _scaled_mm(
    self: Tensor,
    mat2: Tensor,
    scale_a: Tensor,
    scale_b: Tensor,
    bias: Tensor | None = None,
    scale_result: Tensor | None = None,
    out_dtype: Any = None,
    use_fast_accum: bool = False,
) -> Tensor:
    """``torch._scaled_mm``: (float32(self) scale_a) @ (float32(mat2) scale_b) + bias, cast to
    ``out_dtype`` (default: self's dtype), for float8 matrices with tensor-wise (one-element) or
    row-wise ((M, 1) and (1, N)) float32 scales; a float8 e4m3fn/e5m2 result is divided by
    ``scale_result`` first (only when ``out_dtype`` names that dtype; PyTorch's kernel reads
    no result scale with ``out_dtype=None``). ``use_fast_accum`` changes nothing on a CPU."""
    if self.ndim != 2:
        raise RuntimeError("mat1 must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat_a and mat_b shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})"
        )
    read_result = out_dtype is not None  # PyTorch's kernel reads no result scale without it
    out_dtype = self.dtype if out_dtype is None else out_dtype
    if _tensorwise(self, scale_a) and _tensorwise(mat2.t(), scale_b.t()):
        rowwise = False
    elif _rowwise(self, scale_a) and _rowwise(mat2.t(), scale_b.t()):
        rowwise = True
    else:
        raise _invalid(self, mat2, scale_a, scale_b)
    if scale_result is not None and not (
        scale_result.numel() == 1 and _name(scale_result) == "float32"
    ):
        raise RuntimeError("scale_result must be a float scalar")
    if bias is not None and bias.numel() != mat2.shape[1]:
        raise RuntimeError(f"Bias must be size {mat2.shape[1]} but got {bias.numel()}")
    if not read_result:
        scale_result = None
    return _emulated(self, mat2, scale_a, scale_b, bias, scale_result, out_dtype, rowwise)


def _check_recipe(
    a: Tensor, ra: list[int], sa: Sequence[Tensor], b: Tensor, rb: list[int], sb: Sequence[Tensor]
) -> str | None:
    """Which CPU implementation a pair of recipes asks for ("tensorwise", "rowwise"; None for
    neither: float8 matrices, one float32 scale each, both recipes TensorWise or RowWise), then
    the kernel's checks of the scales' shapes, in PyTorch's order and words."""
    if not (_is_f8(a) and _is_f8(b)) or len(sa) != 1 or len(sb) != 1:
        return None
    s, t = sa[0], sb[0]
    if _name(s) != "float32" or _name(t) != "float32":
        return None
    if ra == [0] and rb == [0]:
        if s.numel() != 1:
            raise ValueError("scale_a must have 1 Float element")
        if t.numel() != 1:
            raise ValueError("scale_b must have 1 Float element")
        return "tensorwise"
    if ra == [1] and rb == [1]:
        for x in (s, t):
            if x.ndim == 0:
                raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        if not (s.shape[0] == a.shape[0] and s.ndim == 2 and s.shape[1] == 1):
            raise ValueError(f"scale_a must have shape [{a.shape[0]}, 1], got [{_sizes(s)}]")
        if t.numel() != b.shape[1]:
            raise ValueError(f"scale_b must have {b.shape[1]} Float elements, got {t.numel()}")
        for name, x in (("scale_a", s), ("scale_b", t)):
            if x.ndim < 2:
                raise IndexError(
                    "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
                )
            if x.stride(1) != 1:
                raise ValueError(f"expected {name}.stride(1) to be 1, but got {x.stride(1)}")
        return "rowwise"
    return None


def _scaled_mm_v2(
    self: Tensor,
    mat2: Tensor,
    scale_a: Sequence[Tensor],
    recipe_a: Sequence[int],
    swizzle_a: Sequence[int],
    scale_b: Sequence[Tensor],
    recipe_b: Sequence[int],
    swizzle_b: Sequence[int],
    bias: Tensor | None,
    out_dtype: Any,
    contraction_dim: Sequence[int] = (),
    use_fast_accum: bool = False,
) -> Tensor:
    """``torch._scaled_mm_v2``, the op under ``scaled_mm``: recipes given as the integer values
    of ``ScalingType`` (and ``SwizzleType``, which PyTorch's CPU kernel does not read);
    ``out_dtype=None`` gives self's dtype."""
    if self.ndim != 2:
        raise ValueError("mat_a must be a matrix")
    if mat2.ndim != 2:
        raise ValueError("mat_b must be a matrix")
    m, k = self.shape
    n = mat2.shape[1]
    out_dtype = self.dtype if out_dtype is None else out_dtype
    if m == 0 or k == 0 or n == 0:  # PyTorch returns before checking anything else
        return _zeros(m, n, out_dtype)
    if contraction_dim:
        if len(contraction_dim) != 2:
            raise ValueError("contraction_dim must have exactly 2 elements")
        da, db = contraction_dim
        if self.shape[da] != mat2.shape[db]:
            raise ValueError(
                f"mat_a and mat_b shapes cannot be multiplied ({m}x{k} and "
                f"{mat2.shape[0]}x{n}) with contraction dims mat_a: {da}, mat_b: {db}"
            )
    elif k != mat2.shape[0]:
        raise ValueError(
            f"mat_a and mat_b shapes cannot be multiplied ({m}x{k} and {mat2.shape[0]}x{n})"
        )
    if bias is not None:
        if bias.numel() != n:
            raise ValueError(f"Bias must be size {n} but got {bias.numel()}")
        if _name(bias) not in ("float32", "bfloat16", "float16"):
            raise ValueError(f"Bias must be Float32 or BFloat16 or Half, but got {_c_name(bias)}")
    impl = _check_recipe(
        self, [int(r) for r in recipe_a], scale_a, mat2, [int(r) for r in recipe_b], scale_b
    )
    if impl is None:
        raise _invalid(self, mat2, scale_a[0], scale_b[0])
    if k != mat2.shape[0]:  # contraction_dim agreed, the kernel's own check did not
        raise RuntimeError(
            f"mat_a and mat_b shapes cannot be multiplied ({m}x{k} and {mat2.shape[0]}x{n})"
        )
    return _emulated(self, mat2, scale_a[0], scale_b[0], bias, None, out_dtype, impl == "rowwise")


def _zeros(m: int, n: int, dt: Any) -> Tensor:
    from chainrule import _creation

    return _creation.zeros(m, n, dtype=dt)


def _listed(v: Any) -> list[Any]:
    """PyTorch's ``_expand_single_value``: None -> [], a value -> [value], a list as it is."""
    if v is None:
        return []
    return v if isinstance(v, list) else [v]


def _values(v: Any) -> list[int]:
    return [e.value for e in (v if isinstance(v, list) else [v])]


def scaled_mm(
    mat_a: Tensor,
    mat_b: Tensor,
    scale_a: Tensor | list[Tensor],
    scale_recipe_a: _ScalingType | list[_ScalingType],
    scale_b: Tensor | list[Tensor],
    scale_recipe_b: _ScalingType | list[_ScalingType],
    swizzle_a: _SwizzleType | list[_SwizzleType] | None = None,
    swizzle_b: _SwizzleType | list[_SwizzleType] | None = None,
    bias: Tensor | None = None,
    output_dtype: Any = _dtype.bfloat16,
    contraction_dim: list[int] | tuple[int, ...] = (),
    use_fast_accum: bool = False,
) -> Tensor:
    """mm(mat_a, mat_b) of float8 matrices scaled as ``scale_recipe_a`` / ``scale_recipe_b``
    say: out = (float32(a) s_a) @ (float32(b) s_b) + bias, cast to ``output_dtype``. On a CPU
    the recipes are ``TensorWise`` (one-element scales) or ``RowWise`` (s_a (M, 1), s_b (1, N))
    for both, without swizzle."""
    return _scaled_mm_v2(
        mat_a,
        mat_b,
        _listed(scale_a),
        _values(_listed(scale_recipe_a)),
        _values(_listed(swizzle_a)),
        _listed(scale_b),
        _values(_listed(scale_recipe_b)),
        _values(_listed(swizzle_b)),
        bias,
        output_dtype,
        contraction_dim,
        use_fast_accum,
    )


def _not_on_cpu(op: str) -> NotImplementedError:
    return NotImplementedError(
        f"Could not run 'aten::{op}' with arguments from the 'CPU' backend. This could be "
        "because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build)."
    )


def _scaled_grouped_mm(
    self: Tensor,
    mat2: Tensor,
    scale_a: Tensor,
    scale_b: Tensor,
    offs: Tensor | None = None,
    bias: Tensor | None = None,
    scale_result: Tensor | None = None,
    out_dtype: Any = None,
    use_fast_accum: bool = False,
) -> Tensor:
    """``torch._scaled_grouped_mm``: PyTorch has no CPU kernel; raises its error."""
    raise _not_on_cpu("_scaled_grouped_mm")


def _scaled_grouped_mm_v2(*args: Any, **kwargs: Any) -> Tensor:
    """``torch._scaled_grouped_mm_v2``: PyTorch has no CPU kernel; raises its error."""
    raise _not_on_cpu("_scaled_grouped_mm_v2")


def scaled_grouped_mm(
    mat_a: Tensor,
    mat_b: Tensor,
    scale_a: Tensor | list[Tensor],
    scale_recipe_a: _ScalingType | list[_ScalingType],
    scale_b: Tensor | list[Tensor],
    scale_recipe_b: _ScalingType | list[_ScalingType],
    swizzle_a: _SwizzleType | list[_SwizzleType] | None = None,
    swizzle_b: _SwizzleType | list[_SwizzleType] | None = None,
    bias: Tensor | None = None,
    offs: Tensor | None = None,
    output_dtype: Any = _dtype.bfloat16,
    contraction_dim: list[int] | tuple[int, ...] = (),
    use_fast_accum: bool = False,
) -> Tensor:
    """Grouped scaled products (``grouped_mm`` of float8 matrices with scales). PyTorch has no
    CPU kernel for them: raises its ``NotImplementedError``, after converting the recipes."""
    _values(_listed(scale_recipe_a))
    _values(_listed(scale_recipe_b))
    raise _not_on_cpu("_scaled_grouped_mm_v2")
