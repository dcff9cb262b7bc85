"""Write docs/coverage.md: which public names of PyTorch's namespaces chainrule has.

Run with the test environment (PyTorch is a test-only dependency):
    .venv/bin/python tools/coverage.py

For each namespace (torch, torch.Tensor, torch.nn, torch.nn.Module, torch.nn.functional,
torch.optim, torch.optim.lr_scheduler) it lists the public names of PyTorch 2.13, those
chainrule has, and for the rest either a reason (``REASONS``: left out on purpose) or "not
yet". Names that are submodules, typing helpers or re-exported standard-library objects are
not counted. The test tests/test_coverage_doc.py fails when a name the document lists as
present goes missing.
"""

from __future__ import annotations

import os
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import torch  # noqa: E402

import chainrule  # noqa: E402

# Families not counted in the 90 % target of issue 15 (sparse, quantized, nested, named tensors),
# and other names left out on purpose, with the reason.
EXCLUDED_PREFIXES = {
    "sparse": "sparse layouts (issue 15 lists sparse COO separately)",
    "quantize": "quantized tensors",
    "q_": "quantized tensors",
    "dequantize": "quantized tensors",
    "fake_quantize": "quantized tensors",
    "quantized_": "quantized tensors",
    "qint": "quantized tensors",
    "quint": "quantized tensors",
    "per_tensor_": "quantized tensors",
    "per_channel_": "quantized tensors",
    "QInt": "quantized tensors",
    "QUInt": "quantized tensors",
    "nested": "nested tensors",
    "refine_names": "named tensors",
    "rename": "named tensors",
    "align_": "named tensors",
    "unflatten_dense": "named tensors",
    "mkldnn": "oneDNN layouts",
    "cudnn_": "cuDNN kernels",
    "miopen": "ROCm kernels",
    "fbgemm": "FBGEMM kernels",
    "_": "private",
}
REASONS = {
    "chalf": "NumPy has no 32-bit complex type",
    "complex32": "NumPy has no 32-bit complex type",
    "names": "named tensors",
    "jagged": "nested tensors",
    "is_mkldnn": "oneDNN layouts",
    "to_mkldnn": "oneDNN layouts",
    "is_quantized": "quantized tensors",
    "qscheme": "quantized tensors",
    "int_repr": "quantized tensors",
    "choose_qparams_optimized": "quantized tensors",
    "fused_moving_avg_obs_fake_quant": "quantized tensors",
    "empty_quantized": "quantized tensors",
}

# Names that stay counted (and missing), listed with the reason they are not planned.
TORCHSCRIPT = "TorchScript compiler internals"
DISPATCHER = "dispatcher internals (chainrule has no dispatch keys)"
GAP_REASONS = {
    "DispatchKey": DISPATCHER,
    "DispatchKeySet": DISPATCHER,
    "ExcludeDispatchKeyGuard": DISPATCHER,
}
GAP_REASONS |= {
    n: TORCHSCRIPT
    for n in (
        "AliasDb AnyType Argument ArgumentSpec AwaitType BenchmarkConfig BenchmarkExecutionStats "
        "Block BoolType BufferDict CallStack Capsule ClassType Code CompleteArgumentSpec "
        "ComplexType ConcreteModuleType ConcreteModuleTypeBuilder DeepCopyMemoTable "
        "DeserializationStorageContext DeviceObjType DictType EnumType ErrorReport ExecutionPlan "
        "FileCheck FloatType FunctionSchema FutureType Gradient Graph GraphExecutorState "
        "IODescriptor InferredType IntType InterfaceType ListType LiteScriptModule LockingLogger "
        "ModuleDict NoneType NoopLogger Node NumberType OperatorInfo OptionalType ParameterDict "
        "PyObjectType PyTorchFileReader PyTorchFileWriter RRefType ScriptClass "
        "ScriptClassFunction ScriptDict ScriptDictIterator ScriptDictKeyIterator ScriptList "
        "ScriptListIterator ScriptMethod ScriptModule ScriptModuleSerializer ScriptObject "
        "ScriptObjectProperty SerializationStorageContext StaticModule StreamObjType StringType "
        "SymBoolType SymIntType TensorType ThroughputBenchmark TracingState TupleType Type "
        "UnionType Use Value import_ir_module import_ir_module_from_buffer "
        "merge_type_from_type_comment parse_ir parse_schema parse_type_comment unify_type_list"
    ).split()
}


