"""Linear-chain conditional random field (Liu, Fujimaki & Ye 2014, Section 5 and Appendix D.2).

    Q(w, b, L) = (1/N) sum_chains [log Z(x) - score(y | x)] + (lam/2) (||w||^2 + ||L||^2),

    score(y | x) = sum_t (b[y_t] + sum_v w[(v, x_tv, y_t)]) + sum_{t>1} L[y_{t-1}, y_t],

N the number of positions over all chains. ``w`` holds the selectable observation features of
``chains.py`` (sensor/state/label indicators); the label biases b and the transitions L are
dense and refitted on every support, as in the paper ("we only enforced sparsity on the
features related to observation [...] the features w.r.t. transitions remained dense").

Differences from the paper's Q, and why:

* the mean over positions instead of the sum, so that lam and the stopping thresholds have the
  same scale as the other objectives' (the minimisers are those of the summed loss with lam
  multiplied by N);
* a ridge term lam (default 1e-3): an indicator that never fires with some label, or a
  transition never seen, has an infinite unpenalised optimum. The biases b play the intercept's
  part and are not penalised (each sensor's indicators sum to the label indicator, so b is the
  unpenalised direction every sensor shares).

Inference is ``chain_inference.forward_backward``; refits are L-BFGS (scipy) over (w_S, b, L),
warm-started; FoBa-obj's one-coordinate drops solve all candidates' 1-D problems together
(one batched forward-backward pass per iteration).
"""

from __future__ import annotations

import numpy as np

from ..registry import ObjectiveSpec, Param, register_objective
from .base import ActiveSet, Objective
from .chain_inference import forward_backward, viterbi
from .chains import Chains, check_chains
from .fd_newton import FD_STEP, chord_newton

_COORD_MAXITER = 50
_COORD_BOUND = 50.0  # |alpha| cap of a one-coordinate move: lam = 0 can have no minimiser


