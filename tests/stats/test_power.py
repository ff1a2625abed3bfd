import numpy as np
import pytest

from evalops.errors import InputError
from evalops.stats import (
    minimum_detectable_effect,
    paired_power,
    paired_sample_size,
    paired_t,
    two_sample_normal_sample_size,
)

# G*Power 3.1, "Means: difference between two dependent means (matched pairs)", a priori,
# alpha = 0.05, power = 0.80: total sample sizes, two-tailed and one-tailed.
GPOWER = [(0.2, 199, 156), (0.3, 90, 71), (0.5, 34, 27), (0.8, 15, 12)]


@pytest.mark.parametrize(("dz", "two_tailed", "one_tailed"), GPOWER)
def test_sample_size_matches_gpower(dz, two_tailed, one_tailed):
    assert paired_sample_size(dz) == two_tailed
    assert paired_sample_size(dz, alternative="less") == one_tailed
    assert paired_sample_size(-dz, alternative="greater") == one_tailed  # effect is a magnitude


@pytest.mark.parametrize(("dz", "n"), [(d, n) for d, n, _ in GPOWER])
def test_sample_size_is_the_smallest_n_reaching_the_target(dz, n):
    assert paired_power(dz, n) >= 0.8 > paired_power(dz, n - 1)


def test_normal_two_sample_formula_is_wrong_for_a_paired_design():
    # The source-text formula n = 2 ((z_a/2 + z_b) / d)^2 is per group of an unpaired design.
    for dz, exact, _ in GPOWER:
        normal = two_sample_normal_sample_size(dz)
        assert normal != exact
        assert normal >= 1.6 * exact  # about twice as many queries as a paired test needs
        assert paired_power(dz, normal) > 0.95  # at that n the paired test is far over-powered
    assert two_sample_normal_sample_size(0.3) == 175
    assert paired_sample_size(0.3) == 90


def test_exact_power_agrees_with_simulation():
    rng = np.random.default_rng(21)
    dz, n, reps = 0.5, 34, 20_000
    deltas = rng.normal(-dz, 1.0, (reps, n))
    _, p = paired_t(np.zeros_like(deltas), deltas)
    detected = np.mean(p < 0.05)
    predicted = paired_power(dz, n)
    assert abs(detected - predicted) <= 4 * np.sqrt(predicted * (1 - predicted) / reps)


def test_power_basics():
    assert paired_power(0.0, 50) == pytest.approx(0.05)
    assert paired_power(0.0, 50, alternative="less") == pytest.approx(0.05)
    powers = paired_power(0.3, np.array([10, 50, 100, 300, 1000]))
    assert np.all(np.diff(powers) > 0) and powers[-1] == pytest.approx(1.0)
    assert paired_power(3.0, 300) == 1.0  # far tail of the noncentral t: no NaN


def test_minimum_detectable_effect_inverts_power():
    for n in (20, 100, 300):
        mde = minimum_detectable_effect(n)
        assert paired_power(mde, n) == pytest.approx(0.8, abs=1e-8)
    assert minimum_detectable_effect(300) == pytest.approx(0.1623, abs=1e-4)


def test_bad_arguments():
    with pytest.raises(InputError):
        paired_power(0.3, 1)
    with pytest.raises(InputError):
        paired_sample_size(0.0)
    with pytest.raises(InputError):
        paired_sample_size(0.3, power=1.2)
    with pytest.raises(InputError):
        paired_power(0.3, 30, alpha=0)
