import itertools

import numpy as np
import pytest

from evalops.errors import InputError
from evalops.stats import paired_randomization_test, sign_flip_count
from evalops.stats import randomization


def brute_force_p(d, alternative):
    """Enumerate every sign vector with itertools: the definition, written as plainly as possible."""
    observed = float(np.sum(d))
    tol = 1e-9 * float(np.sum(np.abs(d)))
    hits = 0
    for signs in itertools.product((-1.0, 1.0), repeat=len(d)):
        t = float(np.dot(signs, d))
        if alternative == "two-sided":
            hits += abs(t) >= abs(observed) - tol
        elif alternative == "less":
            hits += t <= observed + tol
        else:
            hits += t >= observed - tol
    return hits / 2 ** len(d)


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_exact_equals_brute_force_enumeration(alternative):
    rng = np.random.default_rng(3)
    for n in (2, 3, 7, 8, 9, 12):
        continuous = rng.normal(0.2, 1.0, n)
        discrete = np.round(rng.normal(0.1, 0.3, n), 1)  # ties between sign vectors, as with IR scores
        for d in (continuous, discrete):
            result = paired_randomization_test(np.zeros(n), d, alternative, method="exact")
            assert result.p_value == pytest.approx(brute_force_p(d, alternative), abs=1e-15)
            assert result.method == f"exact over 2^{n} sign vectors"


def test_auto_is_exact_when_all_sign_vectors_fit_in_the_budget():
    d = np.arange(1.0, 11.0)
    assert paired_randomization_test(np.zeros(10), d, n_resamples=1024).n_resamples is None
    assert paired_randomization_test(np.zeros(10), d, n_resamples=1023, rng=0).method == "monte carlo"


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_monte_carlo_agrees_with_exact_within_monte_carlo_error(alternative):
    rng = np.random.default_rng(8)
    d = rng.normal(0.25, 1.0, 18)
    exact = paired_randomization_test(np.zeros(18), d, alternative, method="exact").p_value
    b = 40_000
    mc = paired_randomization_test(np.zeros(18), d, alternative, method="monte_carlo", n_resamples=b, rng=123)
    se = np.sqrt(exact * (1 - exact) / b)
    assert abs(mc.p_value - exact) <= 4 * se + 1 / b
    assert mc.n_resamples == b


def test_seeded_results_are_reproducible_and_never_zero():
    d = np.full(40, 0.1) + np.linspace(0, 0.01, 40)
    one = paired_randomization_test(np.zeros(40), d, rng=5)
    two = paired_randomization_test(np.zeros(40), d, rng=np.random.default_rng(5))
    assert one.p_value == two.p_value
    assert one.p_value == 1 / 10_001  # every resample is less extreme; (0 + 1) / (B + 1)


def test_memory_is_bounded_by_chunks(monkeypatch):
    # 2 KiB of random bytes per chunk forces many chunks; the answer stays the same within MC error
    monkeypatch.setattr(randomization, "CHUNK_BYTES", 2048)
    rng = np.random.default_rng(4)
    d = rng.normal(0.05, 1, 3000)
    count, total, exact = sign_flip_count(d, n_resamples=4000, rng=9)
    monkeypatch.undo()
    count_big, _, _ = sign_flip_count(d, n_resamples=4000, rng=9)
    assert not exact and total == 4000
    p, p_big = count / total, count_big / total
    assert abs(p - p_big) <= 5 * np.sqrt(p_big * (1 - p_big) / total)


def test_monte_carlo_needs_randomness_and_exact_has_a_limit():
    with pytest.raises(InputError, match="pass rng"):
        paired_randomization_test(np.zeros(30), np.ones(30) + np.arange(30))
    with pytest.raises(InputError, match="too large"):
        sign_flip_count(np.ones(30), method="exact")


def test_degenerate_cases_are_defined():
    assert paired_randomization_test([0.1], [0.2]).p_value == 1.0
    zero = paired_randomization_test([0.1, 0.2, 0.3], [0.1, 0.2, 0.3])
    assert (zero.statistic, zero.p_value) == (0.0, 1.0)
    const = paired_randomization_test([0.5] * 6, [0.4] * 6)
    assert const.p_value == pytest.approx(2 / 2**6)
