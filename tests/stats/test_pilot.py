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


def test_the_range_from_a_pilot_carries_its_own_uncertainty():
    from evalops.stats.pilot import pilot_sample_size, pilot_sample_size_range

    rng = np.random.default_rng(6)
    population = skewed_pilot()
    small = population[rng.integers(0, 300, 40)]
    got = pilot_sample_size_range(small, -0.05, 0.01, simulations=200, resamples=4, seed=2)
    assert got.n == pilot_sample_size(small, -0.05, 0.01, simulations=200, seed=2)[0]
    assert got.low < got.n < got.high and got.level == 0.9 and got.resamples == 4
    # ten times the pilot: a narrower range, relative to its n
    large = population[rng.integers(0, 300, 400)]
    wide = pilot_sample_size_range(large, -0.05, 0.01, simulations=200, resamples=4, seed=2)
    assert (wide.high - wide.low) / wide.n < (got.high - got.low) / got.n
    with pytest.raises(InputError, match="level"):
        pilot_sample_size_range(small, -0.05, 0.01, level=1.5)


def test_the_sd_upper_bound_widens_with_heavy_tails():
    from evalops.stats.pilot import sd_upper_bound

    rng = np.random.default_rng(8)
    normal = rng.normal(0, 0.1, 100)
    assert normal.std(ddof=1) < sd_upper_bound(normal) < 1.1 * normal.std(ddof=1)
    heavy = np.where(rng.random(100) < 0.03, 0.9, 0.0) - 0.027  # the same sd order, a few large deltas
    assert sd_upper_bound(heavy) / heavy.std(ddof=1) > sd_upper_bound(normal) / normal.std(ddof=1) + 0.1
    assert sd_upper_bound(np.zeros(5)) == 0.0
    assert sd_upper_bound(normal, 0.99) > sd_upper_bound(normal, 0.9)


def test_the_inconclusive_hint_is_computed_at_the_sd_upper_bound():
    from evalops.stats import Policy, decide_deltas, rule_sample_size
    from evalops.stats.pilot import sd_upper_bound
    from evalops.stats.robust import MATERIAL_SHARE

    rng = np.random.default_rng(12)
    deltas = rng.normal(0.0, 0.1, 100).clip(-1, 1)
    out = decide_deltas(deltas, Policy(), measure="nDCG@10")
    assert out.decision.reason_code == "underpowered"
    expected = rule_sample_size(-0.03, sd_upper_bound(deltas), 0.02, alpha=MATERIAL_SHARE * 0.05, outcome="critical")
    assert out.queries_needed == expected > rule_sample_size(-0.03, float(deltas.std(ddof=1)), 0.02,
                                                             alpha=MATERIAL_SHARE * 0.05, outcome="critical")
    assert f"about {expected} queries would decide it" in out.decision.reasons[-1]


def test_a_pilot_with_too_few_changed_queries_has_no_upper_end():
    from evalops.stats.pilot import pilot_sample_size_range

    pilot = np.r_[np.zeros(46), [0.5, -0.2, 0.1, 0.3]]  # 4 changed queries of 50
    got = pilot_sample_size_range(pilot, -0.05, 0.01, simulations=200, resamples=3)
    assert got.high is None and "only 4 of the pilot's 50 queries changed" in got.note and got.low <= got.n


def test_a_pilot_without_a_changed_query_reaches_down_to_the_strict_t_interval():
    from evalops.stats.pilot import pilot_sample_size_range
    from evalops.stats.robust import STRICT_NONZERO

    # no query changed: the pilot's own n is that of constant drops, which only the betting interval reads; the
    # changes it missed may spread the deltas, from which the strict t-interval reads the drop from 20 queries
    got = pilot_sample_size_range(np.zeros(50), -0.02, 0.01, simulations=200, resamples=3)
    assert got.n > 100 and got.low == STRICT_NONZERO and got.high is None
    assert f"any from {STRICT_NONZERO} on may do" in got.note
