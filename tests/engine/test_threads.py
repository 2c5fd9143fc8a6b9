"""The BLAS thread policy (engine.threads): one thread for the small products of a run, the
caller's thread count for the large ``X.T @ r``, and the caller's setting restored afterwards.

The thread counts are read with threadpoolctl at the moment of interest: inside a recorder
callback (in the middle of a run), and inside the matrix product itself through an ndarray
subclass whose ``__array_ufunc__`` sees ``np.matmul`` being called.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")

import engine  # noqa: E402
from engine import threads  # noqa: E402
from engine.objectives.design import Design  # noqa: E402


def blas_threads() -> set[int]:
    return {
        int(i["num_threads"]) for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"
    }


class Spy(np.ndarray):
    """An array that records the BLAS thread counts when a matmul consumes it."""

    seen: list[set[int]]

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc is np.matmul:
            Spy.seen.append(blas_threads())
        args = [np.asarray(x) if isinstance(x, Spy) else x for x in inputs]
        return getattr(ufunc, method)(*args, **kwargs)


def spy(v: np.ndarray) -> Spy:
    Spy.seen = []
    return v.view(Spy)


@pytest.fixture
def two_threads(monkeypatch):
    if not blas_threads():
        pytest.skip("no BLAS library visible to threadpoolctl")
    # The mechanism under test, whatever the load of the machine running the tests (the load
    # cap has its own tests below).
    monkeypatch.setattr(threads, "LOAD_AWARE", False)
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        if blas_threads() != {2}:
            pytest.skip("the BLAS library does not accept 2 threads")
        yield


@pytest.mark.parametrize(
    ("algorithm", "objective"),
    [("foba-obj", "least_squares"), ("foba-gdt", "logistic"), ("lasso", "least_squares")],
)
def test_run_is_single_threaded_and_restores(two_threads, algorithm, objective):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 30))
    y = X[:, :3] @ [1.0, -2.0, 1.5] + 0.1 * rng.standard_normal(60)
    if objective == "logistic":
        y = (y > 0).astype(int)
    seen: list[set[int]] = []
    engine.select(
        X,
        y,
        algorithm=algorithm,
        objective=objective,
        k=3,
        recorder=lambda _e: seen.append(blas_threads()) or True,
        standardize=False,
    )
    assert seen and all(s == {1} for s in seen)
    assert blas_threads() == {2}  # the caller's setting is back
    assert not threads.in_section()


def test_large_product_gets_the_callers_threads(two_threads):
    rng = np.random.default_rng(1)
    n, d = 1000, threads.WIDE_MIN_ENTRIES // 1000
    big = Design(rng.standard_normal((n, d)), center=True)
    small = Design(rng.standard_normal((100, 50)), center=True)
    with threads.small_products():
        assert blas_threads() == {1}
        r = spy(rng.standard_normal(n))
        got = big.rmatvec(r)
        assert Spy.seen == [{2}]
        assert blas_threads() == {1}  # back to one thread after the product
        r_small = spy(rng.standard_normal(100))
        small.rmatvec(r_small)
        assert Spy.seen == [{1}]
    assert blas_threads() == {2}
    # the value is the centred product
    Xc = big.X - big.X.mean(axis=0)
    np.testing.assert_allclose(got, Xc.T @ np.asarray(r), rtol=1e-10, atol=1e-8)


def test_caller_limit_of_one_thread_is_kept():
    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        with threads.small_products():
            assert threads.wide_threads() == 1
            assert blas_threads() <= {1}
        assert blas_threads() <= {1}


def test_sections_nest(two_threads):
    with threads.small_products():
        with threads.small_products():
            assert blas_threads() == {1}
        assert blas_threads() == {1}  # the outer section still holds
    assert blas_threads() == {2}


def test_no_section_leaves_blas_alone(two_threads):
    rng = np.random.default_rng(2)
    big = Design(rng.standard_normal((1000, threads.WIDE_MIN_ENTRIES // 1000)), center=False)
    r = spy(rng.standard_normal(1000))
    big.rmatvec(r)
    assert Spy.seen == [{2}]


@pytest.mark.parametrize(
    ("cpus", "load", "idle"),
    [(2, 0.3, 2), (2, 1.0, 2), (2, 1.6, 1), (2, 2.0, 1), (2, 10.0, 1), (8, 3.0, 6), (4, 0.0, 4)],
)
def test_idle_cores_count_our_own_thread_as_idle(cpus, load, idle):
    assert threads.idle_cores(cpus, load) == idle


def test_idle_cores_without_a_load_average_do_not_cap():
    assert threads.idle_cores(2, None) >= 1 << 20
    assert threads.idle_cores(None, 1.0) >= 1 << 20


def test_loaded_machine_keeps_the_large_product_on_one_thread(two_threads, monkeypatch):
    monkeypatch.setattr(threads, "LOAD_AWARE", True)
    monkeypatch.setattr(threads, "_load", lambda: 10.0)  # 10 runnable tasks on this machine
    rng = np.random.default_rng(3)
    big = Design(rng.standard_normal((1000, threads.WIDE_MIN_ENTRIES // 1000)), center=True)
    with threads.small_products():
        assert threads.wide_threads() == 1
        r = spy(rng.standard_normal(1000))
        big.rmatvec(r)
        assert Spy.seen == [{1}]
    assert blas_threads() == {2}  # the caller's own setting comes back all the same


def test_idle_machine_gives_the_large_product_the_threads(two_threads, monkeypatch):
    monkeypatch.setattr(threads, "LOAD_AWARE", True)
    monkeypatch.setattr(threads, "_load", lambda: 0.2)
    with threads.small_products():
        assert threads.wide_threads() == min(2, threads.idle_cores(os.cpu_count(), 0.2))
