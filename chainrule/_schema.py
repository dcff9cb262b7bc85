"""Operator schemas and TorchScript's type objects, as ``torch`` exposes them.

``parse_schema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")``
reads the schema language of PyTorch's ``native_functions.yaml`` into a :class:`FunctionSchema`
(name, overload name, :class:`Argument` lists with types, sizes ``N``, defaults, keyword-only
marks and alias annotations); ``str()`` prints it back as PyTorch prints it. The argument types
are the JIT type objects (``IntType.get()``, ``ListType(IntType.get())``, ``OptionalType``...),
with PyTorch's ``str``, ``annotation_str``, ``kind()``, ``isSubtypeOf`` and equality, and
:func:`unify_type_list` joins a list of types as TorchScript does (equal types, or ``T`` with
``NoneType`` to ``Optional[T]``). Tooling that reads or registers custom operators meets these
objects; chainrule has no dispatcher, so nothing here runs an operator.

Why this file is over 600 lines: the schema parser and the JIT type classes it produces are
one language (every type class is reached from the parser and printed back by it).
"""

from __future__ import annotations

import math
import re

__all__ = [
    "AnyType",
    "Argument",
    "AwaitType",
    "BoolType",
    "ComplexType",
    "DeviceObjType",
    "DictType",
    "FloatType",
    "FunctionSchema",
    "FutureType",
    "IntType",
    "ListType",
    "NoneType",
    "NumberType",
    "OptionalType",
    "RRefType",
    "StreamObjType",
    "StringType",
    "SymBoolType",
    "SymIntType",
    "TensorType",
    "TupleType",
    "Type",
    "UnionType",
    "parse_schema",
    "unify_type_list",
]


class Type:
    """A TorchScript type: compared by structure, printed as Python's typing annotation."""

    _str = "Type"

    def str(self) -> str:
        """The type as PyTorch prints it (``List[int]``)."""
        return self._str

    @property
    def annotation_str(self) -> str:
        """The type as a Python annotation."""
        return self.str()

    def kind(self) -> str:
        """The name of the type's class (``"ListType"``)."""
        return type(self).__name__

    def containedTypes(self) -> list[Type]:  # noqa: N802 - PyTorch's name
        """The types this type is built from (empty for a leaf type)."""
        return list(getattr(self, "_contained", ()))

    def isSubtypeOf(self, other: Type) -> bool:  # noqa: N802 - PyTorch's name
        """``self <: other``: equal, anything <: Any, int/float/complex <: number, T and None <:
        Optional[T], members <: Union, List/Tuple/Optional covariantly."""
        return _subtype(self, other)

    def is_interface_type(self) -> bool:
        """False: no interface types here."""
        return False

    def __str__(self) -> str:
        return self.str()

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return (
            type(self) is type(other)
            and self.str() == other.str()  # type: ignore[attr-defined]
            and self.containedTypes() == other.containedTypes()  # type: ignore[attr-defined]
        )

    __hash__ = None  # type: ignore[assignment]  # PyTorch's types are unhashable


class _Singleton(Type):
    _inst: dict[type, Type] = {}

    def __init__(self) -> None:
        raise TypeError(f"{type(self).__name__}: No constructor defined!")

    @classmethod
    def get(cls) -> Type:
        """The one instance of this type."""
        inst = _Singleton._inst.get(cls)
        if inst is None:
            inst = object.__new__(cls)
            _Singleton._inst[cls] = inst
        return inst


def _leaf(name: str, text: str) -> type:
    return type(name, (_Singleton,), {"_str": text, "__doc__": f"TorchScript's ``{text}`` type."})


AnyType = _leaf("AnyType", "Any")
NumberType = _leaf("NumberType", "number")
IntType = _leaf("IntType", "int")
FloatType = _leaf("FloatType", "float")
ComplexType = _leaf("ComplexType", "complex")
BoolType = _leaf("BoolType", "bool")
StringType = _leaf("StringType", "str")
NoneType = _leaf("NoneType", "NoneType")
TensorType = _leaf("TensorType", "Tensor")
DeviceObjType = _leaf("DeviceObjType", "Device")
StreamObjType = _leaf("StreamObjType", "Stream")
SymIntType = _leaf("SymIntType", "int")
SymBoolType = _leaf("SymBoolType", "bool")


