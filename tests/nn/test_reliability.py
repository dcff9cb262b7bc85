"""nn reliability against PyTorch (issue 12, defects 5, 7 and 10).

- A table of bad calls to nn.functional and nn layers: each must raise the exception type
  PyTorch raises, with PyTorch's text (chainrule may add a hint after it). Before the fixes
  these were silently accepted (mixed dtypes, int32 targets, windows larger than the input) or
  leaked NumPy's errors (a wrong conv bias, BatchNorm with the wrong channel count).
- Layers on an empty batch: the same output shape and dtype as PyTorch, and a backward that
  gives the same gradient shapes (zeros for the parameters).
- ``Module.load_state_dict``: a bad entry is refused before anything changes, naming its key.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

F32, F64 = "float32", "float64"


def _t(m, *shape, dtype=F32):
    n = int(np.prod(shape))
    a = (np.arange(n, dtype=np.float64).reshape(shape) + 1) / (n + 1)
    return m.tensor(a.astype(dtype))


def _idx(m, values, dtype):
    return m.tensor(np.array(values, dtype=dtype))


def _F(m):
    return m.nn.functional


BAD_CALLS = {
    # mixed dtypes in linear layers (torch computes linear with bias as addmm(b, x, W^T))
    "linear-x64-w32": lambda m: _F(m).linear(_t(m, 2, 3, dtype=F64), _t(m, 4, 3)),
    "linear-x32-w64": lambda m: _F(m).linear(_t(m, 2, 3), _t(m, 4, 3, dtype=F64)),
    "linear-x64-w32-b32": lambda m: _F(m).linear(_t(m, 2, 3, dtype=F64), _t(m, 4, 3), _t(m, 4)),
    "linear-x32-w64-b64": lambda m: _F(m).linear(
        _t(m, 2, 3), _t(m, 4, 3, dtype=F64), _t(m, 4, dtype=F64)
    ),
    "linear-b64": lambda m: _F(m).linear(_t(m, 2, 3), _t(m, 4, 3), _t(m, 4, dtype=F64)),
    "linear-3d-x64": lambda m: _F(m).linear(_t(m, 5, 2, 3, dtype=F64), _t(m, 4, 3)),
    "linear-1d-x64-b32": lambda m: _F(m).linear(_t(m, 3, dtype=F64), _t(m, 4, 3), _t(m, 4)),
    "Linear-x64": lambda m: m.nn.Linear(3, 4)(_t(m, 2, 3, dtype=F64)),
    "Linear-0d": lambda m: m.nn.Linear(3, 4)(_t(m)),
    "Linear-in_features": lambda m: m.nn.Linear(3, 4)(_t(m, 2, 5)),
    "linear-weight-3d": lambda m: _F(m).linear(_t(m, 2, 3), _t(m, 1, 4, 3)),
    # mixed dtypes in convolutions: the bias is checked first, then input against weight
    "conv2d-x64": lambda m: _F(m).conv2d(_t(m, 1, 2, 5, 5, dtype=F64), _t(m, 3, 2, 3, 3)),
    "conv2d-w64": lambda m: _F(m).conv2d(_t(m, 1, 2, 5, 5), _t(m, 3, 2, 3, 3, dtype=F64)),
    "conv2d-b64": lambda m: _F(m).conv2d(_t(m, 1, 2, 5, 5), _t(m, 3, 2, 3, 3), _t(m, 3, dtype=F64)),
    "conv2d-x64-b64": lambda m: _F(m).conv2d(
        _t(m, 1, 2, 5, 5, dtype=F64), _t(m, 3, 2, 3, 3), _t(m, 3, dtype=F64)
    ),
    "conv2d-unbatched-x64": lambda m: _F(m).conv2d(_t(m, 2, 5, 5, dtype=F64), _t(m, 3, 2, 3, 3)),
    "conv1d-x64": lambda m: _F(m).conv1d(_t(m, 1, 2, 5, dtype=F64), _t(m, 3, 2, 3)),
    "conv1d-b64": lambda m: _F(m).conv1d(_t(m, 1, 2, 5), _t(m, 3, 2, 3), _t(m, 3, dtype=F64)),
    "conv_transpose2d-x64": lambda m: _F(m).conv_transpose2d(
        _t(m, 1, 2, 5, 5, dtype=F64), _t(m, 2, 3, 3, 3)
    ),
    "conv_transpose2d-w64-b32": lambda m: _F(m).conv_transpose2d(
        _t(m, 1, 2, 5, 5), _t(m, 2, 3, 3, 3, dtype=F64), _t(m, 3)
    ),
    "Conv2d-x64": lambda m: m.nn.Conv2d(2, 3, 3)(_t(m, 1, 2, 5, 5, dtype=F64)),
    "Conv1d-x64": lambda m: m.nn.Conv1d(2, 3, 3, bias=False)(_t(m, 1, 2, 5, dtype=F64)),
    "ConvTranspose2d-x64": lambda m: m.nn.ConvTranspose2d(2, 3, 3)(_t(m, 1, 2, 5, 5, dtype=F64)),
    # a wrong conv bias (was NumPy's "cannot reshape array")
    "conv2d-bias-size": lambda m: _F(m).conv2d(_t(m, 1, 2, 5, 5), _t(m, 3, 2, 3, 3), _t(m, 2)),
    "conv2d-bias-2d": lambda m: _F(m).conv2d(_t(m, 1, 2, 5, 5), _t(m, 3, 2, 3, 3), _t(m, 3, 1)),
    "conv2d-bias-0d": lambda m: _F(m).conv2d(_t(m, 1, 2, 5, 5), _t(m, 3, 2, 3, 3), _t(m)),
    "conv1d-bias-size": lambda m: _F(m).conv1d(_t(m, 1, 2, 5), _t(m, 3, 2, 3), _t(m, 4)),
    "conv_transpose2d-bias": lambda m: _F(m).conv_transpose2d(
        _t(m, 1, 2, 5, 5), _t(m, 2, 3, 3, 3), _t(m, 2)
    ),
    "conv_transpose2d-bias-groups": lambda m: _F(m).conv_transpose2d(
        _t(m, 1, 2, 5, 5), _t(m, 2, 3, 3, 3), _t(m, 3), groups=2
    ),
    # wrong input rank or channels for conv layers
    "Conv2d-2d-input": lambda m: m.nn.Conv2d(2, 3, 3)(_t(m, 5, 5)),
    "Conv2d-5d-input": lambda m: m.nn.Conv2d(2, 3, 3)(_t(m, 1, 1, 2, 5, 5)),
    "Conv2d-channels": lambda m: m.nn.Conv2d(2, 3, 3)(_t(m, 1, 3, 5, 5)),
    "Conv2d-kernel-too-big": lambda m: m.nn.Conv2d(2, 3, 3)(_t(m, 1, 2, 2, 2)),
    "Conv1d-4d-input": lambda m: m.nn.Conv1d(2, 3, 3)(_t(m, 1, 2, 5, 5)),
    # class-index targets must be int64 (or uint8)
    "cross_entropy-int32": lambda m: _F(m).cross_entropy(_t(m, 3, 4), _idx(m, [0, 1, 2], np.int32)),
    "cross_entropy-int16": lambda m: _F(m).cross_entropy(_t(m, 3, 4), _idx(m, [0, 1, 2], np.int16)),
    "nll_loss-int32": lambda m: _F(m).nll_loss(_t(m, 3, 4), _idx(m, [0, 1, 2], np.int32)),
    "CrossEntropyLoss-int32": lambda m: m.nn.CrossEntropyLoss()(
        _t(m, 3, 4), _idx(m, [0, 1, 2], np.int32)
    ),
    "cross_entropy-target-batch": lambda m: _F(m).cross_entropy(
        _t(m, 3, 4), _idx(m, [0, 1], np.int64)
    ),
    "cross_entropy-target-2d": lambda m: _F(m).cross_entropy(
        _t(m, 3, 4), _idx(m, [[0, 1]] * 3, np.int64)
    ),
    "cross_entropy-target-out-of-range": lambda m: _F(m).cross_entropy(
        _t(m, 3, 4), _idx(m, [0, 1, 4], np.int64)
    ),
    "binary_cross_entropy-target-f64": lambda m: _F(m).binary_cross_entropy(
        _t(m, 3, 4), _t(m, 3, 4, dtype=F64)
    ),
    "binary_cross_entropy-target-int": lambda m: _F(m).binary_cross_entropy(
        _t(m, 3, 4), _idx(m, np.zeros((3, 4)), np.int64)
    ),
    # wrong target shapes for the losses (torch's texts per input rank)
    "nll_loss-4d-target-shape": lambda m: _F(m).nll_loss(
        _t(m, 2, 3, 4, 4), _idx(m, np.zeros((2, 4, 3)), np.int64)
    ),
    "nll_loss-4d-target-2d": lambda m: _F(m).nll_loss(
        _t(m, 2, 3, 4, 4), _idx(m, np.zeros((2, 16)), np.int64)
    ),
    "cross_entropy-4d-target-shape": lambda m: _F(m).cross_entropy(
        _t(m, 2, 3, 4, 4), _idx(m, np.zeros((2, 4, 3)), np.int64)
    ),
    "nll_loss-3d-target-shape": lambda m: _F(m).nll_loss(
        _t(m, 2, 3, 4), _idx(m, np.zeros((2, 5)), np.int64)
    ),
    "nll_loss-5d-target-rank": lambda m: _F(m).nll_loss(
        _t(m, 2, 3, 4, 4, 2), _idx(m, np.zeros((2, 4, 4)), np.int64)
    ),
    "nll_loss-1d-input-target-size": lambda m: _F(m).nll_loss(_t(m, 3), _idx(m, [0, 1], np.int64)),
    "nll_loss-0d-target": lambda m: _F(m).nll_loss(_t(m, 2, 3), _idx(m, 1, np.int64)),
    "nll_loss-target-batch": lambda m: _F(m).nll_loss(
        _t(m, 2, 3, 4, 4), _idx(m, np.zeros((3, 4, 4)), np.int64)
    ),
    "cross_entropy-0d-input": lambda m: _F(m).cross_entropy(_t(m), _idx(m, 1, np.int64)),
    "binary_cross_entropy_with_logits-shape": lambda m: _F(m).binary_cross_entropy_with_logits(
        _t(m, 2, 3), _t(m, 2, 4)
    ),
    # pooling windows that fit nowhere (was an empty result) and bad pooling arguments
    "max_pool2d-kernel>input": lambda m: _F(m).max_pool2d(_t(m, 1, 1, 2, 2), 3),
    "max_pool2d-kernel>input-unbatched": lambda m: _F(m).max_pool2d(_t(m, 1, 2, 2), 3),
    "max_pool2d-one-axis": lambda m: _F(m).max_pool2d(_t(m, 2, 3, 3, 2), 3),
    "max_pool2d-dilation": lambda m: _F(m).max_pool2d(_t(m, 1, 1, 4, 4), 2, dilation=4),
    "max_pool2d-stride-0": lambda m: _F(m).max_pool2d(_t(m, 1, 1, 4, 4), 2, stride=0),
    "max_pool2d-kernel-0": lambda m: _F(m).max_pool2d(_t(m, 1, 1, 4, 4), 0),
    "max_pool2d-kernel-neg": lambda m: _F(m).max_pool2d(_t(m, 1, 1, 4, 4), (2, -1)),
    "max_pool2d-stride-neg": lambda m: _F(m).max_pool2d(_t(m, 1, 1, 4, 4), 2, stride=-1),
    "max_pool2d-pad-neg": lambda m: _F(m).max_pool2d(_t(m, 1, 1, 4, 4), 2, padding=(0, -1)),
    "max_pool2d-dilation-0": lambda m: _F(m).max_pool2d(_t(m, 1, 1, 4, 4), 2, dilation=0),
    "max_pool2d-pad>half-dilated": lambda m: _F(m).max_pool2d(
        _t(m, 1, 1, 8, 8), 2, padding=2, dilation=3
    ),
    "max_pool2d-empty-plane": lambda m: _F(m).max_pool2d(_t(m, 1, 1, 0, 4), 1),
    "MaxPool2d-kernel>input": lambda m: m.nn.MaxPool2d(5)(_t(m, 2, 3, 4, 4)),
    "avg_pool2d-kernel>input": lambda m: _F(m).avg_pool2d(_t(m, 1, 1, 2, 2), 3),
    "avg_pool2d-kernel>padded": lambda m: _F(m).avg_pool2d(_t(m, 1, 1, 2, 2), 5, padding=1),
    "avg_pool2d-stride-0": lambda m: _F(m).avg_pool2d(_t(m, 1, 1, 4, 4), 2, stride=0),
    "avg_pool2d-pad>half": lambda m: _F(m).avg_pool2d(_t(m, 1, 1, 4, 4), 2, padding=2),
    "avg_pool2d-zero-channels": lambda m: _F(m).avg_pool2d(_t(m, 1, 0, 4, 4), 2),
    "AvgPool2d-kernel>input": lambda m: m.nn.AvgPool2d(5)(_t(m, 2, 3, 4, 4)),
    # normalisation layers: wrong channel count (was NumPy's broadcast error) and mixed dtypes
    "BatchNorm2d-channels": lambda m: m.nn.BatchNorm2d(3)(_t(m, 2, 4, 4, 4)),
    "BatchNorm1d-channels": lambda m: m.nn.BatchNorm1d(3)(_t(m, 2, 4)),
    "BatchNorm1d-one-value": lambda m: m.nn.BatchNorm1d(3)(_t(m, 1, 3)),
    "batch_norm-stats-size": lambda m: _F(m).batch_norm(_t(m, 2, 3, 2, 2), _t(m, 4), _t(m, 4)),
    "BatchNorm2d-x64": lambda m: m.nn.BatchNorm2d(3)(_t(m, 2, 3, 2, 2, dtype=F64)),
    "BatchNorm2d-eval-x64": lambda m: m.nn.BatchNorm2d(3).eval()(_t(m, 2, 3, 2, 2, dtype=F64)),
    "batch_norm-stats-f64": lambda m: _F(m).batch_norm(
        _t(m, 2, 3), _t(m, 3, dtype=F64), _t(m, 3, dtype=F64)
    ),
    "LayerNorm-x64": lambda m: m.nn.LayerNorm(3)(_t(m, 2, 3, dtype=F64)),
    "layer_norm-weight-f64": lambda m: _F(m).layer_norm(_t(m, 2, 3), (3,), _t(m, 3, dtype=F64)),
    "GroupNorm-x64": lambda m: m.nn.GroupNorm(1, 3)(_t(m, 2, 3, 2, dtype=F64)),
    "LayerNorm-shape": lambda m: m.nn.LayerNorm(4)(_t(m, 2, 3)),
    "GroupNorm-divisible": lambda m: m.nn.GroupNorm(2, 4)(_t(m, 2, 3, 2)),
    # conv and pooling arguments of the wrong length or value
    "conv2d-stride-3": lambda m: _F(m).conv2d(
        _t(m, 1, 2, 5, 5), _t(m, 3, 2, 3, 3), stride=(1, 1, 1)
    ),
    "conv2d-padding-3": lambda m: _F(m).conv2d(
        _t(m, 1, 2, 5, 5), _t(m, 3, 2, 3, 3), padding=(1, 1, 1)
    ),
    "conv2d-dilation-0": lambda m: _F(m).conv2d(_t(m, 1, 2, 5, 5), _t(m, 3, 2, 3, 3), dilation=0),
    "conv2d-dilation-neg": lambda m: _F(m).conv2d(
        _t(m, 1, 2, 5, 5), _t(m, 3, 2, 3, 3), dilation=(1, -1)
    ),
    "conv2d-padding-string": lambda m: _F(m).conv2d(
        _t(m, 1, 2, 5, 5), _t(m, 3, 2, 3, 3), padding="full"
    ),
    "conv1d-stride-2": lambda m: _F(m).conv1d(_t(m, 1, 2, 5), _t(m, 3, 2, 3), stride=(1, 1)),
    "conv_transpose2d-output_padding-3": lambda m: _F(m).conv_transpose2d(
        _t(m, 1, 2, 5, 5), _t(m, 2, 3, 3, 3), output_padding=(0, 0, 0)
    ),
    "max_pool2d-kernel-3": lambda m: _F(m).max_pool2d(_t(m, 1, 1, 4, 4), (2, 2, 2)),
    "max_pool2d-stride-3": lambda m: _F(m).max_pool2d(_t(m, 1, 1, 4, 4), 2, stride=(1, 1, 1)),
    "max_pool2d-padding-3": lambda m: _F(m).max_pool2d(_t(m, 1, 1, 4, 4), 2, padding=(1, 1, 1)),
    "max_pool2d-dilation-3": lambda m: _F(m).max_pool2d(_t(m, 1, 1, 4, 4), 2, dilation=(1, 1, 1)),
    "max_pool2d-kernel-float": lambda m: _F(m).max_pool2d(_t(m, 1, 1, 4, 4), 2.5),
    "avg_pool2d-kernel-3": lambda m: _F(m).avg_pool2d(_t(m, 1, 1, 4, 4), (2, 2, 2)),
    "avg_pool2d-stride-3": lambda m: _F(m).avg_pool2d(_t(m, 1, 1, 4, 4), 2, stride=(2, 2, 2)),
    "adaptive_avg_pool2d-negative": lambda m: _F(m).adaptive_avg_pool2d(_t(m, 1, 1, 4, 4), -1),
    "adaptive_avg_pool2d-2d-input": lambda m: _F(m).adaptive_avg_pool2d(_t(m, 4, 4), 2),
    "adaptive_avg_pool2d-5d-input": lambda m: _F(m).adaptive_avg_pool2d(_t(m, 1, 1, 1, 4, 4), 2),
    "adaptive_avg_pool2d-empty-plane": lambda m: _F(m).adaptive_avg_pool2d(_t(m, 1, 1, 0, 4), 2),
    "adaptive_max_pool2d-2d-input": lambda m: _F(m).adaptive_max_pool2d(_t(m, 4, 4), 2),
    "adaptive_max_pool2d-empty-plane": lambda m: _F(m).adaptive_max_pool2d(_t(m, 1, 1, 0, 4), 2),
    "adaptive_max_pool2d-negative": lambda m: _F(m).adaptive_max_pool2d(_t(m, 1, 1, 4, 4), -1),
    # norms: parameter shapes, ranks and integer inputs
    "layer_norm-weight-shape": lambda m: _F(m).layer_norm(_t(m, 2, 3), (3,), _t(m, 4)),
    "layer_norm-bias-shape": lambda m: _F(m).layer_norm(_t(m, 2, 3), (3,), None, _t(m, 4)),
    "group_norm-weight-shape": lambda m: _F(m).group_norm(_t(m, 2, 4, 2), 2, _t(m, 3)),
    "group_norm-1d": lambda m: _F(m).group_norm(_t(m, 4), 2),
    "batch_norm-int": lambda m: _F(m).batch_norm(
        _idx(m, np.ones((2, 3)), np.int64), _t(m, 3), _t(m, 3)
    ),
    "layer_norm-int": lambda m: _F(m).layer_norm(_idx(m, np.ones((2, 3)), np.int64), (3,)),
    "group_norm-int": lambda m: _F(m).group_norm(_idx(m, np.ones((2, 3)), np.int64), 1),
    "cross_entropy-probs-weight-shape": lambda m: _F(m).cross_entropy(
        _t(m, 2, 3), _t(m, 2, 3), weight=_t(m, 4)
    ),
    "softmax-int-dim0": lambda m: _F(m).softmax(_idx(m, np.ones((2, 3)), np.int64), 0),
    "log_softmax-int": lambda m: _F(m).log_softmax(_idx(m, np.ones((2, 3)), np.int64), 1),
    "pixel_shuffle-2d": lambda m: _F(m).pixel_shuffle(_t(m, 4, 2), 2),
    "pixel_unshuffle-2d": lambda m: _F(m).pixel_unshuffle(_t(m, 4, 2), 2),
    "Embedding-negative-index": lambda m: m.nn.Embedding(5, 3)(_idx(m, [-1], np.int64)),
    "Embedding-index-too-big": lambda m: m.nn.Embedding(5, 3)(_idx(m, [0, 5], np.int64)),
    # non-Tensor arguments (was AttributeError: 'list' object has no attribute 'ndim')
    "linear-list": lambda m: _F(m).linear([[1.0, 2.0, 3.0]], _t(m, 4, 3)),
    "Linear-ndarray": lambda m: m.nn.Linear(3, 4)(np.ones((2, 3), np.float32)),
    "Linear-None": lambda m: m.nn.Linear(3, 4)(None),
    "linear-bias-list": lambda m: _F(m).linear(_t(m, 2, 3), _t(m, 4, 3), [1.0, 2.0, 3.0, 4.0]),
    "Embedding-list": lambda m: m.nn.Embedding(5, 3)([1, 2]),
    "cross_entropy-list-target": lambda m: _F(m).cross_entropy(_t(m, 2, 3), [0, 1]),
    "cross_entropy-ndarray-input": lambda m: _F(m).cross_entropy(
        np.ones((2, 3)), _idx(m, [0, 1], np.int64)
    ),
    "nll_loss-list-target": lambda m: _F(m).nll_loss(_t(m, 2, 3), [0, 1]),
    "max_pool2d-ndarray": lambda m: _F(m).max_pool2d(np.ones((1, 1, 4, 4), np.float32), 2),
    "avg_pool2d-ndarray": lambda m: _F(m).avg_pool2d(np.ones((1, 1, 4, 4), np.float32), 2),
    "BatchNorm2d-momentum-str": lambda m: m.nn.BatchNorm2d(2, momentum="a")(_t(m, 2, 2, 2, 2)),
    "mse_loss-int": lambda m: _F(m).mse_loss(_idx(m, [1, 2], np.int64), _idx(m, [1, 2], np.int64)),
    "smooth_l1_loss-int": lambda m: _F(m).smooth_l1_loss(
        _idx(m, [1, 2], np.int64), _idx(m, [1, 2], np.int64), reduction="sum"
    ),
    "huber_loss-int": lambda m: _F(m).huber_loss(
        _idx(m, [1, 2], np.int64), _idx(m, [1, 2], np.int64), reduction="none"
    ),
    # other layers
    "interpolate-2d-input": lambda m: _F(m).interpolate(_t(m, 2, 3), scale_factor=2),
    "Embedding-float-indices": lambda m: m.nn.Embedding(5, 3)(_t(m, 2)),
    "softmax-dim": lambda m: _F(m).softmax(_t(m, 2, 3), dim=2),
}


# torch's text here is its long "invalid combination of arguments" listing; the type and its
# head must match.
PREFIX_ONLY = {
    "Conv2d-ndarray": lambda m: m.nn.Conv2d(2, 3, 3)(np.ones((1, 2, 5, 5), np.float32)),
    "conv2d-ndarray-weight": lambda m: _F(m).conv2d(_t(m, 1, 2, 5, 5), np.ones((3, 2, 3, 3))),
    "conv2d-stride-str": lambda m: _F(m).conv2d(_t(m, 1, 2, 5, 5), _t(m, 3, 2, 3, 3), stride="a"),
    "conv2d-stride-float": lambda m: _F(m).conv2d(_t(m, 1, 2, 5, 5), _t(m, 3, 2, 3, 3), stride=1.5),
}


@pytest.mark.parametrize("name", list(PREFIX_ONLY))
def test_bad_argument_type_is_torchs_type_error(name):
    want = _failure(torch, PREFIX_ONLY[name])
    got = _failure(cr, PREFIX_ONLY[name])
    assert want is not None and got is not None
    assert got[0] is want[0] is TypeError
    head = want[1].split(" - got")[0]
    assert got[1].startswith(head + " - got"), got[1]


def _failure(m, f):
    try:
        f(m)
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return type(e), str(e).replace("chainrule.", "torch.")
    return None


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_bad_call_fails_as_in_torch(name):
    f = BAD_CALLS[name]
    want = _failure(torch, f)
    assert want is not None, "the case should fail in PyTorch"
    got = _failure(cr, f)
    assert got is not None, f"chainrule accepted it; PyTorch raises {want[0].__name__}: {want[1]}"
    assert got[0] is want[0], f"{got[0].__name__}: {got[1]}\nPyTorch: {want[0].__name__}"
    assert want[1] in got[1], f"chainrule: {got[1]}\nPyTorch:   {want[1]}"


def _x(m, *shape):
    return m.zeros(*shape, requires_grad=True)


def _layer(cls, *args, **kw):
    return lambda m, x: getattr(m.nn, cls)(*args, **kw)(x)


# (input shape, call); every case starts from the same seed so the layers' parameters agree.
EMPTY_BATCH = {
    "conv2d": ((0, 2, 5, 5), lambda m, x: _F(m).conv2d(x, m.ones(3, 2, 3, 3), m.ones(3))),
    "conv2d-stride2": ((0, 2, 5, 5), lambda m, x: _F(m).conv2d(x, m.ones(3, 2, 3, 3), stride=2)),
    "conv2d-groups": ((0, 4, 5, 5), lambda m, x: _F(m).conv2d(x, m.ones(4, 2, 3, 3), groups=2)),
    "conv2d-wide": ((0, 8, 5, 5), lambda m, x: _F(m).conv2d(x, m.ones(8, 8, 3, 3), padding=1)),
    "conv1d": ((0, 2, 5), lambda m, x: _F(m).conv1d(x, m.ones(3, 2, 3))),
    "conv_transpose2d": (
        (0, 2, 5, 5),
        lambda m, x: _F(m).conv_transpose2d(x, m.ones(2, 3, 3, 3), stride=2),
    ),
    "conv_transpose2d-s1": (
        (0, 2, 5, 5),
        lambda m, x: _F(m).conv_transpose2d(x, m.ones(2, 3, 3, 3)),
    ),
    "Conv2d": ((0, 2, 5, 5), _layer("Conv2d", 2, 3, 3)),
    "Conv2d-reflect": ((0, 2, 5, 5), _layer("Conv2d", 2, 3, 3, padding=1, padding_mode="reflect")),
    "Conv1d": ((0, 2, 5), _layer("Conv1d", 2, 3, 3)),
    "ConvTranspose2d": ((0, 2, 5, 5), _layer("ConvTranspose2d", 2, 3, 3)),
    "max_pool2d": ((0, 2, 4, 4), lambda m, x: _F(m).max_pool2d(x, 2)),
    "max_pool2d-pad": ((0, 2, 4, 4), lambda m, x: _F(m).max_pool2d(x, 3, stride=1, padding=1)),
    "avg_pool2d": ((0, 2, 4, 4), lambda m, x: _F(m).avg_pool2d(x, 2)),
    "AvgPool2d-ceil": ((0, 2, 5, 5), _layer("AvgPool2d", 2, ceil_mode=True)),
    "adaptive_avg_pool2d": ((0, 2, 4, 4), lambda m, x: _F(m).adaptive_avg_pool2d(x, 1)),
    "adaptive_max_pool2d": ((0, 2, 4, 4), lambda m, x: _F(m).adaptive_max_pool2d(x, 2)),
    "Linear": ((0, 3), _layer("Linear", 3, 4)),
    "Linear-3d": ((2, 0, 3), _layer("Linear", 3, 4)),
    "Bilinear": ((0, 3), lambda m, x: m.nn.Bilinear(3, 2, 4)(x, m.zeros(0, 2))),
    "BatchNorm1d-train": ((0, 3), _layer("BatchNorm1d", 3)),
    "BatchNorm1d-eval": ((0, 3), lambda m, x: m.nn.BatchNorm1d(3).eval()(x)),
    "BatchNorm2d-train": ((0, 3, 2, 2), _layer("BatchNorm2d", 3)),
    "BatchNorm2d-no-stats": ((0, 3, 2, 2), _layer("BatchNorm2d", 3, track_running_stats=False)),
    "BatchNorm2d-empty-plane": ((2, 3, 0, 2), _layer("BatchNorm2d", 3)),
    "batch_norm-train": (
        (0, 3, 2, 2),
        lambda m, x: _F(m).batch_norm(x, m.zeros(3), m.ones(3), training=True),
    ),
    "LayerNorm": ((0, 3), _layer("LayerNorm", 3)),
    "GroupNorm": ((0, 3, 2), _layer("GroupNorm", 1, 3)),
    "Dropout": ((0, 3), _layer("Dropout")),
    "Dropout2d": ((0, 3, 2, 2), _layer("Dropout2d")),
    "Flatten": ((0, 3, 2), _layer("Flatten")),
    "Unflatten": ((0, 4), _layer("Unflatten", 1, (2, 2))),
    "softmax": ((0, 3), lambda m, x: _F(m).softmax(x, 1)),
    "log_softmax": ((0, 3), lambda m, x: _F(m).log_softmax(x, 1)),
    "interpolate-bilinear": (
        (0, 2, 3, 3),
        lambda m, x: _F(m).interpolate(x, size=(5, 5), mode="bilinear", align_corners=False),
    ),
    "pad-reflect": ((0, 3, 4), lambda m, x: _F(m).pad(x, (1, 1), mode="reflect")),
    "prelu": ((0, 3, 2), lambda m, x: _F(m).prelu(x, m.ones(3))),
    "cross_entropy": ((0, 3), lambda m, x: _F(m).cross_entropy(x, m.zeros(0, dtype=m.int64))),
    "cross_entropy-sum": (
        (0, 3),
        lambda m, x: _F(m).cross_entropy(x, m.zeros(0, dtype=m.int64), reduction="sum"),
    ),
    "cross_entropy-probs": ((0, 3), lambda m, x: _F(m).cross_entropy(x, m.zeros(0, 3))),
    "nll_loss-4d": ((0, 3, 2, 2), lambda m, x: _F(m).nll_loss(x, m.zeros(0, 2, 2, dtype=m.int64))),
    "mse_loss": ((0, 3), lambda m, x: _F(m).mse_loss(x, m.zeros(0, 3))),
    "binary_cross_entropy_with_logits": (
        (0, 3),
        lambda m, x: _F(m).binary_cross_entropy_with_logits(x, m.zeros(0, 3)),
    ),
    "Sequential-CNN": (
        (0, 1, 4, 4),
        lambda m, x: m.nn.Sequential(
            m.nn.Conv2d(1, 2, 3, padding=1),
            m.nn.BatchNorm2d(2),
            m.nn.ReLU(),
            m.nn.MaxPool2d(2),
            m.nn.Flatten(),
            m.nn.Linear(8, 3),
        )(x),
    ),
}


def _empty_batch_run(m, shape, f):
    m.manual_seed(0)
    x = _x(m, *shape)
    out = f(m, x)
    if isinstance(out, tuple):
        out = out[0]
    out.sum().backward()
    v = out.detach().numpy()
    return tuple(out.shape), str(out.dtype).split(".")[-1], tuple(x.grad.shape), v


@pytest.mark.parametrize("name", list(EMPTY_BATCH))
def test_empty_batch_as_in_torch(name):
    shape, f = EMPTY_BATCH[name]
    got = _empty_batch_run(cr, shape, f)
    want = _empty_batch_run(torch, shape, f)
    assert got[:3] == want[:3]
    np.testing.assert_array_equal(got[3], want[3])  # NaN for a mean over nothing, as torch


def test_conv_weight_and_bias_grads_on_empty_batch_are_zeros():
    for m in (cr, torch):
        m.manual_seed(0)
    layers = [m.nn.Conv2d(2, 3, 3, stride=2) for m in (cr, torch)]
    for layer, m in zip(layers, (cr, torch)):
        layer(m.zeros(0, 2, 5, 5)).sum().backward()
        assert layer.weight.grad.shape == (3, 2, 3, 3)
        np.testing.assert_array_equal(layer.weight.grad.numpy(), np.zeros((3, 2, 3, 3)))
        np.testing.assert_array_equal(layer.bias.grad.numpy(), np.zeros(3))


def test_batchnorm_train_on_empty_batch_keeps_stats_and_counts_the_batch():
    got, want = cr.nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3)
    for bn, m in ((got, cr), (want, torch)):
        bn(m.zeros(0, 3, 2, 2, requires_grad=True)).sum().backward()
        np.testing.assert_array_equal(bn.running_mean.numpy(), np.zeros(3))
        np.testing.assert_array_equal(bn.running_var.numpy(), np.ones(3))
        np.testing.assert_array_equal(bn.weight.grad.numpy(), np.zeros(3))
    assert int(got.num_batches_tracked) == int(want.num_batches_tracked) == 1


# Module.load_state_dict (defect 10) ---------------------------------------------------------


def _net(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(2, 3), m.nn.Linear(3, 3), m.nn.Linear(3, 1))


def _int64_entry(m):
    sd = {
        k: m.tensor(np.arange(v.numel(), dtype=np.float32).reshape(tuple(v.shape)) / 7)
        for k, v in _net(m).state_dict().items()
    }
    sd["2.weight"] = m.tensor(np.array([[1, -2, 3]]))
    return sd


def test_assign_with_int_parameter_changes_nothing_and_names_the_key():
    net = _net(cr)
    before = {k: (p, p.detach().numpy().copy()) for k, p in net.named_parameters()}
    with pytest.raises(RuntimeError) as got:
        net.load_state_dict(_int64_entry(cr), assign=True)
    with pytest.raises(RuntimeError) as want:
        _net(torch).load_state_dict(_int64_entry(torch), assign=True)
    assert str(got.value).replace("chainrule.", "torch.") == str(want.value)
    assert '"2.weight"' in str(got.value)
    for k, p in net.named_parameters():  # the same objects, the same values: nothing assigned
        assert p is before[k][0]
        np.testing.assert_array_equal(p.detach().numpy(), before[k][1])


@pytest.mark.parametrize("strict", [True, False])
def test_copy_with_int_parameter_casts_as_torch(strict):
    got, want = _net(cr), _net(torch)
    got.load_state_dict(_int64_entry(cr), strict=strict)
    want.load_state_dict(_int64_entry(torch), strict=strict)
    for (k, a), (_, b) in zip(got.state_dict().items(), want.state_dict().items()):
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], k
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


@pytest.mark.parametrize("assign", [True, False])
def test_shape_mismatch_refused_before_any_change(assign):
    net = _net(cr)
    sd = {k: v.clone() + 1 for k, v in net.state_dict().items()}
    sd["1.bias"] = cr.ones(4)
    before = [p.detach().numpy().copy() for p in net.parameters()]
    with pytest.raises(RuntimeError, match="size mismatch for 1.bias"):
        net.load_state_dict(sd, assign=assign)
    for p, b in zip(net.parameters(), before):
        np.testing.assert_array_equal(p.detach().numpy(), b)


def test_assign_int_buffer_and_float64_parameter_as_torch():
    got, want = cr.nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3)
    for bn, m in ((got, cr), (want, torch)):
        sd = bn.state_dict()
        sd["running_mean"] = m.ones(3, dtype=m.int64)
        sd["weight"] = m.ones(3, dtype=m.float64)
        bn.load_state_dict(sd, assign=True)
    assert str(got.running_mean.dtype) == "chainrule.int64"
    assert str(want.running_mean.dtype) == "torch.int64"
    assert got.weight.dtype == cr.float64 and got.weight.requires_grad


def test_adaptive_max_pool2d_to_an_empty_size_as_torch():
    shapes = []
    for m in (cr, torch):
        x = m.ones(1, 2, 4, 4, requires_grad=True)
        out, idx = m.nn.functional.adaptive_max_pool2d(x, (0, 2), return_indices=True)
        shapes.append((tuple(out.shape), tuple(idx.shape)))
    assert shapes[0] == shapes[1] == ((1, 2, 0, 2), (1, 2, 0, 2))
    # (torch's backward refuses the empty grad_output; chainrule's gives zeros.)
    x = cr.ones(1, 2, 4, 4, requires_grad=True)
    cr.nn.functional.adaptive_max_pool2d(x, (0, 2)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((1, 2, 4, 4)))


@pytest.mark.parametrize("where", ["float64", "foo", "cuda0"])
def test_module_to_a_bad_device_string_is_a_runtime_error(where):
    # torch's texts list its own device types; the type and "device string" are shared.
    with pytest.raises(RuntimeError, match="device string"):
        torch.nn.Linear(2, 3).to(where)
    layer = cr.nn.Linear(2, 3)
    with pytest.raises(RuntimeError, match="device string"):
        layer.to(where)
    assert layer.weight.dtype == cr.float32
