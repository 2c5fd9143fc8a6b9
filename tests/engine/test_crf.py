"""Linear-chain CRF objective (Liu, Fujimaki & Ye 2014, Section 5 and Appendix D.2).

Checked against independent computations: enumeration of every label sequence of short chains
(log-partition, node and pair marginals, the most probable sequence, the sampler's law),
central finite differences of the objective, scipy's L-BFGS-B and Brent on the same objective
written out from ``value_at``, and recovery of the relevant features of generated chains.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar

import engine
from engine import metrics
from engine.datasets import generate, split_chains
from engine.objectives.chain_inference import (
    ChainLayout,
    forward_backward,
    sample_labels,
    viterbi,
)
from engine.objectives.chains import check_chains
from engine.objectives.crf import CRF
from engine.trace import replay


def _enumerate(unary: np.ndarray, trans: np.ndarray):
    """log Z, node marginals (T, C), summed pair marginals (C, C) of one chain by brute force."""
    T, C = unary.shape
    seqs = list(itertools.product(range(C), repeat=T))
    scores = np.array(
        [
            sum(unary[t, s[t]] for t in range(T)) + sum(trans[s[t - 1], s[t]] for t in range(1, T))
            for s in seqs
        ]
    )
    log_z = np.logaddexp.reduce(scores)
    prob = np.exp(scores - log_z)
    node = np.zeros((T, C))
    pair = np.zeros((C, C))
    for s, p in zip(seqs, prob, strict=True):
        node[np.arange(T), s] += p
        for t in range(1, T):
            pair[s[t - 1], s[t]] += p
    return log_z, node, pair, seqs, scores


def _small_problem(seed: int, lengths=(4, 3, 1, 5), D=2, S=3, C=3, lam=0.1):
    rng = np.random.default_rng(seed)
    xs = [rng.integers(0, S, size=(T, D)) for T in lengths]
    ys = [rng.integers(0, C, size=T) for T in lengths]
    chains, _ = check_chains(xs, ys)
    return CRF(chains, lam=lam), rng


# --------------------------------------------------------------------------- inference


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("scale", [1.0, 40.0])
def test_forward_backward_equals_enumeration(seed, scale):
    rng = np.random.default_rng(seed)
    lengths = (5, 1, 3, 6) if seed % 2 else (6,)
    C = 3
    starts = np.concatenate([[0], np.cumsum(lengths)])
    layout = ChainLayout(starts)
    U = rng.normal(size=(2, starts[-1], C)) * scale  # a batch of two potential sets
    trans = rng.normal(size=(2, C, C)) * scale
    m = forward_backward(layout, U, trans)
    for b in range(2):
        pair = np.zeros((C, C))
        for i, (lo, hi) in enumerate(itertools.pairwise(starts)):
            log_z, node, p, _, _ = _enumerate(U[b, lo:hi], trans[b])
            assert m.log_z[b, i] == pytest.approx(log_z, rel=1e-12, abs=1e-10)
            np.testing.assert_allclose(m.node[b, lo:hi], node, atol=1e-10)
            pair += p
        np.testing.assert_allclose(m.pair[b], pair, atol=1e-9)


def test_long_chain_is_finite_and_normalised():
    rng = np.random.default_rng(0)
    layout = ChainLayout(np.array([0, 3000, 5000]))
    m = forward_backward(layout, rng.normal(size=(1, 5000, 4)) * 30, rng.normal(size=(4, 4)) * 30)
    assert np.all(np.isfinite(m.log_z))
    np.testing.assert_allclose(m.node.sum(axis=2), 1.0, atol=1e-12)
    assert m.pair.sum() == pytest.approx(4998, rel=1e-12)  # one per transition


@pytest.mark.parametrize("seed", range(3))
def test_viterbi_is_the_most_probable_sequence(seed):
    rng = np.random.default_rng(seed)
    U, trans = rng.normal(size=(6, 3)), rng.normal(size=(3, 3))
    _, _, _, seqs, scores = _enumerate(U, trans)
    assert tuple(viterbi(U, trans)) == seqs[int(np.argmax(scores))]


def test_sampler_draws_from_the_chain_law():
    rng = np.random.default_rng(1)
    T, C, n = 3, 2, 40000
    U, trans = rng.normal(size=(T, C)), rng.normal(size=(C, C))
    layout = ChainLayout(np.arange(0, n * T + 1, T))
    draws = sample_labels(layout, np.tile(U, (n, 1)), trans, rng).reshape(n, T)
    _, _, _, _, scores = _enumerate(U, trans)
    prob = np.exp(scores - np.logaddexp.reduce(scores))
    codes = draws @ (C ** np.arange(T)[::-1])
    freq = np.bincount(codes, minlength=C**T) / n
    # seqs enumerate in the same base-C order; 5 standard errors
    assert np.all(np.abs(freq - prob) <= 5 * np.sqrt(prob * (1 - prob) / n) + 1e-3)


# --------------------------------------------------------------------------- objective


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("lam", [0.0, 0.1])
def test_gradient_against_finite_differences(seed, lam):
    obj, rng = _small_problem(seed, lam=lam)
    F = obj.n_features
    z = np.concatenate([rng.normal(size=F), rng.normal(size=obj.n_dense)])
    value, g_coef, g_theta = obj.value_and_gradient(z[:F], z[F:])
    assert value == pytest.approx(obj.value_at(z[:F], z[F:]), rel=1e-13)
    h = 1e-6
    fd = np.array(
        [
            (obj.value_at(*np.split(z + h * e, [F])) - obj.value_at(*np.split(z - h * e, [F])))
            / (2 * h)
            for e in np.eye(z.size)
        ]
    )
    np.testing.assert_allclose(np.concatenate([g_coef, g_theta]), fd, atol=1e-8)


def test_value_is_the_mean_negative_log_likelihood_by_enumeration():
    obj, rng = _small_problem(5, lam=0.0)
    coef, theta = rng.normal(size=obj.n_features), rng.normal(size=obj.n_dense)
    bias, trans = obj.split_dense(theta)
    U = obj.unary(coef, bias)
    lay, labels = obj.chains.layout, obj.chains.labels
    nll = 0.0
    for lo, hi in zip(lay.starts[:-1], lay.starts[1:], strict=True):
        log_z, *_ = _enumerate(U[lo:hi], trans)
        y = labels[lo:hi]
        score = U[np.arange(lo, hi), y].sum() + trans[y[:-1], y[1:]].sum()
        nll += log_z - score
    assert obj.value_at(coef, theta) == pytest.approx(nll / obj.n_samples, rel=1e-12)


def test_batch_evaluation_equals_single_points():
    obj, rng = _small_problem(2)
    support = np.array([1, 4, 7])
    fixed = np.zeros(obj.n_features)
    Z = rng.normal(size=(3, 3 + obj.n_dense))
    values, grads = obj.batch_value_gradient(fixed, support, Z)
    for b in range(3):
        coef = fixed.copy()
        coef[support] = Z[b, :3]
        v, gc, gt = obj.value_and_gradient(coef, Z[b, 3:])
        assert values[b] == pytest.approx(v, rel=1e-13)
        np.testing.assert_allclose(grads[b], np.concatenate([gc[support], gt]), atol=1e-14)


def test_refit_reaches_the_minimum_found_by_lbfgs():
    obj, _ = _small_problem(3, lengths=(30, 20, 25), lam=0.05)
    support = [0, 5, 9, 13]
    state = obj.fit_support(support)
    k = len(support)

    def fun(z):
        coef = np.zeros(obj.n_features)
        coef[support] = z[:k]
        v, gc, gt = obj.value_and_gradient(coef, z[k:])
        return v, np.concatenate([gc[support], gt])

    ref = minimize(
        fun,
        np.zeros(k + obj.n_dense),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-12, "ftol": 1e-16, "maxiter": 10000},
    )
    assert state.value == pytest.approx(ref.fun, abs=1e-11)
    assert state.value <= ref.fun + 1e-12
    assert np.abs(state.gradient()[support]).max() < 1e-8
    # the dense parameters are at their optimum too: the value cannot drop by moving them
    coef, theta = state.coef, state.theta
    _, _, g_theta = obj.value_and_gradient(coef, theta)
    assert np.abs(g_theta[1:]).max() < 1e-8  # b[0] is held at 0; its direction is flat
    assert abs(g_theta[0]) < 1e-8


def test_one_coordinate_drops_equal_brent():
    obj, _ = _small_problem(4, lengths=(12, 9), lam=0.02)
    state = obj.fit_support([2, 10])
    drops = state.coordinate_drops()
    coef, theta = state.coef, state.theta
    for j in range(obj.n_features):
        if j in state.support:
            assert drops[j] == 0.0
            continue
        e = np.zeros(obj.n_features)
        e[j] = 1.0
        res = minimize_scalar(
            lambda a, e=e: obj.value_at(coef + a * e, theta), bracket=(-1.0, 1.0), tol=1e-12
        )
        assert drops[j] == pytest.approx(state.value - res.fun, abs=1e-10)


def test_deletion_costs_are_objective_increases_without_refit():
    obj, _ = _small_problem(6, lengths=(10, 10), lam=0.01)
    state = obj.fit_support([1, 6, 11])
    costs = state.deletion_costs()
    for p, j in enumerate(state.support):
        coef = state.coef
        coef[j] = 0.0
        assert costs[p] == pytest.approx(obj.value_at(coef, state.theta) - state.value, abs=1e-13)


def test_profiled_value_minimises_over_the_dense_parameters():
    obj, rng = _small_problem(7)
    coef = np.zeros(obj.n_features)
    coef[[0, 3]] = rng.normal(size=2)
    v = obj.value(coef)
    for _ in range(5):
        assert v <= obj.value_at(coef, rng.normal(size=obj.n_dense) * 0.5) + 1e-12
    g, b = obj.gradient(coef)
    assert g.shape == (obj.n_features,) and b == 0.0


# --------------------------------------------------------------------------- select


def _recovery_problem(seed=0):
    p = generate(
        "liu2014_crf", random_state=seed, T=4000, n_chains=40, n_relevant=5, w_min=1.5, w_max=2.5
    )
    X, y = split_chains(p.X, p.y, p.meta["lengths"])
    return p, X, y


def test_foba_gdt_recovers_the_relevant_features():
    p, X, y = _recovery_problem(0)
    r = engine.select(X, y, algorithm="foba-gdt", objective="crf", k=5)
    assert set(r.support) == set(p.support)
    assert metrics.f_measure(r.support, p.support) == 1.0
    assert r.dense_params is not None
    assert r.dense_params["transitions"].shape == (4, 4)
    # the answer is the best size-5 support along the traced path (Zhang's rule)
    best_support, best_value, _ = r.best_along_path()[5]
    assert best_support == set(r.support)
    assert best_value == pytest.approx(r.objective, abs=1e-12)
    assert all(len(s) <= 5 * 5 for s in replay(r.trace))


@pytest.mark.parametrize("algorithm", ["omp", "forward-obj", "foba-obj", "stepwise"])
def test_other_greedy_methods_run_on_the_crf(algorithm):
    p = generate(
        "liu2014_crf", random_state=3, T=120, n_chains=4, n_relevant=3, D=2, n_states=3, n_labels=3
    )
    X, y = split_chains(p.X, p.y, p.meta["lengths"])
    r = engine.select(X, y, algorithm=algorithm, objective="crf", k=3)
    assert len(r.support) == 3
    obj = CRF(check_chains(X, y)[0], lam=r.params["lam"])
    state = obj.fit_support(list(r.support))
    assert r.objective == pytest.approx(state.value, abs=1e-10)
    adds = [e for e in r.trace if e.kind == "add"]
    assert all(e.gain >= -1e-12 for e in adds)


def test_forward_obj_picks_the_largest_one_coordinate_drop_first():
    p = generate(
        "liu2014_crf", random_state=4, T=150, n_chains=3, n_relevant=3, D=2, n_states=3, n_labels=3
    )
    X, y = split_chains(p.X, p.y, p.meta["lengths"])
    r = engine.select(X, y, algorithm="forward-obj", objective="crf", k=1)
    obj = CRF(check_chains(X, y)[0])
    drops = obj.start().coordinate_drops()
    assert r.support[0] == int(np.argmax(drops))


def test_prediction_with_the_true_model_beats_the_majority_label():
    p = generate(
        "liu2014_crf", random_state=2, T=600, n_relevant=12, w_min=2.0, w_max=3.0, n_test=600
    )
    obj = CRF(check_chains(p.X, p.y)[0])
    dense = {"label_bias": p.meta["label_bias"], "transitions": p.meta["transitions"]}
    pred = obj.predict(p.meta["X_test"], p.true_coef, dense)
    majority = np.bincount(p.meta["y_test"]).max() / p.meta["y_test"].size
    assert metrics.accuracy(p.meta["y_test"], pred) > majority + 0.1


# --------------------------------------------------------------------------- input errors


@pytest.mark.parametrize(
    ("X", "y", "message"),
    [
        (np.zeros((4, 2)), np.zeros((4, 2)), "must be sequences"),
        (np.zeros((4, 2)), [np.array([0, 1]), np.array([1, 0])], "list of as many"),
        ([np.zeros((3, 2))], [np.array([0, 1])], "3 observation rows but 2 labels"),
        (
            [np.zeros((2, 2)), np.zeros((2, 3))],
            [np.array([0, 1]), np.array([1, 0])],
            "same 2 observed variables",
        ),
        (np.zeros((4, 2)), np.array([1, 1, 1, 1]), "at least two distinct labels"),
        (np.full((4, 2), 0.5), np.array([0, 1, 0, 1]), "discrete states"),
        (np.zeros((2, 2, 2)), np.array([0, 1]), r"\(T, D\) array"),
    ],
)
def test_bad_sequences_are_refused(X, y, message):
    with pytest.raises(ValueError, match=message):
        engine.select(X, y, algorithm="omp", objective="crf", k=1)


def test_algorithms_outside_the_active_set_family_are_refused():
    X, y = np.array([[0, 1], [1, 0], [0, 0]]), np.array([0, 1, 0])
    with pytest.raises(ValueError, match="objective 'crf' works with algorithms"):
        engine.select(X, y, algorithm="frank-wolfe", objective="crf", k=1)


def test_k_is_checked_against_the_indicator_features():
    X, y = np.array([[0, 1], [1, 0], [0, 0]]), np.array([0, 1, 0])
    with pytest.raises(ValueError, match="n_features = 8"):  # 2 sensors x 2 states x 2 labels
        engine.select(X, y, algorithm="omp", objective="crf", k=9)


def test_names_and_sensors_of_features():
    chains, _ = check_chains([np.array([["a", "x"], ["b", "x"]])], [np.array(["u", "v"])])
    assert chains.n_features == (2 + 1) * 2
    assert chains.feature_names()[:2] == ["x0=a & y=u", "x0=a & y=v"]
    np.testing.assert_array_equal(chains.sensor_of_feature(), [0, 0, 0, 0, 1, 1])
    assert metrics.groups_used([1, 5], chains.sensor_of_feature()).tolist() == [0, 1]


# --------------------------------------------------------------------------- generator


def test_generator_is_seeded_and_documented():
    a = generate("liu2014_crf", random_state=11, n_test=800)
    b = generate("liu2014_crf", random_state=11, n_test=800)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    assert a.X.shape == (800, 4) and a.y.shape == (800,)
    assert a.n_features == 4 * 5 * 4 and a.support.size == 10
    assert set(np.unique(a.X)) == set(range(5)) and set(np.unique(a.y)) <= set(range(4))
    np.testing.assert_array_equal(np.flatnonzero(a.true_coef), a.support)
    assert a.groups.shape == (80,) and a.groups[a.support].max() < 4
    assert a.meta["X_test"].shape == (800, 4)
    # the encoding of the engine agrees with the generator's feature numbering
    chains, _ = check_chains(a.X, a.y)
    assert chains.feature_names()[a.support[0]] == a.feature_names[a.support[0]]


def test_generator_refuses_inconsistent_sizes():
    with pytest.raises(ValueError, match="n_chains"):
        generate("liu2014_crf", T=800, n_chains=3)
    with pytest.raises(ValueError, match="n_relevant"):
        generate("liu2014_crf", D=1, n_states=2, n_labels=2, n_relevant=5)