class _Named(Type):
    """A type the schema language names but this module does not model (``ScalarType``
    and the other enums as ints are modelled; type variables ``t`` and classes are kept
    by name)."""

    def __init__(self, name: str) -> None:
        self._str = name


class _Wrapper(Type):
    _fmt = "{}"

    def __init__(self, *contained: Type) -> None:
        for t in contained:
            if not isinstance(t, Type):
                raise TypeError(f"{type(self).__name__}(): expected a Type, got {type(t).__name__}")
        self._contained = contained

    def str(self) -> str:
        return self._fmt.format(", ".join(t.str() for t in self._contained))

    def getElementType(self) -> Type:  # noqa: N802 - PyTorch's name
        """The element type."""
        return self._contained[0]


class ListType(_Wrapper):
    """``List[T]``."""

    _fmt = "List[{}]"

    def __init__(self, a: Type) -> None:
        super().__init__(a)

    @staticmethod
    def ofInts() -> ListType:  # noqa: N802 - PyTorch's name
        """``List[int]``."""
        return ListType(IntType.get())

    @staticmethod
    def ofTensors() -> ListType:  # noqa: N802 - PyTorch's name
        """``List[Tensor]``."""
        return ListType(TensorType.get())


class OptionalType(_Wrapper):
    """``Optional[T]``: T or None."""

    _fmt = "Optional[{}]"

    def __init__(self, a: Type) -> None:
        super().__init__(a)

    @staticmethod
    def ofTensor() -> OptionalType:  # noqa: N802 - PyTorch's name
        """``Optional[Tensor]``."""
        return OptionalType(TensorType.get())


class FutureType(_Wrapper):
    """``Future[T]``."""

    _fmt = "Future[{}]"

    def __init__(self, a: Type) -> None:
        super().__init__(a)


class AwaitType(_Wrapper):
    """``Await[T]``."""

    _fmt = "Await[{}]"

    def __init__(self, a: Type) -> None:
        super().__init__(a)


class RRefType(_Wrapper):
    """``RRef[T]``."""

    _fmt = "RRef[{}]"

    def __init__(self, a: Type) -> None:
        super().__init__(a)


class DictType(_Wrapper):
    """``Dict[K, V]``."""

    _fmt = "Dict[{}]"

    def __init__(self, key: Type, value: Type) -> None:
        super().__init__(key, value)

    def getKeyType(self) -> Type:  # noqa: N802 - PyTorch's name
        """K."""
        return self._contained[0]

    def getValueType(self) -> Type:  # noqa: N802 - PyTorch's name
        """V."""
        return self._contained[1]


class TupleType(_Wrapper):
    """``Tuple[T1, ..., Tn]``."""

    _fmt = "Tuple[{}]"

    def __init__(self, a: list[Type]) -> None:
        super().__init__(*a)

    def elements(self) -> list[Type]:
        """The element types."""
        return list(self._contained)


class UnionType(_Wrapper):
    """``Union[T1, ..., Tn]``, its members flattened, deduplicated and sorted by name."""

    _fmt = "Union[{}]"

    def __init__(self, a: list[Type]) -> None:
        flat: list[Type] = []
        for t in a:
            for m in t._contained if isinstance(t, UnionType) else (t,):
                if m not in flat:
                    flat.append(m)
        super().__init__(*sorted(flat, key=lambda t: t.str()))


def _subtype(a: Type, b: Type) -> bool:
    if a == b or isinstance(b, AnyType):
        return True
    if isinstance(b, NumberType):
        return isinstance(a, (IntType, FloatType, ComplexType))
    if isinstance(b, OptionalType):
        if isinstance(a, NoneType):
            return True
        inner = a.getElementType() if isinstance(a, OptionalType) else a
        return _subtype(inner, b.getElementType())
    if isinstance(b, UnionType):
        members = a._contained if isinstance(a, UnionType) else (a,)
        return all(any(_subtype(m, x) for x in b._contained) for m in members)
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        return len(a._contained) == len(b._contained) and all(
            _subtype(x, y) for x, y in zip(a._contained, b._contained, strict=True)
        )
    return False


