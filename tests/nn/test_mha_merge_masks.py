"""MultiheadAttention.merge_masks against PyTorch's: merged values, shapes, dtypes, mask type."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import nn

B, L, E, H = 2, 3, 8, 4


def _mods():
    return nn.MultiheadAttention(E, H, batch_first=True), torch.nn.MultiheadAttention(
        E, H, batch_first=True
    )


def _mask(kind, shape, seed):
    rng = np.random.default_rng(seed)
    if kind == "bool":
        return rng.random(shape) > 0.5
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("attn", [None, "2d", "3d"])
@pytest.mark.parametrize("kpm", [None, "bool", "float"])
@pytest.mark.parametrize("attn_kind", ["bool", "float"])
def test_merge_masks(attn, kpm, attn_kind):
    m, t = _mods()
    q = np.zeros((B, L, E), np.float32)
    a = None
    if attn == "2d":
        a = _mask(attn_kind, (L, L), 1)
    elif attn == "3d":
        a = _mask(attn_kind, (B * H, L, L), 1)
    k = None if kpm is None else _mask(kpm, (B, L), 2)
    conv = lambda mod, x: None if x is None else mod.tensor(x)  # noqa: E731
    mc, tc = m.merge_masks(conv(cr, a), conv(cr, k), cr.tensor(q))
    mt, tt = t.merge_masks(conv(torch, a), conv(torch, k), torch.tensor(q))
    assert tc == tt
    if mt is None:
        assert mc is None
        return
    assert tuple(mc.shape) == tuple(mt.shape)
    assert str(mc.dtype).split(".")[-1] == str(mt.dtype).split(".")[-1]
    np.testing.assert_allclose(mc.numpy(), mt.numpy(), rtol=1e-6)
