"""Power and sample size of the interval rule, checked against statsmodels and against simulation."""

import math

import numpy as np
import pytest
from scipy import stats

from evalops.errors import InputError
from evalops.stats import Policy, decide_deltas, paired_power, family_tail, rule_power, rule_sample_size, spending_tail
from evalops.stats.robust import MATERIAL_SHARE


@pytest.mark.parametrize(("n", "sd", "m"), [(30, 0.05, 1), (300, 0.2, 3), (1000, 0.3, 6)])
def test_critical_power_is_the_one_sided_t_power_at_the_family_level(n, sd, m):
    margin, delta = 0.01, -0.03
    tail = family_tail(0.05, "two-sided", m)
    ours = rule_power(delta, sd, n, margin, family_size=m).power
    # critical <=> the one-sided t-test of H0: delta >= -margin rejects at level tail
    theirs = stats.nct.cdf(-stats.t.ppf(1 - tail, n - 1), n - 1, (delta + margin) * math.sqrt(n) / sd)
    assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12)
    assert ours == pytest.approx(paired_power((delta + margin) / sd, n, tail, "less"), rel=1e-9, abs=1e-12)
    import statsmodels.stats.power as smp  # in the dev extra: the reference must not be skipped
    assert ours == pytest.approx(smp.TTestPower().power((delta + margin) / sd, n, tail, alternative="smaller"))


def simulate(delta, sd, n, margin, outcome, policy, draws=4000, seed=1):
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(draws):
        out = decide_deltas(rng.normal(delta, sd, n), policy, measure="m")
        d = out.decision
        if outcome == "critical":
            hits += d.severity == "critical" and d.label == "regression"
        elif outcome == "regression":
            hits += d.label == "regression"
        else:
            hits += d.label == "no_change"
    return hits / draws, math.sqrt(0.25 / draws)


@pytest.mark.parametrize(
    ("delta", "outcome", "alternative"),
    [(-0.02, "critical", "two-sided"), (-0.008, "regression", "two-sided"), (0.002, "no_change", "two-sided"),
     (0.0, "no_change", "less")],
)
def test_rule_power_matches_the_rule_itself(delta, outcome, alternative):
    sd, n, margin = 0.04, 120, 0.01
    policy = Policy(min_delta=margin, alternative=alternative)
    # the default (robust) rule's t branch reads a claim past the margin at half the per-side error
    alpha = 0.05 * (MATERIAL_SHARE if outcome == "critical" else 1.0)
    expected = rule_power(delta, sd, n, margin, alpha=alpha, alternative=alternative, outcome=outcome).power
    seen, se = simulate(delta, sd, n, margin, outcome, policy)
    assert abs(seen - expected) < 4 * se, (seen, expected)


def test_bh_families_are_simulated_with_a_stated_error():
    out = rule_power(-0.02, 0.04, 100, 0.01, family_size=4, correction="bh", simulations=4000)
    assert out.method.startswith("simulation") and 0 < out.mc_se < 0.01
    holm = rule_power(-0.02, 0.04, 100, 0.01, family_size=4).power
    single = rule_power(-0.02, 0.04, 100, 0.01).power
    assert holm - 4 * out.mc_se <= out.power <= single + 4 * out.mc_se  # BH sits between Bonferroni and none


def test_sample_size_is_the_smallest_n_reaching_the_power():
    for m in (1, 3):
        n = rule_sample_size(-0.015, 0.1, 0.01, family_size=m)
        assert rule_power(-0.015, 0.1, n, 0.01, family_size=m).power >= 0.8
        assert rule_power(-0.015, 0.1, n - 1, 0.01, family_size=m).power < 0.8
    assert rule_sample_size(-0.015, 0.1, 0.01, family_size=3) > rule_sample_size(-0.015, 0.1, 0.01)
    n0 = rule_sample_size(0.0, 0.1, 0.01, outcome="no_change")
    assert rule_power(0.0, 0.1, n0, 0.01, outcome="no_change").power >= 0.8
    with pytest.raises(InputError, match="not past the margin"):
        rule_sample_size(-0.005, 0.1, 0.01)
    with pytest.raises(InputError, match="not inside the margin"):
        rule_sample_size(0.02, 0.1, 0.01, outcome="no_change")


def test_family_tails_and_daily_spending():
    assert family_tail(0.05, "two-sided", 3) == pytest.approx(0.05 / 6)
    assert family_tail(0.05, "less", 3) == pytest.approx(0.05 / 3)
    assert family_tail(0.05, "two-sided", 4, "bh", discoveries=2) == pytest.approx(2 * 0.05 / 8)
    spent = sum(2 * spending_tail(0.05, k) for k in range(1, 100_000))
    assert spent == pytest.approx(0.05, rel=1e-4) and spent < 0.05
    assert stats.norm.ppf(1 - spending_tail(0.05, 60)) > stats.norm.ppf(1 - spending_tail(0.05, 1))
