"""``parametrizations.orthogonal``: a weight constrained to have orthonormal columns (or rows).

Note [orthogonal parametrization]
The weight W (n x k, or its transpose when wider than tall, so n >= k) is Q(X) for an
unconstrained X of W's shape:
- ``matrix_exp``: the lower triangle L of X, padded with zero columns to n x n, gives the
  skew-symmetric A = L - L^T; Q is the first k columns of exp(A).
- ``cayley``: the same A; Q from (I - A/2)^{-1} (I + A/2).
- ``householder``: the strictly lower part of X holds Householder vectors (unit diagonal
  implied), v_j with tau_j = 2 / ||v_j||^2; Q is the first k columns of H_1 ... H_k, each
  column multiplied by the (truncated to an integer) diagonal entry X_jj, which is +-1.
With ``use_trivialization`` a buffer ``base`` (an n x n orthogonal matrix, PyTorch's key
``parametrizations.weight.0.base``) multiplies Q from the left, and assigning a value W0 stores
it in ``base`` and sets X to -I, at which every map gives the identity, so the weight reads
back W0. All three maps are composed from differentiable ops (matrix_exp by scaling and
squaring of a Taylor series), so gradients and double backward reach X. The forward stays on
the weight's device (one scalar read picks matrix_exp's squarings); assigning a value
(``right_inverse``) runs its QR on the host, one copy each way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import ops as _ops
from chainrule._creation import eye, randn, tensor, zeros, zeros_like
from chainrule._tensor import Tensor
from chainrule.autograd import no_grad
from chainrule.nn.modules.module import Module
from chainrule.nn.utils import parametrize

__all__ = ["orthogonal"]

_MAPS = ("matrix_exp", "cayley", "householder")


def _mT(x: Tensor) -> Tensor:
    return x.transpose(-2, -1)


def _matrix_exp(a: Tensor) -> Tensor:
    """exp(a) for square (batched) a: a / 2^s with ||a / 2^s||_1 <= 1/2, an 18-term Taylor
    series (error below float64 rounding), then s squarings."""
    # The 1-norm picks the number of squarings: one scalar read (a sync on a GPU).
    norm = float(a.detach().abs().sum(-2).amax()) if a.numel() else 0.0
    s = max(0, int(np.ceil(np.log2(norm / 0.5)))) if norm > 0.5 else 0
    x = a / (2.0**s)
    n = a.shape[-1]
    ident = eye(n, dtype=a.dtype, device=a.device).expand(a.shape)
    term = ident
    out = ident
    for i in range(1, 19):
        term = _ops.matmul(term, x) / float(i)
        out = out + term
    for _ in range(s):
        out = _ops.matmul(out, out)
    return out


def _householder_product(v: Tensor, tau: Tensor) -> Tensor:
    """First k columns of H_1 ... H_k, H_j = I - tau_j v_j v_j^T (v: (..., n, k))."""
    n, k = v.shape[-2], v.shape[-1]
    q = eye(n, dtype=v.dtype, device=v.device).expand((*v.shape[:-2], n, n))
    for j in range(k):
        vj = v[..., j : j + 1]  # (..., n, 1)
        # Q <- Q H_j = Q - tau_j (Q v_j) v_j^T
        q = q - _ops.matmul(_ops.matmul(q, vj) * tau[..., j : j + 1].unsqueeze(-1), _mT(vj))
    return q[..., :k]


def _host(t: Tensor) -> np.ndarray:
    """``t``'s values as a float64 host array (an explicit copy from a GPU)."""
    return np.asarray(t.detach().cpu().numpy()).astype(np.float64)


def _qr_orthogonal(a: np.ndarray) -> np.ndarray:
    """Q of a = QR with diag(R) >= 0 (each column of Q times the sign of R's diagonal)."""
    q, r = np.linalg.qr(a)
    d = np.sign(np.diagonal(r, axis1=-2, axis2=-1)).copy()
    d[d == 0] = 1
    return q * d[..., None, :]


