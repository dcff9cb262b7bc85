"""SRGAN-style generator and discriminator, and the fixed feature network of the perceptual loss.

Written as one would in PyTorch; only the import says chainrule.
"""

from __future__ import annotations

import math

import numpy as np

import chainrule as torch
from chainrule import nn


class ResidualBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(channels)
        self.prelu = nn.PReLU()
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        r = self.prelu(self.bn1(self.conv1(x)))
        return x + self.bn2(self.conv2(r))


class UpsampleBlock(nn.Module):
    def __init__(self, channels: int, factor: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels * factor**2, 3, padding=1)
        self.shuffle = nn.PixelShuffle(factor)
        self.prelu = nn.PReLU()

    def forward(self, x):
        return self.prelu(self.shuffle(self.conv(x)))


class Generator(nn.Module):
    """LR image -> residual added to the bicubic upscale (so training starts from bicubic)."""

    def __init__(self, scale: int = 2, channels: int = 32, blocks: int = 3) -> None:
        super().__init__()
        self.head = nn.Sequential(nn.Conv2d(3, channels, 5, padding=2), nn.PReLU())
        self.body = nn.Sequential(*[ResidualBlock(channels) for _ in range(blocks)])
        self.post = nn.Sequential(
            nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels)
        )
        self.up = nn.Sequential(*[UpsampleBlock(channels, 2) for _ in range(int(math.log2(scale)))])
        self.tail = nn.Conv2d(channels, 3, 5, padding=2)
        with torch.no_grad():  # start as the identity on the bicubic image
            self.tail.weight.mul_(0.01)
            self.tail.bias.zero_()

    def forward(self, lr, bicubic):
        h = self.head(lr)
        h = h + self.post(self.body(h))
        return bicubic + self.tail(self.up(h))


class Discriminator(nn.Module):
    def __init__(self, channels: int = 32) -> None:
        super().__init__()
        c = channels
        self.net = nn.Sequential(
            nn.Conv2d(3, c, 3, padding=1),
            nn.LeakyReLU(0.2),
            nn.Conv2d(c, c, 3, stride=2, padding=1),
            nn.BatchNorm2d(c),
            nn.LeakyReLU(0.2),
            nn.Conv2d(c, 2 * c, 3, padding=1),
            nn.BatchNorm2d(2 * c),
            nn.LeakyReLU(0.2),
            nn.Conv2d(2 * c, 2 * c, 3, stride=2, padding=1),
            nn.BatchNorm2d(2 * c),
            nn.LeakyReLU(0.2),
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(2 * c, 4 * c, 1),
            nn.LeakyReLU(0.2),
            nn.Conv2d(4 * c, 1, 1),
        )

    def forward(self, x):
        return torch.sigmoid(self.net(x).view(x.size(0)))


def filter_bank(size: int = 7) -> np.ndarray:
    """Deterministic perceptual features: oriented Gabor filters at two scales plus a
    Laplacian-of-Gaussian, applied to luminance. Shape (9, 3, size, size)."""
    r = size // 2
    yy, xx = np.mgrid[-r : r + 1, -r : r + 1].astype(np.float64)
    kernels = []
    for sigma, lam in ((1.2, 3.0), (2.0, 5.0)):
        for theta in np.arange(4) * np.pi / 4:
            xr = xx * np.cos(theta) + yy * np.sin(theta)
            g = np.exp(-(xx**2 + yy**2) / (2 * sigma**2)) * np.cos(2 * np.pi * xr / lam)
            kernels.append(g - g.mean())
    s = 1.5
    log = (xx**2 + yy**2 - 2 * s**2) * np.exp(-(xx**2 + yy**2) / (2 * s**2))
    kernels.append(log - log.mean())
    k = np.stack([kk / np.abs(kk).sum() for kk in kernels])
    lum = np.array([0.299, 0.587, 0.114])
    return (k[:, None] * lum[None, :, None, None]).astype(np.float32)


class FeatureNet(nn.Module):
    """The fixed network of the perceptual loss: a Gabor/LoG filter bank made by this project
    (no pretrained weights are downloaded), rectified, then pooled."""

    def __init__(self) -> None:
        super().__init__()
        w = torch.from_numpy(filter_bank())
        self.conv = nn.Conv2d(3, w.shape[0], w.shape[2], padding=w.shape[2] // 2, bias=False)
        with torch.no_grad():
            self.conv.weight.copy_(w)
        self.requires_grad_(False)
        self.pool = nn.AvgPool2d(2)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)) * 10)


class TVLoss(nn.Module):
    """Total variation: mean squared difference of neighbouring pixels."""

    def forward(self, x):
        dh = (x[:, :, 1:, :] - x[:, :, :-1, :]).pow(2).mean()
        dw = (x[:, :, :, 1:] - x[:, :, :, :-1]).pow(2).mean()
        return dh + dw


class GeneratorLoss(nn.Module):
    """SRGAN's generator criterion: image MSE + 1e-3 adversarial + 6e-3 perceptual + 2e-8 TV."""

    def __init__(self) -> None:
        super().__init__()
        self.features = FeatureNet()
        self.mse = nn.MSELoss()
        self.tv = TVLoss()

    def forward(self, out_labels, out_images, target_images):
        adversarial = torch.mean(1 - out_labels)
        perception = self.mse(self.features(out_images), self.features(target_images))
        image = self.mse(out_images, target_images)
        return image + 0.001 * adversarial + 0.006 * perception + 2e-8 * self.tv(out_images)
