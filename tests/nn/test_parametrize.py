"""nn.utils.parametrize, nn.utils.parametrizations (weight_norm, spectral_norm) and the
hook forms nn.utils.weight_norm / spectral_norm against torch: state-dict keys, class names,
values and gradients from identical weights (float32 and float64), error types and texts,
and the state of the module after a failed call. Long because it covers the whole
parametrization family (parametrize itself, weight_norm, spectral_norm, orthogonal and the
hook forms), which share its helpers."""

from __future__ import annotations

import copy
import pickle
import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import chainrule
from chainrule.autograd import gradcheck
from chainrule.nn.utils.parametrizations import _weight_norm
from tests.nn._compare import DT, close, to_cr

DTYPES = ["float32", "float64"]


def err(f: Callable[[], Any]) -> tuple[type, str] | None:
    """(exception type name, message with torch's module names spelt as chainrule's)."""
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the comparison is the point
        msg = str(e).replace("torch.nn.modules.", "").replace("torch.", "chainrule.")
        msg = msg.replace("chainrule._tensor.Tensor", "chainrule.Tensor")
        return type(e).__name__, msg
    return None


def same_err(make: Callable[[Any], Any]) -> None:
    t = err(lambda: make(torch))
    c = err(lambda: make(chainrule))
    assert t is not None
    assert c == t


def copy_weights(tm: Any, cm: Any) -> None:
    cm.load_state_dict({k: to_cr(v, False) for k, v in tm.state_dict().items()})


def parametrizations_of(lib: Any) -> dict[str, type]:
    nn = lib.nn

    class Sym(nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(0, 1)

    class Scale(nn.Module):
        def forward(self, x):
            return x * 2

        def right_inverse(self, x):
            return x / 2

    class Split(nn.Module):
        def forward(self, a, b):
            return a + b * 3

        def right_inverse(self, x):
            return (x / 4, x / 4)

    class Shrink(nn.Module):
        def forward(self, x):
            return x[0]

    class Double(nn.Module):
        def forward(self, x):
            return x.double()

    class Int(nn.Module):
        def forward(self, x):
            return 3

    class BadInverse(nn.Module):
        def forward(self, x):
            return x

        def right_inverse(self, x):
            return x[0]

    class ToDouble(nn.Module):
        def forward(self, x):
            return x

        def right_inverse(self, x):
            return x.double()

    class IntInverse(nn.Module):
        def forward(self, x):
            return x

        def right_inverse(self, x):
            return 3

    class BadSeq(nn.Module):
        def forward(self, a, b):
            return a

        def right_inverse(self, x):
            return (x, 3)

    return dict(
        Sym=Sym,
        Scale=Scale,
        Split=Split,
        Shrink=Shrink,
        Double=Double,
        Int=Int,
        BadInverse=BadInverse,
        ToDouble=ToDouble,
        IntInverse=IntInverse,
        BadSeq=BadSeq,
    )


def _pair(build: Callable[[Any, dict], Any], dtype: str) -> tuple[Any, Any]:
    """Build the same parametrized module in both libraries, with torch's values copied."""
    torch.manual_seed(0)
    tm = build(torch, parametrizations_of(torch))
    cm = build(chainrule, parametrizations_of(chainrule))
    tm.to(DT[dtype][1])
    cm.to(DT[dtype][2])
    assert list(cm.state_dict()) == list(tm.state_dict())
    copy_weights(tm, cm)
    return tm, cm


def _check_forward_backward(tm: Any, cm: Any, dtype: str, shape: tuple[int, ...]) -> None:
    x = np.random.default_rng(1).standard_normal(shape).astype(DT[dtype][0])
    tx, cx = torch.tensor(x, requires_grad=True), chainrule.tensor(x, requires_grad=True)
    to, co = tm(tx), cm(cx)
    close(co, to, dtype, "output")
    to.pow(2).sum().backward()
    co.pow(2).sum().backward()
    close(cx.grad, tx.grad, dtype, "grad x")
    tp, cp = dict(tm.named_parameters()), dict(cm.named_parameters())
    assert list(cp) == list(tp)
    for k in tp:
        close(cp[k].grad, tp[k].grad, dtype, f"grad {k}")


BUILDS = {
    "sym": lambda lib, P: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Linear(3, 3), "weight", P["Sym"]()
    ),
    "scale_twice": lambda lib, P: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.utils.parametrize.register_parametrization(
            lib.nn.Linear(3, 3), "weight", P["Scale"]()
        ),
        "weight",
        P["Scale"](),
    ),
    "split": lambda lib, P: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Linear(3, 3), "weight", P["Split"]()
    ),
    "bias_and_weight": lambda lib, P: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.utils.parametrize.register_parametrization(
            lib.nn.Linear(3, 3), "weight", P["Sym"]()
        ),
        "bias",
        P["Scale"](),
    ),
    "unsafe_shrink": lambda lib, P: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Conv1d(3, 3, 1, bias=False), "weight", P["Scale"](), unsafe=True
    ),
    "weight_norm": lambda lib, P: lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 4)),
    "weight_norm_conv_dim1": lambda lib, P: lib.nn.utils.parametrizations.weight_norm(
        lib.nn.Conv1d(3, 4, 2), dim=1
    ),
    "weight_norm_none": lambda lib, P: lib.nn.utils.parametrizations.weight_norm(
        lib.nn.Linear(3, 4), dim=None
    ),
    "spectral_norm": lambda lib, P: lib.nn.utils.parametrizations.spectral_norm(
        lib.nn.Linear(3, 4), n_power_iterations=2
    ),
    "spectral_norm_convT": lambda lib, P: lib.nn.utils.parametrizations.spectral_norm(
        lib.nn.ConvTranspose1d(3, 4, 2)
    ),
    "spectral_norm_conv_dim2": lambda lib, P: lib.nn.utils.parametrizations.spectral_norm(
        lib.nn.Conv1d(3, 4, 2), dim=-1, eps=1e-6
    ),
}
SHAPES = {
    "unsafe_shrink": (2, 3, 5),
    "weight_norm_conv_dim1": (2, 3, 5),
    "spectral_norm_convT": (2, 3, 5),
    "spectral_norm_conv_dim2": (2, 3, 5),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(BUILDS))