def _unify(a: Type, b: Type) -> Type | None:
    if _subtype(a, b):
        return b
    if _subtype(b, a):
        return a
    if isinstance(a, NoneType) and not isinstance(b, OptionalType):
        return OptionalType(b)
    if isinstance(b, NoneType) and not isinstance(a, OptionalType):
        return OptionalType(a)
    if isinstance(a, OptionalType) and not isinstance(b, OptionalType):
        u = _unify(a.getElementType(), b)
        return None if u is None else OptionalType(u)
    if isinstance(b, OptionalType) and not isinstance(a, OptionalType):
        u = _unify(a, b.getElementType())
        return None if u is None else OptionalType(u)
    return None


def unify_type_list(types: list[Type]) -> Type:
    """The one type all of ``types`` are (TorchScript's unification): equal types, a type and
    its subtype, or T and None as ``Optional[T]``; RuntimeError otherwise."""
    if not types:
        raise RuntimeError("Cannot get unified type from empty list")
    out = types[0]
    for i, t in enumerate(types[1:], 1):
        u = _unify(out, t)
        if u is None:
            raise RuntimeError(
                f"Could not unify type list since element {i} of type {t.str()} did not "
                f"match the types before it ({out.str()})"
            )
        out = u
    return out


# ----------------------------------------------------------------------------------- schemas


class _AliasInfo:
    """An alias annotation ``(a!)``: the alias sets before and after, and whether it writes."""

    def __init__(self, before: list[str], after: list[str], write: bool) -> None:
        self._before, self._after, self.is_write = before, after, write

    @property
    def before_set(self) -> set[str]:
        """The alias sets the value is in on entry."""
        return set(self._before)

    @property
    def after_set(self) -> set[str]:
        """The alias sets the value is in on exit."""
        return set(self._after)

    def _text(self) -> str:
        s = "|".join(self._before)
        if self._after != self._before:
            s += " -> " + "|".join(self._after)
        return "(" + s + ("!" if self.is_write else "") + ")"


class _ST:
    """A parsed schema type: ``kind`` is "base", "opt", "list", "tuple" or "call"."""

    def __init__(
        self,
        kind: str,
        name: str = "",
        args: tuple[_ST, ...] = (),
        n: int | None = None,
        alias: _AliasInfo | None = None,
    ) -> None:
        self.kind, self.name, self.args, self.n, self.alias = kind, name, args, n, alias

    def text(self) -> str:
        if self.kind == "base":
            s = self.name
        elif self.kind == "opt":
            s = self.args[0].text() + "?"
        elif self.kind == "list":
            s = self.args[0].text() + "[" + ("" if self.n is None else str(self.n)) + "]"
        elif self.kind == "tuple":
            s = "(" + ", ".join(a.text() for a in self.args) + ")"
        else:
            s = self.name + "(" + ", ".join(a.text() for a in self.args) + ")"
        return s + (self.alias._text() if self.alias else "")

    def jit(self, real: bool = False) -> Type:
        if self.kind == "opt":
            return OptionalType(self.args[0].jit(real))
        if self.kind == "list":
            return ListType(self.args[0].jit(real))
        if self.kind == "tuple":
            return TupleType([a.jit(real) for a in self.args])
        if self.kind == "call":
            cls = {"Dict": DictType, "Future": FutureType, "Await": AwaitType, "RRef": RRefType}
            return cls[self.name](*[a.jit(real) for a in self.args])
        leaf = _LEAVES.get(self.name)
        if leaf is not None:
            return leaf.get()
        if self.name == "SymInt":
            return SymIntType.get() if real else IntType.get()
        if self.name == "SymBool":
            return SymBoolType.get() if real else BoolType.get()
        if self.name in _AS_INT:
            return _Named(self.name) if real else IntType.get()
        return _Named(self.name)


