"""Operator schemas and TorchScript types (chainrule/_schema.py) against PyTorch's."""

from __future__ import annotations

import pytest
import torch

import chainrule

ALL = [str(s) for s in torch._C._jit_get_all_schemas()]


def test_every_registered_schema_round_trips() -> None:
    """Each of torch's registered schemas (4374 in 2.13) parses and prints back as torch's."""
    assert len(ALL) > 4000
    bad = [s for s in ALL if str(chainrule.parse_schema(s)) != s]
    assert bad == []


def _args(s):
    return [
        (a.name, str(a.type), str(a.real_type), a.N, a.default_value, a.kwarg_only, a.is_out)
        for a in s.arguments
    ]


def test_fields_match_torch_on_all_schemas() -> None:
    mismatched = []
    for text in ALL:
        ours, theirs = chainrule.parse_schema(text), torch._C.parse_schema(text)
        ok = (
            ours.name == theirs.name
            and ours.overload_name == theirs.overload_name
            and ours.is_mutable == theirs.is_mutable
            and [a.name for a in ours.returns] == [a.name for a in theirs.returns]
            and _args(ours) == _args(theirs)
        )
        if not ok:
            mismatched.append(text)
    assert mismatched == []


SCHEMAS = [
    "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    'foo(int[2] x=[0,1], str r="mean", float e=1e-5, MemoryFormat m=contiguous_format, '
    "ScalarType? d=None, Layout? l=None, Device? dv=None, Generator? g=None, SymInt[] s=[], "
    "Tensor[] ts, Tensor? t=None, int y=-1, bool b=True) -> ()",
    "f(float x=1) -> ()",
    "f(float[] x=[1.5, 2]) -> ()",
    "f(Tensor(a -> *) x) -> Tensor(a)",
    "f(Tensor(a!)[] x) -> ()",
    "f(int[1]? x=None) -> ()",
    "f(Dict(str, Tensor) x) -> Future(int)",
    "f(complex x=1j) -> ()",
    "f(...) -> ...",
    "f(Tensor x) -> Tensor y",
]


@pytest.mark.parametrize("text", SCHEMAS)
def test_written_schemas(text: str) -> None:
    ours, theirs = chainrule.parse_schema(text), torch._C.parse_schema(text)
    assert str(ours) == str(theirs)
    assert _args(ours) == _args(theirs)
    if "complex" not in text:  # torch prints 1j as 0.+1.j, which neither parser reads back
        assert ours == chainrule.parse_schema(str(ours))


def test_alias_info() -> None:
    text = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)"
    ours, theirs = chainrule.parse_schema(text), torch._C.parse_schema(text)
    a, b = ours.arguments[0].alias_info, theirs.arguments[0].alias_info
    assert (a.is_write, a.before_set, a.after_set) == (b.is_write, b.before_set, b.after_set)
    assert ours.arguments[1].alias_info is None and theirs.arguments[1].alias_info is None


@pytest.mark.parametrize(
    "text",
    [
        "foo(",
        "foo(Tensor) ->",
        "foo(Blah x) -> Tensor",
        "",
        "f(int x=1)",
        "f(int x=1, ...) -> ...",
    ],
)
def test_malformed_schemas_raise_as_torch(text: str) -> None:
    with pytest.raises(RuntimeError) as theirs:
        torch._C.parse_schema(text)
    with pytest.raises(RuntimeError) as ours:
        chainrule.parse_schema(text)
    first = str(theirs.value).strip().splitlines()[0]
    assert str(ours.value).strip().splitlines()[0] == first


def _pair(build):
    return build(chainrule), build(torch._C)


