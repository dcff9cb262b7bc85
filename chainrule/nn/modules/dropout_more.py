"""``Dropout1d``, ``Dropout3d``, ``AlphaDropout`` and ``FeatureAlphaDropout``: active in
training mode only."""

from __future__ import annotations

from chainrule._tensor import Tensor
from chainrule.nn import functional as F
from chainrule.nn.modules.dropout import _DropoutNd

__all__ = ["Dropout1d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) or (C, L) inputs with probability p in training mode,
    scaling the rest by 1 / (1 - p)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs with probability p in
    training mode, scaling the rest by 1 / (1 - p)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps zero mean and unit variance (for SELU networks): see
    ``functional.alpha_dropout``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels: see ``functional.feature_alpha_dropout``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training)
