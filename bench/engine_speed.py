#!/usr/bin/env python
"""Engine speed against reference peers, measured in the same run.

Usage (from the repository root)::

    python bench/engine_speed.py            # full run, a few minutes on 2 cores
    python bench/engine_speed.py --quick    # fewer repeats, shorter caps, skips slow extras
    python bench/engine_speed.py --only a,b,micro
    python bench/engine_speed.py --only e --profile e:foba-obj
    python bench/engine_speed.py --threads 1     # BLAS limited to one thread for everything
    python bench/engine_speed.py --load          # a busy loop on the other core meanwhile

By default BLAS keeps its library default thread count (what a user calling engine.select from
Python gets); our headline methods also run with BLAS limited to one thread in the same
interleaved rounds ("[1 thread]" rows), which gives the default-vs-one-thread ratios.

Every figure is the median wall time of several repeats after one warm-up run, and runs are
interleaved (one run of every method per round) so that machine noise hits ours and the peers
alike; compare the *ratios*, not the absolute seconds. One of our runs that exceeds the per-run
cap is stopped through the engine's public cancellation (a recorder callback returning False)
and reported as ">= cap". Objective values are always *our* objective evaluated at each
method's selected support, refitted by our engine (``Objective.fit_support(S).value``), so
supports chosen by peers with different losses (abess, LARS) are compared on one scale.

Targets are printed as PASS / MISS next to the figures; the script never fails on a MISS.
See bench/README.md for the problems, the peers' settings and how to read the output.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import math
import multiprocessing
import os
import platform
import pstats
import random
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# numpy asks the kernel for transparent huge pages on every array of 4 MB or more; where the
# kernel then compacts memory on the page fault (THP defrag "madvise", as on the 2-core
# machine), a fresh 80 MB array stalls for up to 0.3 s now and then: on (b) the spread of
# lars_path's timing was 0.14-0.49 s with huge pages and 0.174-0.18 s without. Off, before
# numpy loads, for ours and the peers alike (the peer process inherits it); the report says so.
os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")

import numpy as np
import scipy
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine.objectives import LeastSquares, Logistic  # noqa: E402

try:  # peers are optional: a missing one is reported as n/a, never a crash
    import sklearn
    from sklearn.linear_model import (
        Lasso,
        LogisticRegression,
        OrthogonalMatchingPursuit,
        lars_path,
        orthogonal_mp,
    )
except ImportError:  # pragma: no cover
    sklearn = None
try:
    import abess
except ImportError:  # pragma: no cover
    abess = None
try:
    import threadpoolctl
except ImportError:  # pragma: no cover
    threadpoolctl = None

PROBLEM_KEYS = ("a", "b", "c", "d", "e", "f", "micro")
LIU_SPARSITIES = (5, 8, 11, 14)
LOGISTIC_LAM_D = 0.01  # Liu et al. Appendix D.1 (synthetic)
LOGISTIC_LAM_E = 1e-4  # the engine's default (Liu et al.'s UCI setting)

# Targets (printed, never enforced).
MICRO_TARGET = 1.3  # one forward step <= 1.3 x one X^T r on (b)
SPARSE_TARGET_S = 0.25  # FoBa on (c)
ABESS_FACTOR = 2.0  # FoBa-obj on logistic within 2x abess's time
# Issue 12 goals (ratios at the default threading)
THREAD_RATIO = 1.05  # ours at default threads / ours at one thread
E_OBJ_FACTOR, E_GDT_FACTOR, D_OBJ_FACTOR = 3.0, 2.0, 2.0  # vs abess
LARS_FACTOR, LIBLINEAR_FACTOR, SPARSE_FACTOR = 1.5, 2.0, 1.0
GROWTH_FACTOR = 1.5  # (f): FoBa's default at k = 200 vs abess, one BLAS thread and default
SPARSITY = {"path_end": "sparsity"}
OBJ_RTOL = 1e-9  # "no worse than" tolerance on objective values
FAST_RUN, FAST_REPEATS = 0.2, 5  # runs under FAST_RUN seconds get at least FAST_REPEATS repeats


def log(msg: str) -> None:
    """Progress goes to stderr so stdout stays a clean markdown report."""
    print(msg, file=sys.stderr, flush=True)


# =========================================================================== problems


@dataclass
class Problem:
    key: str
    title: str
    X: Any
    y: np.ndarray
    k: int
    objective: str  # "least_squares" or "logistic"
    params: dict[str, Any] = field(default_factory=dict)  # objective params (lam)
    source: str = "inline"
    _loss: Any = None

    @property
    def is_sparse(self) -> bool:
        return sp.issparse(self.X)

    def loss(self):
        """Our objective on this data (built once; used to refit every method's support)."""
        if self._loss is None:
            if self.objective == "least_squares":
                self._loss = LeastSquares(self.X, self.y)
            else:
                self._loss = Logistic(self.X, self.y, **self.params)
        return self._loss

    def refit_value(self, support) -> float:
        return float(self.loss().fit_support([int(j) for j in support]).value)


def _from_datasets(name: str, seed: int, **params):
    """engine.datasets.generate(name, ...) -> (X, y, source label), or None if unavailable."""
    try:
        from engine.datasets import generate
    except Exception:  # module missing or broken: use the inline construction
        return None
    try:
        P = generate(name, random_state=seed, **params)
        return P.X, np.asarray(P.y), f"engine.datasets.generate({name!r}, random_state={seed})"
    except Exception as exc:
        log(f"  engine.datasets.generate({name!r}) failed ({exc!r}); using inline construction")
        return None


def problem_a(seed: int) -> Problem:
    n, d, k = 100, 500, 5
    got = _from_datasets("zhang2008", seed, n=n, d=d, k_true=k, noise_var=0.1)
    if got is None:
        # Inline version of Zhang's setting: 5 true N(0,1) columns, 10 decoys correlated 0.85
        # with positive mixes of two true columns, columns scaled to ||f_j||^2 = n,
        # coefficients U[0, 10], noise variance 0.1.
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((n, d))
        S = np.sort(rng.choice(d, k, replace=False))
        X[:, S] *= np.sqrt(n) / np.linalg.norm(X[:, S], axis=0)
        decoys = rng.choice(np.setdiff1d(np.arange(d), S), 2 * k, replace=False)
        for j in decoys:
            par = rng.choice(S, 2, replace=False)
            u = X[:, par] @ rng.uniform(0, 1, 2)
            u *= np.sqrt(n) / np.linalg.norm(u)
            z = X[:, j] * np.sqrt(n) / np.linalg.norm(X[:, j])
            X[:, j] = 0.85 * u + np.sqrt(1 - 0.85**2) * z
        X *= np.sqrt(n) / np.linalg.norm(X, axis=0)
        w = np.zeros(d)
        w[S] = rng.uniform(0, 10, k)
        y = X @ w + rng.normal(0, np.sqrt(0.1), n)
        got = (X, y, "inline (Zhang 2008 construction)")
    X, y, src = got
    return Problem(
        "a",
        "(a) least squares, Zhang 2008 Table 1 setting: n=100, d=500, k=5, 10 correlated decoys",
        X,
        y,
        k,
        "least_squares",
        source=src,
    )


_B_CACHE: dict[int, Problem] = {}


def problem_b(seed: int, n: int = 1000, d: int = 10_000, k: int = 50) -> Problem:
    if seed in _B_CACHE:
        return _B_CACHE[seed]
    P = _dense_least_squares("b", "(b) least squares dense", seed, n, d, k)
    _B_CACHE[seed] = P
    return P


def problem_f(seed: int) -> Problem:
    """Issue 22's growth in k: FoBa's default path against abess at k = 200 (the default grew
    by 27.5 ms per unit of k against abess's 1.3 ms when the issue was filed)."""
    return _dense_least_squares("f", "(f) growth in k, least squares dense", seed, 1000, 2000, 200)


def _dense_least_squares(key: str, title: str, seed: int, n: int, d: int, k: int) -> Problem:
    # Dense Gaussian design, k nonzeros +-U[1, 2], noise sd 1 (no generator lists this one).
    rng = np.random.default_rng(seed + 1000)
    X = rng.standard_normal((n, d))
    w = np.zeros(d)
    S = rng.choice(d, k, replace=False)
    w[S] = rng.uniform(1, 2, k) * rng.choice([-1.0, 1.0], k)
    y = X @ w + rng.standard_normal(n)
    return Problem(
        key,
        f"{title}: n={n}, d={d}, k={k}",
        X,
        y,
        k,
        "least_squares",
        source="inline (iid N(0,1), +-U[1,2] coefficients, noise sd 1)",
    )


def problem_c(seed: int) -> Problem:
    n, d, k, density = 20_000, 50_000, 100, 0.001
    got = _from_datasets("sparse_design", seed, n=n, d=d, density=density, k_true=k)
    if got is None:
        rng = np.random.default_rng(seed + 2000)
        X = sp.random(
            n, d, density=density, format="csr", random_state=rng, data_rvs=rng.standard_normal
        )
        w = np.zeros(d)
        nnz_col = np.diff(X.tocsc().indptr)
        S = rng.choice(np.argsort(-nnz_col)[: 20 * k], k, replace=False)
        w[S] = rng.uniform(1, 2, k) * rng.choice([-1.0, 1.0], k)
        signal = X @ w
        y = signal + rng.normal(0, np.std(signal) / np.sqrt(5.0), n)
        got = (X, y, "inline (scipy.sparse.random CSR, N(0,1) entries)")
    X, y, src = got
    X = sp.csr_matrix(X)
    return Problem(
        "c",
        f"(c) least squares sparse CSR: n={n}, d={d}, density {density}, k={k} (nnz={X.nnz})",
        X,
        y,
        k,
        "least_squares",
        source=src,
    )


def problem_d(seed: int, s: int) -> Problem:
    n, d = 100, 500
    got = _from_datasets("liu2014_logistic", seed + s, n=n, d=d, s=s)
    if got is None:
        rng = np.random.default_rng(seed + 3000 + s)
        b = np.zeros(d)
        S = rng.choice(d, s, replace=False)
        b[S] = rng.uniform(0, 1, s)
        b *= 5 / np.linalg.norm(b)
        y = np.where(np.arange(n) < (n + 1) // 2, 1, -1)[rng.permutation(n)]
        X = rng.standard_normal((n, d)) + y[:, None] * b[None, :]
        got = (X, y, "inline (Liu et al. App. D.1 construction)")
    X, y, src = got
    return Problem(
        f"d{s}",
        f"(d) logistic, Liu et al. App. D.1: n={n}, d={d}, s=k={s}, lam={LOGISTIC_LAM_D}",
        X,
        y,
        s,
        "logistic",
        params={"lam": LOGISTIC_LAM_D},
        source=src,
    )


def problem_e(seed: int) -> Problem:
    n, p, k = 600, 200, 50
    got = _from_datasets("elenberg2016", seed, n=n, p=p, s=k, alpha=0.3)
    if got is None:
        rng = np.random.default_rng(seed + 4000)
        a, var = 0.3, 5.0
        Z = rng.normal(0, np.sqrt(var), (n, p))
        X = np.empty((n, p))
        X[:, 0] = Z[:, 0] / np.sqrt(1 - a * a)
        for j in range(1, p):
            X[:, j] = a * X[:, j - 1] + Z[:, j]
        w = np.zeros(p)
        S = rng.choice(p, k, replace=False)
        w[S] = rng.choice([-1.0, 1.0], k) * np.sqrt(5.0 / k)
        y = (rng.random(n) < 1 / (1 + np.exp(-(X @ w)))).astype(int)
        got = (X, y, "inline (Elenberg et al. AR(1) construction)")
    X, y, src = got
    return Problem(
        "e",
        f"(e) logistic AR(1), Elenberg et al.: n={n}, p={p}, k={k}, alpha=0.3, "
        f"lam={LOGISTIC_LAM_E:g}",
        X,
        y,
        k,
        "logistic",
        params={"lam": LOGISTIC_LAM_E},
        source=src,
    )


# =========================================================================== methods


@dataclass
class Outcome:
    support: np.ndarray | None  # None: no size-k answer (cut before reaching k)
    steps: int | None = None
    cut: bool = False
    note: str = ""


@dataclass
class Method:
    name: str
    side: str  # "ours" or "peer"
    run: Callable[[], Outcome] | None  # None: not applicable (reason in na)
    na: str = ""
    # A peer that cannot be cancelled (abess's C++ core): ``run`` is None and this is
    # (module-level function, data, extra args), timed as function(*data, *args) in the peer
    # process (:class:`PeerProcess`), which is killed and replaced at the cap.
    isolated: tuple[Callable[..., Outcome], tuple, tuple] | None = None

    @property
    def runnable(self) -> bool:
        return self.run is not None or self.isolated is not None


def ours(
    P: Problem,
    algorithm: str,
    cap: float,
    label: str | None = None,
    one_thread: bool = False,
    **params,
) -> Method:
    kw = {**P.params, **params}

    def select():
        deadline = time.perf_counter() + cap
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = engine.select(
                P.X,
                P.y,
                algorithm=algorithm,
                objective=P.objective,
                k=P.k,
                recorder=lambda _e: time.perf_counter() < deadline,
                **kw,
                standardize=False,
            )
        return res, len(caught)

    def run() -> Outcome:
        if one_thread and threadpoolctl is not None:
            with threadpoolctl.threadpool_limits(1, user_api="blas"):
                res, n_warn = select()
        else:
            res, n_warn = select()
        note = f"{n_warn} warning(s) reached the caller" if n_warn else ""
        if not res.cancelled:
            return Outcome(np.asarray(res.support), res.n_steps, note=note)
        # Stopped at the cap: the best size-k support along the partial path, if it got there.
        best = res.best_along_path().get(P.k)
        support = np.array(sorted(best[0])) if best else None
        return Outcome(
            support, res.n_steps, cut=True, note=f"cut at {cap:g} s after {res.n_steps} steps"
        )

    name = label or algorithm
    return Method(f"{name} [1 thread]" if one_thread else name, "ours", run)


def _first_error(fn: Callable[[], Any]) -> str | None:
    try:
        fn()
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:90]}"
    return None


