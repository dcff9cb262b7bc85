"""Layer classes are reachable under the module paths PyTorch files them in, which programs
name when they list ``torch.load`` safe globals for a pickled whole model."""

from __future__ import annotations

import io

import numpy as np
import torch

import chainrule as cr
from chainrule.nn.modules import activation, linear


def test_multihead_attention_lives_in_activation_as_in_torch():
    assert torch.nn.modules.activation.MultiheadAttention is torch.nn.MultiheadAttention
    assert activation.MultiheadAttention is cr.nn.MultiheadAttention


def test_non_dynamically_quantizable_linear_lives_in_linear():
    t = torch.nn.modules.linear.NonDynamicallyQuantizableLinear
    c = linear.NonDynamicallyQuantizableLinear
    assert issubclass(t, torch.nn.Linear) and issubclass(c, cr.nn.Linear)
    assert type(cr.nn.MultiheadAttention(4, 2).out_proj) is c


def test_whole_encoder_round_trips_through_save_and_safe_load():
    enc_layer = cr.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
    model = cr.nn.TransformerEncoder(enc_layer, 2, enable_nested_tensor=False).eval()
    x = cr.randn(5, 3, 8)
    buf = io.BytesIO()
    cr.save(model, buf)
    buf.seek(0)
    nn = cr.nn
    allowed = [
        cr.nn.functional.relu,
        nn.modules.activation.MultiheadAttention,
        nn.modules.container.ModuleList,
        nn.modules.dropout.Dropout,
        nn.modules.linear.Linear,
        nn.modules.linear.NonDynamicallyQuantizableLinear,
        nn.modules.normalization.LayerNorm,
        nn.modules.transformer.TransformerEncoder,
        nn.modules.transformer.TransformerEncoderLayer,
    ]
    with cr.serialization.safe_globals(allowed):
        loaded = cr.load(buf)
    with cr.no_grad():
        np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())
