import itertools

import numpy as np
import pytest
from scipy import stats

from evalops.errors import InputError
from evalops.stats import wilcoxon_test
from evalops.stats.wilcoxon import signed_rank_null


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_matches_scipy_with_ties_and_zeros(zero_method, alternative):
    """Where scipy is exact (no ties, no zeros, n <= 50) or approximates (more than 50 non-zero deltas) the
    p-values agree; with ties or zeros and at most 50 non-zero deltas evalops is exact (next tests)."""
    rng = np.random.default_rng(11)
    checked = 0
    for trial in range(80):
        n = int(rng.integers(2, 120))
        b = rng.random(n)
        c = b + rng.normal(0.03, 0.2, n)
        if trial % 2:  # IR-like: coarse scores, many ties and zero deltas
            b, c = np.round(b, 1), np.round(c, 1)
        d = c - b
        nonzero = np.count_nonzero(d)
        if nonzero == 0:
            continue
        tied_or_zero = nonzero < n or len(np.unique(np.abs(d))) < n
        if nonzero <= 50 and tied_or_zero:
            continue
        ours = wilcoxon_test(b, c, alternative, zero_method=zero_method)
        ref = stats.wilcoxon(c, b, zero_method=zero_method, alternative=alternative)
        assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12), (n, ours.method)
        checked += 1
    assert checked > 30


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_exact_with_ties_matches_scipy_permutation_distribution(alternative):
    rng = np.random.default_rng(3)
    for _ in range(8):
        n = int(rng.integers(4, 13))
        b = np.round(rng.random(n), 1)
        c = np.round(b + rng.normal(0.05, 0.2, n), 1)
        if np.count_nonzero(c - b) == 0:
            continue
        ours = wilcoxon_test(b, c, alternative)
        ref = stats.wilcoxon(c, b, alternative=alternative, method=stats.PermutationMethod(n_resamples=np.inf))
        assert ours.method.startswith("exact")
        assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("zero_method", ["pratt", "zsplit"])
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_exact_with_zeros_matches_enumeration_of_the_signs(zero_method, alternative):
    from scipy.stats import rankdata

    rng = np.random.default_rng(8)
    for _ in range(10):
        n = int(rng.integers(4, 14))
        b = np.round(rng.random(n), 1)
        c = np.round(b + rng.normal(0.0, 0.2, n), 1)
        d = c - b
        if np.count_nonzero(d) == 0:
            continue
        ranks = rankdata(np.abs(d))
        nz = np.flatnonzero(d)
        observed = ranks[d > 0].sum()
        sums = np.array([sum(ranks[i] for i, s in zip(nz, signs) if s)
                         for signs in itertools.product([0, 1], repeat=len(nz))])
        lo, hi = np.mean(sums <= observed + 1e-9), np.mean(sums >= observed - 1e-9)
        expected = {"less": lo, "greater": hi, "two-sided": min(1.0, 2 * min(lo, hi))}[alternative]
        assert wilcoxon_test(b, c, alternative, zero_method=zero_method).p_value == pytest.approx(expected)


def test_method_is_chosen_by_non_zero_deltas():
    d = np.zeros(300)
    d[:5] = -0.1
    result = wilcoxon_test(np.zeros(300), d)
    assert result.p_value == pytest.approx(2 * 2.0**-5)  # exact; scipy's auto approximates: 0.025
    assert stats.wilcoxon(d).pvalue == pytest.approx(0.0253, abs=1e-3)
    assert "5 non-zero deltas" in result.method
    many = np.random.default_rng(0).normal(0, 1, 80)
    assert wilcoxon_test(np.zeros(80), many).method.startswith("normal approximation")
    assert wilcoxon_test(np.zeros(80), many, method="exact").method.startswith("exact")


def test_continuity_correction_matches_scipy():
    rng = np.random.default_rng(5)
    b, c = rng.random(80), rng.random(80)
    for alternative in ("two-sided", "less", "greater"):
        ours = wilcoxon_test(b, c, alternative, correction=True)
        ref = stats.wilcoxon(c, b, alternative=alternative, correction=True, method="asymptotic")
        assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-10)


def test_hand_made_exact_example():
    # deltas 1..5 all positive except -2: W+ = 1+3+4+5 = 13; exact P(W+ >= 13) = 3/32 for n = 5
    result = wilcoxon_test([0] * 5, [1, -2, 3, 4, 5], "greater")
    assert result.statistic == 13.0
    assert result.p_value == pytest.approx(3 / 32)
    assert result.method.startswith("exact")
    assert result.direction == 1


def test_exact_null_distribution_matches_enumeration():
    n = 9
    sums = [sum(r for r, s in zip(range(1, n + 1), signs) if s) for signs in itertools.product([0, 1], repeat=n)]
    expected = np.bincount(sums, minlength=n * (n + 1) // 2 + 1) / 2**n
    np.testing.assert_allclose(signed_rank_null(n), expected)


def test_zero_method_is_named_in_the_result_and_checked():
    result = wilcoxon_test([0, 0, 0, 0], [0, 1, 2, -1], zero_method="pratt")
    assert "zero_method=pratt" in result.method
    with pytest.raises(InputError, match="zero_method"):
        wilcoxon_test([0, 0], [1, 2], zero_method="drop")


def test_degenerate_cases_are_defined():
    assert wilcoxon_test([1.0], [0.0]).p_value == 1.0
    zero = wilcoxon_test([0.5, 0.5, 0.5], [0.5, 0.5, 0.5])
    assert (zero.statistic, zero.p_value) == (0.0, 1.0)
    const = wilcoxon_test([0.5] * 6, [0.4] * 6)
    assert const.p_value == pytest.approx(2.0**-5)  # one tie group: exact enumeration gives 2 / 2^6
    assert const.direction == -1
    # 20 equal drops computed as b - 0.1 carry rounding noise; they are still one tie group, exact: 2 / 2^20
    b = np.linspace(0.1, 0.9, 20)
    noisy = wilcoxon_test(b, b - 0.1)
    assert noisy.p_value == pytest.approx(2.0**-19)
    # beyond 50 of them the normal approximation with tie correction applies: z = sqrt(n), as scipy
    b = np.linspace(0.1, 0.9, 60)
    approx = wilcoxon_test(b, b - 0.1)
    assert approx.p_value == pytest.approx(2 * stats.norm.sf(np.sqrt(60)))
    assert approx.p_value == pytest.approx(stats.wilcoxon(np.full(60, -0.1)).pvalue)