def peers_least_squares(P: Problem) -> list[Method]:
    k, X, y = P.k, P.X, P.y
    out: list[Method] = []
    if sklearn is None:
        return [
            Method(n, "peer", None, na="scikit-learn not installed")
            for n in ("sklearn OMP", "orthogonal_mp (normalised)", "lars_path lasso")
        ]

    # -- sklearn OrthogonalMatchingPursuit (centres X and y itself: fit_intercept=True)
    if P.is_sparse:
        tiny = sp.random(6, 5, density=0.5, format="csr", random_state=0)
        err = _first_error(
            lambda: OrthogonalMatchingPursuit(n_nonzero_coefs=1).fit(tiny, np.arange(6.0))
        )
        out.append(
            Method(
                "sklearn OMP",
                "peer",
                None,
                na=f"does not accept sparse X ({err})" if err else "not tried",
            )
        )
        out.append(
            Method(
                "orthogonal_mp (normalised)",
                "peer",
                None,
                na="needs dense X; centring + normalising densifies "
                f"{X.shape[0]}x{X.shape[1]} (8 GB)",
            )
        )
        out.append(
            Method(
                "lars_path lasso",
                "peer",
                None,
                na="needs dense X (sparse input would densify to 8 GB), "
                "and centring for the intercept densifies anyway",
            )
        )
    else:

        def sk_omp() -> Outcome:
            m = OrthogonalMatchingPursuit(n_nonzero_coefs=k).fit(X, y)
            return Outcome(np.flatnonzero(m.coef_))

        out.append(Method("sklearn OMP", "peer", sk_omp))

        # -- orthogonal_mp on centred, unit-norm columns prepared outside the timing: the
        # same selection rule as our forward-obj (largest (x_j.r)^2 / ||x_j||^2).
        mean = X.mean(axis=0)
        Xc = X - mean
        norms = np.linalg.norm(Xc, axis=0)
        norms[norms == 0] = 1.0
        Xn = np.asfortranarray(Xc / norms)
        yc = y - y.mean()

        def sk_omp_pre() -> Outcome:
            coef = orthogonal_mp(Xn, yc, n_nonzero_coefs=k)
            return Outcome(np.flatnonzero(coef))

        out.append(Method("orthogonal_mp (normalised)", "peer", sk_omp_pre))

        # -- lars_path(method='lasso') run until k features are active: on centred data
        # prepared outside the timing (the peer at its fastest), and as a user with an
        # intercept calls it, centring X and y inside the timing (ours centres inside too).
        Xcf = np.asfortranarray(Xc)

        def lars_on(Xc_, yc_) -> Outcome:
            max_iter, active = k, []
            for _ in range(20):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    _, active, coefs = lars_path(Xc_, yc_, method="lasso", max_iter=max_iter)
                if len(active) >= k:
                    break
                max_iter += k - len(active)
            support = np.flatnonzero(coefs[:, -1])
            return Outcome(
                support,
                steps=coefs.shape[1] - 1,
                note="" if len(support) == k else f"{len(support)} active",
            )

        out.append(Method("lars_path lasso", "peer", lambda: lars_on(Xcf, yc)))
        out.append(
            Method(
                "lars_path lasso, centring timed",
                "peer",
                lambda: lars_on(X - X.mean(axis=0), y - y.mean()),
            )
        )

    out.append(abess_method(P))
    return out


