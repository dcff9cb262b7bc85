"""See the backward graph: a picture (``draw``) and a text tree (``summary``).

Both show, for each backward node, its name and the line of the user's program whose forward op
created it (recorded while ``chainrule.autograd.graph.set_record_sites(True)`` or anomaly mode
is on; Note [sites] in autograd/_sites.py), the leaves under their parameter names, and every
value saved for backward with its shape, dtype and size, and whether it is still held or was
freed by an earlier backward (and by which call). ``summary`` adds totals; its byte total is
``chainrule.autograd.graph.saved_bytes(output)``.

``draw`` needs the ``graphviz`` Python package (``pip install chainrule[viz]``), imported only
when called, and the Graphviz ``dot`` program to render; ``summary`` needs neither.

Example:
    >>> import chainrule as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> y = (x * x).sum()
    >>> text = torch.viz.summary(y, params={"x": x})
    SumBackward0 #1
    └─ MulBackward0 #2
       │  saved a: [2] float32, 8 B, held
       │  saved b: [2] float32, 8 B, held
       ├─ leaf 'x' #3 [2] float32
       └─ leaf 'x' #3 (shown above)
    3 nodes, 2 saved tensors (2 held, 0 freed), 8 B held

Long because the picture and the text tree share one graph walk but need their own layout code.
"""

from __future__ import annotations

import html
from typing import Any, Iterable, NamedTuple

import numpy as np

from chainrule.autograd.graph import (
    AccumulateGrad,
    Node,
    OpNode,
    PackedSavedTensor,
    SavedTensor,
    _is_array,
    format_site,
    packed_arrays,
)

__all__ = ["draw", "summary"]


# Reading the graph --------------------------------------------------------------------------


class _Saved(NamedTuple):
    """One value a node keeps for its backward."""

    name: str
    shape: tuple[int, ...] | None
    dtype: str | None
    nbytes: int | None  # what it holds (or held, once freed); None if unknown
    held: bool
    arrays: tuple[Any, ...]  # the arrays it holds now (several for some pack hooks)
    key: int  # identity for drawing one box per array
    packed: bool


def _fmt_shape(shape: Any) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _plural(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _fmt_bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024.0  # type: ignore[assignment]
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}"
    raise AssertionError  # unreachable


def _describe(name: str, sv: SavedTensor, meta: Any) -> _Saved:
    shape = dtype = None
    if type(sv) is PackedSavedTensor:
        held = sv.alive
        arrays = tuple(packed_arrays(sv.packed)) if held else ()
        if sv.shape_str is not None:
            shape, dtype = sv.shape_str
        nbytes: int | None = sum(a.nbytes for a in arrays) if held else None
        key = id(arrays[0]) if len(arrays) == 1 else id(sv)
        packed = True
    else:
        d = sv.data
        held = d is not None
        arrays = (d,) if d is not None else ()
        if d is not None:
            shape, dtype = d.shape, d.dtype
        elif meta is not None:  # freed: the shape the node recorded for it, when it did
            shape, dtype = meta
        nbytes = d.nbytes if d is not None else None
        key = id(d) if held else id(sv)
        packed = False
    if nbytes is None and shape is not None and dtype is not None:
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    return _Saved(
        name,
        None if shape is None else tuple(shape),
        None if dtype is None else np.dtype(dtype).name,
        nbytes,
        held,
        arrays,
        key,
        packed,
    )


def _meta_of_saved(node: OpNode, k: int) -> Any:
    """``(shape, dtype)`` of the ``k``-th value an op node saves, from the node's own records
    (so that a freed value still shows its size), or None where the node has none."""
    kind, idx = node.op.save_spec[k]
    if kind == 0:
        return node._input_meta[idx] if idx < len(node._input_meta) else None
    return node._out_meta[idx] if node._out_meta else None


def _saved_of(node: Node) -> list[_Saved]:
    """The values ``node`` keeps (or kept) for backward, named as its op saves them."""
    if isinstance(node, OpNode):
        res = []
        for k, (name, sv) in enumerate(zip(node.op.save_names, node.saved)):
            if isinstance(sv, SavedTensor):
                res.append(_describe(name, sv, _meta_of_saved(node, k)))
    else:
        if getattr(node, "_forward_cls", None) is not None:  # a custom Function's node
            pairs: Iterable[tuple[str, Any]] = (
                (f"saved_tensors[{i}]", s) for i, s in enumerate(getattr(node, "_saved") or ())
            )
        else:
            pairs = ((f"saved[{i}]", s) for i, s in enumerate(node._saved_tensors()))
        res = [_describe(name, sv, None) for name, sv in pairs if isinstance(sv, SavedTensor)]
    aux = getattr(node, "_aux", None)
    if aux:
        for k, v in aux.items():
            arrays = tuple(packed_arrays(v))
            if not arrays:
                continue
            nbytes = sum(a.nbytes for a in arrays)
            if _is_array(v):
                res.append(
                    _Saved(
                        k,
                        tuple(v.shape),
                        np.dtype(v.dtype).name,
                        nbytes,
                        True,
                        arrays,
                        id(v),
                        False,
                    )
                )
            else:
                name = f"{k} ({_plural(len(arrays), 'array')})"
                res.append(_Saved(name, None, None, nbytes, True, arrays, id(v), False))
    return res


