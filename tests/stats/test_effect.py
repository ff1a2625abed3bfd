import numpy as np
import pytest
from scipy import special, stats

from evalops.errors import InputError
from evalops.stats import (
    DZ_CAP,
    cohens_dz,
    dz_confidence_interval,
    hedges_correction,
    paired_t,
    relative_change,
    win_tie_loss,
)


def test_dz_matches_numpy_with_ddof_1():
    rng = np.random.default_rng(0)
    for n in (2, 3, 10, 300):
        b, c = rng.random(n), rng.random(n)
        d = c - b
        assert cohens_dz(b, c) == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)


def test_dz_hand_made_and_vectorised():
    assert cohens_dz([0, 0, 0], [1, 2, 3]) == pytest.approx(2.0)  # mean 2, sd 1
    rows_b = np.zeros((2, 3))
    rows_c = np.array([[1.0, 2.0, 3.0], [-1.0, -1.0, -4.0]])
    np.testing.assert_allclose(cohens_dz(rows_b, rows_c), [2.0, -2.0 / np.sqrt(3.0)])


def test_dz_degenerate_values():
    assert cohens_dz([0.4], [0.5]) is None
    assert cohens_dz([0.4, 0.6], [0.4, 0.6]) == 0.0
    b = np.array([0.1, 0.7, 0.3])
    assert cohens_dz(b, b + 0.2) == DZ_CAP
    assert cohens_dz(b, b - 0.2) == -DZ_CAP


def test_hedges_correction_is_the_exact_gamma_factor():
    for n in (2, 3, 5, 20, 300):
        df = n - 1
        expected = special.gamma(df / 2) / (np.sqrt(df / 2) * special.gamma((df - 1) / 2)) if df > 1 else 0.0
        assert hedges_correction(n) == pytest.approx(expected, abs=1e-12)
    assert hedges_correction(41) == pytest.approx(1 - 3 / (4 * 40 - 1), abs=1e-4)  # the usual approximation
    with pytest.raises(InputError):
        hedges_correction(1)


def test_dz_interval_pivots_the_noncentral_t():
    n, dz = 25, 0.45
    low, high = dz_confidence_interval(dz, n, 0.95)
    t = dz * np.sqrt(n)
    assert stats.nct.cdf(t, n - 1, low * np.sqrt(n)) == pytest.approx(0.975, abs=1e-9)
    assert stats.nct.cdf(t, n - 1, high * np.sqrt(n)) == pytest.approx(0.025, abs=1e-9)
    assert low < dz < high
    assert dz_confidence_interval(-dz, n) == pytest.approx((-high, -low))


def test_dz_interval_covers_the_true_effect_at_its_nominal_rate():
    rng = np.random.default_rng(12)
    true_dz, n, reps = 0.4, 15, 600
    deltas = rng.normal(true_dz, 1.0, (reps, n))
    dz = cohens_dz(np.zeros_like(deltas), deltas)
    covered = sum(lo <= true_dz <= hi for lo, hi in (dz_confidence_interval(x, n, 0.9) for x in dz))
    se = np.sqrt(0.9 * 0.1 / reps)
    assert abs(covered / reps - 0.9) <= 3.5 * se


def test_dz_interval_degenerate_values():
    assert dz_confidence_interval(0.3, 1) is None
    assert dz_confidence_interval(DZ_CAP, 10) == (DZ_CAP, DZ_CAP)
    low, high = dz_confidence_interval(30.0, 10)  # very large but finite: still a proper interval
    assert np.isfinite([low, high]).all() and low < 30.0 < high


def test_relative_change_never_divides_by_zero():
    assert relative_change(0.5, 0.55) == pytest.approx(10.0)
    assert relative_change(0.5, 0.45) == pytest.approx(-10.0)
    assert relative_change(0.0, 0.0) == 0.0
    assert relative_change(0.0, 0.2) is None
    assert relative_change(-0.5, -0.25) == pytest.approx(50.0)  # |baseline|: the sign follows the delta


def test_win_tie_loss():
    wtl = win_tie_loss([0.1, 0.5, 0.5, 0.9], [0.2, 0.5, 0.4, 0.9])
    assert (wtl.wins, wtl.ties, wtl.losses) == (1, 2, 1)


def test_t_statistic_is_dz_times_root_n():
    rng = np.random.default_rng(3)
    b, c = rng.random(40), rng.random(40)
    t, _ = paired_t(b, c)
    assert t == pytest.approx(cohens_dz(b, c) * np.sqrt(40))