def sparse_lasso_path(P: Problem) -> Method:
    """scikit-learn's Lasso (coordinate descent, implicit centring of sparse X), warm-started
    along 100 log-spaced alphas from alpha_max until k features are active."""
    if sklearn is None:
        return Method("sklearn Lasso path", "peer", None, na="scikit-learn not installed")
    X, y, k = P.X, P.y, P.k
    Xc = sp.csc_matrix(X)
    n = X.shape[0]
    yc = y - y.mean()
    mean = np.asarray(Xc.mean(axis=0)).ravel()
    alpha_max = float(np.max(np.abs(Xc.T @ yc - mean * yc.sum())) / n)
    alphas = alpha_max * np.geomspace(1.0, 1e-3, 100)[1:]

    def run() -> Outcome:
        m = Lasso(alpha=alphas[0], warm_start=True, tol=1e-6, max_iter=1000)
        support = np.zeros(0, dtype=int)
        fits = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for a in alphas:
                m.set_params(alpha=a)
                m.fit(Xc, y)
                fits += 1
                support = np.flatnonzero(m.coef_)
                if len(support) >= k:
                    break
        return Outcome(support, steps=fits, note=f"{fits} alphas, {len(support)} active")

    return Method("sklearn Lasso path", "peer", run)


def liblinear_path(P: Problem) -> Method:
    """scikit-learn's liblinear l1 logistic regression along the grid our ``lasso`` uses
    (100 alphas, alpha_max to 1e-3 alpha_max, C = 1/(n alpha)), stopping at the first alpha with
    >= k features, with the same 10-step bisection in log(alpha) for exactly k. A large
    intercept_scaling makes liblinear's penalised intercept nearly unpenalised, as ours is."""
    if sklearn is None:
        return Method("liblinear L1 path", "peer", None, na="scikit-learn not installed")
    X, k = P.X, P.k
    t = (P.y == np.unique(P.y)[1]).astype(float)
    n = len(t)
    alpha_max = float(np.max(np.abs(X.T @ (t - t.mean()))) / n)
    alphas = alpha_max * np.geomspace(1.0, 1e-3, 100)

    def fit(a: float) -> np.ndarray:
        m = LogisticRegression(
            C=1.0 / (n * a), solver="liblinear", tol=1e-6, intercept_scaling=100.0, l1_ratio=1.0
        )
        m.fit(X, t)
        return np.flatnonzero(m.coef_.ravel())

    def run() -> Outcome:
        prev_a, support, fits = alphas[0], np.zeros(0, dtype=int), 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for a in alphas[1:]:
                cur = fit(a)
                fits += 1
                if len(cur) >= k:
                    if len(cur) > k:
                        lo, hi = prev_a, a
                        for _ in range(10):
                            mid = np.sqrt(lo * hi)
                            s_mid = fit(mid)
                            fits += 1
                            if len(s_mid) == k:
                                cur = s_mid
                                break
                            lo, hi = (mid, hi) if len(s_mid) < k else (lo, mid)
                    support = cur
                    break
                prev_a, support = a, cur
        return Outcome(support, steps=fits, note=f"{fits} fits")

    return Method("liblinear L1 path", "peer", run)


def abess_method(P: Problem) -> Method:
    if abess is None:
        return Method("abess", "peer", None, na="abess not installed")
    if P.objective == "logistic":
        classes = np.unique(P.y)
        y = (P.y == classes[1]).astype(float)  # abess wants 0/1 labels
    else:
        y = P.y  # a scipy.sparse X switches abess to its sparse path by itself
    return Method(
        "abess", "peer", None, isolated=(abess_fit, (P.X, y), (P.k, P.objective == "logistic"))
    )


def abess_fit(X, y, k: int, logistic: bool) -> Outcome:
    """abess at support size k, one thread (module level: the peer process imports it)."""
    model = abess.LogisticRegression if logistic else abess.LinearRegression
    m = model(support_size=[k], cv=1, thread=1)
    m.fit(X, y)
    return Outcome(np.flatnonzero(m.coef_))


# =========================================================================== timing


@dataclass
class Measured:
    method: Method
    times: list[float] = field(default_factory=list)
    warmup: float | None = None
    outcome: Outcome | None = None
    objective: float | None = None
    error: str | None = None

    @property
    def cut(self) -> bool:
        return bool(self.outcome and self.outcome.cut)

    @property
    def runs(self) -> int:
        return len(self.times)

    @property
    def median(self) -> float | None:
        if self.times:
            return statistics.median(self.times)
        return self.warmup

    @property
    def ok(self) -> bool:
        return self.method.runnable and self.error is None and self.median is not None


@dataclass
class Config:
    quick: bool
    repeats: int
    budget: float  # seconds of repeats per method and problem
    slow: float  # a warm-up slower than this is the only measurement
    cap: float  # per-run cap on our runs
    peer_cap: float  # cap on a run of a peer that cannot be cancelled (abess)
    peers: PeerProcess | None = None  # where those run (started by main)
    one_thread_rows: bool = True  # also time the headline methods with BLAS on one thread


def timed(fn: Callable[[], Outcome]) -> tuple[float, Outcome]:
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


