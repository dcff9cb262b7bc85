"""OpInfo rows for chainrule/ops/unary.py."""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, elementwise

OPS = [
    OpInfo("neg", lambda m, x: -x, ref=np.negative, samples=elementwise()),
    OpInfo("exp", lambda m, x: m.exp(x), ref=np.exp, samples=elementwise()),
    OpInfo("log", lambda m, x: m.log(x), ref=np.log, samples=elementwise(low=0.1, high=5)),
    OpInfo("sqrt", lambda m, x: m.sqrt(x), ref=np.sqrt, samples=elementwise(low=0.1, high=5)),
    OpInfo("sin", lambda m, x: m.sin(x), ref=np.sin, samples=elementwise()),
    OpInfo("cos", lambda m, x: m.cos(x), ref=np.cos, samples=elementwise()),
    OpInfo("tanh", lambda m, x: m.tanh(x), ref=np.tanh, samples=elementwise()),
    OpInfo("sigmoid", lambda m, x: m.sigmoid(x), ref=lambda x: 1 / (1 + np.exp(-x)),
           samples=elementwise(low=-8, high=8)),
    OpInfo("relu", lambda m, x: m.relu(x), ref=lambda x: np.maximum(x, 0),
           samples=elementwise(avoid=(0.0,))),
    OpInfo("abs", lambda m, x: m.abs(x), ref=np.abs, samples=elementwise(avoid=(0.0,))),
    OpInfo("sign", lambda m, x: m.sign(x), ref=np.sign, samples=elementwise(avoid=(0.0,))),
]
