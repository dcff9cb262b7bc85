"""PyTorch's functional control flow, run eagerly: ``cond``, ``while_loop`` and ``vmap``
(``func`` run per batch element, results stacked)."""

from __future__ import annotations

import builtins
from typing import Any

__all__ = [
    "cond",
    "while_loop",
    "vmap",
]


def cond(pred: Any, true_fn: Any, false_fn: Any, operands: Any = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` (a bool or a one-element tensor) holds, else
    ``false_fn(*operands)`` (PyTorch's control-flow operator, run eagerly)."""
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(
            f"Expect operands to be a tuple of possibly nested dict/list/tuple "
            f"that only consists of tensor leaves, but got {operands}."
        )
    take = bool(pred.item()) if hasattr(pred, "_data") else bool(pred)
    return (true_fn if take else false_fn)(*operands)


def while_loop(cond_fn: Any, body_fn: Any, carried_inputs: Any) -> Any:
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` holds; the final
    carried values as a tuple (PyTorch's control-flow operator, run eagerly)."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got {type(carried_inputs)}")
    carried = tuple(carried_inputs)
    while True:
        c = cond_fn(*carried)
        if not (bool(c.item()) if hasattr(c, "_data") else bool(c)):
            return carried
        out = body_fn(*carried)
        carried = tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _flatten(tree: Any) -> tuple[list[Any], Any]:
    if isinstance(tree, (list, tuple)):
        leaves, specs = [], []
        for t in tree:
            lv, sp = _flatten(t)
            leaves += lv
            specs.append((len(lv), sp))
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for k in tree:
            lv, sp = _flatten(tree[k])
            leaves += lv
            specs.append((k, len(lv), sp))
        return leaves, (dict, specs)
    return [tree], None


def _unflatten(leaves: list[Any], spec: Any) -> Any:
    if spec is None:
        return leaves[0]
    kind, parts = spec
    if kind is dict:
        out, i = {}, 0
        for k, n, sp in parts:
            out[k] = _unflatten(leaves[i : i + n], sp)
            i += n
        return out
    items, i = [], 0
    for n, sp in parts:
        items.append(_unflatten(leaves[i : i + n], sp))
        i += n
    return kind(items) if kind in (list, tuple) else kind(*items)


def vmap(
    func: Any,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Any:
    """``func`` mapped over a dim of its inputs: ``vmap(f)(x)[i] == f(x[i])``.

    ``in_dims``: the mapped dim of every input (an int), or one entry per argument (an int or
    None for an unmapped argument; nested like the argument for containers); ``out_dims``
    the dim the results are stacked along. Differs from torch: ``func`` runs once per batch
    element and the results are stacked (the same values and gradients, not vectorised)."""
    from chainrule import ops
    from chainrule._tensor import Tensor

    name = getattr(func, "__name__", repr(func))

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_dims, int):
            dims_per_arg: Any = tuple(in_dims for _ in args)
        elif isinstance(in_dims, (tuple, list)) and len(in_dims) == len(args):
            dims_per_arg = tuple(in_dims)
        else:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int "
                "or a (potentially nested) tuple matching the structure of inputs, got: "
                f"{type(in_dims)}."
            )
        flat_args, spec = _flatten(list(args))
        flat_dims: list[Any] = []
        for a, d in zip(args, dims_per_arg):
            n = len(_flatten(a)[0])
            flat_dims += _flatten(d)[0] if isinstance(d, (tuple, list, dict)) else [d] * n
        sizes = [
            t.shape[dd]
            for t, dd in zip(flat_args, flat_dims)
            if dd is not None and isinstance(t, Tensor)
        ]
        if not sizes:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): at least one "
                "input must be mapped over (got no tensor with a mapped dim)"
            )
        if len(set(sizes)) != 1:
            raise ValueError(
                "vmap: Expected all tensors to have the same size in the mapped "
                f"dimension, got sizes {sizes} for the mapped dimension"
            )
        results = []
        for i in builtins.range(sizes[0]):
            leaves = [
                t.select(dd, i) if dd is not None and isinstance(t, Tensor) else t
                for t, dd in zip(flat_args, flat_dims)
            ]
            results.append(func(*_unflatten(leaves, spec), **kwargs))
        outs = [_flatten(r)[0] for r in results]
        out_spec = _flatten(results[0])[1]
        stacked = []
        for k in builtins.range(len(outs[0])):
            col = [o[k] for o in outs]
            if not all(isinstance(c, Tensor) for c in col):
                bad = next(c for c in col if not isinstance(c, Tensor))
                raise ValueError(
                    f"vmap({name}, ...): `{name}` must only return Tensors, got "
                    f"type {type(bad)}. Did you mean to set out_dims= to None for "
                    "output?"
                )
            od = out_dims if isinstance(out_dims, int) else _flatten(out_dims)[0][k]
            stacked.append(ops.stack(col, od))
        return _unflatten(stacked, out_spec)

    return wrapped