_LEAVES: dict[str, type] = {
    "Tensor": TensorType,
    "int": IntType,
    "float": FloatType,
    "complex": ComplexType,
    "bool": BoolType,
    "str": StringType,
    "Scalar": NumberType,
    "number": NumberType,
    "Any": AnyType,
    "NoneType": NoneType,
    "Device": DeviceObjType,
    "Stream": StreamObjType,
}
_AS_INT = {"SymInt", "ScalarType", "Layout", "MemoryFormat", "QScheme", "DimName"}
_KNOWN = (
    set(_LEAVES)
    | _AS_INT
    | {"SymBool", "Generator", "Storage", "AnyClassType", "AnyEnumType", "Dimname"}
    | {"GenericList", "ScalarTypeType", "Capsule", "PyObject", "AnyTupleType", "AnyListType"}
)
_ENUMS = {
    "contiguous_format": 0,
    "preserve_format": 1,
    "channels_last": 2,
    "channels_last_3d": 3,
    "strided": 0,
    "sparse_coo": 1,
    "per_tensor_affine": 0,
    "Mean": 1,
    "Sum": 2,
    "long": 4,
}

_TOKEN = re.compile(
    r"\s*(?:(?P<str>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')"
    r"|(?P<number>-?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)j?)"
    r"|(?P<arrow>->)|(?P<ellipsis>\.\.\.)|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>::|[()\[\],.=?!*|]))"
)


