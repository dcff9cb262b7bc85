"""The distributions of tests/distributions/test_against_torch.py on the ``cuda`` stand-in:
``sample``, ``log_prob`` of it, ``rsample``, ``entropy`` and ``mean`` (where defined) must be on
``cuda`` and equal the CPU's under one seed (draws are made on the host, Note [draws on the
host] in chainrule/distributions/utils.py).

``NOT_ON_CUDA`` names the specs that do not run there yet (docs/gpu.md, "What is left");
``test_not_on_cuda_list_is_current`` fails once one of them passes, so the list only shrinks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
import chainrule.distributions as CD
from chainrule import backends
from tests.distributions.test_against_torch import SPECS

NOT_ON_CUDA: frozenset[str] = frozenset()


def _host(t: Any) -> np.ndarray:
    return backends.backend_of(t._data).to_host(t._data)


def _outputs(spec: tuple[Any, ...], device: str) -> list[np.ndarray]:
    _, ctor, params = spec
    ts = [cr.tensor(p, dtype=cr.float64, requires_grad=True, device=device) for p in params]
    dist = ctor(CD, *ts)
    cr.manual_seed(0)
    s = dist.sample((3,))
    out = [s, dist.log_prob(s)]
    if dist.has_rsample:
        cr.manual_seed(1)
        out.append(dist.rsample((2,)))
    for stat in ("entropy", "mean"):
        try:
            out.append(dist.entropy() if stat == "entropy" else dist.mean)
        except NotImplementedError:
            pass
    for o in out:
        assert o.device.type == device, (spec[0], o.device)
    return [_host(o.detach()) for o in out]


def _check(spec: tuple[Any, ...]) -> None:
    for a, b in zip(_outputs(spec, "cpu"), _outputs(spec, "cuda")):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("spec", [s for s in SPECS if s[0] not in NOT_ON_CUDA], ids=lambda s: s[0])
def test_distribution_on_cuda_matches_cpu(spec: tuple[Any, ...], fake_cuda: Any) -> None:
    _check(spec)


def test_not_on_cuda_list_is_current(fake_cuda: Any) -> None:
    names = {s[0] for s in SPECS}
    assert NOT_ON_CUDA <= names, sorted(NOT_ON_CUDA - names)
    passing = []
    for spec in SPECS:
        if spec[0] in NOT_ON_CUDA:
            try:
                _check(spec)
            except Exception:
                continue
            passing.append(spec[0])
    assert not passing, f"these now run on cuda; remove them from NOT_ON_CUDA: {passing}"