class CRF(Objective):
    """Linear-chain CRF negative log-likelihood, mean over positions, plus a ridge term.

    Parameters
    ----------
    chains : Chains
        From :func:`~engine.objectives.chains.check_chains` (``engine.select`` does this).
    y : ignored
        The label codes are in ``chains`` (the argument keeps the objectives' signature).
    lam : float, default 1e-3
    """

    name = "crf"
    fit_intercept = False  # the label biases are the CRF's intercept, reported in dense_params

    def __init__(self, chains: Chains, y=None, *, lam: float = 1e-3) -> None:
        if not isinstance(chains, Chains):
            chains, _ = check_chains(chains, y)
        if not np.isfinite(lam) or lam < 0:
            raise ValueError(f"lam must be a finite number >= 0, got {lam}")
        self.chains = chains
        self.lam = float(lam)
        self.n_samples = chains.n_positions
        self.n_features = chains.n_features
        self.n_labels = C = chains.n_labels
        self.n_rows = chains.n_rows
        self.phi = chains.indicator()  # (N, R)
        self.phi_t = self.phi.T.tocsr()
        onehot = np.zeros((self.n_samples, C))
        onehot[np.arange(self.n_samples), chains.labels] = 1.0
        self.onehot = onehot
        self.feature_counts = np.asarray(self.phi_t @ onehot).ravel()  # n_j, shape (F,)
        lay = chains.layout
        prev = chains.labels[np.flatnonzero(lay.has_prev) - 1]
        cur = chains.labels[lay.has_prev]
        self.transition_counts = np.zeros((C, C))
        np.add.at(self.transition_counts, (prev, cur), 1.0)
        self.label_counts = onehot.sum(axis=0)
        # Positions and label of every feature, for one-coordinate moves: feature j = r*C + c
        # moves U[t, c] at the positions t where row r is observed.
        csc = self.phi.tocsc()
        self.row_positions = np.split(csc.indices, csc.indptr[1:-1])
        self.sensor_of_feature = chains.sensor_of_feature()

    # ----------------------------------------------------------------- parameters
    @property
    def n_dense(self) -> int:
        return self.n_labels + self.n_labels**2

    def split_dense(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        C = self.n_labels
        return theta[:C], theta[C:].reshape(C, C)

    def unary(self, coef: np.ndarray, bias: np.ndarray) -> np.ndarray:
        """U = Phi W + b, shape (N, C), with W the coefficient vector as (rows, labels)."""
        return np.asarray(self.phi @ coef.reshape(self.n_rows, self.n_labels)) + bias

    # ----------------------------------------------------------------- anywhere
    def value_and_gradient(
        self, coef: np.ndarray, theta: np.ndarray
    ) -> tuple[float, np.ndarray, np.ndarray]:
        """Q, dQ/dcoef (F,) and dQ/dtheta (C + C^2,) at an arbitrary point."""
        return self.evaluate(coef, theta)[:3]

    def evaluate(self, coef: np.ndarray, theta: np.ndarray):
        """(Q, dQ/dcoef, dQ/dtheta, U, marginals) at (coef, theta): one forward-backward pass."""
        n = self.n_samples
        bias, trans = self.split_dense(theta)
        U = self.unary(coef, bias)
        m = forward_backward(self.chains.layout, U[None], trans)
        assert m.node is not None and m.pair is not None  # marginals and pairs were asked for
        score = float(np.sum(U * self.onehot)) + float(np.sum(trans * self.transition_counts))
        value = (float(m.log_z.sum()) - score) / n
        value += 0.5 * self.lam * (float(coef @ coef) + float(np.sum(trans * trans)))
        resid = (m.node[0] - self.onehot) / n  # dQ/dU
        g_coef = np.asarray(self.phi_t @ resid).ravel() + self.lam * coef
        g_bias = resid.sum(axis=0)
        g_trans = (m.pair[0] - self.transition_counts) / n + self.lam * trans
        return value, g_coef, np.concatenate([g_bias, g_trans.ravel()]), U, m

    def batch_value_gradient(
        self, fixed: np.ndarray, support: np.ndarray, Z: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Q and its gradient in z = (coef[support], b, L) at B points at once.

        Parameters
        ----------
        fixed : ndarray, shape (F,)
            The coefficients off ``support`` (held).
        support : ndarray of int, shape (k,)
        Z : ndarray, shape (B, k + C + C^2)

        Returns
        -------
        (values (B,), gradients (B, k + C + C^2))
        """
        n, C, k = self.n_samples, self.n_labels, len(support)
        B = Z.shape[0]
        W = np.repeat(fixed[None], B, axis=0)
        W[:, support] = Z[:, :k]
        bias = Z[:, k : k + C]
        trans = Z[:, k + C :].reshape(B, C, C)
        Wr = W.reshape(B, self.n_rows, C).transpose(1, 0, 2).reshape(self.n_rows, B * C)
        U = np.asarray(self.phi @ Wr).reshape(n, B, C).transpose(1, 0, 2) + bias[:, None, :]
        m = forward_backward(self.chains.layout, U, trans)
        assert m.node is not None and m.pair is not None  # marginals and pairs were asked for
        score = np.einsum("bnc,nc->b", U, self.onehot) + np.einsum(
            "bij,ij->b", trans, self.transition_counts
        )
        sq = np.einsum("bf,bf->b", W, W) + np.einsum("bij,bij->b", trans, trans)
        values = (m.log_z.sum(axis=1) - score) / n + 0.5 * self.lam * sq
        resid = (m.node - self.onehot[None]) / n  # (B, N, C)
        grads = np.empty_like(Z)
        if k:
            rows, labels = support // C, support % C
            R = resid.transpose(1, 0, 2).reshape(n, B * C)
            per_row = np.asarray(self.phi_t[rows] @ R).reshape(k, B, C)
            grads[:, :k] = per_row[np.arange(k), :, labels].T + self.lam * Z[:, :k]
        grads[:, k : k + C] = resid.sum(axis=1)
        g_trans = (m.pair - self.transition_counts[None]) / n + self.lam * trans
        grads[:, k + C :] = g_trans.reshape(B, C * C)
        return values, grads

    def value_at(self, coef: np.ndarray, theta: np.ndarray) -> float:
        bias, trans = self.split_dense(theta)
        U = self.unary(coef, bias)
        m = forward_backward(self.chains.layout, U[None], trans, marginals=False)
        score = float(np.sum(U * self.onehot)) + float(np.sum(trans * self.transition_counts))
        pen = 0.5 * self.lam * (float(coef @ coef) + float(np.sum(trans * trans)))
        return (float(m.log_z.sum()) - score) / self.n_samples + pen

    def value(self, coef, intercept: float = 0.0) -> float:
        """min over the dense parameters of Q(coef, .): the objective as a function of the
        selectable features alone."""
        return self._profile(np.asarray(coef, dtype=float))[0]

    def gradient(self, coef, intercept: float = 0.0) -> tuple[np.ndarray, float]:
        """dQ/dcoef at (coef, the best dense parameters for it) (Danskin's theorem)."""
        coef = np.asarray(coef, dtype=float)
        _, theta = self._profile(coef)
        return self.value_and_gradient(coef, theta)[1], 0.0

    def _profile(self, coef: np.ndarray) -> tuple[float, np.ndarray]:
        support = np.flatnonzero(coef)
        state = CRFActiveSet(self, support=list(support), coef_s=coef[support], fit=False)
        state._refit(dense_only=True)
        return state.value, state.theta

    def start(self) -> CRFActiveSet:
        return CRFActiveSet(self)

    # ----------------------------------------------------------------- prediction
    def predict(self, X, coef: np.ndarray, dense: dict[str, np.ndarray]):
        """Most probable label sequences (Viterbi) of new chains, in the training labels.

        Observed states not seen in training fire no feature. ``X`` is one (T, D) array or a
        list of them; the result has the same form.
        """
        single = not isinstance(X, list | tuple)
        xs = [np.asarray(X)] if single else [np.asarray(x) for x in X]
        out = []
        W = np.asarray(coef, dtype=float).reshape(self.n_rows, self.n_labels)
        offset = self.chains.state_offset
        for x in xs:
            x = x[:, None] if x.ndim == 1 else x
            U = np.tile(dense["label_bias"], (x.shape[0], 1))
            for v, values in enumerate(self.chains.state_values):
                code = np.searchsorted(values, x[:, v].astype(values.dtype))
                seen = (code < len(values)) & (values[np.minimum(code, len(values) - 1)] == x[:, v])
                U[seen] += W[offset[v] + code[seen]]
            out.append(self.chains.classes[viterbi(U, dense["transitions"])])
        return out[0] if single else out


class CRFActiveSet(ActiveSet):
    """The CRF refitted on a support: w_S, the dense (b, L), U, the marginals there."""

    objective: CRF
    support: list[int]

    def __init__(
        self,
        objective: CRF,
        support: list[int] | None = None,
        coef_s: np.ndarray | None = None,
        fit: bool = True,
    ) -> None:
        self.objective = objective
        self.support = list(support or [])
        self._w = np.zeros(len(self.support)) if coef_s is None else np.asarray(coef_s, float)
        C = objective.n_labels
        # Start from the label frequencies: the optimum of the biases alone, up to the ridge.
        bias = np.log(np.maximum(objective.label_counts, 0.5))
        bias -= bias[0]  # b[0] = 0 fixes the biases' flat direction (see _refit)
        self.theta = np.concatenate([bias, np.zeros(C * C)])
        self.value = np.inf
        self._hessian: np.ndarray | None = None  # of the last refit, carried to the next
        if fit:
            self._refit()

    # ----------------------------------------------------------------- state
    @property
    def intercept(self) -> float:
        return 0.0

    @property
    def dense_params(self) -> dict[str, np.ndarray]:
        bias, trans = self.objective.split_dense(self.theta)
        return {"label_bias": bias.copy(), "transitions": trans.copy()}

    def copy(self) -> CRFActiveSet:
        new = CRFActiveSet.__new__(CRFActiveSet)
        new.__dict__.update(self.__dict__)
        new.support = list(self.support)
        new._w, new.theta = self._w.copy(), self.theta.copy()
        return new

    # ----------------------------------------------------------------- refit
    def _refit(self, dense_only: bool = False, change: tuple[str, int] | None = None) -> None:
        """Minimise Q over (w_S, b, L) (over (b, L) alone with ``dense_only``), warm-started.

        Damped Newton with the Hessian from forward differences of the exact gradient (see
        :func:`~engine.objectives.fd_newton.chord_newton`). The paper refits with L-BFGS; on
        the T = 800 chains L-BFGS needed about 300 iterations (one forward-backward pass each)
        for the precision FoBa's thresholds need, Newton 4 or 5.

        b[0] stays 0: adding a constant to every label bias changes no probability, and that
        flat direction would make the Hessian singular.

        The last Hessian is kept between refits. ``change`` says how the support just changed:
        ("add", p) inserts a row and column for the new coordinate at p (one forward difference,
        at the old optimum, where the rest of the matrix was computed); ("remove", p) deletes
        them. Newton then starts with a nearly exact Hessian instead of computing a new one.
        """
        obj = self.objective
        S = np.array([] if dense_only else self.support, dtype=np.intp)
        k = len(S)
        fixed = self.coef
        z = np.concatenate([self._w if k else np.zeros(0), self.theta])
        free = np.ones(z.size, dtype=bool)
        free[k] = False  # b[0]

        def evaluate(Zf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            Z = np.zeros((Zf.shape[0], z.size))
            Z[:, free] = Zf
            f, G = obj.batch_value_gradient(fixed, S, Z)
            return f, G[:, free]

        x = z[free]
        fs, gs = evaluate(x[None])
        f, g = float(fs[0]), gs[0]
        H = None if dense_only else self._carried_hessian(change, evaluate, x, g)
        x, _, H = chord_newton(evaluate, x, f, g, H)
        if not dense_only:
            self._hessian = H
        z[free] = x
        if k:
            self._w = z[:k].copy()
        self.theta = z[k:].copy()
        self._evaluate()

    def _carried_hessian(self, change, evaluate, x: np.ndarray, g: np.ndarray):
        H = self._hessian
        if H is None or change is None:
            return None
        kind, p = change
        if kind == "remove":
            return np.delete(np.delete(H, p, axis=0), p, axis=1)
        h = FD_STEP * max(1.0, abs(x[p]))
        step = np.zeros_like(x)
        step[p] = h
        _, G = evaluate((x + step)[None])
        col = (G[0] - g) / h
        H = np.insert(np.insert(H, p, 0.0, axis=0), p, 0.0, axis=1)
        H[p, :] = col
        H[:, p] = col
        return H

    def _evaluate(self) -> None:
        """Value, gradient and marginals at the current point (cached for the scores)."""
        self.value, self._grad, _, self.U, self.marginals = self.objective.evaluate(
            self.coef, self.theta
        )

    def add(self, j: int) -> float:
        if j in self.support:
            raise ValueError(f"feature {j} is already selected")
        old = self.value
        self.support.append(int(j))
        self._w = np.append(self._w, 0.0)
        self._refit(change=("add", len(self.support) - 1))
        return old - self.value

    def remove(self, j: int) -> float:
        old = self.value
        p = self.support.index(j)
        del self.support[p]
        self._w = np.delete(self._w, p)
        self._refit(change=("remove", p))
        return self.value - old

    # ----------------------------------------------------------------- scores
    def gradient(self) -> np.ndarray:
        return self._grad.copy()

    def quadratic_scores(self) -> np.ndarray:
        # Shalev-Shwartz et al. Sec. 2.3 with the unary potentials as the predictions: feature j
        # is the column 1[t in P_j] of label c_j, whose squared norm is its firing count.
        obj = self.objective
        counts = np.repeat([len(p) for p in obj.row_positions], obj.n_labels).astype(float)
        g = self._grad - obj.lam * self.coef
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.where(counts > 0, g * g / (2 * counts / obj.n_samples), 0.0)
        s[self.support] = 0.0
        return s

    def deletion_costs(self) -> np.ndarray:
        obj = self.objective
        if not self.support:
            return np.zeros(0)
        S = np.array(self.support)
        U = self._moved_unary(S, -self._w)
        _, trans = obj.split_dense(self.theta)
        m = forward_backward(obj.chains.layout, U, trans, marginals=False)
        log_z = m.log_z.sum(axis=1)
        base = self.marginals.log_z.sum()
        w = self._w
        return (log_z - base + w * obj.feature_counts[S]) / obj.n_samples - 0.5 * obj.lam * w**2

    def _moved_unary(self, features: np.ndarray, alpha: np.ndarray) -> np.ndarray:
        """U with feature features[b] moved by alpha[b], for every b: shape (B, N, C)."""
        obj = self.objective
        C = obj.n_labels
        U = np.repeat(self.U[None], len(features), axis=0)
        for b, (j, a) in enumerate(zip(features, alpha, strict=True)):
            U[b, obj.row_positions[j // C], j % C] += a
        return U

    def coordinate_drops(self) -> np.ndarray:
        """Q(w) - min_a Q(w + a e_j) for every candidate, with b and L held (Algorithm 1,
        line 4 of Liu et al.: only coordinate j moves).

        The 1-D problems are convex; their derivative is (E_a[f_j] - n_j)/N + lam a, one batched
        forward-backward pass for all unfinished candidates. Safeguarded secant on the
        derivative: a bracket kept by its sign (starting at [-50, 0] or [0, 50], the cap on a
        move), bisection when a secant step leaves it. The first step is Newton's with the
        curvature of independent positions, sum_t mu_t(c)(1 - mu_t(c))/N + lam.
        """
        obj = self.objective
        C, n = obj.n_labels, obj.n_samples
        drops = np.zeros(obj.n_features)
        fires = np.repeat([len(p) > 0 for p in obj.row_positions], C)
        cand = np.flatnonzero(fires)
        cand = np.setdiff1d(cand, self.support)
        g0 = self._grad[cand]  # w_j = 0 off the support
        cand, g0 = cand[g0 != 0], g0[g0 != 0]
        if cand.size == 0:
            return drops
        node = self.marginals.node[0]
        curv = (
            np.array(
                [
                    float(
                        np.sum(
                            node[obj.row_positions[j // C], j % C]
                            * (1 - node[obj.row_positions[j // C], j % C])
                        )
                    )
                    for j in cand
                ]
            )
            / n
            + obj.lam
        )
        lo = np.where(g0 > 0, -_COORD_BOUND, 0.0)
        hi = np.where(g0 > 0, 0.0, _COORD_BOUND)
        a_prev, g_prev = np.zeros(cand.size), g0.copy()
        a = np.clip(-g0 / np.maximum(curv, 1e-300), lo, hi)
        best_a = np.zeros(cand.size)
        best_drop = np.zeros(cand.size)
        active = np.arange(cand.size)
        base_logz = self.marginals.log_z.sum()
        _, trans = obj.split_dense(self.theta)
        # The drop errs by about g^2 / (2 curvature): a derivative 1e-7 times the first one
        # leaves a relative error of 1e-14 in the drop.
        tol = 1e-15 + 1e-7 * np.abs(g0)
        for _ in range(_COORD_MAXITER):
            js = cand[active]
            U = self._moved_unary(js, a[active])
            m = forward_backward(obj.chains.layout, U, trans, pairs=False)
            assert m.node is not None  # marginals were asked for
            expected = np.array(
                [m.node[b, obj.row_positions[j // C], j % C].sum() for b, j in enumerate(js)]
            )
            aa = a[active]
            g = (expected - obj.feature_counts[js]) / n + obj.lam * aa
            drop = (base_logz - m.log_z.sum(axis=1) + aa * obj.feature_counts[js]) / n
            drop -= 0.5 * obj.lam * aa**2
            better = drop > best_drop[active]
            best_drop[active[better]] = drop[better]
            best_a[active[better]] = aa[better]
            done = (np.abs(g) <= tol[active]) | (
                hi[active] - lo[active] <= 1e-12 * (1 + np.abs(aa))
            )
            pos = g > 0
            hi[active[pos]] = aa[pos]
            lo[active[~pos]] = aa[~pos]
            step = _secant(aa, g, a_prev[active], g_prev[active], lo[active], hi[active])
            a_prev[active], g_prev[active] = aa, g
            a[active] = step
            active = active[~done]
            if active.size == 0:
                break
        drops[cand] = np.maximum(best_drop, 0.0)
        return drops


def _secant(a, g, a_prev, g_prev, lo, hi) -> np.ndarray:
    """Next point of the safeguarded secant iteration (vectorised): the secant step when it
    stays strictly inside the bracket [lo, hi], else the bracket's midpoint."""
    with np.errstate(divide="ignore", invalid="ignore"):
        sec = a - g * (a - a_prev) / (g - g_prev)
    inside = np.isfinite(sec) & (sec > lo) & (sec < hi)
    return np.where(inside, sec, 0.5 * (lo + hi))


register_objective(
    ObjectiveSpec(
        name="crf",
        title="Linear-chain CRF",
        summary="Negative log-likelihood of a linear-chain CRF on sequences of discrete "
        "observations (mean over positions) + (lam/2)||w||^2; sensor x state x label "
        "indicators are selected, label biases and transitions always fitted.",
        reference="Liu, Fujimaki & Ye 2014, Section 5 and Appendix D.2",
        factory=CRF,
        params=(
            Param(
                "lam",
                "float",
                1e-3,
                "Ridge weight lambda on ||w||^2/2 and on the transitions (keeps the optimum "
                "finite when an indicator never fires with a label).",
                minimum=0.0,
            ),
        ),
        task="sequence",
        check_input=check_chains,
    )
)
