"""L-BFGS (Nocedal, 1980; Liu and Nocedal, 1989), with an optional strong-Wolfe line search
(Nocedal and Wright, *Numerical Optimization*, algorithms 3.5 and 3.6), as
``torch.optim.LBFGS`` runs it.

The iteration works on one flat vector holding every parameter (in order) and on the flat
gradient; ``step(closure)`` may call the closure many times. Scalars that PyTorch keeps as
0-d tensors (the directional derivative, the step length once a gradient has set it, the
history's 1 / (y's)) are NumPy scalars of the parameters' dtype here, so float32 runs round
as PyTorch's do. State (``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``,
``prev_flat_grad``, ``prev_loss``, ``al``, ``func_evals``, ``n_iter``) lives under the first
parameter, as in PyTorch, so that ``state_dict()`` interchanges.

(Just over 400 lines: the iteration and its line search are one algorithm, kept together.)
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from chainrule._tensor import Tensor
from chainrule.autograd.grad_mode import enable_grad, no_grad
from chainrule.backends import multi_gpu_backend
from chainrule.optim._state import cast_state_any_shape
from chainrule.optim.optimizer import Optimizer

__all__ = ["LBFGS", "cubic_interpolate", "strong_wolfe", "lbfgs_direction"]


def cubic_interpolate(
    x1: Any,
    f1: Any,
    g1: Any,
    x2: Any,
    f2: Any,
    g2: Any,
    bounds: tuple[Any, Any] | None = None,
) -> Any:
    """Minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, clamped to
    ``bounds`` (default: the interval between x1 and x2); the interval's midpoint when the
    cubic has no minimiser.

    d1 = g1 + g2 - 3 (f1 - f2) / (x1 - x2);   d2 = sqrt(d1^2 - g1 g2)
    x = x2 - (x2 - x1) (g2 + d2 - d1) / (g2 - g1 + 2 d2)   (for x1 <= x2; mirrored otherwise)
    """
    if bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, lo), hi)
    return (lo + hi) / 2.0


def strong_wolfe(
    obj_func: Callable[[Any, Any, Any], tuple[float, Any]],
    x: Any,
    t: Any,
    d: Any,
    f: float,
    g: Any,
    gtd: Any,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple[float, Any, Any, int]:
    """Find a step ``t`` along ``d`` satisfying the strong Wolfe conditions
    f(x + t d) <= f + c1 t g'd and |g(x + t d)'d| <= -c2 g'd.

    Phase one grows the step (cubic extrapolation within [t + 0.01 (t - t_prev), 10 t]) until
    it brackets an acceptable point; phase two ("zoom") shrinks the bracket by safeguarded cubic
    interpolation. ``obj_func(x, t, d)`` returns (loss, flat gradient) at x + t d. At most
    ``max_ls`` evaluations after the first. Returns (loss, flat gradient, t, evaluations).
    """
    d_norm = np.abs(d).max()
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    bracket: list[Any] = []
    bracket_f: list[Any] = []
    bracket_g: list[Any] = []
    bracket_gtd: list[Any] = []
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        # Extrapolate: the cubic's minimiser, at least 1 % beyond t and at most 10 t.
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        previous = t
        t = cubic_interpolate(
            t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step)
        )
        t_prev, f_prev, g_prev, gtd_prev = previous, f_new, g_new, gtd_new
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # Zoom: keep the low end (smallest loss) acceptable for the sufficient-decrease test.
    insuf_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = cubic_interpolate(
            bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]
        )
        # Safeguard: a point within 10 % of an end makes too little progress; move it inward
        # the second time in a row (or at once when it falls on or outside an end).
        top, bottom = max(bracket), min(bracket)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insuf_progress or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new, gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new, gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


def lbfgs_direction(
    flat_grad: Any,
    old_dirs: list[Any],
    old_stps: list[Any],
    ro: list[Any],
    H_diag: Any,
    al: list[Any],
) -> Any:
    """The two-loop recursion: d = -H g with H the L-BFGS inverse-Hessian estimate built from
    the pairs (s_i, y_i) (``old_stps``, ``old_dirs``), rho_i = 1 / (y_i's_i) and the initial
    scaling ``H_diag`` = y's / y'y of the newest pair. ``al`` receives the alphas."""
    q = -flat_grad
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = old_stps[i].dot(q) * ro[i]
        q = q + old_dirs[i] * (-al[i])
    r = q * H_diag
    for i in range(len(old_dirs)):
        be_i = old_dirs[i].dot(r) * ro[i]
        r = r + old_stps[i] * (al[i] - be_i)
    return r


_ARRAY_KEYS = ("d", "prev_flat_grad")
_LIST_KEYS = ("old_dirs", "old_stps", "ro", "al")


def _to_state(value: Any) -> Any:
    if isinstance(value, (np.ndarray, np.generic)):
        return Tensor._wrap(np.array(value))
    return value


def _from_state(value: Any) -> Any:
    if isinstance(value, Tensor):
        data = value._data
        return data[()] if data.ndim == 0 else data
    return value


class LBFGS(Optimizer):
    """``torch.optim.LBFGS``: one parameter group; ``step(closure)`` runs up to ``max_iter``
    L-BFGS iterations (``lbfgs_direction``), each with the fixed step ``lr`` (the first one
    scaled to min(1, 1 / ||g||_1) lr) or a ``strong_wolfe`` line search
    (``line_search_fn="strong_wolfe"``), and returns the closure's first loss.

    It stops early when max |g| <= ``tolerance_grad``, when a step or the change in loss falls
    below ``tolerance_change``, or after ``max_eval`` closure calls (default 1.25 max_iter).
    """

    # The direction and history are flat vectors, not shaped like the first parameter.
    _cast_state = staticmethod(cast_state_any_shape)

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(
            lr=lr,
            max_iter=max_iter,
            max_eval=max_eval,
            tolerance_grad=tolerance_grad,
            tolerance_change=tolerance_change,
            history_size=history_size,
            line_search_fn=line_search_fn,
        )
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]

    # Flat views of the parameters --------------------------------------------------------
    def _gather_flat_grad(self) -> Any:
        parts = []
        for p in self._params:
            if p.grad is None:
                parts.append(p._backend.xp.zeros(p._data.size, p._data.dtype))
            else:
                parts.append(p.grad._data.reshape(-1))
        return np.concatenate(parts)

    def _add_grad(self, step_size: Any, update: Any) -> None:
        offset = 0
        for p in self._params:
            n = p._data.size
            p._data += (step_size * update[offset : offset + n]).reshape(p._data.shape)
            p._bump_version()
            offset += n

    def _clone_param(self) -> list[Any]:
        return [p._data.copy() for p in self._params]

    def _set_param(self, saved: list[Any]) -> None:
        for p, data in zip(self._params, saved):
            p._data[...] = data
            p._bump_version()

    def _evaluate(self, closure: Callable[[], Any]) -> float:
        with enable_grad():
            return float(closure())

    def _directional_evaluate(
        self, closure: Callable[[], Any], x: list[Any], t: Any, d: Any
    ) -> tuple[float, Any]:
        self._add_grad(t, d)
        loss = self._evaluate(closure)
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run the iterations; ``closure`` must zero the gradients, compute the loss, call
        ``backward()`` and return the loss."""
        gpus = multi_gpu_backend()  # None unless CuPy is in use with several GPUs
        with no_grad():
            if gpus is None or type(self._params[0]._data) is not gpus.ndarray:
                return self._step(closure)
            # The flat vectors and the line search are raw-array code: run them on the
            # parameters' GPU whatever GPU is current (Note [a step on its parameters' GPU]).
            with gpus.array_device(self._params[0]._data):
                return self._step(closure)

    def _step(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr = group["lr"]
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        d = _from_state(state.get("d"))
        t = _from_state(state.get("t"))
        old_dirs = [_from_state(v) for v in state.get("old_dirs", [])]
        old_stps = [_from_state(v) for v in state.get("old_stps", [])]
        ro = [_from_state(v) for v in state.get("ro", [])]
        H_diag = _from_state(state.get("H_diag"))
        prev_flat_grad = _from_state(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")
        al = [_from_state(v) for v in state["al"]] if "al" in state else None

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                H_diag = _push_pair(
                    old_dirs, old_stps, ro, flat_grad - prev_flat_grad, d * t, history_size, H_diag
                )
                if al is None:
                    al = [None] * history_size
                d = lbfgs_direction(flat_grad, old_dirs, old_stps, ro, H_diag, al)

            prev_flat_grad = flat_grad.copy()
            prev_loss = loss

            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr

            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x: list[Any], t: Any, d: Any) -> tuple[float, Any]:
                    return self._directional_evaluate(closure, x, t, d)

                # The search may spend what is left of this step's max_eval.
                loss, flat_grad, t, ls_func_evals = strong_wolfe(
                    obj_func,
                    x_init,
                    t,
                    d,
                    loss,
                    flat_grad,
                    gtd,
                    max_ls=max_eval - current_evals,
                )
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    # The loss and gradient at the new point (the last iteration skips it).
                    loss = self._evaluate(closure)
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"] = _to_state(d)
        state["t"] = _to_state(t)
        state["old_dirs"] = [_to_state(v) for v in old_dirs]
        state["old_stps"] = [_to_state(v) for v in old_stps]
        state["ro"] = [_to_state(v) for v in ro]
        state["H_diag"] = _to_state(H_diag)
        state["prev_flat_grad"] = _to_state(prev_flat_grad)
        state["prev_loss"] = prev_loss
        if al is not None:
            state["al"] = [_to_state(v) for v in al]
        return orig_loss


def _push_pair(
    old_dirs: list[Any],
    old_stps: list[Any],
    ro: list[Any],
    y: Any,
    s: Any,
    history_size: int,
    H_diag: Any,
) -> Any:
    """Add the curvature pair (y, s) to the history (dropping the oldest past
    ``history_size``) when y's > 1e-10, and return the new H_diag = y's / y'y; otherwise keep
    the history and H_diag."""
    ys = y.dot(s)
    if not ys > 1e-10:  # curvature condition: keep only pairs with y's > 0 (not nan)
        return H_diag
    if len(old_dirs) == history_size:
        old_dirs.pop(0)
        old_stps.pop(0)
        ro.pop(0)
    old_dirs.append(y)
    old_stps.append(s)
    ro.append(1.0 / ys)
    return ys / y.dot(y)
