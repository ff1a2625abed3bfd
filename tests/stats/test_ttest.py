import numpy as np
import pytest
from scipy import stats

from evalops.stats import DZ_CAP, paired_t, paired_t_test


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_matches_scipy_ttest_rel_on_random_vectors(alternative):
    rng = np.random.default_rng(7)
    for _ in range(50):
        n = int(rng.integers(2, 400))
        b = rng.random(n)
        c = np.clip(b + rng.normal(rng.normal(0, 0.05), 0.2, n), 0, 1)
        ours = paired_t_test(b, c, alternative)
        ref = stats.ttest_rel(c, b, alternative=alternative)
        assert ours.statistic == pytest.approx(ref.statistic, rel=1e-10)
        assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)


def test_hand_made_example():
    # deltas 1, 2, 3: mean 2, sd 1, t = 2 / (1/sqrt 3) = 3.4641, df 2, two-sided p = 0.07418
    result = paired_t_test([0, 0, 0], [1, 2, 3])
    assert result.statistic == pytest.approx(2 * np.sqrt(3))
    assert result.p_value == pytest.approx(0.0741799, abs=1e-6)
    assert result.direction == 1
    assert result.method == "student t, df=2"


def test_vectorised_rows_equal_one_at_a_time():
    rng = np.random.default_rng(1)
    b = rng.random((200, 30))
    c = b + rng.normal(0, 0.1, (200, 30))
    t, p = paired_t(b, c, "less")
    for i in range(0, 200, 17):
        one = paired_t_test(b[i], c[i], "less")
        assert t[i] == pytest.approx(one.statistic)
        assert p[i] == pytest.approx(one.p_value)


def test_symmetric_in_its_two_inputs():
    rng = np.random.default_rng(2)
    b, c = rng.random(50), rng.random(50)
    forward, backward = paired_t_test(b, c), paired_t_test(c, b)
    assert forward.p_value == pytest.approx(backward.p_value)
    assert forward.statistic == pytest.approx(-backward.statistic)
    assert paired_t_test(b, c, "less").p_value == pytest.approx(paired_t_test(c, b, "greater").p_value)


def test_degenerate_cases_are_defined():
    assert paired_t_test([0.3], [0.1]).p_value == 1.0
    assert paired_t_test([], []).p_value == 1.0
    zero = paired_t_test([0.2, 0.4, 0.6], [0.2, 0.4, 0.6])
    assert (zero.statistic, zero.p_value) == (0.0, 1.0)
    # constant deltas carrying rounding noise (0.6 - 0.1 != 0.5 exactly) are still constant
    b = np.array([0.3, 0.6, 0.9, 0.7, 0.2])
    const = paired_t_test(b, b - 0.1)
    assert const.statistic == pytest.approx(-DZ_CAP * np.sqrt(5))
    assert const.p_value == pytest.approx(2.0**-4)  # exact sign-flip p of 5 equal deltas, two-sided
    assert "sd = 0" in const.note
    assert paired_t_test(b, b - 0.1, "less").p_value == pytest.approx(2.0**-5)
    assert paired_t_test(b, b - 0.1, "greater").p_value == 1.0