class PeerProcess:
    """One long-lived child process that times the peers which cannot be cancelled.

    Started once (``spawn``), sent each problem's data once, killed and replaced when a run
    passes the cap. Forking the timing process for every such run, as this script did before,
    distorted both sides: each of our runs after a fork ran up to 2x slower (copy-on-write
    faults on the parent's heap: 26 ms against 13 ms on (d) s=14), and abess's first run in a
    fresh child took 2x its steady time (14.9 ms against 7.5 ms), which flattered our ratios.
    """

    def __init__(self) -> None:
        self._ctx = multiprocessing.get_context("spawn")
        self._start()

    def _start(self) -> None:
        self.conn, child = self._ctx.Pipe()
        self.proc = self._ctx.Process(target=_peer_loop, args=(child,), daemon=True)
        self.proc.start()
        child.close()
        self._data: tuple | None = None  # what the child holds (kept: an id could be reused)

    def time(self, method: Method, cap: float) -> tuple[float, Outcome]:
        fn, data, args = method.isolated
        if self._data is not data:
            self.conn.send(("load", data))
            self._data = data
        self.conn.send(("run", fn, args))
        if not self.conn.poll(cap + 5.0):
            self.close()
            self._start()
            return cap, Outcome(None, cut=True, note=f"no answer within {cap:g} s (killed)")
        status, t, out = self.conn.recv()
        if status == "error":
            raise RuntimeError(t)
        return t, out

    def close(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()


def _peer_loop(conn) -> None:
    data: tuple = ()
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg[0] == "load":
            data = msg[1]
            continue
        fn, args = msg[1], (*data, *msg[2])
        try:
            conn.send(("ok", *timed(lambda fn=fn, args=args: fn(*args))))
        except BaseException as exc:
            conn.send(("error", f"{type(exc).__name__}: {exc}", None))


def measure(P: Problem, methods: list[Method], cfg: Config) -> list[Measured]:
    def once(m: Method) -> tuple[float, Outcome]:
        if m.isolated is not None:
            return cfg.peers.time(m, cfg.peer_cap)
        return timed(m.run)

    rows = [Measured(m) for m in methods]
    live = [r for r in rows if r.method.runnable]
    # Warm-up round (also gives the support and the per-method repeat count).
    plan: dict[int, int] = {}
    for r in live:
        log(f"  {P.key}: warm-up {r.method.name} ...")
        try:
            t, out = once(r.method)
        except Exception as exc:
            r.error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:100]}"
            log(f"    failed: {r.error}")
            continue
        r.warmup, r.outcome = t, out
        log(f"    {t:.3f} s{' (cut)' if out.cut else ''}")
        if out.cut or t > cfg.slow:
            plan[id(r)] = 0
        else:
            # Short runs are the ones a load spike distorts most, and repeats of them are cheap.
            reps = cfg.repeats if t > FAST_RUN else max(cfg.repeats, FAST_REPEATS)
            plan[id(r)] = int(min(reps, max(1, cfg.budget // max(t, 1e-9))))
    # Interleaved rounds: one run of every method still owed repeats, per round, in an order
    # shuffled per round (seeded): a method always run first, right after the peers' runs, was
    # measured up to 2x slower than its own twin run later in the round.
    for rnd in range(max(plan.values(), default=0)):
        order = list(live)
        random.Random(rnd).shuffle(order)
        for r in order:
            if r.error is None and plan.get(id(r), 0) > rnd:
                t, out = once(r.method)
                r.times.append(t)
                if out.cut:  # noise pushed a repeat past the cap: keep the first result
                    r.outcome = out
    for r in live:
        if r.outcome is not None and r.outcome.support is not None:
            r.objective = P.refit_value(r.outcome.support)
    return rows


# =========================================================================== report


def fmt_t(r: Measured) -> str:
    if not r.ok:
        return "n/a"
    t = r.median
    s = f"{t:.3f}" if t < 100 else f"{t:.0f}"
    return f">= {s}" if r.cut else s


def fmt_ratio(a: Measured, b: Measured) -> str:
    if not (a.ok and b.ok):
        return "n/a"
    ratio = a.median / b.median
    if a.cut and b.cut:
        return "?"
    if b.cut:
        return f"<= {ratio:.2f}"
    return f">= {ratio:.2f}" if a.cut else f"{ratio:.2f}"


def fmt_obj(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.6g}"


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


def find(rows: list[Measured], name: str) -> Measured | None:
    return next((r for r in rows if r.method.name == name), None)


def print_problem(P: Problem, rows: list[Measured]) -> None:
    print(f"\n### {P.title}\n")
    print(
        f"Data: {P.source}. Objective: {P.objective}"
        + (f" (lam={P.params['lam']:g})" if "lam" in P.params else "")
        + ".\n"
    )
    peers = [r for r in rows if r.method.side == "peer"]
    ref = find(rows, "foba-obj")
    head = ["method", "side", "median s", "runs", "min-max s"]
    head += [f"ours / {p.method.name}" for p in peers]
    head += ["objective (refit)", "vs foba-obj", "size", "steps", "note"]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(["---"] * len(head)) + "|")
    for r in rows:
        if r.times:
            spread = f"{min(r.times):.3f}-{max(r.times):.3f}"
            runs = str(r.runs)
        elif r.ok:
            spread, runs = "-", "1 (warm-up only)"
        else:
            spread, runs = "-", "0"
        ratios = [fmt_ratio(r, p) for p in peers] if r.method.side == "ours" else [""] * len(peers)
        rel = ""
        if r.objective is not None and ref is not None and ref.objective is not None:
            rel = f"{(r.objective - ref.objective) / abs(ref.objective):+.2e}"
        note = r.method.na or r.error or (r.outcome.note if r.outcome else "")
        if r.outcome is not None and r.outcome.support is None:
            note = (note + "; " if note else "") + "never reached k"
        size = str(len(r.outcome.support)) if r.outcome and r.outcome.support is not None else ""
        steps = str(r.outcome.steps) if r.outcome and r.outcome.steps is not None else ""
        cells = [
            r.method.name,
            r.method.side,
            fmt_t(r),
            runs,
            spread,
            *ratios,
            fmt_obj(r.objective),
            rel,
            size,
            steps,
            note.replace("|", "/"),
        ]
        print("| " + " | ".join(cells) + " |")


TARGETS: list[tuple[str, str, str]] = []  # (target, figure, verdict)


def target(name: str, figure: str, ok: bool | None) -> None:
    TARGETS.append((name, figure, verdict(ok)))
    print(f"- **{verdict(ok)}** {name}: {figure}")


def targets_dense_ls(P: Problem, rows: list[Measured]) -> None:
    print()
    fo, sk = find(rows, "foba-obj"), find(rows, "sklearn OMP")
    short = find(rows, "foba-obj max_steps=2k")
    if fo and sk and fo.ok and sk.ok:
        ratio = fo.median / sk.median
        extra = ""
        if short is not None and short.ok:
            extra = f"; informative: max_steps=2k gives {fmt_ratio(short, sk)}"
        target(
            f"({P.key}) FoBa-obj no slower than sklearn OMP to k={P.k}",
            f"{fmt_t(fo)} s vs {fmt_t(sk)} s, ratio {fmt_ratio(fo, sk)} (target <= 1.00)" + extra,
            (not fo.cut) and ratio <= 1.0,
        )
    else:
        target(f"({P.key}) FoBa-obj no slower than sklearn OMP", "not measured", None)


def targets_sparse(P: Problem, rows: list[Measured]) -> None:
    print()
    fo = find(rows, "foba-obj")
    if fo and fo.ok:
        target(
            f"({P.key}) sparse FoBa-obj under {SPARSE_TARGET_S} s",
            f"{fmt_t(fo)} s",
            (not fo.cut) and fo.median < SPARSE_TARGET_S,
        )
    else:
        target(f"({P.key}) sparse FoBa-obj under {SPARSE_TARGET_S} s", "not measured", None)


def targets_logistic(P: Problem, rows: list[Measured]) -> None:
    print()
    fo, ab, sw = find(rows, "foba-obj"), find(rows, "abess"), find(rows, "stepwise")
    time_ok = None
    fig = "not measured"
    if fo and ab and fo.ok and ab.ok:
        ratio = fo.median / ab.median
        time_ok = (not fo.cut) and ratio <= ABESS_FACTOR
        fig = (
            f"time {fmt_t(fo)} s vs abess {fmt_t(ab)} s = {fmt_ratio(fo, ab)}x "
            f"(<= {ABESS_FACTOR:g}x)"
        )
    obj_ok = None
    if fo and fo.objective is not None and sw is not None and sw.objective is not None:
        obj_ok = fo.objective <= sw.objective + OBJ_RTOL * abs(sw.objective)
        fig += f"; objective {fo.objective:.6g} vs stepwise {sw.objective:.6g} ({verdict(obj_ok)})"
    else:
        if sw is None:
            why = "not run"
        elif sw.method.na or sw.error:
            why = sw.method.na or sw.error
        elif sw.cut:
            why = "stepwise stopped at the cap before reaching k"
        else:
            why = "FoBa-obj has no size-k answer"
        fig += f"; objective comparison n/a ({why})"
    if time_ok is False or obj_ok is False:
        both = False
    else:
        both = True if (time_ok and obj_ok) else None
    target(f"({P.key}) FoBa-obj within {ABESS_FACTOR:g}x abess, objective <= stepwise", fig, both)


def _ratio_target(name: str, a: Measured | None, b: Measured | None, limit: float, extra=""):
    if a is None or b is None or not (a.ok and b.ok):
        target(name, "not measured", None)
        return
    ratio = a.median / b.median
    target(
        name,
        f"{fmt_t(a)} s / {fmt_t(b)} s = {fmt_ratio(a, b)} (<= {limit:g}){extra}",
        (not a.cut) and ratio <= limit,
    )


def _same_support(a: Measured | None, b: Measured | None) -> str:
    if not (a and b and a.outcome and b.outcome):
        return "n/a"
    sa, sb = a.outcome.support, b.outcome.support
    if sa is None or sb is None:
        return "n/a"
    return "identical" if set(sa.tolist()) == set(sb.tolist()) else "DIFFERENT"


def targets_issue12(P: Problem, rows: list[Measured]) -> None:
    """The goals of issue 12, from the rows of this problem."""
    print()
    for r in rows:
        if not r.method.name.endswith(" [1 thread]"):
            continue
        base = find(rows, r.method.name.removesuffix(" [1 thread]"))
        _ratio_target(
            f"({P.key}) {base.method.name if base else '?'}: default threads / one thread",
            base,
            r,
            THREAD_RATIO,
        )
    ab = find(rows, "abess")
    obj_rows = [find(rows, "foba-obj"), find(rows, "foba-obj path_end=sparsity")]
    gdt_rows = [find(rows, "foba-gdt"), find(rows, "foba-gdt path_end=sparsity")]
    if P.key == "e":
        for r in obj_rows:
            _ratio_target(f"(e) {r.method.name} / abess", r, ab, E_OBJ_FACTOR)
        for r in gdt_rows:
            _ratio_target(f"(e) {r.method.name} / abess", r, ab, E_GDT_FACTOR)
    if P.key.startswith("d"):
        default = obj_rows[0]
        for r in obj_rows:
            extra = ""
            if r and default and r.objective is not None and default.objective is not None:
                extra = f"; objective {r.objective:.9g} (default path {default.objective:.9g})"
            _ratio_target(f"({P.key}) {r.method.name} / abess", r, ab, D_OBJ_FACTOR, extra)
    if P.objective == "logistic":
        lib = find(rows, "liblinear L1 path")
        for name in ("lasso path_end=sparsity", "lasso"):
            r = find(rows, name)
            note = r.outcome.note if r and r.outcome else ""
            extra = f"; supports {_same_support(r, lib)}; {note or 'no warnings'}"
            _ratio_target(f"({P.key}) {name} / liblinear L1 path", r, lib, LIBLINEAR_FACTOR, extra)
    if P.key == "b":
        lars = find(rows, "lars_path lasso")
        timed_centring = find(rows, "lars_path lasso, centring timed")
        for name in ("lasso path_end=sparsity", "lasso"):
            r = find(rows, name)
            extra = f"; supports {_same_support(r, lars)}"
            _ratio_target(f"(b) {name} / lars_path to k", r, lars, LARS_FACTOR, extra)
            _ratio_target(
                f"(b) {name} / lars_path to k, centring timed", r, timed_centring, LARS_FACTOR
            )
    if P.key == "c":
        peer = find(rows, "sklearn Lasso path")
        for r in obj_rows:
            _ratio_target(f"(c) {r.method.name} / sklearn Lasso path", r, peer, SPARSE_FACTOR)


def micro_threads(seed: int) -> None:
    """The large dense X.T @ r inside an engine run: does it still get the threads?"""
    from engine import threads
    from engine.objectives.design import Design

    print("\n### X.T @ r on (b) inside the engine's single-threaded section\n")
    P = problem_b(seed)
    design = Design(P.X, center=True)
    r = np.random.default_rng(0).standard_normal(P.X.shape[0])

    def inside() -> float:
        with threads.small_products():
            t0 = time.perf_counter()
            design.rmatvec(r)
            return time.perf_counter() - t0

    def one() -> float:
        if threadpoolctl is None:
            return inside()
        with threadpoolctl.threadpool_limits(1, user_api="blas"):
            return inside()

    inside(), one()
    a, b = [], []
    for _ in range(30):
        a.append(inside())
        b.append(one())
    ma, mb = statistics.median(a), statistics.median(b)
    print(
        f"- Design.rmatvec in a run: {1e3 * ma:.2f} ms at default threads, {1e3 * mb:.2f} ms "
        f"with BLAS on one thread (ratio {ma / mb:.2f}; the threads are given back to this "
        f"product, {threads.WIDE_MIN_ENTRIES:.0e} entries and up)"
    )
    target(
        "(b) the large X.T @ r still uses the threads (default / one thread <= 1.0)",
        f"{ma / mb:.2f}",
        ma / mb <= 1.0,
    )


# =========================================================================== micro


def micro_forward_step(cfg: Config, seed: int) -> None:
    print("\n### Micro-benchmark on (b): one forward step vs one X^T r\n")
    P = problem_b(seed)
    X, y = P.X, P.y
    loss = LeastSquares(X, y)
    state = loss.start()
    for _ in range(25):
        state.add(int(np.argmax(state.coordinate_drops())))
    r = getattr(state, "residual", None)
    if r is None:
        r = y - X @ state.coef - state.intercept
    r = np.ascontiguousarray(r, dtype=np.float64)
    n_rep = 60 if cfg.quick else 100

    def step() -> float:
        s = state.copy()
        t0 = time.perf_counter()
        drops = s.coordinate_drops()
        j = int(np.argmax(drops))
        s.add(j)
        return time.perf_counter() - t0

    def xtr() -> float:
        t0 = time.perf_counter()
        X.T @ r
        return time.perf_counter() - t0

    def drops_only() -> float:
        t0 = time.perf_counter()
        state.coordinate_drops()
        return time.perf_counter() - t0

    j_next = int(np.argmax(state.coordinate_drops()))

    def add_only() -> float:
        s = state.copy()
        t0 = time.perf_counter()
        s.add(j_next)
        return time.perf_counter() - t0

    parts: dict[str, Callable[[], float]] = {
        "X.T @ r (numpy, C-ordered X)": xtr,
        "forward step: coordinate_drops + argmax + add": step,
        "  coordinate_drops() alone": drops_only,
        "  add(j) alone (Cholesky update + refit)": add_only,
    }
    if hasattr(state, "best_candidate"):

        def best() -> float:
            t0 = time.perf_counter()
            state.best_candidate("obj", set())
            return time.perf_counter() - t0

        parts["  best_candidate('obj') (what the path calls)"] = best
    for f in parts.values():  # warm-up
        f()
    samples: dict[str, list[float]] = {name: [] for name in parts}
    for _ in range(n_rep):  # interleaved
        for name, f in parts.items():
            gc.collect()
            samples[name].append(f())
    base = statistics.median(samples["X.T @ r (numpy, C-ordered X)"])
    print(
        f"n={X.shape[0]}, d={X.shape[1]}, support size {len(state.support)}; "
        f"median of {n_rep} interleaved repeats.\n"
    )
    base_min = min(samples["X.T @ r (numpy, C-ordered X)"])
    print("| operation | median ms | min ms | median / median X^T r | min / min X^T r |")
    print("|---|---|---|---|---|")
    for name, ts in samples.items():
        med = statistics.median(ts)
        print(
            f"| {name} | {1e3 * med:.3f} | {1e3 * min(ts):.3f} | {med / base:.2f} "
            f"| {min(ts) / base_min:.2f} |"
        )
    step_ts = samples["forward step: coordinate_drops + argmax + add"]
    ratio = statistics.median(step_ts) / base
    print()
    target(
        "(b) one forward step within 1.3x one X^T r",
        f"ratio of medians {ratio:.2f}, of minima {min(step_ts) / base_min:.2f} "
        f"(target <= {MICRO_TARGET})",
        ratio <= MICRO_TARGET,
    )


# =========================================================================== driver


def run_case(P: Problem, cfg: Config, *, stepwise: bool, extras: bool) -> list[Measured]:
    cap = cfg.cap
    methods = [
        ours(P, "foba-obj", cap),
        ours(P, "foba-gdt", cap),
        ours(P, "omp", cap),
        ours(P, "forward-obj", cap),
    ]
    if stepwise:
        methods.append(ours(P, "stepwise", cap))
    else:
        methods.append(Method("stepwise", "ours", None, na="skipped (--quick)"))
    if extras:
        methods.append(ours(P, "foba-obj", cap, label="foba-obj max_steps=2k", max_steps=2 * P.k))
    sparsity = "path_end=sparsity"
    methods += [
        ours(P, "foba-obj", cap, label=f"foba-obj {sparsity}", **SPARSITY),
        ours(P, "foba-gdt", cap, label=f"foba-gdt {sparsity}", **SPARSITY),
    ]
    lasso_here = P.objective == "logistic" or not P.is_sparse
    if lasso_here:
        methods += [
            ours(P, "lasso", cap),
            ours(P, "lasso", cap, label=f"lasso {sparsity}", **SPARSITY),
        ]
    if cfg.one_thread_rows:
        methods += [
            ours(P, "foba-obj", cap, one_thread=True),
            ours(P, "foba-gdt", cap, one_thread=True),
            ours(P, "foba-obj", cap, label=f"foba-obj {sparsity}", one_thread=True, **SPARSITY),
        ]
        if lasso_here:
            methods.append(
                ours(P, "lasso", cap, label=f"lasso {sparsity}", one_thread=True, **SPARSITY)
            )
    if P.objective == "least_squares":
        methods += peers_least_squares(P)
        if P.is_sparse:
            methods.append(sparse_lasso_path(P))
    else:
        methods.append(abess_method(P))
        methods.append(liblinear_path(P))
    return measure(P, methods, cfg)


def run_growth(P: Problem, cfg: Config) -> list[Measured]:
    """(f): the default FoBa paths at large k against abess, at the default BLAS threads and
    at one (abess runs on one thread either way); OMP for scale. No stepwise or lasso: the
    goal is about how the default grows with k."""
    cap = cfg.cap
    methods = [
        ours(P, "foba-obj", cap),
        ours(P, "foba-gdt", cap),
        ours(P, "omp", cap),
        ours(P, "foba-obj", cap, one_thread=True),
        ours(P, "foba-gdt", cap, one_thread=True),
        abess_method(P),
    ]
    return measure(P, methods, cfg)


def targets_growth(P: Problem, rows: list[Measured]) -> None:
    print()
    ab = find(rows, "abess")
    for name in ("foba-obj", "foba-obj [1 thread]", "foba-gdt", "foba-gdt [1 thread]"):
        _ratio_target(f"(f) {name} / abess at k = {P.k}", find(rows, name), ab, GROWTH_FACTOR)


def profile_one(spec: str, seed: int, cfg: Config) -> None:
    key, _, algorithm = spec.partition(":")
    builders = {
        "a": lambda: problem_a(seed),
        "b": lambda: problem_b(seed),
        "c": lambda: problem_c(seed),
        "e": lambda: problem_e(seed),
        "f": lambda: problem_f(seed),
    }
    for s in LIU_SPARSITIES:
        builders[f"d{s}"] = lambda s=s: problem_d(seed, s)
    builders["d"] = builders["d14"]
    if key not in builders or not algorithm:
        print(f"\n(--profile {spec!r}: use KEY:ALGORITHM with KEY in {sorted(builders)})")
        return
    P = builders[key]()
    log(f"profiling {algorithm} on {P.key} ...")
    prof = cProfile.Profile()
    deadline = time.perf_counter() + cfg.cap
    prof.enable()
    res = engine.select(
        P.X,
        P.y,
        algorithm=algorithm,
        objective=P.objective,
        k=P.k,
        recorder=lambda _e: time.perf_counter() < deadline,
        **P.params,
        standardize=False,
    )
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).strip_dirs().sort_stats("tottime").print_stats(15)
    print(
        f"\n### cProfile: {algorithm} on ({P.key}), {res.elapsed:.2f} s, {res.n_steps} steps"
        f"{' (cut at cap)' if res.cancelled else ''}, stop: {res.stop_reason}\n"
    )
    print("```")
    print(buf.getvalue().strip())
    print("```")


# --------------------------------------------------------------------------- app vs engine

APP_DATA: dict[str, Any] = {
    "generator": "gaussian_regression",
    "params": {"n": 1000, "d": 700, "k_true": 20},
}
APP_EVENTS = 600  # OMP with k = 599: 599 add events and the stop event
APP_RATIO = 1.10  # issue 22: a run's time within 10% of engine.select plus a fixed cost
APP_POLL_SECONDS = 0.01  # the client's poll of the run


def app_vs_engine(seed: int, cfg: Config) -> None:
    """A run's time through the app against engine.select on the same data (issue 22).

    The app (``python -m app`` as ``bench/api_latency.py`` starts it: SQLite, its worker
    processes) runs OMP to k = 599 (600 trace events, written in batches) and to k = 1 (2
    events). The goal is app(600) <= 1.1 x engine(600) + fixed, the fixed cost from the 2-event
    run. Medians of ``cfg.repeats`` rounds, app and engine interleaved.

    Like for like (the goal's verdict): the same engine.select call varies by more than 10%
    between fresh processes on a small VM, so the engine's terms are timed in ONE process as
    the workers run (their niceness, BLAS on one thread), interleaved: engine.select bare, and
    engine.select with the app's own recorder (``TraceWriter``, its heartbeat thread, writing
    the trace to a real SQLite database through ``lease.beat``) on a run submitted and claimed
    through the app's own functions. The app's work outside the engine's loop comes from its
    worker (``run_seconds - engine_seconds``: load, split, the engine's setup, summary,
    result). So app(n) = recorded loop(n) + outside(n), engine(n) = bare(n), each pair from
    one process.

    Cross-process (the old measure, still printed): the app's ``run_seconds`` and submit ->
    done as a client sees it, against engine.select here with BLAS on one thread, here at the
    library's default threads, and in the niced process; and the CPU seconds of the worker
    processes (from /proc) against those of the niced engine.select.
    """
    import tempfile

    import httpx

    from bench.api_latency import free_port, generate, server_up, start_server, until
    from engine.datasets import generate as make

    problem = make(APP_DATA["generator"], random_state=seed, **APP_DATA["params"])
    big = {"algorithm": "omp", "k": APP_EVENTS - 1}
    small = {"algorithm": "omp", "k": 1}
    common = {"certify": False, "exact": False, "test_fraction": None, "record_candidates": False}
    print("\n### App vs engine (issue 22)\n")
    print(
        f"{APP_DATA['generator']} {APP_DATA['params']}, seed {seed}; OMP k = {big['k']} "
        f"({APP_EVENTS} events) and k = 1 (2 events); load average {os.getloadavg()[0]:.2f}; "
        "the app's workers run BLAS on one thread, and so does engine.select in the goal\n"
    )
    ctx = multiprocessing.get_context("spawn")
    niced, child = ctx.Pipe()
    timer = ctx.Process(target=_niced_engine, args=(child, seed), daemon=True)
    timer.start()
    child.close()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        server = start_server(Path(tmp) / "data", port)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
                until(lambda: server_up(client), "the app to start", 120)
                body = {**APP_DATA, "random_state": seed}
                ds = generate(client, body)
                rows: dict[str, list[dict]] = {"big": [], "small": []}
                for i in range(1 + cfg.repeats):  # the first round warms the workers up
                    for name, req in (("small", small), ("big", big)):
                        request = {**req, **common}
                        rows[name].append(_app_round(client, ds, problem, request, niced, i))
                rows = {name: got[1:] for name, got in rows.items()}
        finally:
            server.terminate()
            server.wait(30)
            niced.close()
            timer.join(30)
    _app_report(rows)


def _app_round(client, dataset_id: int, problem, request: dict, niced, round_no: int) -> dict:
    from bench.api_latency import submit

    pids = client.get("/healthz").json()["jobs"]["pids"]
    cpu_before = _cpu_seconds(pids)
    start = time.perf_counter()
    run_id = submit(client, dataset_id, **request)
    while True:
        run = client.get(f"/api/runs/{run_id}").json()
        if run["status"] in ("done", "failed", "cancelled"):
            break
        time.sleep(APP_POLL_SECONDS)
    wall = time.perf_counter() - start
    cpu = _cpu_seconds(pids) - cpu_before
    events = client.get(f"/api/runs/{run_id}/trace", params={"limit": 5000}).json()["events"]
    t0 = time.perf_counter()
    res = engine.select(problem.X, problem.y, algorithm=request["algorithm"], k=request["k"])
    ours = time.perf_counter() - t0
    # The app's workers run BLAS on one thread (app/jobs/supervisor.py): the like-for-like
    # engine time for the goal.
    t0 = time.perf_counter()
    if threadpoolctl is not None:
        with threadpoolctl.threadpool_limits(1, user_api="blas"):
            engine.select(problem.X, problem.y, algorithm=request["algorithm"], k=request["k"])
    one = time.perf_counter() - t0
    niced.send((request, round_no % 2 == 0))  # bare first in even rounds, recorded in odd
    chosen = sorted(f["index"] for f in (run.get("result") or {}).get("support", []))
    same = chosen == sorted(int(j) for j in res.support)
    return {
        "status": run["status"],
        "run": run["run_seconds"],
        "wall": wall,
        "engine": one,
        "engine_default": ours,
        **niced.recv(),
        "worker_cpu": cpu,
        "in_worker": (run.get("result") or {}).get("engine_seconds") or math.nan,
        "events": len(events),
        "same": same,
    }


def _niced_engine(conn, seed: int) -> None:  # pragma: no cover - runs in a child process
    """engine.select timed as the app's workers run it: at their niceness, BLAS on one thread
    (the workers' policy, ``app.jobs.inprocess``/``supervisor``), in a process of its own;
    each request bare and with the app's recorder (``_WorkerCalls``), interleaved."""
    import tempfile

    from app.jobs.inprocess import WORKER_NICENESS
    from app.jobs.supervisor import one_blas_thread

    os.nice(WORKER_NICENESS)
    one_blas_thread()
    with tempfile.TemporaryDirectory() as tmp:
        calls = _WorkerCalls(Path(tmp), seed)
        calls.time({"algorithm": "omp", "k": 5}, recorded=True)  # warm-up: imports, BLAS, db
        while True:
            try:
                request, bare_first = conn.recv()
            except EOFError:
                calls.db.dispose()
                return
            got: dict[str, float] = {}
            for recorded in (False, True) if bare_first else (True, False):
                wall, cpu, loop = calls.time(request, recorded=recorded)
                if recorded:
                    got.update(recorded=wall, recorded_cpu=cpu, recorded_loop=loop)
                else:
                    got.update(engine_niced=wall, engine_cpu=cpu)
            conn.send(got)


class _WorkerCalls:  # pragma: no cover - runs in the niced child process
    """The worker's engine.select on a run of the app's own: a SQLite database and a data set
    of their own (the bench's table, made by the app's generator), a run submitted as the API
    submits it and claimed as a worker claims it, the arrays loaded and split as ``run_job``
    does; then ``select_run`` bare, or with ``TraceWriter`` and the heartbeat thread around it
    as ``run_job`` sets them up (the app's trace batch settings)."""

    def __init__(self, tmp: Path, seed: int) -> None:
        from sqlmodel import Session

        from app import storage
        from app.config import Settings
        from app.db import make_db
        from app.jobs.evaluation import split_rows
        from app.migrations import prepare_schema
        from app.models import DatasetGenerate
        from app.services.datasets import create_generated
        from app.storage import DirectoryStore

        # The server's settings (same environment), on a database of this process's own.
        self.settings = Settings(data_dir=tmp, database_url="")
        self.db = make_db(self.settings.database_url)
        prepare_schema(self.db)
        self.store = DirectoryStore(self.settings.data_dir)
        with Session(self.db) as session:
            body = DatasetGenerate(**APP_DATA, random_state=seed)
            dataset = create_generated(session, self.store, body)
            self.dataset_id = int(dataset.id or 0)
            arrays = self.store.load(dataset.file)
            X, y = storage.unpack_matrix(arrays), arrays["y"]
            train, _ = split_rows(y, dataset.task, None, 0)
            self.X, self.y = X[train], y[train]

    def time(self, request: dict, *, recorded: bool) -> tuple[float, float, float]:
        """Wall and CPU seconds of ``select_run``, and its result's ``elapsed`` (what a
        worker stores as ``engine_seconds``: the loop, without the objective's setup)."""
        from contextlib import nullcontext

        from sqlmodel import Session

        from app.jobs import lease
        from app.jobs.evaluation import select_run
        from app.jobs.tasks import JobContext, JobSpec, ProgressMeter, TraceWriter, heartbeat
        from app.models import RunCreate, RunStatus
        from app.services.runs import submit_run

        with Session(self.db) as session:
            body = RunCreate(dataset_id=self.dataset_id, **request)
            run_id = int(submit_run(session, _NoWorkers(), self.store, body, None).id or 0)
        held = lease.claim(self.db, run_id, "bench")
        assert held is not None
        job = JobSpec.load(self.db, run_id)
        ctx = JobContext(
            db=self.db,
            store=self.store,
            claim=held,
            batch_events=self.settings.trace_batch_events,
            batch_seconds=self.settings.trace_batch_seconds,
        )
        meter = ProgressMeter.for_job(job)
        writer = TraceWriter(ctx, meter) if recorded else None
        t0, c0 = time.perf_counter(), time.process_time()
        with heartbeat(ctx, meter) if recorded else nullcontext():
            result = select_run(job.run, job.dataset, self.X, self.y, recorder=writer)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        # Untimed, as a worker ends a run: the last events and the outcome stored.
        events = writer.drain() if writer is not None else []
        lease.finish(self.db, held, RunStatus.done, events=events)
        return wall, cpu, result.elapsed


class _NoWorkers:  # pragma: no cover - runs in the niced child process
    """A job backend without workers (``app.jobs.backend.JobBackend``): the run stays queued
    for this process to claim."""

    def start(self) -> None:
        pass

    def enqueue(self, session, run_ids) -> None:
        pass

    def submit(self, run_id: int) -> None:
        pass

    def stop(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {}


def _cpu_seconds(pids: list[int]) -> float:
    """CPU seconds (user + system) the processes ``pids`` have used so far (Linux /proc; nan
    elsewhere). A run's CPU time, unlike its wall time, does not count the time its niced
    worker waited for a core that other work held."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return math.nan
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _like_for_like(rows: dict, med: dict) -> None:
    """The goal's verdict from terms measured like for like (see ``app_vs_engine``)."""
    print(
        "#### Like for like: engine.select bare and with the app's recorder, interleaved in one "
        "process at the workers' niceness (one BLAS thread); the app's work outside the "
        "engine's loop from its worker\n"
    )
    print(
        "| run | events | engine.select, bare | engine.select + the app's recorder (SQLite) | "
        "recorder's cost (paired) | per event | its CPU cost (paired) | recorded / bare (paired) "
        "| the worker outside the engine's loop | app, like for like (recorded loop + outside) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, got in rows.items():
        m, events = med[name], got[0]["events"]
        print(
            f"| {name} | {events} | {m['engine_niced']:.3f} | {m['recorded']:.3f} | "
            f"{m['recorder']:+.4f} | {1e6 * m['recorder'] / events:+.0f} us | "
            f"{m['recorder_cpu']:+.4f} | {m['paired']:.3f} | "
            f"{m['outside']:.3f} | {m['app_like']:.3f} |"
        )
    big, small = med["big"], med["small"]
    fixed = small["app_like"] - small["engine_niced"]
    allowed = APP_RATIO * big["engine_niced"] + fixed
    verdict = "PASS" if big["app_like"] <= allowed else "MISS"
    figure = (
        f"{big['app_like']:.3f} s vs {APP_RATIO} x {big['engine_niced']:.3f} + fixed "
        f"{fixed:.3f} = {allowed:.3f} s (app / engine {big['app_like'] / big['engine_niced']:.2f})"
    )
    name = f"app at {APP_EVENTS} events within 10% + fixed, like for like"
    print(f"\n- **{verdict}** {name}: {figure}")
    TARGETS.append((name, figure, verdict))
    spread = [r["paired"] for r in rows["big"]]
    print(
        f"- recorded / bare at {APP_EVENTS} events, per round: {min(spread):.3f}-{max(spread):.3f}"
        f"; the worker's engine.select / the bare one in the niced process (cross-process): "
        f"{big['in_worker'] / big['engine_niced']:.2f}; load average {os.getloadavg()[0]:.2f}"
    )


def _app_report(rows: dict) -> None:
    keys = ("run", "wall", "in_worker", "engine", "engine_default", "engine_niced")
    cpu_keys = ("worker_cpu", "engine_cpu")
    for got in rows.values():  # the per-round terms of the like-for-like measure
        for r in got:
            r["outside"] = r["run"] - r["in_worker"]
            r["app_like"] = r["recorded_loop"] + r["outside"]
            r["recorder"] = r["recorded"] - r["engine_niced"]
            r["recorder_cpu"] = r["recorded_cpu"] - r["engine_cpu"]
            r["paired"] = r["recorded"] / r["engine_niced"]
    like_keys = (
        *("engine_niced", "recorded", "recorder", "recorder_cpu"),
        *("paired", "outside", "app_like"),
    )
    med = {
        name: {key: float(np.median([r[key] for r in got])) for key in keys + cpu_keys + like_keys}
        for name, got in rows.items()
    }
    _like_for_like(rows, med)
    print(
        "\n#### Cross-process (the old measure: the app's worker process against engine.select "
        "in other processes)\n"
    )
    print(
        "| run | events | status | app run_seconds | submit -> done | engine.select in the "
        "worker | engine.select, 1 BLAS thread | engine.select, default threads | "
        "engine.select, 1 thread, workers' niceness | same |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, got in rows.items():
        m = med[name]
        print(
            f"| {name} | {got[0]['events']} | {got[0]['status']} | "
            + " | ".join(f"{m[key]:.3f}" for key in keys)
            + f" | {all(r['same'] for r in got)} |"
        )
    print(
        "\n| run | CPU s of the workers (the run, both workers, from /proc) | CPU s of "
        "engine.select at the workers' niceness | ratio |\n|---|---|---|---|"
    )
    for name, m in med.items():
        ratio = m["worker_cpu"] / m["engine_cpu"] if m["engine_cpu"] > 0 else math.nan
        print(f"| {name} | {m['worker_cpu']:.3f} | {m['engine_cpu']:.3f} | {ratio:.2f} |")
    big = med["big"]
    print(
        f"\n- in the worker, outside engine.select (load, split, summary, result): "
        f"{big['run'] - big['in_worker']:.3f} s at {APP_EVENTS} events, "
        f"{med['small']['run'] - med['small']['in_worker']:.3f} s at 2; engine.select in the "
        f"worker / the same call here at the workers' niceness: "
        f"{big['in_worker'] / big['engine_niced']:.2f}"
    )
    # The goal's engine time: this process with BLAS on one thread (as the workers), and a
    # process at the workers' niceness too: at nice 10 the worker gets a tenth of the CPU
    # share of a nice-0 process, so on a machine busy with other work the niced engine alone
    # is slower, and that is the scheduler's doing, not the app's.
    for engine_key, engine_label in (("engine", ""), ("engine_niced", ", engine at nice")):
        for key, label in (("run", "run_seconds"), ("wall", "submit -> done")):
            fixed = med["small"][key] - med["small"][engine_key]
            allowed = APP_RATIO * big[engine_key] + fixed
            got = big[key]
            verdict = "PASS" if got <= allowed else "MISS"
            figure = (
                f"{got:.3f} s vs {APP_RATIO} x {big[engine_key]:.3f} + fixed {fixed:.3f} = "
                f"{allowed:.3f} s (app / engine {got / big[engine_key]:.2f})"
            )
            name = f"app {label} at {APP_EVENTS} events within 10% + fixed{engine_label}"
            name += ", cross-process"
            print(f"- **{verdict}** {name}: {figure}")
            TARGETS.append((name, figure, verdict))
    # The app's own work, free of the scheduler: CPU seconds of the workers against those of
    # engine.select. At nice 10 a worker gets about a tenth of the share of a nice-0 process
    # on the same core (Linux's weights 110 and 1024: other processes, the server answering
    # this client's polls), so the wall times above also measure the machine's load; this line
    # much less.
    fixed = med["small"]["worker_cpu"] - med["small"]["engine_cpu"]
    allowed = APP_RATIO * big["engine_cpu"] + fixed
    verdict = "PASS" if big["worker_cpu"] <= allowed else "MISS"
    figure = (
        f"{big['worker_cpu']:.3f} CPU s vs {APP_RATIO} x {big['engine_cpu']:.3f} + fixed "
        f"{fixed:.3f} = {allowed:.3f} CPU s (app / engine "
        f"{big['worker_cpu'] / big['engine_cpu']:.2f})"
    )
    name = f"app CPU seconds at {APP_EVENTS} events within 10% + fixed, cross-process"
    print(f"- **{verdict}** {name}: {figure}")
    TARGETS.append((name, figure, verdict))
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


def cpu_description() -> str:
    """The CPU model and numpy's SIMD extensions in use: numpy vectorises float64 exp and log
    only with AVX-512 (about 1 ns an entry against 5 without), and the logistic paths spend a
    good part of their time there, so ratios against a compiled peer differ between machines
    by this alone (issue 22: FoBa-obj on (e) 3.1x abess on one VM, 1.7x on another)."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(
                (ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), model
            )
    except OSError:
        pass
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # a numpy that keeps it elsewhere
        return model
    wide = [name for name in ("AVX2", "AVX512F", "AVX512_SKX", "AVX512_ICL") if features.get(name)]
    return f"{model}; numpy SIMD: {', '.join(wide) or 'no AVX2 or AVX-512'}"


def environment(cfg: Config, args) -> None:
    blas = "unknown"
    if threadpoolctl is not None:
        info = threadpoolctl.threadpool_info()
        libs = {
            f"{i.get('internal_api')} {i.get('version')}, {i.get('num_threads')} threads"
            for i in info
            if i.get("user_api") == "blas"
        }
        blas = "; ".join(sorted(libs)) or "none found"
    vers = [
        f"python {platform.python_version()}",
        f"numpy {np.__version__}",
        f"scipy {scipy.__version__}",
    ]
    vers.append(f"scikit-learn {sklearn.__version__}" if sklearn else "scikit-learn missing")
    vers.append(f"abess {abess.__version__}" if abess else "abess missing")
    print("# FoBa Lab engine speed vs peers\n")
    print(
        f"- mode: {'quick' if cfg.quick else 'full'}; seed {args.seed}; up to {cfg.repeats} "
        f"timed repeats after 1 warm-up (fewer when a run is slow: a warm-up over "
        f"{cfg.slow:g} s is the only run); per-run cap {cfg.cap:g} s on ours (cancelled through "
        f"the recorder), {cfg.peer_cap:g} s on abess (timed in a long-lived child process, "
        f"killed and replaced at the cap)"
    )
    print(
        f"- {', '.join(vers)}; BLAS: {blas}; {os.cpu_count()} CPUs ({cpu_description()}); "
        f"load average at start {os.getloadavg()[0]:.2f}; "
        f"NUMPY_MADVISE_HUGEPAGE={os.environ.get('NUMPY_MADVISE_HUGEPAGE')} (see the script)"
    )
    print(
        "- times are wall seconds of the whole call (validation, objective set-up, path); "
        "ratios < 1 mean ours is faster; objective = our objective at the method's support, "
        "refitted by our engine; `>= x` = stopped at the cap"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick",
        action="store_true",
        help="fewer repeats, 5 s cap, no stepwise on (c)/(e), no max_steps=2k rows",
    )
    ap.add_argument(
        "--only",
        default=",".join(PROBLEM_KEYS),
        help="comma list of problems: a,b,c,d,e,f,micro (default: all; '' runs none, "
        "e.g. with --profile)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=None, help="timed repeats (default 5; quick 2)")
    ap.add_argument(
        "--cap",
        type=float,
        default=None,
        help="per-run cap in seconds on our runs (default 20; quick 5) and on "
        "abess (default 10; quick 5)",
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=0,
        help="BLAS threads for ours and the peers alike (threadpoolctl; default 0 leaves the "
        "library default, what a user gets). The [1 thread] rows run at one thread anyway.",
    )
    ap.add_argument(
        "--load",
        action="store_true",
        help="run a busy loop in a second process for the whole run (the app's workers share "
        "the machine like this)",
    )
    ap.add_argument(
        "--app",
        action="store_true",
        help="also time a run through the app (python -m app, SQLite, in-process workers) "
        "against engine.select on the same data: 600 trace events, and a 2-event run for the "
        "fixed cost (issue 22's app-vs-engine goal)",
    )
    ap.add_argument(
        "--profile",
        action="append",
        default=[],
        metavar="KEY:ALGORITHM",
        help="also print a cProfile of one run, e.g. e:foba-obj or c:foba-obj",
    )
    args = ap.parse_args(argv)

    only = {s.strip() for s in args.only.split(",") if s.strip()}
    bad = only - set(PROBLEM_KEYS)
    if bad:
        ap.error(f"unknown problem(s) {sorted(bad)}; choose from {','.join(PROBLEM_KEYS)}")
    cfg = Config(
        quick=args.quick,
        repeats=args.repeats or (2 if args.quick else 5),
        budget=2.0 if args.quick else 3.5,
        slow=3.0,
        cap=args.cap or (5.0 if args.quick else 20.0),
        peer_cap=args.cap or (5.0 if args.quick else 10.0),
    )
    if args.threads and threadpoolctl is not None:
        threadpoolctl.threadpool_limits(args.threads)
    elif args.threads and threadpoolctl is None:
        log("threadpoolctl missing: BLAS threads left at the library default")

    start = time.perf_counter()
    busy = start_load() if args.load else None
    cfg.peers = PeerProcess() if abess is not None else None
    try:
        return _main(args, cfg, only, start, busy)
    finally:
        if cfg.peers is not None:
            cfg.peers.close()
        if busy is not None:
            busy.kill()
            busy.join()


def _busy_loop() -> None:  # pragma: no cover - runs in the load process
    while True:
        pass


def start_load():
    # Spawned, not forked: a forked child would share the timing process's pages for the whole
    # run, and every first write to one of them would be a copy (see PeerProcess).
    proc = multiprocessing.get_context("spawn").Process(target=_busy_loop, daemon=True)
    proc.start()
    return proc


def _main(args, cfg: Config, only: set[str], start: float, busy) -> int:
    environment(cfg, args)
    if busy is not None:
        print(f"- **under load**: a busy-loop process (pid {busy.pid}) runs on the other core")
    full = not cfg.quick

    # Global warm-up: import paths, BLAS threads, abess's extension, on a tiny problem.
    rng = np.random.default_rng(0)
    Xw, yw = rng.standard_normal((40, 30)), rng.standard_normal(40)
    for alg in ("foba-obj", "foba-gdt", "omp", "forward-obj", "stepwise"):
        engine.select(Xw, yw, algorithm=alg, k=3, standardize=False)
        engine.select(
            Xw, (yw > 0).astype(int), algorithm=alg, objective="logistic", k=3, standardize=False
        )
    if sklearn is not None:
        OrthogonalMatchingPursuit(n_nonzero_coefs=3).fit(Xw, yw)
    if abess is not None:
        abess.LinearRegression(support_size=[3], cv=1, thread=1).fit(Xw, yw)
        abess.LogisticRegression(support_size=[3], cv=1, thread=1).fit(Xw, (yw > 0) * 1.0)

    if "a" in only:
        log("problem (a)")
        P = problem_a(args.seed)
        rows = run_case(P, cfg, stepwise=True, extras=True)
        print_problem(P, rows)
        targets_dense_ls(P, rows)
    if "b" in only:
        log("problem (b)")
        P = problem_b(args.seed)
        rows = run_case(P, cfg, stepwise=True, extras=True)
        print_problem(P, rows)
        targets_dense_ls(P, rows)
        targets_issue12(P, rows)
    if "micro" in only:
        micro_threads(args.seed)
        log("micro-benchmark")
        micro_forward_step(cfg, args.seed)
    if "c" in only:
        log("problem (c)")
        P = problem_c(args.seed)
        rows = run_case(P, cfg, stepwise=full, extras=full)
        print_problem(P, rows)
        targets_sparse(P, rows)
        targets_issue12(P, rows)
    if "d" in only:
        for s in LIU_SPARSITIES:
            log(f"problem (d) s={s}")
            P = problem_d(args.seed, s)
            rows = run_case(P, cfg, stepwise=True, extras=full)
            print_problem(P, rows)
            targets_logistic(P, rows)
            targets_issue12(P, rows)
    if "e" in only:
        log("problem (e)")
        P = problem_e(args.seed)
        rows = run_case(P, cfg, stepwise=full, extras=full)
        print_problem(P, rows)
        targets_logistic(P, rows)
        targets_issue12(P, rows)

    if "f" in only:
        log("problem (f)")
        P = problem_f(args.seed)
        rows = run_growth(P, cfg)
        print_problem(P, rows)
        targets_growth(P, rows)

    if args.app:
        log("app vs engine")
        app_vs_engine(args.seed, cfg)

    for spec in args.profile:
        profile_one(spec, args.seed, cfg)

    print("\n### Targets\n")
    print("| target | figure | verdict |")
    print("|---|---|---|")
    for name, fig, v in TARGETS:
        print(f"| {name} | {fig} | {v} |")
    print(
        f"\nTotal wall time {time.perf_counter() - start:.0f} s; "
        f"load average at end {os.getloadavg()[0]:.2f}."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