def _walk(roots: list[Node]) -> list[Node]:
    """Every node reachable from ``roots``, each once, in depth-first order."""
    seen: set[int] = set()
    order = []
    stack = list(reversed(roots))
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        order.append(n)
        for child, _ in reversed(n.next_functions):
            if child is not None and id(child) not in seen:
                stack.append(child)
    return order


def _outputs(outputs: Any) -> list[Any]:
    if isinstance(outputs, (list, tuple)):
        return list(outputs)
    return [outputs]


def _root_node(t: Any) -> Node | None:
    if t.grad_fn is not None:
        return t.grad_fn
    if t.requires_grad:
        return t._get_accumulator()
    return None


def _param_names(params: Any) -> dict[int, str]:
    """``id(tensor) -> name`` from a dict ``name -> tensor`` or ``(name, tensor)`` pairs."""
    if params is None:
        return {}
    items = params.items() if isinstance(params, dict) else params
    return {id(t): name for name, t in items}


def _leaf_name(node: AccumulateGrad, names: dict[int, str]) -> str | None:
    v = node.variable
    name = names.get(id(v))
    if name is None:
        name = getattr(v, "_param_name", None)
    return name


def _dtype_name(t: Any) -> str:
    return np.dtype(t._data.dtype).name


def _saved_text(s: _Saved, freed_at: Any) -> str:
    parts = [f"saved {s.name}:"]
    if s.shape is not None:
        parts.append(f"{_fmt_shape(s.shape)} {s.dtype},")
    if s.nbytes is not None:
        parts.append(_fmt_bytes(s.nbytes) + ",")
    if s.held:
        parts.append("held" + (" (packed by a saved_tensors_hooks pack hook)" if s.packed else ""))
    elif freed_at is not None:
        parts.append(f"freed by the backward at {format_site(freed_at, False)}")
    else:
        parts.append("freed")
    return " ".join(parts)


# Text ---------------------------------------------------------------------------------------


def summary(output: Any, params: Any = None) -> str:
    """Print the backward graph behind ``output`` (a Tensor or a sequence of them) as an indented
    tree, and return the text.

    Each node shows its name, a number (a node reached again is shown as ``(shown above)``),
    the forward line that created it when sites were recorded, and the values it saved: shape,
    dtype, bytes, and whether each is still held or was freed by a backward (which call). Leaves
    are named from ``params`` (a dict ``name -> tensor`` or ``(name, tensor)`` pairs, such as
    ``model.named_parameters()``) or from their module attribute names. The last line gives the
    totals: nodes, saved tensors (held and freed) and the bytes still held, which is
    ``chainrule.autograd.graph.saved_bytes(output)``.
    """
    names = _param_names(params)
    outs = _outputs(output)
    roots = [r for r in (_root_node(t) for t in outs) if r is not None]
    number: dict[int, int] = {}
    lines: list[str] = []
    n_saved = n_held = 0
    held_ids: set[int] = set()
    held_bytes = 0

    def head(n: Node) -> str:
        k = number.get(id(n))
        again = k is not None
        if not again:
            k = number[id(n)] = len(number) + 1
        if type(n) is AccumulateGrad:
            name = _leaf_name(n, names)
            label = f"leaf '{name}'" if name else "leaf"
            if again:
                return f"{label} #{k} (shown above)"
            return f"{label} #{k} {_fmt_shape(n.variable.shape)} {_dtype_name(n.variable)}"
        if again:
            return f"{n.name()} #{k} (shown above)"
        site = getattr(n, "_site", None)
        return f"{n.name()} #{k}" + ("" if site is None else f"  at {format_site(site)}")

    if not roots:
        lines.append("(no graph: the output does not require grad)")
    # Depth-first with an explicit stack: graphs can be deeper than Python's recursion limit.
    stack: list[tuple[Node, str, str]] = [(r, "", "") for r in reversed(roots)]
    while stack:
        n, lead, rest = stack.pop()
        first_visit = id(n) not in number
        lines.append(lead + head(n))
        if not first_visit:
            continue
        children = [c for c, _ in n.next_functions if c is not None]
        freed_at = getattr(n, "_freed_at", None)
        for s in _saved_of(n):
            bar = "│  " if children else "   "
            lines.append(rest + bar + _saved_text(s, freed_at))
            n_saved += 1  # each saved value belongs to one node
            if s.held:
                n_held += 1
            for a in s.arrays:
                if id(a) not in held_ids:
                    held_ids.add(id(a))
                    held_bytes += a.nbytes
        for i in range(len(children) - 1, -1, -1):
            last = i == len(children) - 1
            stack.append(
                (children[i], rest + ("└─ " if last else "├─ "), rest + ("   " if last else "│  "))
            )
    lines.append(
        f"{_plural(len(number), 'node')}, {_plural(n_saved, 'saved tensor')} ({n_held} held, "
        f"{n_saved - n_held} freed), {_fmt_bytes(held_bytes)} held"
    )
    text = "\n".join(lines)
    print(text)
    return text


