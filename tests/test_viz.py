"""chainrule.viz: the graph as text (summary) and as a graphviz picture (draw)."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

import chainrule as cr
from chainrule import nn, viz
from chainrule.autograd.graph import saved_bytes, set_record_sites

HERE = os.path.relpath(__file__) if not os.path.relpath(__file__).startswith("..") else __file__


def next_line() -> int:
    return sys._getframe(1).f_lineno + 1


def small_graph():
    """loss = sum(tanh(x @ w.T + b) ** 2) through nn.Linear, with forward sites recorded."""
    cr.manual_seed(0)
    lin = nn.Linear(3, 4)
    x = cr.randn(2, 3)
    with set_record_sites(True):
        line = next_line()
        loss = lin(x).tanh().pow(2).sum()
    return lin, loss, line


# --- summary -------------------------------------------------------------------------------


def test_summary_tree_text_and_totals(capsys) -> None:
    lin, loss, line = small_graph()
    text = viz.summary(loss, lin.named_parameters())
    assert capsys.readouterr().out == text + "\n"
    at = f"  at {HERE}:{line} in small_graph: loss = lin(x).tanh().pow(2).sum()"
    assert text == "\n".join(
        [
            "SumBackward0 #1" + at,
            "└─ PowBackward0 #2" + at,
            "   │  saved a: [2, 4] float32, 32 B, held",
            "   └─ TanhBackward0 #3" + at,
            "      │  saved out: [2, 4] float32, 32 B, held",
            "      └─ AddmmBackward0 #4" + at,
            "         │  saved a: [2, 3] float32, 24 B, held",
            "         ├─ leaf 'bias' #5 [4] float32",
            "         └─ TBackward0 #6" + at,
            "            └─ leaf 'weight' #7 [4, 3] float32",
            "7 nodes, 3 saved tensors (3 held, 0 freed), 56 B held",
        ]
    )
    # pow's input is tanh's saved output: one array. addmm (nn.Linear's node, as in PyTorch)
    # keeps only x, which the weight's
    # gradient reads: x needs no gradient, so W.t() is not kept.
    assert saved_bytes(loss) == 56


def test_summary_after_backward_shows_freed_and_the_call(capsys) -> None:
    lin, loss, _ = small_graph()
    bwd = next_line()
    loss.backward()
    text = viz.summary(loss, {"fc.weight": lin.weight, "fc.bias": lin.bias})
    freed = f"freed by the backward at {HERE}:{bwd}"
    assert f"   │  saved a: [2, 4] float32, 32 B, {freed}" in text
    # x needs no gradient: the node kept no shape for it, only that it was freed.
    assert f"         │  saved a: {freed}" in text
    assert "leaf 'fc.weight' #7 [4, 3] float32" in text and "leaf 'fc.bias' #5" in text
    assert text.endswith("7 nodes, 3 saved tensors (0 held, 3 freed), 0 B held")


def test_summary_shared_nodes_several_outputs_and_no_sites(capsys) -> None:
    x = cr.ones(2, requires_grad=True)
    y = x * 3
    a, b = y.exp(), y.sin()
    text = viz.summary([a, b], [("x", x)])
    assert text == "\n".join(
        [
            "ExpBackward0 #1",
            "│  saved out: [2] float32, 8 B, held",
            "└─ MulBackward0 #2",
            "   └─ leaf 'x' #3 [2] float32",
            "SinBackward0 #4",
            "│  saved x: [2] float32, 8 B, held",
            "└─ MulBackward0 #2 (shown above)",
            "4 nodes, 2 saved tensors (2 held, 0 freed), 16 B held",
        ]
    )
    assert saved_bytes([a, b]) == 16  # x * 3 keeps nothing: no gradient reads x


def test_summary_of_a_tensor_without_graph(capsys) -> None:
    assert viz.summary(cr.ones(2)).startswith("(no graph")
    leaf = cr.ones(2, requires_grad=True)
    assert viz.summary(leaf).splitlines()[0] == "leaf #1 [2] float32"


def test_summary_deep_graph_needs_no_recursion(capsys) -> None:
    x = cr.ones(1, requires_grad=True)
    y = x
    for _ in range(1500):  # deeper than the recursion limit allows for recursive walks
        y = y.sin()
    text = viz.summary(y)
    assert text.endswith("1501 nodes, 1500 saved tensors (1500 held, 0 freed), 5.9 KiB held")
    assert saved_bytes(y) == 1500 * 4  # each sin saved its own input
    assert text.splitlines()[-2] == " " * 3 * 1499 + "└─ leaf #1501 [1] float32"


def test_summary_bytes_match_saved_bytes_for_a_conv_net(capsys) -> None:
    cr.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU())
    out = net(cr.randn(2, 2, 5, 5)).mean()
    text = viz.summary(out, net.named_parameters())
    total = saved_bytes(out)
    assert total > 0
    assert text.splitlines()[-1].endswith(f"{viz._fmt_bytes(total)} held")
    assert "saved x: [2, 2, 5, 5] float32" in text and "saved w: [3, 2, 3, 3] float32" in text


# --- draw ----------------------------------------------------------------------------------


@pytest.fixture
def graphviz():
    """The graphviz Python package (the viz extra; needed to build a picture, not to render)."""
    return pytest.importorskip("graphviz")


def test_draw_source_has_nodes_sites_leaves_and_saved(graphviz) -> None:
    lin, loss, line = small_graph()
    g = viz.draw(loss, lin.named_parameters())
    assert isinstance(g, graphviz.Digraph)
    src = g.source
    assert src.startswith("digraph backward_graph {")
    assert 'out0 [label=<<B>output</B><BR/><FONT POINT-SIZE="9">[] float32</FONT>>' in src
    assert (
        'n0 [label=<<B>SumBackward0</B><BR/><FONT POINT-SIZE="9">'
        f'{HERE}:{line} in small_graph</FONT><BR/><FONT POINT-SIZE="9">'
        "loss = lin(x).tanh().pow(2).sum()</FONT>>]"
    ) in src
    assert (
        '<<B>weight</B><BR/><FONT POINT-SIZE="9">[4, 3] float32</FONT>> fillcolor=lightblue' in src
    )
    assert '<<B>bias</B><BR/><FONT POINT-SIZE="9">[4] float32</FONT>> fillcolor=lightblue' in src
    # three saved values (addmm keeps x only: x needs no gradient, so nothing reads W.t()), two
    # distinct arrays: one box each, joined by dashed lines
    assert src.count("fillcolor=orange") == 2
    assert (
        '<<B>a</B><BR/><FONT POINT-SIZE="9">[2, 3] float32</FONT><BR/>'
        '<FONT POINT-SIZE="9">24 B</FONT><BR/><FONT POINT-SIZE="9">held</FONT>>'
    ) in src
    assert src.count("[dir=none style=dashed]") == 3
    assert "n1 -> n0" in src and "n0 -> out0" in src
    nodes = [ln for ln in src.splitlines() if ln.strip().startswith("n") and "label=" in ln]
    assert len(nodes) == 7  # addmm: nn.Linear's one node, as in PyTorch


def test_draw_after_backward_and_without_saved(graphviz) -> None:
    lin, loss, _ = small_graph()
    bwd = next_line()
    loss.backward()
    src = viz.draw(loss, dict(lin.named_parameters())).source
    assert "fillcolor=orange" not in src
    assert src.count('style="dashed,filled"') == 3  # freed values are one box each
    assert f'freed by the backward</FONT><BR/><FONT POINT-SIZE="9">at {HERE}:{bwd}</FONT>' in src
    bare = viz.draw(loss, show_saved=False).source
    assert "dashed" not in bare and "<<B>weight</B>" in bare  # _param_name of the Linear


def test_draw_escapes_labels(graphviz) -> None:
    with set_record_sites(True):
        x = cr.ones(1, requires_grad=True)
        y = (x * 2).sum()  # <a & "b">
    src = viz.draw(y).source
    assert "# &lt;a &amp; &quot;b&quot;&gt;" in src


def test_draw_needs_graphviz_package(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "graphviz", None)  # import graphviz now fails
    monkeypatch.setattr(viz, "_picture_cls", [])
    with pytest.raises(ImportError, match=r"pip install chainrule\[viz\]"):
        viz.draw(cr.ones(1, requires_grad=True) * 2)
    viz.summary(cr.ones(1, requires_grad=True) * 2)  # the text form needs no graphviz


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
def test_draw_renders_svg(graphviz, tmp_path) -> None:
    lin, loss, _ = small_graph()
    g = viz.draw(loss, lin.named_parameters())
    path = g.render(str(tmp_path / "graph"), format="svg", cleanup=True)
    with open(path, encoding="utf-8") as f:
        svg = f.read()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    # AddmmBackward0 keeps only x (24 B): the weight is read for no gradient (x needs none).
    assert "TanhBackward0" in svg and "weight" in svg and "24 B" in svg and "48 B" not in svg
    assert g._repr_svg_().count("TanhBackward0") == 1
