"""Training patches and held-out images from the natural images bundled in scikit-image.

Nothing is downloaded: every image used here ships inside scikit-image's wheel. High-resolution
(HR) patches are cut at random; their low-resolution (LR) inputs are made by bicubic downsampling
(Pillow), and the bicubic upscale of the LR input is the baseline the generator refines.
"""

from __future__ import annotations

import numpy as np
from PIL import Image
from skimage import data as skdata

TRAIN_IMAGES = [
    "astronaut",
    "chelsea",
    "rocket",
    "immunohistochemistry",
    "brick",
    "grass",
    "gravel",
    "moon",
    "page",
    "text",
    "clock",
]
HELD_OUT_IMAGES = ["coffee", "camera", "coins"]


def load_rgb(name: str) -> np.ndarray:
    """An image from skimage.data as float32 RGB in [0, 1], shape (H, W, 3)."""
    a = getattr(skdata, name)()
    if a.ndim == 2:
        a = np.stack([a] * 3, axis=-1)
    a = a[..., :3]
    if a.dtype == bool:
        a = a.astype(np.uint8) * 255
    return (a.astype(np.float32) / 255.0).clip(0, 1)


def resize(img: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Bicubic resize of an (H, W, 3) float image to (h, w) = size, per channel in float."""
    h, w = size
    chans = [
        np.asarray(Image.fromarray(img[..., c]).resize((w, h), Image.BICUBIC)) for c in range(3)
    ]
    return np.stack(chans, axis=-1).clip(0, 1).astype(np.float32)


def crop_to_multiple(img: np.ndarray, k: int) -> np.ndarray:
    h, w = img.shape[0] // k * k, img.shape[1] // k * k
    return img[:h, :w]


class PatchSampler:
    """Random (LR, bicubic-upscaled LR, HR) patch batches from the training images, NCHW."""

    def __init__(self, scale: int, hr_patch: int, seed: int = 0) -> None:
        self.scale = scale
        self.hr_patch = hr_patch
        self.rng = np.random.default_rng(seed)
        self.images = [crop_to_multiple(load_rgb(n), scale) for n in TRAIN_IMAGES]

    def batch(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lr_p = self.hr_patch // self.scale
        hrs, lrs, bics = [], [], []
        for _ in range(n):
            img = self.images[self.rng.integers(len(self.images))]
            y = self.rng.integers(0, (img.shape[0] - self.hr_patch) // self.scale + 1) * self.scale
            x = self.rng.integers(0, (img.shape[1] - self.hr_patch) // self.scale + 1) * self.scale
            hr = img[y : y + self.hr_patch, x : x + self.hr_patch]
            if self.rng.random() < 0.5:
                hr = hr[:, ::-1]
            lr = resize(np.ascontiguousarray(hr), (lr_p, lr_p))
            hrs.append(hr)
            lrs.append(lr)
            bics.append(resize(lr, (self.hr_patch, self.hr_patch)))
        to_nchw = lambda xs: np.ascontiguousarray(np.stack(xs).transpose(0, 3, 1, 2))  # noqa: E731
        return to_nchw(lrs), to_nchw(bics), to_nchw(hrs)


def held_out(scale: int, size: int = 192) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """(name, LR, bicubic, HR) for each held-out image: a centre crop of ``size`` pixels."""
    out = []
    for name in HELD_OUT_IMAGES:
        img = load_rgb(name)
        cy, cx = img.shape[0] // 2, img.shape[1] // 2
        hr = np.ascontiguousarray(
            img[cy - size // 2 : cy + size // 2, cx - size // 2 : cx + size // 2]
        )
        lr = resize(hr, (size // scale, size // scale))
        out.append((name, lr, resize(lr, (size, size)), hr))
    return out
