"""chainrule/_dispatch.py: the tables through which Tensor reaches the layers above it."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import _creation, _dispatch

# The ops whose Tensor methods call apply_unary / apply_binary directly (Note [hot methods]
# in _tensor.py).
HOT_UNARY = ["neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu"]
HOT_BINARY = ["add", "mul", "div", "rdiv"]


@pytest.mark.parametrize("name", HOT_UNARY + HOT_BINARY)
def test_hot_methods_call_plain_ops(name: str) -> None:
    op = _dispatch.defs.__dict__[name]
    assert not op.aux and not op.view and op.num_outputs == 1


def test_tables_are_filled_with_the_modules_functions() -> None:
    assert _dispatch.ops.expm1 is cr.ops.expm1
    assert _dispatch.creation.zeros is _creation.zeros  # (chainrule.zeros wraps it for out=)
    assert _dispatch.defs.exp is cr.ops.REGISTRY["exp"]
    assert _dispatch.autograd.backward is cr.autograd.backward


def test_register_refuses_a_second_object_for_a_name() -> None:
    table = _dispatch.Table("a test")
    _dispatch.register(table, {"f": len})
    _dispatch.register(table, {"f": len})  # the same object again is fine
    with pytest.raises(RuntimeError, match="'f' is registered twice in the a test table"):
        _dispatch.register(table, {"f": abs})
    assert table.f is len
    with pytest.raises(AttributeError, match="register entries"):
        table.g = abs


def test_methods_match_the_op_functions() -> None:
    x = cr.tensor(np.linspace(0.1, 2.0, 5), requires_grad=True)
    for name in HOT_UNARY:
        np.testing.assert_array_equal(
            getattr(x, name)().detach().numpy(), getattr(cr, name)(x).detach().numpy()
        )
    y = (x + 1) * x / 2 - 1 / x
    y.sum().backward()
    xs = np.linspace(0.1, 2.0, 5)
    np.testing.assert_allclose(x.grad.numpy(), (2 * xs + 1) / 2 + 1 / xs**2)


def test_type_checking_imports_of_ops_list_every_family():
    """ops/__init__.py's TYPE_CHECKING star imports (what pyright reads) name exactly the
    families that _reexport() binds at run time."""
    import ast
    import pathlib

    import chainrule.ops as ops

    src = pathlib.Path(ops.__file__).read_text()
    starred = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.names[0].name == "*"
                starred.add(imp.module)
    assert starred == {f.__name__ for f in ops.FAMILIES}