def test_parametrized_module_matches_torch(case, dtype):
    tm, cm = _pair(BUILDS[case], dtype)
    assert type(cm).__name__ == type(tm).__name__
    assert [n for n, _ in cm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    _check_forward_backward(tm, cm, dtype, SHAPES.get(case, (2, 3)))
    # A second step: spectral norm's power iteration has advanced the buffers in both.
    for k, v in tm.state_dict().items():
        close(cm.state_dict()[k], v, dtype, k)
    _check_forward_backward(tm, cm, dtype, SHAPES.get(case, (2, 3)))
    tm.eval()
    cm.eval()
    _check_forward_backward(tm, cm, dtype, SHAPES.get(case, (2, 3)))


def test_parametrize_structure_and_repr():
    P = parametrizations_of(chainrule)
    m = chainrule.nn.Linear(3, 3)
    p = m.weight
    chainrule.nn.utils.parametrize.register_parametrization(m, "weight", P["Scale"]())
    chainrule.nn.utils.parametrize.register_parametrization(m, "weight", P["Scale"]())
    tm = torch.nn.Linear(3, 3)
    PT = parametrizations_of(torch)
    torch.nn.utils.parametrize.register_parametrization(tm, "weight", PT["Scale"]())
    torch.nn.utils.parametrize.register_parametrization(tm, "weight", PT["Scale"]())
    assert repr(m) == repr(tm)
    # The original Parameter object is kept (optimizers holding it keep working).
    assert m.parametrizations.weight.original is p
    assert isinstance(m, chainrule.nn.Linear)
    PM = chainrule.nn.utils.parametrize
    assert PM.is_parametrized(m) and PM.is_parametrized(m, "weight")
    assert not PM.is_parametrized(m, "bias")
    assert PM.type_before_parametrizations(m) is chainrule.nn.Linear
    assert not PM.is_parametrized(chainrule.nn.Linear(2, 2))
    assert isinstance(m.parametrizations.weight, PM.ParametrizationList)


@pytest.mark.parametrize("dtype", DTYPES)
def test_assignment_runs_right_inverse(dtype):
    tm, cm = _pair(BUILDS["scale_twice"], dtype)
    v = np.arange(9.0).reshape(3, 3).astype(DT[dtype][0])
    tm.weight = torch.tensor(v)
    cm.weight = chainrule.tensor(v)
    close(cm.parametrizations.weight.original, tm.parametrizations.weight.original, dtype)
    close(cm.weight, tm.weight, dtype)
    tm, cm = _pair(BUILDS["split"], dtype)
    tm.weight = torch.tensor(v)
    cm.weight = chainrule.tensor(v)
    for k in ("original0", "original1"):
        close(getattr(cm.parametrizations.weight, k), getattr(tm.parametrizations.weight, k), dtype)


def test_buffer_parametrization():
    P = parametrizations_of(chainrule)
    m = chainrule.nn.Linear(2, 2)
    m.register_buffer("buf", chainrule.tensor([[1.0, 2.0], [3.0, 4.0]]))
    chainrule.nn.utils.parametrize.register_parametrization(m, "buf", P["Sym"]())
    assert list(m.state_dict()) == ["weight", "bias", "parametrizations.buf.original"]
    assert [n for n, _ in m.named_buffers()] == ["parametrizations.buf.original"]
    np.testing.assert_array_equal(m.buf.numpy(), [[1.0, 2.0], [2.0, 4.0]])


@pytest.mark.parametrize("leave", [True, False])
@pytest.mark.parametrize(
    "case", ["sym", "scale_twice", "bias_and_weight", "weight_norm", "spectral_norm"]
)
def test_remove_parametrizations_matches_torch(case, leave):
    if case == "weight_norm" and not leave:
        return test_remove_sequence_unparametrized_is_error()
    tm, cm = _pair(BUILDS[case], "float64")
    names = list(tm.parametrizations.keys())
    for n in names:
        torch.nn.utils.parametrize.remove_parametrizations(tm, n, leave_parametrized=leave)
        chainrule.nn.utils.parametrize.remove_parametrizations(cm, n, leave_parametrized=leave)
    assert type(cm).__name__ == type(tm).__name__
    assert list(cm.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():
        close(cm.state_dict()[k], v, "float64", k)
    assert all(isinstance(p, chainrule.nn.Parameter) for p in cm.parameters())


def test_remove_sequence_unparametrized_is_error():
    same_err(
        lambda lib: lib.nn.utils.parametrize.remove_parametrizations(
            BUILDS["split"](lib, parametrizations_of(lib)), "weight", leave_parametrized=False
        )
    )


REGISTER_ERRORS = {
    "no_such_tensor": lambda lib, P, m: lib.nn.utils.parametrize.register_parametrization(
        m, "foo", P["Sym"]()
    ),
    "shape": lambda lib, P, m: lib.nn.utils.parametrize.register_parametrization(
        m, "weight", P["Shrink"]()
    ),
    "dtype": lambda lib, P, m: lib.nn.utils.parametrize.register_parametrization(
        m, "weight", P["Double"]()
    ),
    "not_tensor": lambda lib, P, m: lib.nn.utils.parametrize.register_parametrization(
        m, "weight", P["Int"]()
    ),
    "inverse_shape": lambda lib, P, m: lib.nn.utils.parametrize.register_parametrization(
        m, "weight", P["BadInverse"]()
    ),
    "inverse_dtype": lambda lib, P, m: lib.nn.utils.parametrize.register_parametrization(
        m, "weight", P["ToDouble"]()
    ),
    "inverse_not_tensor": lambda lib, P, m: lib.nn.utils.parametrize.register_parametrization(
        m, "weight", P["IntInverse"]()
    ),
    "inverse_bad_sequence": lambda lib, P, m: lib.nn.utils.parametrize.register_parametrization(
        m, "weight", P["BadSeq"]()
    ),
    "set_without_inverse": lambda lib, P, m: setattr(
        lib.nn.utils.parametrize.register_parametrization(m, "weight", P["Sym"]()),
        "weight",
        lib.ones(2, 2),
    ),
    "set_wrong_dtype": lambda lib, P, m: setattr(
        lib.nn.utils.parametrize.register_parametrization(m, "weight", P["Scale"]()),
        "weight",
        lib.ones(2, 2, dtype=lib.float64),
    ),
    "remove_missing": lambda lib, P, m: lib.nn.utils.parametrize.remove_parametrizations(
        m, "weight"
    ),
    "weight_norm_missing": lambda lib, P, m: lib.nn.utils.parametrizations.weight_norm(
        m, name="foo"
    ),
    "spectral_norm_missing": lambda lib, P, m: lib.nn.utils.parametrizations.spectral_norm(
        m, name="foo"
    ),
    "spectral_norm_iterations": lambda lib, P, m: lib.nn.utils.parametrizations.spectral_norm(
        m, n_power_iterations=0
    ),
    "spectral_norm_dim": lambda lib, P, m: lib.nn.utils.parametrizations.spectral_norm(m, dim=2),
}


@pytest.mark.parametrize("case", list(REGISTER_ERRORS))
def test_register_errors_match_torch_and_leave_module_unchanged(case):
    def make(lib):
        torch.manual_seed(0)
        m = lib.nn.Linear(2, 2)
        try:
            REGISTER_ERRORS[case](lib, parametrizations_of(lib), m)
        finally:
            make.modules[lib.__name__] = m

    make.modules = {}
    same_err(make)
    cm = make.modules["chainrule"]
    if case.startswith(("set_", "remove_")):
        return
    assert type(cm) is chainrule.nn.Linear
    assert list(cm.state_dict()) == ["weight", "bias"]


APPEND_ERRORS = ["shape", "dtype", "not_tensor", "inverse_shape"]


@pytest.mark.parametrize("case", APPEND_ERRORS)
def test_append_errors_match_torch(case):
    def make(lib):
        m = lib.nn.Linear(2, 2)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", lib.nn.Identity())
        REGISTER_ERRORS[case](lib, parametrizations_of(lib), m)

    same_err(make)


def test_cached_computes_once():
    PM = chainrule.nn.utils.parametrize
    m = BUILDS["sym"](chainrule, parametrizations_of(chainrule))
    assert m.weight is not m.weight
    with PM.cached():
        a = m.weight
        with PM.cached():
            assert m.weight is a
        assert m.weight is a
    assert m.weight is not a


def test_serialization_only_through_state_dict():
    m = BUILDS["sym"](chainrule, parametrizations_of(chainrule))
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(m)
    m2 = copy.deepcopy(m)
    np.testing.assert_array_equal(m2.weight.detach().numpy(), m.weight.detach().numpy())
    assert m2.parametrizations.weight.original is not m.parametrizations.weight.original


def test_weight_norm_gradcheck():
    rng = np.random.default_rng(0)
    v = chainrule.tensor(rng.standard_normal((3, 4, 2)), requires_grad=True)
    g = chainrule.tensor(rng.uniform(0.5, 2, (3, 1, 1)), requires_grad=True)
    assert gradcheck(lambda v, g: _weight_norm(v, g, 0), (v, g))
    g0 = chainrule.tensor(1.5, dtype=chainrule.float64, requires_grad=True)
    assert gradcheck(lambda v, g: _weight_norm(v, g, -1), (v, g0))


# Hook forms -----------------------------------------------------------------------------------
def _old(lib: Any, kind: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        if kind == "weight_norm":
            return lib.nn.utils.weight_norm(lib.nn.Linear(3, 4))
        if kind == "weight_norm_dim_none":
            return lib.nn.utils.weight_norm(lib.nn.Conv1d(3, 4, 2), dim=None)
        if kind == "spectral_norm":
            return lib.nn.utils.spectral_norm(lib.nn.Linear(3, 4), n_power_iterations=3)
        return lib.nn.utils.spectral_norm(lib.nn.ConvTranspose1d(3, 4, 2))


OLD = ["weight_norm", "weight_norm_dim_none", "spectral_norm", "spectral_norm_convT"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", OLD)
def test_old_style_hooks_match_torch(kind, dtype):
    torch.manual_seed(0)
    tm, cm = _old(torch, kind).to(DT[dtype][1]), _old(chainrule, kind).to(DT[dtype][2])
    assert list(cm.state_dict()) == list(tm.state_dict())
    copy_weights(tm, cm)
    shape = (2, 3) if "convT" not in kind and "none" not in kind else (2, 3, 5)
    for mode in ("train", "train", "eval"):
        getattr(tm, mode)()
        getattr(cm, mode)()
        _check_forward_backward(tm, cm, dtype, shape)
        for k, v in tm.state_dict().items():
            close(cm.state_dict()[k], v, dtype, k)
    close(cm.weight, tm.weight, dtype, "weight attribute")
    rm = "remove_weight_norm" if kind.startswith("weight") else "remove_spectral_norm"
    getattr(torch.nn.utils, rm)(tm)
    getattr(chainrule.nn.utils, rm)(cm)
    assert list(cm.state_dict()) == list(tm.state_dict())
    assert isinstance(cm.weight, chainrule.nn.Parameter) and not cm._forward_pre_hooks
    close(cm.weight, tm.weight, dtype, "weight after remove")


def test_old_weight_norm_warns():
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        chainrule.nn.utils.weight_norm(chainrule.nn.Linear(2, 2))


OLD_ERRORS = {
    "weight_norm_twice": lambda lib: lib.nn.utils.weight_norm(_old(lib, "weight_norm")),
    "spectral_norm_twice": lambda lib: lib.nn.utils.spectral_norm(_old(lib, "spectral_norm")),
    "remove_weight_norm": lambda lib: lib.nn.utils.remove_weight_norm(lib.nn.Linear(3, 4)),
    "remove_spectral_norm": lambda lib: lib.nn.utils.remove_spectral_norm(lib.nn.Linear(3, 4)),
    "spectral_norm_iterations": lambda lib: lib.nn.utils.spectral_norm(
        lib.nn.Linear(3, 4), n_power_iterations=-1
    ),
}


@pytest.mark.parametrize("case", list(OLD_ERRORS))
def test_old_style_errors_match_torch(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        same_err(OLD_ERRORS[case])


# Orthogonal -----------------------------------------------------------------------------------
ORTHO = [
    ((3, 3), None, True),
    ((3, 3), "cayley", True),
    ((3, 3), "householder", True),
    ((5, 3), None, True),
    ((3, 5), "matrix_exp", True),
    ((4, 2), "cayley", True),
    ((5, 3), "householder", False),
    ((3, 4), "householder", False),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,omap,triv", ORTHO)
def test_orthogonal_matches_torch(shape, omap, triv, dtype):
    def build(lib):
        torch.manual_seed(0)
        m = lib.nn.Linear(shape[1], shape[0])
        with lib.no_grad():
            w = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
            m.weight.copy_(lib.tensor(w))
        m.to(DT[dtype][1] if lib is torch else DT[dtype][2])
        return lib.nn.utils.parametrizations.orthogonal(
            m, orthogonal_map=omap, use_trivialization=triv
        )

    tm, cm = build(torch), build(chainrule)
    assert list(cm.state_dict()) == list(tm.state_dict())
    if shape[0] == shape[1] or not triv:
        # Deterministic right_inverse (QR): the stored tensors agree without copying.
        for k, v in tm.state_dict().items():
            if k.startswith("parametrizations."):
                close(cm.state_dict()[k], v, dtype, k)
    copy_weights(tm, cm)
    _check_forward_backward(tm, cm, dtype, (2, shape[1]))
    w = cm.weight.detach().numpy().astype(np.float64)
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-5)
    if triv:
        # Assigning an orthogonal matrix stores it in base and sets original to -I.
        q = np.linalg.qr(np.random.default_rng(1).standard_normal((max(shape), min(shape))))[0]
        q = (q if shape[0] >= shape[1] else q.T).astype(DT[dtype][0])
        if shape[0] == shape[1]:
            tm.weight = torch.tensor(q)
            cm.weight = chainrule.tensor(q)
            for k, v in tm.state_dict().items():
                close(cm.state_dict()[k], v, dtype, k)
            close(cm.weight, torch.tensor(q), dtype, "assigned weight")


def test_orthogonal_gradcheck_and_errors():
    from chainrule.nn.utils._orthogonal import _Orthogonal

    rng = np.random.default_rng(0)
    for omap, shape in (("matrix_exp", (3, 3)), ("cayley", (4, 2)), ("householder", (2, 3))):
        p = _Orthogonal(chainrule.zeros(shape), omap, use_trivialization=False)
        x = rng.standard_normal(shape) * 0.5
        if omap == "householder":
            np.fill_diagonal(x, 1.5)  # signs +1, away from the jumps of the truncation
        xt = chainrule.tensor(x, requires_grad=True)
        assert gradcheck(p, (xt,))
    errors = {
        "map": lambda lib: lib.nn.utils.parametrizations.orthogonal(
            lib.nn.Linear(3, 3), orthogonal_map="foo"
        ),
        "vector": lambda lib: lib.nn.utils.parametrizations.orthogonal(
            lib.nn.Linear(3, 3), name="bias"
        ),
        "missing": lambda lib: lib.nn.utils.parametrizations.orthogonal(
            lib.nn.Linear(3, 3), name="foo"
        ),
        "assign_shape": lambda lib: setattr(
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 4)), "weight", lib.ones(3, 3)
        ),
        "assign_no_trivialization": lambda lib: setattr(
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), use_trivialization=False),
            "weight",
            lib.eye(3),
        ),
    }
    for make in errors.values():
        same_err(make)
