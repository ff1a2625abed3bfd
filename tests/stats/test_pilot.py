"""Power and sample size of the robust rule from a pilot of per-query deltas."""

import numpy as np
import pytest

from evalops.errors import InputError
from evalops.stats.pilot import pilot_power, pilot_sample_size


def skewed_pilot():
    rng = np.random.default_rng(0)
    u = rng.uniform(size=300)
    return np.where(u < 0.3, -0.1, np.where(u < 0.4, 0.3, 0.0)) + rng.normal(0, 0.05, 300).clip(-0.5, 0.5)


def test_sample_size_from_a_pilot_reaches_its_power_when_measured_again():
    pilot = skewed_pilot()
    n, at_n = pilot_sample_size(pilot, -0.03, 0.01, simulations=1000, seed=1)
    assert at_n.power >= 0.8 and at_n.mc_se > 0
    # measured with fresh draws, the detection at that n is 80 % within 3 Monte Carlo SE
    again = pilot_power(pilot, -0.03, n, 0.01, simulations=4000, seed=99)
    assert abs(again.power - 0.8) <= 3 * (again.mc_se + at_n.mc_se)
    assert pilot_power(pilot, -0.03, max(2, n // 3), 0.01, simulations=1000, seed=1).power < 0.8


def test_pilot_input_is_checked():
    with pytest.raises(InputError, match=r"\[-1, 1\]"):
        pilot_power([3.0, -2.0, 1.0], -0.1, 30, 0.01)
    with pytest.raises(InputError, match="a drop"):
        pilot_power(skewed_pilot(), 0.02, 30, 0.01)


def test_a_normal_pilot_gives_the_exact_power_of_the_t_rule():
    from evalops.stats import rule_power

    rng = np.random.default_rng(2)
    pilot = rng.normal(0, 0.1, 5000)
    sim = pilot_power(pilot, -0.02, 150, 0.01, simulations=4000, seed=3)
    exact = rule_power(-0.02, float(pilot.std(ddof=1)), 150, 0.01, outcome="regression").power
    assert abs(sim.power - exact) <= 3 * sim.mc_se + 0.01  # the skew correction moves it a little


def test_a_significant_drop_inside_the_margin_is_no_change_as_the_rule_decides():
    rng = np.random.default_rng(4)
    pilot = rng.normal(0, 0.01, 2000)  # a drop of 0.004 with sd 0.01: significant at n = 400, inside +-0.02
    assert pilot_power(pilot, -0.004, 400, 0.02, simulations=500).power == 0.0  # no_change (equivalence)
    assert pilot_power(pilot, -0.004, 400, 0.002, simulations=500).power > 0.9  # past a margin of 0.002


def test_only_drop_seeking_alternatives_are_simulated():
    with pytest.raises(InputError, match="two-sided or less"):
        pilot_power(skewed_pilot(), -0.03, 100, 0.01, alternative="greater")
