"""The op table on the ``cuda`` device, played by the strict CuPy stand-in (tests/_fakecupy).

Each row's samples run twice in float64, once on the CPU and once with every input made on
``cuda``: the outputs must live on ``cuda`` and equal the CPU ones, and so must the gradients of
``sum(g * out)`` for a random ``g`` (made on the same device). The stand-in runs NumPy
underneath, so the two agree to rounding; what this checks is that every forward and VJP stays
on the device (no host array meets a device array, nothing is converted implicitly) and that
results come back on the right device.

Rows listed in ``NOT_ON_CUDA`` do not run on the stand-in yet; docs/gpu.md ("What is left")
names them, and ``test_not_on_cuda_list_is_current`` fails once one of them starts to pass, so
that the list only shrinks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule import backends
from tests.opinfo.core import OpInfo, Sample
from tests.opinfo.registry import all_rows

ROWS = all_rows()

# Rows whose ops do not yet run on a CUDA tensor (docs/gpu.md, "What is left"); each entry is a
# row name. Empty: every row of the table runs on the stand-in. It may only shrink.
NOT_ON_CUDA: frozenset[str] = frozenset()


def _cases() -> list[Any]:
    out = []
    for row in ROWS:
        if row.name in NOT_ON_CUDA:
            continue
        for i, s in enumerate(row.samples(np.random.default_rng(1234))):
            out.append(pytest.param(row, s, id=f"{row.name}-{s.name or i}"))
    return out


def _host(t: Any) -> Any:
    d = t._data
    return backends.backend_of(d).to_host(d)


def _flat(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(_flat(o))
        return res
    return [out]


def run_on(row: OpInfo, sample: Sample, device: str) -> tuple[list[Any], list[Any]]:
    """The row's outputs and the gradients of sum(g * out) for its differentiable inputs, with
    the sample's arrays made on ``device`` (float64)."""
    args: list[Any] = []
    diff: list[int] = []
    for i, a in enumerate(sample.args):
        if isinstance(a, np.ndarray):
            if a.dtype.kind == "f":
                rg = row.differentiable and i not in sample.no_grad
                args.append(cr.tensor(a.astype("float64"), requires_grad=rg, device=device))
                if rg:
                    diff.append(i)
            else:
                args.append(cr.tensor(a, device=device))
        else:
            args.append(a)
    out = _flat(row.call(cr, *args, **sample.kwargs))
    roots = [o for o in out if isinstance(o, cr.Tensor) and o.requires_grad]
    grads: list[Any] = []
    if roots and diff:
        rng = np.random.default_rng(7)
        gs = [cr.tensor(rng.uniform(-1, 1, tuple(o.shape)), device=device) for o in roots]
        grads = list(cr.autograd.grad(roots, [args[i] for i in diff], gs, allow_unused=True))
    return out, grads


def check_on_cuda(row: OpInfo, sample: Sample) -> None:
    """Assert that ``row`` on ``sample`` gives on ``cuda`` what it gives on the CPU."""
    c_out, c_grads = run_on(row, sample, "cpu")
    g_out, g_grads = run_on(row, sample, "cuda")
    # A row without array inputs (a factory such as tril_indices) makes CPU tensors.
    where = "cuda" if any(isinstance(a, np.ndarray) for a in sample.args) else "cpu"
    assert len(c_out) == len(g_out)
    for k, (c, g) in enumerate(zip(c_out + c_grads, g_out + g_grads)):
        what = f"output {k}" if k < len(c_out) else f"gradient {k - len(c_out)}"
        if not isinstance(c, cr.Tensor):
            if c is None:
                assert g is None, what
            else:
                assert not isinstance(g, cr.Tensor) and c == g, what
            continue
        assert isinstance(g, cr.Tensor), what
        assert g.device.type == where, f"{what} is on {g.device}"
        assert g.dtype == c.dtype and tuple(g.shape) == tuple(c.shape), what
        np.testing.assert_allclose(
            _host(g), _host(c), rtol=1e-7, atol=1e-9, equal_nan=True, err_msg=what
        )


@pytest.mark.parametrize("row,sample", _cases())
def test_op_on_cuda_matches_cpu(row: OpInfo, sample: Sample, fake_cuda: Any) -> None:
    check_on_cuda(row, sample)


def test_not_on_cuda_list_is_current(fake_cuda: Any) -> None:
    """Every row in NOT_ON_CUDA still fails on the stand-in, and names a row of the table."""
    names = {r.name for r in ROWS}
    assert NOT_ON_CUDA <= names, sorted(NOT_ON_CUDA - names)
    passing = []
    for row in ROWS:
        if row.name not in NOT_ON_CUDA:
            continue
        try:
            for s in row.samples(np.random.default_rng(1234)):
                check_on_cuda(row, s)
        except Exception:
            continue
        passing.append(row.name)
    assert not passing, f"these rows now run on cuda; remove them from NOT_ON_CUDA: {passing}"