# Picture ------------------------------------------------------------------------------------


def _graphviz() -> Any:
    try:
        import graphviz
    except ImportError as e:
        raise ImportError(
            "chainrule.viz.draw needs the graphviz Python package: pip install chainrule[viz] "
            "(rendering also needs Graphviz's dot program, e.g. apt-get install graphviz)"
        ) from e
    return graphviz


_picture_cls: list[Any] = []


def _digraph_class() -> Any:
    """``graphviz.Digraph`` with ``_repr_svg_``, for notebooks that ask for it by that name."""
    if not _picture_cls:
        gv = _graphviz()

        class GraphPicture(gv.Digraph):  # type: ignore[misc, name-defined]
            """A ``graphviz.Digraph`` of a backward graph (from ``chainrule.viz.draw``)."""

            def _repr_svg_(self) -> str:
                return self.pipe(format="svg", encoding="utf-8")

        _picture_cls.append(GraphPicture)
    return _picture_cls[0]


def _html_label(title: str, lines: list[str]) -> str:
    body = "".join(f'<BR/><FONT POINT-SIZE="9">{html.escape(s)}</FONT>' for s in lines)
    return f"<<B>{html.escape(title)}</B>{body}>"


def _draw_node(g: Any, nid: str, n: Any, names: Any) -> None:
    """One node's box: a leaf (blue, named, with its shape and dtype) or a backward node (its
    name and, when recorded, the forward line that created it)."""
    if type(n) is AccumulateGrad:
        v = n.variable
        name = _leaf_name(n, names)
        g.node(
            nid,
            _html_label(name or "leaf", [f"{_fmt_shape(v.shape)} {_dtype_name(v)}"]),
            fillcolor="lightblue",
        )
        return
    site = getattr(n, "_site", None)
    lines = []
    if site is not None:
        where = format_site(site)
        place, _, text = where.partition(": ")
        lines = [place] + ([text] if text else [])
    g.node(nid, _html_label(n.name(), lines))


def draw(outputs: Any, params: Any = None, show_saved: bool = True) -> Any:
    """A ``graphviz.Digraph`` of the backward graph behind ``outputs`` (a Tensor or a sequence).

    Boxes: the outputs (green), one per backward node (grey) with its name and the forward line
    that created it (when recorded: ``set_record_sites(True)`` or anomaly mode), the leaves
    (blue) named from ``params`` (a dict ``name -> tensor`` or ``(name, tensor)`` pairs, such as
    ``model.named_parameters()``, as torchviz's ``make_dot`` takes) or from their module
    attribute names, and with ``show_saved`` the values saved for backward (orange while held;
    white and dashed once freed, with the backward call that freed them), one box per array.
    Arrows follow the forward direction, from a node's inputs to the node.

    ``.render("graph", format="svg")`` writes a file (needs Graphviz's ``dot``); ``.source`` is
    the DOT text; notebooks display it through ``_repr_svg_``.
    """
    cls = _digraph_class()
    names = _param_names(params)
    g = cls(name="backward_graph")
    g.attr("graph", rankdir="TB", ranksep="0.25")
    g.attr(
        "node",
        shape="box",
        style="filled",
        fontname="monospace",
        fontsize="10",
        fillcolor="lightgrey",
        height="0.2",
    )
    g.attr("edge", arrowsize="0.6")
    outs = _outputs(outputs)
    roots = []
    for i, t in enumerate(outs):
        oid = f"out{i}"
        title = "output" if len(outs) == 1 else f"output {i}"
        g.node(
            oid,
            _html_label(title, [f"{_fmt_shape(t.shape)} {_dtype_name(t)}"]),
            fillcolor="darkolivegreen1",
        )
        r = _root_node(t)
        if r is not None:
            roots.append((r, oid))
    order = _walk([r for r, _ in roots])
    ids = {id(n): f"n{k}" for k, n in enumerate(order)}
    for r, oid in roots:
        g.edge(ids[id(r)], oid)
    saved_ids: dict[int, str] = {}
    for n in order:
        nid = ids[id(n)]
        _draw_node(g, nid, n, names)
        for child, _ in n.next_functions:
            if child is not None:
                g.edge(ids[id(child)], nid)
        if not show_saved:
            continue
        freed_at = getattr(n, "_freed_at", None)
        for s in _saved_of(n):
            sid = saved_ids.get(s.key)
            if sid is None:
                sid = saved_ids[s.key] = f"s{len(saved_ids)}"
                info = []
                if s.shape is not None:
                    info.append(f"{_fmt_shape(s.shape)} {s.dtype}")
                if s.nbytes is not None:
                    info.append(_fmt_bytes(s.nbytes))
                if s.held:
                    info.append("held (packed by a hook)" if s.packed else "held")
                    g.node(sid, _html_label(s.name, info), fillcolor="orange")
                else:
                    if freed_at is not None:
                        info += ["freed by the backward", f"at {format_site(freed_at, False)}"]
                    else:
                        info.append("freed")
                    g.node(sid, _html_label(s.name, info), fillcolor="white", style="dashed,filled")
            g.edge(sid, nid, dir="none", style="dashed")
    return g