class _Orthogonal(Module):
    """The orthogonal parametrization (Note [orthogonal parametrization])."""

    def __init__(
        self, weight: Tensor, orthogonal_map: str, *, use_trivialization: bool = True
    ) -> None:
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: Tensor) -> Tensor:
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = _mT(x)
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            low = x.tril()
            if n != k:
                pad = zeros((*low.shape[:-1], n - k), dtype=x.dtype, device=x.device)
                low = _ops.cat([low, pad], -1)
            a = low - _mT(low)
            if self.orthogonal_map == "matrix_exp":
                q = _matrix_exp(a)
            else:
                from chainrule.linalg import solve

                ident = eye(n, dtype=x.dtype, device=x.device)
                q = solve(ident - a * 0.5, ident + a * 0.5)
            q = q[..., :k]
        else:
            v = x.tril(-1)
            v = v + eye(n, k, dtype=x.dtype, device=x.device)
            tau = 2.0 / (v * v).sum(-2)
            q = _householder_product(v, tau)
            # The signs of X's diagonal (truncated to integers, no gradient) flip columns.
            signs = x.detach().diagonal(dim1=-2, dim2=-1).trunc()
            q = q * signs.unsqueeze(-2)
        base = self.__dict__.get("_buffers", {}).get("base", None)
        if "base" in self._buffers and base is not None:
            q = _ops.matmul(base, q)
        if transposed:
            q = _mT(q)
        return q

    def right_inverse(self, q: Tensor) -> Tensor:
        with no_grad():
            if q.shape != self.shape:
                raise ValueError(
                    f"Expected a matrix or batch of matrices of shape {self.shape}. Got a "
                    f"tensor of shape {q.shape}."
                )
            q_init = q
            n, k = q.shape[-2], q.shape[-1]
            transposed = n < k
            if transposed:
                q = _mT(q)
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in ("matrix_exp", "cayley"):
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False."
                    )
                return self._householder_inverse(q, transposed)
            # Assignment (not the forward) runs its QR on the host: one copy each way.
            arr = _host(q)
            if n == k:
                ident = np.eye(n)
                gram = np.swapaxes(arr, -2, -1) @ arr
                tol = 10 * np.finfo(q._data.dtype).eps * n
                base = arr.copy() if np.all(np.abs(gram - ident) <= tol) else _qr_orthogonal(arr)
            else:
                extra = _host(randn(*q.shape[:-2], n, n - k, dtype=q.dtype, device=q.device))
                base = _qr_orthogonal(np.concatenate([arr, extra], -1))
            self.base = tensor(base, dtype=q.dtype, device=q.device)
            neg_eye = zeros_like(q_init)
            m = min(q_init.shape[-2], q_init.shape[-1])
            idx = tensor(np.arange(m), device=q.device)
            neg_eye[..., idx, idx] = -1.0
            return neg_eye

    @staticmethod
    def _householder_inverse(q: Tensor, transposed: bool) -> Tensor:
        """X whose Householder reflectors give q's orthogonalization (QR of q, R's diagonal
        made positive, the diagonal of X holding the column signs)."""
        arr = _host(q)  # on the host (assignment only): one copy each way
        flat = arr.reshape(-1, *arr.shape[-2:])
        out = np.empty_like(flat)
        for b, mat in enumerate(flat):
            h, tau = np.linalg.qr(mat, mode="raw")
            a = h.T.copy()
            d = np.sign(np.diagonal(a)).copy()
            d[tau == 0] *= -1
            k = a.shape[1]
            a[np.arange(k), np.arange(k)] = d
            out[b] = a
        x = tensor(out.reshape(arr.shape), dtype=q.dtype, device=q.device)
        return _mT(x) if transposed else x


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Constrain ``module.<name>`` (a matrix or batch of matrices) to orthonormal columns or
    rows (Note [orthogonal parametrization]). ``orthogonal_map`` defaults to ``matrix_exp``
    for square matrices and ``householder`` otherwise."""
    weight: Any = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: '
            f"{orthogonal_map}"
        )
    parametrize.register_parametrization(
        module,
        name,
        _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization),
        unsafe=True,
    )
    return module
