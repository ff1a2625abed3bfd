"""The pure-Python distribution functions of the comparison path agree with scipy to 1e-10, and a
comparison imports no scipy."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import optimize, special, stats

from evalops.stats._base import nct_cdf as scipy_nct_cdf
from evalops.stats.distributions import binomial_sf, find_root, nct_cdf, norm_cdf, norm_ppf, t_cdf
from evalops.stats.effect import dz_confidence_interval, hedges_correction
from evalops.stats.wilcoxon import average_ranks

DFS = [1, 2, 3, 5, 9, 29, 99, 299, 2999, 19999]


def test_normal_matches_scipy() -> None:
    for x in np.linspace(-38.0, 38.0, 761):
        assert norm_cdf(float(x)) == pytest.approx(float(special.ndtr(x)), rel=1e-12, abs=1e-300)
    for p in np.r_[1e-300, 1e-20, np.linspace(1e-9, 1 - 1e-9, 999), 1 - 1e-12]:
        assert abs(norm_ppf(float(p)) - float(special.ndtri(p))) <= 1e-10 * max(1.0, abs(float(special.ndtri(p))))
    assert norm_ppf(0.0) == -math.inf and norm_ppf(1.0) == math.inf and math.isnan(norm_ppf(1.5))


def test_t_cdf_matches_scipy_in_both_tails() -> None:
    for df in DFS:
        for t in np.linspace(-60.0, 60.0, 241):
            want = float(special.stdtr(df, t))
            assert t_cdf(float(t), df) == pytest.approx(want, rel=1e-10, abs=1e-300)
    assert math.isnan(t_cdf(math.nan, 5))


def test_binomial_tail_matches_scipy() -> None:
    for n in [1, 2, 5, 30, 301, 20_000]:
        for k in sorted({-1, 0, 1, n // 3, n // 2, n // 2 + 1, n - 1, n, *range(0, n, max(1, n // 40))}):
            want = float(stats.binom.sf(k, n, 0.5))
            assert binomial_sf(k, n, 0.5) == pytest.approx(want, rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("df", DFS)
def test_noncentral_t_matches_scipy(df: int) -> None:
    for nc in [-200.0, -50.0, -13.67, -5.0, -1.0, -0.1, 0.0, 0.3, 2.0, 7.0, 40.0, 190.0]:
        for t in [-250.0, -60.0, -10.0, -2.0, -0.5, 0.0, 0.7, 3.0, 12.0, 45.0, 200.0]:
            want = float(stats.nct.cdf(t, df, nc))
            if math.isnan(want):  # scipy's far-tail NaN (see evalops.stats._base.nct_cdf)
                continue
            assert abs(nct_cdf(t, df, nc) - want) <= 1e-10


def _scipy_dz_interval(dz: float, n: int, confidence: float) -> tuple[float, float]:
    """The interval as it was computed with scipy's noncentral t and brentq."""
    df, root_n, tail = n - 1.0, math.sqrt(n), (1.0 - confidence) / 2.0
    t = dz * root_n

    def solve(target: float) -> float:
        def f(lam: float) -> float:
            return float(scipy_nct_cdf(t, df, lam)) - target

        step = max(1.0, abs(t))
        lo, hi = t - step, t + step
        while f(lo) < 0.0:
            lo -= step
            step *= 2.0
        step = max(1.0, abs(t))
        while f(hi) > 0.0:
            hi += step
            step *= 2.0
        return optimize.brentq(f, lo, hi, xtol=1e-12, rtol=1e-12)

    return solve(1.0 - tail) / root_n, solve(tail) / root_n


@pytest.mark.parametrize("n", [2, 3, 10, 30, 300, 3000, 20_000])
def test_dz_interval_matches_scipy(n: int) -> None:
    for dz in [-2.5, -1.34, -0.4, -0.02, 0.0, 0.15, 0.9, 2.0]:
        if n == 2 and abs(dz) > 2.0:
            continue
        low, high = dz_confidence_interval(dz, n, 0.95)
        want_low, want_high = _scipy_dz_interval(dz, n, 0.95)
        assert abs(low - want_low) <= 1e-10 and abs(high - want_high) <= 1e-10


def test_hedges_correction_matches_scipy() -> None:
    assert hedges_correction(2) == 0.0
    for n in [3, 10, 300, 20_000]:
        df = n - 1.0
        want = float(np.exp(special.gammaln(df / 2.0) - special.gammaln((df - 1.0) / 2.0)) / np.sqrt(df / 2.0))
        assert hedges_correction(n) == pytest.approx(want, rel=1e-10)


def test_average_ranks_match_scipy() -> None:
    rng = np.random.default_rng(3)
    for values in [np.array([]), np.array([0.5]), rng.integers(0, 5, 200).astype(float), rng.random(300)]:
        assert np.array_equal(average_ranks(values), stats.rankdata(values))


def test_find_root_agrees_with_brentq() -> None:
    def f(x: float) -> float:
        return math.exp(x) - 3.0 * x - 0.5

    assert find_root(f, 1.0, 3.0) == pytest.approx(optimize.brentq(f, 1.0, 3.0, xtol=1e-14), abs=1e-11)
    with pytest.raises(ValueError):
        find_root(f, 2.5, 3.0)


def test_a_comparison_imports_no_scipy() -> None:
    code = (
        "import sys, numpy as np\n"
        "from evalops.stats import Policy, align, compare\n"
        "rng = np.random.default_rng(0)\n"
        "b = rng.random(300); c = np.clip(b + rng.normal(0.01, 0.1, 300), 0, 1)\n"
        "ids = [f'q{i}' for i in range(300)]\n"
        "p = align(dict(zip(ids, b)), dict(zip(ids, c)))\n"
        "for interval in ('robust', 't', 'bootstrap'):\n"
        "    for test in ('t', 'wilcoxon', 'randomization'):\n"
        "        compare(p, measure='nDCG@10', policy=Policy(interval=interval, test=test, n_resamples=500))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'pandas', 'pyarrow')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
