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
    rng = np.random.default_rng(11)
    checked = 0
    for trial in range(60):
        n = int(rng.integers(2, 90))
        b = rng.random(n)
        c = b + rng.normal(0.03, 0.2, n)
        if trial % 2:  # IR-like: coarse scores, many ties and zero deltas
            b, c = np.round(b, 1), np.round(c, 1)
        if np.count_nonzero(c - b) == 0:
            continue
        ours = wilcoxon_test(b, c, alternative, zero_method=zero_method)
        ref = stats.wilcoxon(c, b, zero_method=zero_method, alternative=alternative)
        assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12), (n, ours.method)
        checked += 1
    assert checked > 50


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
    # 20 equal drops computed as b - 0.1 carry rounding noise; they are still one tie group, so the normal
    # approximation with tie correction applies: z = sqrt(n)
    b = np.linspace(0.1, 0.9, 20)
    noisy = wilcoxon_test(b, b - 0.1)
    assert noisy.p_value == pytest.approx(2 * stats.norm.sf(np.sqrt(20)))
    assert noisy.p_value == pytest.approx(stats.wilcoxon(np.full(20, -0.1)).pvalue)