def _typing_helper(name: str, v: object) -> bool:
    """Annotation-only names: typing's special forms (``Optional``, ``Literal``, ``Self``),
    TorchScript's ``BroadcastingList1/2/3`` and aliases of builtin types (``DType = int``)."""
    kind = type(v).__module__
    if kind == "typing" or (kind == "torch._jit_internal" and name.startswith("BroadcastingList")):
        return True
    return isinstance(v, type) and v.__module__ == "builtins" and v.__name__ != name


def _public(obj: object) -> list[str]:
    out = []
    for n in dir(obj):
        if n.startswith("_"):
            continue
        try:
            v = getattr(obj, n)
        except Exception:  # noqa: BLE001 - a broken attribute is not counted
            continue
        if isinstance(v, types.ModuleType):
            continue
        if n in ("TYPE_CHECKING", "annotations") or _typing_helper(n, v):
            continue
        # Functions and classes another library defines (functools.partial, bisect_right,
        # typing helpers ...) are imports of PyTorch's module, not its API.
        if isinstance(v, (type, types.FunctionType, types.BuiltinFunctionType)):
            mod = getattr(v, "__module__", "") or ""
            if mod.split(".")[0] not in ("torch", "builtins"):
                continue
            # Classes of the C++ core and the TorchScript compiler (torch._C.Graph, ScriptModule
            # types ...) are PyTorch's internals, exposed at the top level by accident.
            if isinstance(v, type) and (mod.startswith("torch._C") or mod.startswith("torch.jit")):
                continue
        out.append(n)
    return sorted(out)


def _excluded(name: str) -> str | None:
    for p, why in EXCLUDED_PREFIXES.items():
        if name.startswith(p):
            return why
    return REASONS.get(name)


NAMESPACES = [
    ("torch", torch, chainrule),
    ("torch.Tensor", torch.Tensor, chainrule.Tensor),
    ("torch.nn", torch.nn, chainrule.nn),
    ("torch.nn.Module", torch.nn.Module, chainrule.nn.Module),
    ("torch.nn.functional", torch.nn.functional, chainrule.nn.functional),
    ("torch.optim", torch.optim, chainrule.optim),
    ("torch.optim.lr_scheduler", torch.optim.lr_scheduler, chainrule.optim.lr_scheduler),
]


def _has(obj: object, name: str) -> bool:
    try:
        return hasattr(obj, name)
    except Exception:  # noqa: BLE001 - a failing lazy attribute counts as missing
        return False


def main() -> None:
    lines = [
        "# Coverage of PyTorch's namespaces",
        "",
        f"Generated by `tools/coverage.py` against PyTorch {torch.__version__.split('+')[0]}; "
        "do not edit by hand. Counted: public names that are not submodules or typing "
        "helpers. Left out of the count: sparse, quantized, nested and named-tensor APIs and "
        "private kernels (reasons below).",
        "",
        "| namespace | PyTorch names | counted | chainrule has | coverage |",
        "|---|---|---|---|---|",
    ]
    details = []
    for label, theirs, ours in NAMESPACES:
        names = _public(theirs)
        counted = [n for n in names if _excluded(n) is None]
        have = [n for n in counted if _has(ours, n)]
        missing = [n for n in counted if n not in have]
        pct = 100.0 * len(have) / max(len(counted), 1)
        lines.append(f"| `{label}` | {len(names)} | {len(counted)} | {len(have)} | {pct:.0f} % |")
        details += [
            "",
            f"## `{label}`",
            "",
            f"Present ({len(have)}):",
            "",
            "<!-- present:" + label + " -->",
            " ".join(f"`{n}`" for n in have),
            "<!-- end -->",
            "",
            f"Not yet ({len(missing)}):",
            "",
            " ".join(f"`{n}`" for n in missing if n not in GAP_REASONS) or "none",
        ]
        for why in sorted({GAP_REASONS[n] for n in missing if n in GAP_REASONS}):
            listed = [n for n in missing if GAP_REASONS.get(n) == why]
            details += ["", f"Of those, {why} ({len(listed)}):", ""]
            details.append(" ".join(f"`{n}`" for n in listed))
        left = sorted({_excluded(n) for n in names if _excluded(n)} - {"private"})
        if left:
            details += ["", "Left out on purpose: " + "; ".join(left) + "."]
    path = os.path.join(ROOT, "docs", "coverage.md")
    with open(path, "w") as f:
        f.write("\n".join(lines + details) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