class _Parser:
    def __init__(self, text: str, allow_typevars: bool = True) -> None:
        self.text, self.allow_typevars = text, allow_typevars
        self.toks: list[tuple[str, str, int]] = []
        pos = 0
        while True:
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                rest = text[pos:]
                if rest.strip():
                    self._fail(f"unexpected character '{rest.strip()[0]}' here", pos)
                break
            kind = m.lastgroup or "op"
            val = m.group(kind)
            self.toks.append((kind if kind != "op" else val, val, m.start(kind)))
            pos = m.end()
        self.toks.append(("eof", "", len(text)))
        self.i = 0

    def _fail(self, what: str, pos: int, width: int = 1) -> None:
        line = self.text
        caret = "" if pos >= len(line) else "\n" + " " * pos + "~" * width + " <--- HERE\n"
        raise RuntimeError(f"{what}:\n{line}{caret}")

    def peek(self) -> str:
        return self.toks[self.i][0]

    def next(self) -> tuple[str, str, int]:
        t = self.toks[self.i]
        self.i += 1
        return t

    def accept(self, kind: str) -> bool:
        if self.peek() == kind:
            self.i += 1
            return True
        return False

    def expect(self, kind: str) -> str:
        k, v, pos = self.toks[self.i]
        if k != kind:
            self._fail(f"expected {kind} but found '{k}' here", pos, max(len(v), 1))
        self.i += 1
        return v

    # schema := name ['.' overload] '(' args ')' '->' returns
    def schema(self) -> FunctionSchema:
        name = self.expect("ident")
        while self.accept("::"):
            name += "::" + self.expect("ident")
        overload = ""
        if self.accept("."):
            overload = self.expect("ident")
        self.expect("(")
        args, vararg = self.arglist(")", True)
        self.expect("arrow")
        if self.accept("ellipsis"):
            rets, varret = [], True
        elif self.peek() == "(" and self._is_return_tuple():
            self.expect("(")
            rets, varret = self.arglist(")", False)
        else:
            rets, varret = [self.argument(False, False)], False
        self.expect("eof")
        return FunctionSchema(name, overload, args, rets, vararg, varret)

    def _is_return_tuple(self) -> bool:
        # "(Tensor a, Tensor b)" lists returns; "(Tensor, Tensor)[]"-style tuple types don't occur
        depth, j = 0, self.i
        while self.toks[j][0] != "eof":
            k = self.toks[j][0]
            depth += k == "("
            depth -= k == ")"
            if depth == 0:
                return self.toks[j + 1][0] not in ("[", "?")
            j += 1
        return True

    def arglist(self, close: str, is_input: bool) -> tuple[list[Argument], bool]:
        out: list[Argument] = []
        kwarg_only = vararg = False
        while not self.accept(close):
            if out or kwarg_only or vararg:
                self.expect(",")
            if self.accept("*"):
                kwarg_only = True
                continue
            if self.peek() == "ellipsis":
                pos = self.next()[2]
                if any(a.has_default_value() for a in out):
                    self._fail("\nschemas with vararg (...) can't have default value args", pos, 2)
                vararg = True
                continue
            out.append(self.argument(is_input, kwarg_only))
        return out, vararg

    def argument(self, is_input: bool, kwarg_only: bool) -> Argument:
        st = self.type_()
        name = ""
        if is_input:
            name = self.expect("ident")  # inputs are named; returns may be
        elif self.peek() == "ident":
            name = self.next()[1]
        default: object = None
        has_default = False
        if is_input and self.accept("="):
            has_default = True
            default = self.default(st)
        return Argument(name, st, kwarg_only, default, has_default)

    def type_(self) -> _ST:
        if self.accept("("):
            elems = []
            while not self.accept(")"):
                if elems:
                    self.expect(",")
                elems.append(self.type_())
            st = _ST("tuple", args=tuple(elems))
        else:
            k, name, pos = self.next()
            if k != "ident":
                self._fail(f"expected ident but found '{k}' here", pos, max(len(name), 1))
            while self.accept("."):
                name += "." + self.expect("ident")
            if name in ("Dict", "Future", "Await", "RRef") and self.accept("("):
                elems = [self.type_()]
                while self.accept(","):
                    elems.append(self.type_())
                self.expect(")")
                st = _ST("call", name, tuple(elems))
            else:
                typevar = re.fullmatch(r"t\d*|tVal", name) is not None
                known = name in _KNOWN or name.startswith("__torch__")
                if (typevar and not self.allow_typevars) or not (known or typevar):
                    self._fail(
                        "\nunknown type specifier. Common valid schema types include Tensor, "
                        "SymInt, int, float, bool, Scalar; for a full list, please see "
                        "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/"
                        "README.md#func ",
                        pos,
                        len(name),
                    )
                st = _ST("base", name)
        if self.peek() == "(":
            st.alias = self.alias()
        while True:
            if self.accept("?"):
                st = _ST("opt", args=(st,))
            elif self.accept("["):
                n = None
                if self.peek() == "number":
                    n = int(self.next()[1])
                self.expect("]")
                st = _ST("list", args=(st,), n=n)
                if self.peek() == "(":
                    st.alias = self.alias()
            else:
                return st

    def alias(self) -> _AliasInfo:
        self.expect("(")
        before = [self._alias_name()]
        while self.accept("|"):
            before.append(self._alias_name())
        after = before
        if self.accept("arrow"):
            after = [self._alias_name()]
            while self.accept("|"):
                after.append(self._alias_name())
        write = self.accept("!")
        self.expect(")")
        return _AliasInfo(before, after, write)

    def _alias_name(self) -> str:
        if self.accept("*"):
            return "*"
        return self.expect("ident")

    def default(self, st: _ST) -> object:
        k, v, pos = self.next()
        if k == "[":
            items = []
            while not self.accept("]"):
                if items:
                    self.expect(",")
                items.append(self.default(st.args[0] if st.kind == "list" else st))
            return items
        if k == "number":
            if v.endswith("j"):
                return complex(v)
            base = st.args[0] if st.kind == "list" else st
            if base.name == "float" or any(c in v for c in ".eE"):
                return float(v)
            return int(v)
        if k == "str":
            return v[1:-1].encode().decode("unicode_escape")
        if k == "ident":
            if v in ("True", "False"):
                return v == "True"
            if v == "None":
                return None
            if v in _ENUMS:
                return _ENUMS[v]
        if st.kind == "list" and k in ("number", "ident"):
            return v
        self._fail(f"expected a default value but found '{k}' here", pos, max(len(v), 1))
        return None


_ESCAPES = {
    '"': '\\"',
    "'": "\\'",
    "\\": "\\\\",
    "\n": "\\n",
    "\t": "\\t",
    "\f": "\\f",
    "\v": "\\v",
    "\r": "\\r",
    "\b": "\\b",
    "\a": "\\a",
}


