"""stft and istft against PyTorch: values, shapes, gradients (signal and window), warnings
and errors (ops/short_time.py)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck

torch = pytest.importorskip("torch")

X = np.random.default_rng(5).standard_normal((2, 40))

CASES = [
    {"n_fft": 8, "hop_length": 2, "window": ("hann_window", 8)},
    {"n_fft": 16, "window": ("hann_window", 16), "normalized": True},
    {"n_fft": 8, "win_length": 6, "window": ("hamming_window", 6), "hop_length": 3},
    {"n_fft": 10, "hop_length": 5, "window": ("hann_window", 10), "onesided": False},
    {"n_fft": 8, "window": ("hann_window", 8), "pad_mode": "constant"},
    {"n_fft": 12, "hop_length": 4, "window": ("hann_window", 12), "pad_mode": "replicate"},
    {"n_fft": 8, "hop_length": 4, "window": ("ones", 8), "center": False},
]


def _np(t: Any) -> np.ndarray:
    return np.asarray(t._data) if hasattr(t, "_data") else t.detach().resolve_conj().numpy()


def _run(m: Any, kw: dict[str, Any], batched: bool) -> tuple[Any, ...]:
    k = dict(kw)
    wname, wn = k.pop("window")
    w = getattr(m, wname)(wn, dtype=m.float64, requires_grad=True)
    x = m.tensor(X if batched else X[0], requires_grad=True)
    spec = m.stft(x, window=w, return_complex=True, **k)
    k.pop("pad_mode", None)
    y = m.istft(spec, window=w, length=x.shape[-1], **k)
    loss = (spec.abs() ** 2).sum() + (y**3).sum()
    gx, gw = m.autograd.grad(loss, (x, w))
    return spec, y, gx, gw


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("kw", CASES, ids=[str(i) for i in range(len(CASES))])
def test_stft_istft_match_torch(kw: dict[str, Any], batched: bool) -> None:
    c, t = _run(cr, kw, batched), _run(torch, kw, batched)
    for a, b in zip(c, t):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-9, atol=1e-10)


def test_round_trip_and_method_forms() -> None:
    x = cr.tensor(X[0])
    w = cr.hann_window(16, dtype=cr.float64)
    s = x.stft(16, hop_length=4, window=w, return_complex=True)
    np.testing.assert_allclose(_np(s.istft(16, hop_length=4, window=w, length=40)), X[0])
    assert s.dtype is cr.complex128


def test_complex_input_and_return_complex() -> None:
    z = X[0] + 1j * X[1]
    res = []
    for m in (cr, torch):
        x = m.tensor(z, requires_grad=True)
        w = m.hann_window(8, dtype=m.float64)
        s = m.stft(x, 8, hop_length=2, window=w)
        y = m.istft(s, 8, hop_length=2, window=w, return_complex=True, length=40)
        (g,) = m.autograd.grad((s.abs() ** 2).sum() + (y * y).real.sum(), x)
        res.append((s, y, g))
    for a, b in zip(*res):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-9, atol=1e-10)


def test_return_complex_false_warns_and_gives_real_pairs() -> None:
    out = []
    for m in (cr, torch):
        with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
            out.append(
                m.stft(m.tensor(X[0]), 8, window=m.ones(8, dtype=m.float64), return_complex=False)
            )
    assert tuple(out[0].shape) == tuple(out[1].shape)
    np.testing.assert_allclose(_np(out[0]), _np(out[1]), rtol=1e-9, atol=1e-10)


def test_missing_window_warns() -> None:
    for m in (cr, torch):
        with pytest.warns(UserWarning, match="A window was not provided"):
            s = m.stft(m.tensor(X[0]), 8, return_complex=True)
        with pytest.warns(UserWarning, match="A window was not provided"):
            m.istft(s, 8)


def test_length_longer_than_signal_pads_with_a_warning() -> None:
    ys = []
    for m in (cr, torch):
        w = m.hann_window(8, dtype=m.float64)
        s = m.stft(m.tensor(X[0]), 8, hop_length=2, window=w, return_complex=True)
        with pytest.warns(UserWarning, match="Result is being padded with zeros"):
            ys.append(m.istft(s, 8, hop_length=2, window=w, length=50))
    np.testing.assert_allclose(_np(ys[0]), _np(ys[1]), rtol=1e-9, atol=1e-10)


def test_gradcheck() -> None:
    x = cr.tensor(X[0, :20], requires_grad=True)
    w = cr.hann_window(8, dtype=cr.float64, requires_grad=True)

    def f(x: Any, w: Any) -> Any:
        s = cr.stft(x, 8, hop_length=3, window=w, return_complex=True)
        return cr.istft(s * 1.5, 8, hop_length=3, window=w + 1.0, length=20)

    assert gradcheck(f, (x, w))
    assert gradcheck(
        lambda x: cr.view_as_real(
            cr.stft(x, 6, hop_length=2, window=w.detach()[:6], return_complex=True, normalized=True)
        ),
        (x,),
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.stft(m.ones(20), 8),
        lambda m: m.stft(m.ones(20), 8, hop_length=0, return_complex=True),
        lambda m: m.stft(m.ones(20), 8, win_length=9, return_complex=True),
        lambda m: m.stft(m.ones(20), 8, window=m.ones(5), return_complex=True),
        lambda m: m.stft(m.ones(20), 30, center=False, return_complex=True, window=m.ones(30)),
        lambda m: m.stft(m.ones(20, dtype=m.cfloat), 8, onesided=True, window=m.ones(8)),
        lambda m: m.istft(m.ones(5, 3), 8),
        lambda m: m.istft(m.ones(5, 11, dtype=m.cfloat), 6, window=m.ones(6)),
        lambda m: m.istft(m.ones(5, 11, dtype=m.cfloat), 8, window=m.ones(8), hop_length=9),
        lambda m: m.istft(m.ones(5, 11, dtype=m.cfloat), 8, window=m.zeros(8), hop_length=2),
    ],
)
def test_errors_match_torch(call: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError) as te:
            call(torch)
        with pytest.raises(RuntimeError) as ce:
            call(cr)
    tail = str(te.value).split(") : ")[-1].split(") ")[-1].splitlines()[0]
    assert tail in str(ce.value)