TYPES = [
    lambda m: m.IntType.get(),
    lambda m: m.FloatType.get(),
    lambda m: m.ComplexType.get(),
    lambda m: m.BoolType.get(),
    lambda m: m.StringType.get(),
    lambda m: m.NoneType.get(),
    lambda m: m.NumberType.get(),
    lambda m: m.AnyType.get(),
    lambda m: m.TensorType.get(),
    lambda m: m.DeviceObjType.get(),
    lambda m: m.StreamObjType.get(),
    lambda m: m.SymIntType.get(),
    lambda m: m.SymBoolType.get(),
    lambda m: m.ListType(m.IntType.get()),
    lambda m: m.OptionalType(m.TensorType.get()),
    lambda m: m.DictType(m.StringType.get(), m.TensorType.get()),
    lambda m: m.TupleType([m.IntType.get(), m.FloatType.get()]),
    lambda m: m.UnionType([m.IntType.get(), m.FloatType.get()]),
    lambda m: m.FutureType(m.IntType.get()),
    lambda m: m.AwaitType(m.IntType.get()),
    lambda m: m.RRefType(m.IntType.get()),
    lambda m: m.ListType.ofInts(),
    lambda m: m.OptionalType.ofTensor(),
]


@pytest.mark.parametrize("build", TYPES)
def test_types_print_as_torch(build) -> None:
    ours, theirs = _pair(build)
    assert (str(ours), repr(ours), ours.annotation_str, ours.kind()) == (
        str(theirs),
        repr(theirs),
        theirs.annotation_str,
        theirs.kind(),
    )
    assert [str(t) for t in ours.containedTypes()] == [str(t) for t in theirs.containedTypes()]
    assert ours == build(chainrule)


def test_singletons_and_accessors() -> None:
    c = chainrule
    assert c.IntType.get() is c.IntType.get()
    assert c.ListType(c.IntType.get()).getElementType() == c.IntType.get()
    assert c.ListType(c.IntType.get()) != c.ListType(c.FloatType.get())
    d = c.DictType(c.StringType.get(), c.TensorType.get())
    assert (str(d.getKeyType()), str(d.getValueType())) == ("str", "Tensor")
    assert [str(t) for t in c.TupleType([c.IntType.get()]).elements()] == ["int"]
    with pytest.raises(TypeError):
        hash(c.ListType(c.IntType.get()))
    with pytest.raises(TypeError):
        hash(torch._C.ListType(torch._C.IntType.get()))


SUB = [
    (lambda m: m.IntType.get(), lambda m: m.NumberType.get()),
    (lambda m: m.IntType.get(), lambda m: m.FloatType.get()),
    (lambda m: m.NoneType.get(), lambda m: m.OptionalType(m.TensorType.get())),
    (lambda m: m.TensorType.get(), lambda m: m.OptionalType(m.TensorType.get())),
    (lambda m: m.TensorType.get(), lambda m: m.AnyType.get()),
    (lambda m: m.IntType.get(), lambda m: m.UnionType([m.IntType.get(), m.StringType.get()])),
    (lambda m: m.StringType.get(), lambda m: m.IntType.get()),
]


@pytest.mark.parametrize(("a", "b"), SUB)
def test_is_subtype_of(a, b) -> None:
    assert a(chainrule).isSubtypeOf(b(chainrule)) == a(torch._C).isSubtypeOf(b(torch._C))


UNIFY = [
    lambda m: [m.IntType.get(), m.FloatType.get()],
    lambda m: [m.IntType.get(), m.NoneType.get()],
    lambda m: [m.NoneType.get(), m.TensorType.get()],
    lambda m: [m.IntType.get(), m.IntType.get()],
    lambda m: [m.IntType.get(), m.StringType.get()],
    lambda m: [m.IntType.get(), m.NumberType.get()],
    lambda m: [],
]


@pytest.mark.parametrize("build", UNIFY)
def test_unify_type_list(build) -> None:
    try:
        expected = str(torch._C.unify_type_list(build(torch._C)))
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as got:
            chainrule.unify_type_list(build(chainrule))
        assert str(got.value) == str(e)
    else:
        assert str(chainrule.unify_type_list(build(chainrule))) == expected


def test_type_variables_refused_when_asked() -> None:
    text = "f(t x) -> t"
    assert str(chainrule.parse_schema(text)) == str(torch._C.parse_schema(text))
    with pytest.raises(RuntimeError) as theirs:
        torch._C.parse_schema(text, allow_typevars=False)
    with pytest.raises(RuntimeError) as ours:
        chainrule.parse_schema(text, allow_typevars=False)
    assert str(ours.value) == str(theirs.value)