def _fmt_value(v: object) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        s = f"{v:.17g}"
        return s if any(c in s for c in ".en") else s + "."
    if isinstance(v, complex):
        return f"{_fmt_value(v.real)}+{_fmt_value(v.imag)}j"
    if isinstance(v, str):
        return '"' + "".join(_ESCAPES.get(c, c) for c in v) + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_fmt_value(x) for x in v) + "]"
    return str(v)


class Argument:
    """One argument (or return) of a schema: name, type, list size ``N``, default, keyword-only
    mark and alias annotation."""

    def __init__(
        self, name: str, st: _ST, kwarg_only: bool, default: object, has_default: bool
    ) -> None:
        self.name, self._st, self.kwarg_only = name, st, kwarg_only
        self._shown, self._has_default = default, has_default
        n = st.n if st.kind == "list" else None
        if n is not None and not isinstance(default, list) and default is not None:
            default = [default] * n  # int[2] stride=1 means [1, 1]
        self.default_value = default

    @property
    def type(self) -> Type:
        """The JIT type (``SymInt``, ``ScalarType``, ``MemoryFormat`` read as ``int``)."""
        return self._st.jit()

    @property
    def real_type(self) -> Type:
        """The type as written."""
        return self._st.jit(real=True)

    @property
    def N(self) -> int | None:  # noqa: N802 - PyTorch's name
        """The fixed list size of ``int[2]``, else None."""
        st = self._st.args[0] if self._st.kind == "opt" else self._st
        return st.n if st.kind == "list" else None

    @property
    def alias_info(self) -> _AliasInfo | None:
        """The alias annotation, ``(a!)``, or None."""
        st = self._st
        while st.alias is None and st.kind in ("opt", "list"):
            st = st.args[0]
        return st.alias

    @property
    def is_write(self) -> bool:
        """Whether the argument is written to (``(a!)``)."""
        a = self.alias_info
        return a is not None and a.is_write

    @property
    def is_out(self) -> bool:
        """A keyword-only argument that is written to: an ``out=`` argument."""
        return self.kwarg_only and self.is_write

    def has_default_value(self) -> bool:
        """Whether the schema gives a default."""
        return self._has_default

    def _text(self) -> str:
        s = self._st.text()
        if self.name:
            s += " " + self.name
        if self._has_default:
            s += "=" + _fmt_value(self._shown)
        return s

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Argument)
            and self._text() == other._text()
            and (self.kwarg_only == other.kwarg_only)
        )

    __hash__ = None  # type: ignore[assignment]


class FunctionSchema:
    """An operator's signature: ``name.overload(args) -> returns``."""

    def __init__(
        self,
        name: str,
        overload_name: str,
        arguments: list[Argument],
        returns: list[Argument],
        is_vararg: bool = False,
        is_varret: bool = False,
    ) -> None:
        self.name, self.overload_name = name, overload_name
        self.arguments, self.returns = arguments, returns
        self.is_vararg, self.is_varret = is_vararg, is_varret

    @property
    def is_mutable(self) -> bool:
        """Whether any argument is written to."""
        return any(a.is_write for a in self.arguments)

    def __str__(self) -> str:
        parts, kw = [], False
        for a in self.arguments:
            if a.kwarg_only and not kw:
                parts.append("*")
                kw = True
            parts.append(a._text())
        if self.is_vararg:
            parts.append("...")
        head = self.name + ("." + self.overload_name if self.overload_name else "")
        if self.is_varret:
            rets = "..."
        elif len(self.returns) == 1 and not self.returns[0]._text().startswith("("):
            rets = self.returns[0]._text()
        else:
            rets = "(" + ", ".join(r._text() for r in self.returns) + ")"
        return f"{head}({', '.join(parts)}) -> {rets}"

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FunctionSchema) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


def parse_schema(schema: str, allow_typevars: bool = True) -> FunctionSchema:
    """Read an operator schema (the language of ``native_functions.yaml``); RuntimeError,
    pointing at the place, on malformed text. ``allow_typevars=False`` refuses the type
    variables ``t``, ``t1``, ``tVal``."""
    if not isinstance(schema, str):
        raise TypeError(
            f"parse_schema(): argument 'schema' must be str, not {type(schema).__name__}"
        )
    return _Parser(schema, allow_typevars).schema()
