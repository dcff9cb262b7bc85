"""OpInfo rows for the shape family, chainrule/ops/shape/ (one table for its modules)."""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def _x(shape):
    return lambda rng: [Sample((rng.uniform(-1, 1, shape),))]


def _u(rng, *shape):
    return rng.uniform(-1, 1, shape)


def _nc(rng, *shape):
    """A non-contiguous (transposed) array of ``shape``."""
    return rng.uniform(-1, 1, shape[::-1]).T


class _F:
    """``m.nn.functional``, falling back to chainrule.ops.shape for ``pad``/``one_hot`` until
    chainrule.nn.functional re-exports them."""

    def __init__(self, m):
        self.m = m

    def __getattr__(self, name):
        f = getattr(self.m.nn.functional, name, None)
        if f is None:
            from chainrule.ops import shape

            f = getattr(shape, name)
        return f


OPS = [
    OpInfo(
        "reshape",
        lambda m, x: x.reshape(4, -1),
        ref=lambda x: x.reshape(4, -1),
        samples=lambda rng: [
            Sample((rng.uniform(-1, 1, (2, 6)),)),
            Sample((rng.uniform(-1, 1, (6, 2)).T,), name="noncontig"),
        ],
    ),
    OpInfo(
        "view", lambda m, x: x.view(3, 2, 2), ref=lambda x: x.reshape(3, 2, 2), samples=_x((2, 6))
    ),
    OpInfo(
        "flatten",
        lambda m, x: m.flatten(x, 1),
        ref=lambda x: x.reshape(2, -1),
        samples=_x((2, 3, 2)),
        covers=(),
    ),
    OpInfo(
        "flatten_args",
        lambda m, x, s, e: m.flatten(x, s, e),
        ref=None,
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 2, 3, 2), 0, -1), name="all"),
            Sample((_nc(rng, 2, 3, 4), -2, -1), name="noncontig"),
            Sample((_u(rng), 0, -1), name="0d"),
            Sample((_u(rng, 2, 3), 1, 1), name="same"),
        ],
    ),
    OpInfo(
        "transpose",
        lambda m, x: x.transpose(0, 2),
        ref=lambda x: np.swapaxes(x, 0, 2),
        samples=_x((2, 3, 4)),
    ),
    OpInfo(
        "transpose_neg",
        lambda m, x: x.transpose(-1, -3),
        ref=lambda x: np.swapaxes(x, 0, 2),
        samples=lambda rng: [
            Sample((_nc(rng, 2, 3, 4),), name="noncontig"),
            Sample((_u(rng, 1, 0, 2),), name="empty"),
        ],
        covers=(),
    ),
    OpInfo(
        "t",
        lambda m, x: x.t(),
        ref=lambda x: x.T,
        samples=lambda rng: [
            Sample((_u(rng, 2, 3),)),
            Sample((_u(rng, 3),), name="1d"),
            Sample((_u(rng),), name="0d"),
        ],
    ),
    OpInfo(
        "permute",
        lambda m, x: x.permute(2, 0, 1),
        ref=lambda x: np.transpose(x, (2, 0, 1)),
        samples=lambda rng: [
            Sample((_u(rng, 2, 3, 4),)),
            Sample((_nc(rng, 2, 1, 4),), name="noncontig_size1"),
        ],
    ),
    OpInfo(
        "permute_neg",
        lambda m, x: m.permute(x, (-1, 0, -2)),
        covers=(),
        ref=lambda x: np.transpose(x, (2, 0, 1)),
        samples=_x((2, 3, 4)),
    ),
    OpInfo("T", lambda m, x: x.T, ref=lambda x: x.T, samples=_x((2, 3)), covers=()),
    OpInfo(
        "squeeze",
        lambda m, x: x.squeeze(),
        ref=np.squeeze,
        samples=lambda rng: [Sample((_u(rng, 2, 1, 3, 1),)), Sample((_u(rng, 1),), name="1")],
    ),
    OpInfo(
        "squeeze_dim",
        lambda m, x: x.squeeze(1),
        ref=lambda x: np.squeeze(x, 1),
        samples=_x((2, 1, 3, 1)),
        covers=(),
    ),
    OpInfo(
        "squeeze_dims",
        lambda m, x: x.squeeze((0, -1)),
        ref=None,
        samples=_x((2, 1, 3, 1)),
        covers=(),
    ),
    OpInfo(
        "unsqueeze",
        lambda m, x: x.unsqueeze(-1),
        ref=lambda x: x[..., None],
        samples=lambda rng: [
            Sample((_u(rng, 2, 3),)),
            Sample((_u(rng),), name="0d"),
            Sample((_nc(rng, 2, 3),), name="noncontig"),
        ],
    ),
    OpInfo(
        "expand",
        lambda m, x: x.expand(4, 2, 3),
        ref=lambda x: np.broadcast_to(x, (4, 2, 3)),
        samples=lambda rng: [
            Sample((_u(rng, 2, 1),)),
            Sample((_u(rng, 1, 3),), name="row"),
            Sample((_u(rng, 2, 3),), name="lead_only"),
        ],
    ),
    OpInfo(
        "expand_neg1",
        lambda m, x: x.expand(-1, 3),
        ref=lambda x: np.broadcast_to(x, (2, 3)),
        samples=_x((2, 1)),
        covers=(),
    ),
    OpInfo(
        "expand_as",
        lambda m, x, o: x.expand_as(o),
        ref=lambda x, o: np.broadcast_to(x, o.shape),
        samples=lambda rng: [Sample((_u(rng, 3, 1), _u(rng, 2, 3, 4)), no_grad=(1,))],
        covers=(),
    ),
    OpInfo(
        "stack",
        lambda m, a, b: m.stack([a, b], 1),
        ref=lambda a, b: np.stack([a, b], 1),
        samples=lambda rng: [
            Sample((_u(rng, 2, 3), _u(rng, 2, 3))),
            Sample((_nc(rng, 2, 3), _u(rng, 2, 3)), name="noncontig"),
        ],
    ),
    OpInfo(
        "stack_neg",
        lambda m, a, b: m.stack((a, b), -1),
        ref=lambda a, b: np.stack([a, b], -1),
        samples=lambda rng: [
            Sample((_u(rng, 2), _u(rng, 2))),
            Sample((_u(rng), _u(rng)), name="0d"),
        ],
        covers=(),
    ),
    OpInfo(
        "unbind",
        lambda m, x: m.unbind(x, 1),
        ref=lambda x: tuple(np.moveaxis(x, 1, 0)),
        samples=lambda rng: [Sample((_u(rng, 2, 3),)), Sample((_nc(rng, 2, 3),), name="nc")],
    ),
    OpInfo(
        "unbind_method", lambda m, x: x.unbind(-1)[::2], ref=None, samples=_x((2, 3)), covers=()
    ),
    OpInfo("clone", lambda m, x: x.clone(), ref=np.copy, samples=_x((2, 3))),
    OpInfo(
        "to_dtype",
        lambda m, x: x.to(m.float32 if x.dtype == m.float64 else m.float64),
        ref=None,
        samples=_x((2, 3)),
        gradcheck=False,
        gradgradcheck=False,
    ),
    # New shape ops -------------------------------------------------------------------------
    OpInfo(
        "unflatten",
        lambda m, x, d, s: x.unflatten(d, s),
        ref=None,
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 2, 6), 1, (2, 3))),
            Sample((_u(rng, 2, 6), -1, (3, -1)), name="neg"),
            Sample((_nc(rng, 6, 2), 0, (3, 2)), name="noncontig"),
            Sample((_u(rng, 4, 0), 1, (0, 5)), name="empty"),
            Sample((_u(rng, 4), 0, (1, 4, 1)), name="size1"),
        ],
    ),
    OpInfo(
        "movedim",
        lambda m, x, s, d: m.movedim(x, s, d),
        ref=np.moveaxis,
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 2, 3, 4), 0, -1)),
            Sample((_u(rng, 2, 3, 4), (0, 1), (2, 0)), name="tuple"),
            Sample((_nc(rng, 2, 3, 1), -1, 0), name="noncontig"),
        ],
    ),
    OpInfo(
        "moveaxis",
        lambda m, x: x.moveaxis(1, 0),
        ref=lambda x: np.moveaxis(x, 1, 0),
        samples=_x((2, 3)),
        covers=(),
    ),
    OpInfo(
        "repeat",
        lambda m, x, r: x.repeat(*r),
        ref=lambda x, r: np.tile(x, r),
        samples=lambda rng: [
            Sample((_u(rng, 2, 3), (2, 1))),
            Sample((_u(rng, 2, 3), (2, 1, 3)), name="lead"),
            Sample((_nc(rng, 2, 1), (1, 3)), name="noncontig"),
            Sample((_u(rng), (2,)), name="0d"),
            Sample((_u(rng, 2), (0,)), name="zero"),
        ],
    ),
    OpInfo(
        "tile",
        lambda m, x, r: m.tile(x, r),
        ref=lambda x, r: np.tile(x, r),
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 2, 3), (2,))),
            Sample((_u(rng, 2, 3), (2, 1, 2)), name="lead"),
        ],
    ),
    OpInfo(
        "flip",
        lambda m, x, d: m.flip(x, d),
        ref=lambda x, d: np.flip(x, d),
        samples=lambda rng: [
            Sample((_u(rng, 2, 3, 4), (0, -1))),
            Sample((_nc(rng, 3, 4), (1,)), name="noncontig"),
            Sample((_u(rng, 3), ()), name="none"),
            Sample((_u(rng, 0, 2), (0,)), name="empty"),
        ],
    ),
    OpInfo(
        "flip_method",
        lambda m, x: x.flip(1),
        ref=lambda x: np.flip(x, 1),
        covers=(),
        samples=_x((2, 3)),
    ),
    OpInfo(
        "roll",
        lambda m, x, s, d: m.roll(x, s, d),
        ref=lambda x, s, d: np.roll(x, s, d),
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), 1, 0)),
            Sample((_u(rng, 3, 4), (2, -5), (1, 0)), name="multi"),
            Sample((_nc(rng, 3, 4), 3, None), name="flat"),
            Sample((_u(rng, 3, 4), -1, -1), name="neg"),
        ],
    ),
    OpInfo(
        "cat",
        lambda m, a, b, d: m.cat([a, b], d),
        ref=lambda a, b, d: np.concatenate([a, b], d),
        samples=lambda rng: [
            Sample((_u(rng, 2, 3), _u(rng, 1, 3), 0)),
            Sample((_u(rng, 2, 3), _nc(rng, 2, 2), -1), name="noncontig"),
            Sample((_u(rng, 2, 0), _u(rng, 2, 3), 1), name="empty"),
        ],
    ),
    OpInfo(
        "cat_three",
        lambda m, a, b, c: m.cat((a, b, c), 1),
        ref=None,
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 2, 1), _u(rng, 2, 2), _u(rng, 2, 3)))],
    ),
    OpInfo(
        "cat_legacy_empty",
        lambda m, a, b: m.cat([a, b]),
        ref=None,
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 0), _u(rng, 2, 3)))],
    ),
    OpInfo(
        "concat",
        lambda m, a, b: m.concat([a, b], dim=1),
        covers=(),
        ref=lambda a, b: np.concatenate([a, b], 1),
        samples=lambda rng: [Sample((_u(rng, 2, 3), _u(rng, 2, 1)))],
    ),
    OpInfo(
        "concatenate",
        lambda m, a, b: m.concatenate([a, b], axis=0),
        covers=(),
        ref=lambda a, b: np.concatenate([a, b], 0),
        samples=lambda rng: [Sample((_u(rng, 2, 3), _u(rng, 1, 3)))],
    ),
    OpInfo(
        "split",
        lambda m, x, s, d: m.split(x, s, d),
        ref=None,
        samples=lambda rng: [
            Sample((_u(rng, 5, 2), 2, 0)),
            Sample((_u(rng, 2, 5), [1, 4], -1), name="sizes"),
            Sample((_nc(rng, 4, 3), [3, 0, 1], 0), name="noncontig_zero"),
            Sample((_u(rng, 2, 3), 5, 1), name="big"),
        ],
    ),
    OpInfo("split_unused", lambda m, x: x.split(2)[1], ref=None, samples=_x((5, 2)), covers=()),
    OpInfo(
        "chunk",
        lambda m, x, c, d: m.chunk(x, c, d),
        ref=None,
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 5, 2), 2, 0)),
            Sample((_u(rng, 2, 6), 4, -1), name="uneven"),
            Sample((_u(rng, 0, 2), 3, 0), name="empty"),
        ],
    ),
    OpInfo(
        "narrow",
        lambda m, x, d, s, n: m.narrow(x, d, s, n),
        ref=None,
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), 1, 1, 2)),
            Sample((_u(rng, 3, 4), -2, -2, 2), name="neg"),
            Sample((_nc(rng, 3, 4), 0, 0, 0), name="empty"),
        ],
    ),
    OpInfo(
        "select",
        lambda m, x, d, i: m.select(x, d, i),
        ref=None,
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), 1, 2)),
            Sample((_u(rng, 3, 4), -1, -1), name="neg"),
            Sample((_nc(rng, 3, 4), 0, 1), name="noncontig"),
            Sample((_u(rng, 3), 0, 1), name="to0d"),
        ],
    ),
    OpInfo(
        "tril",
        lambda m, x, k: m.tril(x, k),
        ref=lambda x, k: np.tril(x, k),
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), 0)),
            Sample((_u(rng, 2, 3, 3), -1), name="batched"),
            Sample((_nc(rng, 4, 3), 2), name="noncontig"),
            Sample((_u(rng, 0, 3), 0), name="empty"),
        ],
    ),
    OpInfo(
        "triu",
        lambda m, x, k: x.triu(k),
        ref=lambda x, k: np.triu(x, k),
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), 1)),
            Sample((_u(rng, 2, 3, 3), -1), name="batched"),
            Sample((_nc(rng, 4, 3), 0), name="noncontig"),
        ],
    ),
    OpInfo(
        "diag",
        lambda m, x, k: m.diag(x, k),
        ref=lambda x, k: np.diag(x, k),
        samples=lambda rng: [
            Sample((_u(rng, 3), 0), name="embed"),
            Sample((_u(rng, 3), -1), name="embed_neg"),
            Sample((_u(rng, 3, 4), 1), name="extract"),
            Sample((_nc(rng, 3, 4), -2), name="extract_nc"),
            Sample((_u(rng, 2, 3), 5), name="extract_empty"),
        ],
    ),
    OpInfo(
        "diagonal",
        lambda m, x, o, a, b: m.diagonal(x, o, a, b),
        ref=lambda x, o, a, b: np.diagonal(x, o, a, b),
        covers=("diagonal", "diagonal_backward"),
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), 0, 0, 1)),
            Sample((_u(rng, 3, 4), -1, 1, 0), name="swapped"),
            Sample((_u(rng, 2, 3, 4), 1, -1, 0), name="3d"),
            Sample((_nc(rng, 3, 4, 2), 0, 0, 2), name="noncontig"),
            Sample((_u(rng, 3, 4), 9, 0, 1), name="empty"),
        ],
    ),
    OpInfo(
        "diagonal_method", lambda m, x: x.diagonal() * 2, ref=None, samples=_x((3, 3)), covers=()
    ),
    OpInfo(
        "pad_constant",
        lambda m, x, p, v: _F(m).pad(x, p, value=v),
        ref=None,
        covers=("constant_pad_nd",),
        samples=lambda rng: [
            Sample((_u(rng, 2, 3), (1, 2), 0.0)),
            Sample((_u(rng, 2, 3), (1, 0, 0, 2), 1.5), name="2dims"),
            Sample((_u(rng, 2, 3), (-1, 1, 1, -1), 0.0), name="negative"),
            Sample((_nc(rng, 2, 3, 2), (0, 1, 2, 0, 1, 1), 0.0), name="noncontig"),
        ],
    ),
    OpInfo(
        "pad_reflect",
        lambda m, x, p: _F(m).pad(x, p, mode="reflect"),
        ref=None,
        covers=("pad_gather", "index_grad"),
        samples=lambda rng: [
            Sample((_u(rng, 1, 2, 4), (2, 1))),
            Sample((_u(rng, 1, 3, 4), (1, 3, 2, 1)), name="2d"),
            Sample((_u(rng, 1, 1, 3, 3, 3), (1, 1, 2, 0, 0, 2)), name="3d"),
            Sample((_nc(rng, 2, 4), (3, 0)), name="unbatched_nc"),
        ],
    ),
    OpInfo(
        "pad_replicate",
        lambda m, x, p: _F(m).pad(x, p, mode="replicate"),
        ref=None,
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 1, 2, 3), (2, 4))),
            Sample((_u(rng, 2, 3, 2), (1, 0, 3, 1)), name="2d"),
        ],
    ),
    OpInfo(
        "pad_circular",
        lambda m, x, p: _F(m).pad(x, p, mode="circular"),
        ref=None,
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 1, 2, 3), (2, 1))),
            Sample((_u(rng, 1, 1, 3, 2), (1, 2, 3, 0)), name="2d"),
        ],
    ),
    OpInfo(
        "one_hot",
        lambda m, x, n: _F(m).one_hot(x, n),
        ref=None,
        differentiable=False,
        samples=lambda rng: [
            Sample((np.array([0, 2, 1, 2]), -1)),
            Sample((np.array([[0, 3], [1, 0]]), 5), name="2d"),
            Sample((np.array(1), 3), name="0d"),
            Sample((np.zeros((0,), dtype=np.int64), 3), name="empty"),
        ],
    ),
]
