from dataclasses import replace

import numpy as np
import pytest

from evalops.stats import (
    Coverage,
    Evidence,
    Policy,
    PolicyError,
    adjust_and_decide,
    align,
    compare,
    decide,
    decide_deltas,
    notifies,
)

POLICY = Policy(alpha=0.05, min_delta=0.01)


def ev(lo, hi, delta=None, *, n=300, **kw):
    delta = (lo + hi) / 2 if delta is None else delta
    return Evidence(n=n, delta=delta, measure="nDCG@10", interval=(lo, hi), interval_level=0.95, tail=0.025, **kw)


@pytest.mark.parametrize(
    ("evidence", "label", "severity", "criterion", "reason_code"),
    [
        (ev(-0.05, -0.02), "regression", "critical", "material", None),
        (ev(0.02, 0.05), "improvement", "critical", "material", None),
        (ev(-0.03, -0.001), "regression", "warning", "significant", None),
        (ev(0.001, 0.03), "improvement", "warning", "significant", None),
        (ev(-0.004, 0.006), "no_change", None, "equivalence", None),
        (ev(-0.008, -0.001), "no_change", None, "equivalence", None),  # significant, immaterial
        (ev(-0.03, 0.01, -0.011), "inconclusive", None, None, "underpowered"),  # material estimate, not significant
        (ev(-0.02, 0.02), "inconclusive", None, None, "underpowered"),
        # exactly at the margin is not inside it
        (ev(-0.01, 0.005), "inconclusive", None, None, "underpowered"),
        (Evidence(n=1, delta=-0.1), "inconclusive", None, None, "too_few_queries"),
        (Evidence(n=0, delta=None), "inconclusive", None, None, "too_few_queries"),
        (ev(0.0, 0.0, n=40, degenerate="all_zero"), "no_change", None, "equivalence", None),
        # constant drops: the point interval, once enough queries can carry a significant sign pattern
        (ev(-0.1, -0.1, n=10, degenerate="constant", floor_p=2.0**-10), "regression", "critical", "material", None),
        (ev(-0.1, -0.1, n=3, degenerate="constant", floor_p=2.0**-3), "inconclusive", None, None, "underpowered"),
    ],
)
def test_rule_table(evidence, label, severity, criterion, reason_code):
    decision = decide(evidence, POLICY)
    assert (decision.label, decision.severity, decision.criterion, decision.reason_code) == (
        label, severity, criterion, reason_code), decision.reasons
    assert decision.reasons and all(isinstance(r, str) and r for r in decision.reasons)
    assert decision.margin == 0.01


def test_either_and_query_drops_are_refused_with_what_to_use_instead():
    # neither bounded its false-alarm rate (benchmarks/stats_rule.py); a stored policy's false still loads
    with pytest.raises(PolicyError, match="alert_on: warning .*or alert_on: critical"):
        Policy(alert_on="either")
    with pytest.raises(PolicyError, match="Remove alert_on_query_drops"):
        Policy(alert_on_query_drops=True)
    with pytest.raises(PolicyError, match="alert_on: either"):
        Policy.from_dict({**Policy().to_dict(), "alert_on": "either"})
    assert Policy.from_dict({**Policy().to_dict(), "alert_on_query_drops": False}) == Policy()
    assert "alert_on_query_drops" not in Policy().to_dict()


@pytest.mark.parametrize(
    ("decision", "severity", "criterion", "alert_on", "alerts"),
    [
        ("regression", "critical", "material", "critical", True),
        ("regression", "warning", "significant", "critical", False),
        ("regression", "warning", "significant", "warning", True),
        ("improvement", "critical", "material", "warning", False),
        ("inconclusive", None, None, "warning", False),
    ],
)
def test_alert_on(decision, severity, criterion, alert_on, alerts):
    assert notifies(decision, severity, criterion, alert_on) is alerts


def test_one_sided_policies_look_one_way():
    less = Policy(alternative="less")
    assert decide(ev(-0.05, -0.02), less).label == "regression"
    assert decide(ev(-0.005, 0.08), less).label == "no_change"  # non-inferiority: a drop of 0.01 ruled out
    gain = decide(ev(0.02, 0.05), less)
    assert gain.label == "no_change" and gain.criterion == "equivalence"
    greater = Policy(alternative="greater")
    assert decide(ev(0.02, 0.05), greater).label == "improvement"
    assert decide(ev(-0.05, -0.02), greater).label == "no_change"


def test_per_measure_margins():
    policy = Policy(min_delta=0.01, margins={"P@5": 0.05})
    assert decide(ev(-0.04, -0.02), policy).severity == "critical"  # nDCG@10: margin 0.01
    p5 = decide(Evidence(n=300, delta=-0.03, measure="P@5", interval=(-0.04, -0.02), tail=0.025), policy)
    assert (p5.label, p5.margin) == ("no_change", 0.05)


def pair(b, c):
    ids = [f"q{i:04d}" for i in range(len(b))]
    return align(dict(zip(ids, b)), dict(zip(ids, c)))


def test_eight_drops_of_a_thousandth_are_no_material_change():
    b = np.full(8, 0.6)
    comp = compare(pair(b, b - 0.001), measure="nDCG@10")
    assert (comp.decision, comp.criterion, comp.severity) == ("no_change", "equivalence", None)
    assert comp.effect_size_dz == -1000.0  # still reported, capped; it no longer gates anything
    assert any("every query changed by the same -0.001" in r for r in comp.reasons)
    # the default policy's margin for nDCG is 0.02 (evalops.stats.margins)
    assert "every query moved by less than the margin 0.02: no material change" in comp.reasons[-1]


def test_three_hundred_near_constant_small_drops_are_no_material_change():
    rng = np.random.default_rng(5)
    b = rng.uniform(0.2, 0.9, 300)
    comp = compare(pair(b, b - 0.001 + rng.normal(0, 1e-5, 300)), measure="nDCG@10")
    assert comp.decision == "no_change" and comp.interval_high < 0  # significant, and immaterial
    assert "a significant drop, but the interval rules out a drop of 0.02" in comp.reasons[-1]


def test_ten_of_three_hundred_queries_losing_everything_is_a_regression_that_alerts():
    b = np.full(300, 0.5)
    b[:10] = 1.0
    c = b.copy()
    c[:10] = 0.0
    comp = compare(pair(b, c), measure="nDCG@10")
    assert comp.delta == pytest.approx(-1 / 30) and comp.p_value == pytest.approx(0.0015, abs=1e-4)
    # skew -5.2: Cochran's rule wants 700+ changed queries for the t-interval; the betting interval decides
    assert comp.interval_method == "betting"
    assert (comp.decision, comp.severity, comp.criterion) == ("regression", "warning", "significant")
    assert comp.interval_high < 0 and comp.alert
    assert comp.decision_p < 0.05 and comp.p_adjusted == comp.decision_p  # the p that decided, family of one
    assert "10 queries lost 0.3 or more (0 gained that much" in comp.reasons[-2]
    # in a family of 3 (Bonferroni, 1 - 0.05/3) still a significant drop; the adjusted p is Bonferroni's on
    # the p of the family's own test (the bets are tuned to the level), and it is what decided
    family = adjust_and_decide([comp, comp, comp])
    assert (family[0].decision, family[0].severity, family[0].alert) == ("regression", "warning", True)
    assert family[0].interval_level == pytest.approx(1 - 0.05 / 3)
    assert family[0].p_adjusted == pytest.approx(min(1.0, 3 * family[0].decision_p)) and family[0].p_adjusted < 0.05
    # five failures are not enough, however many queries did not change
    fewer = np.r_[np.full(5, -1.0), np.zeros(295)]
    assert decide_deltas(fewer, Policy(), measure="nDCG@10").decision.reason_code == "too_few_nonzero"


def test_a_thousand_queries_losing_five_points_is_a_critical_regression():
    rng = np.random.default_rng(11)
    d = rng.normal(0.0, 0.34, 1000)
    d = d - d.mean() - 0.053
    b = np.full(1000, 0.5)
    comp = compare(pair(b, b + d), measure="nDCG@10")
    assert comp.p_value < 1e-5
    assert (comp.decision, comp.severity) == ("regression", "critical")
    assert comp.reasons[0].startswith("delta = -0.0530, 0.95 skew-corrected t interval [-0.07")
    plain = compare(pair(b, b + d), measure="nDCG@10", policy=Policy(interval="t"))
    assert plain.reasons[0].startswith("delta = -0.0530, 0.95 t-interval [-0.0741, -0.0319]")


def test_inconclusive_says_how_many_queries_would_decide():
    rng = np.random.default_rng(2)
    d = rng.normal(0, 0.2, 100)
    out = decide_deltas(d - d.mean(), POLICY, measure="nDCG@10")
    assert out.decision.reason_code == "underpowered"
    from evalops.stats import rule_sample_size

    from evalops.stats.pilot import sd_upper_bound

    # the robust t branch reads a claim past the margin at half the per-side error; at the sd's upper bound
    need = rule_sample_size(-0.015, sd_upper_bound(d), 0.01, alpha=0.025)
    assert out.queries_needed == need
    assert f"about {need} queries would decide it" in out.decision.reasons[-1]
    bigger = decide_deltas(d - d.mean(), POLICY, measure="nDCG@10", family_size=3)
    assert bigger.queries_needed > need  # the family's correction asks for more


def test_broken_queries_are_their_own_question_whatever_the_mean():
    """12 collapses hidden by a mean that rose: the mean's question says no drop; the broken-queries question
    (an exact sign test of 12 large losses against 0 large gains, p = 2^-12) says the candidate breaks
    queries, a regression (warning) that alerts; switched off, it is reported only."""
    d = np.r_[np.full(12, -1.0), np.full(288, 0.05)]  # mean ~ +0.008: the mean hides 12 collapses
    found = decide_deltas(d, POLICY)
    assert (found.decision.label, found.decision.severity, found.decision.criterion) == (
        "regression", "warning", "broken_queries")
    assert found.alert
    assert found.decision.reasons[-1].startswith("broken_queries: 12 queries lost 0.3 or more and 0 gained")
    assert found.decision.reasons[-2].startswith("the mean alone: ")
    off = decide_deltas(d, replace(POLICY, broken_queries=False))
    assert off.decision.label != "regression" and not off.alert
    assert "12 queries lost 0.3 or more" in off.decision.reasons[-2]
    # symmetric: as many large gains as losses is no evidence of broken queries
    both = np.r_[np.full(12, -1.0), np.full(12, 1.0), np.zeros(276)]
    assert decide_deltas(both, POLICY).decision.criterion != "broken_queries"


def test_partial_run_is_inconclusive_before_any_number():
    b = np.full(30, 0.8)
    comp = compare(pair(b, b - 0.6), measure="nDCG@10", coverage=Coverage(300, 300, 30, "compared on the 30 both answered"))
    assert (comp.decision, comp.reason_code) == ("inconclusive", "partial_run")
    assert comp.reasons[0].startswith("baseline answered 300 of 300 judged queries (100%), candidate 30 of 300 (10%)")
    assert not comp.alert
    full = compare(pair(b, b - 0.6), measure="nDCG@10", coverage=Coverage(30, 30, 28, "unanswered score 0"))
    assert full.decision == "regression"  # 93% >= 90%


def test_min_effect_is_refused_with_what_replaced_it():
    with pytest.raises(PolicyError, match="min_effect .* was removed: materiality is now min_delta"):
        Policy(min_effect=0.2)
    with pytest.raises(PolicyError, match="Replace min_effect with min_delta"):
        Policy.from_dict({"alpha": 0.05, "min_effect": 0.2})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.5}, "alpha"),
        ({"alternative": "lower"}, "alternative"),
        ({"min_delta": 0}, "min_delta"),
        ({"min_delta": -1}, "min_delta"),
        ({"margins": {"P@5": 0}}, "margins"),
        ({"default_margins": {"nDCG": -0.1}}, "default_margins"),
        ({"default_margins": [0.1]}, "default_margins"),
        ({"alert_on": "both"}, "alert_on"),
        ({"correction": "bonferroni"}, "correction"),
        ({"test": "sign"}, "test"),
        ({"zero_method": "drop"}, "zero_method"),
        ({"interval": "wald"}, "interval"),
        ({"ci_method": "basic"}, "ci_method"),
        ({"min_coverage": 1.5}, "min_coverage"),
        ({"query_drop": 0}, "query_drop"),
        ({"n_resamples": 10}, "n_resamples"),
        ({"seed": -1}, "seed"),
    ],
)
def test_policy_validation(kwargs, message):
    with pytest.raises(PolicyError, match=message):
        Policy(**kwargs)


def test_numpy_numbers_become_plain_python_numbers():
    policy = Policy(alpha=np.float64(0.01), seed=np.int64(20260101), n_resamples=np.int32(500))
    assert type(policy.seed) is int and type(policy.n_resamples) is int and type(policy.alpha) is float
    assert policy == Policy(alpha=0.01, seed=20260101, n_resamples=500)


def test_policy_travels_as_a_dict():
    policy = Policy(test="wilcoxon", correction="bh", seed=20260101, margins={"P@5": 0.02})
    assert Policy.from_dict(policy.to_dict()) == policy
    assert policy.confidence == pytest.approx(0.95)


def test_bh_family_uses_the_false_coverage_level():
    rng = np.random.default_rng(3)
    strong = pair(np.full(200, 0.5), 0.5 + rng.normal(-0.08, 0.1, 200))
    null = pair(np.full(200, 0.5), 0.5 + rng.normal(0.0, 0.1, 200))
    policy = Policy(correction="bh")
    family = adjust_and_decide([compare(p, measure=m, policy=policy) for p, m in
                                [(strong, "a"), (null, "b"), (null, "c"), (null, "d")]])
    discoveries = sum(c.p_adjusted < 0.05 for c in family)
    assert discoveries >= 1
    assert family[0].interval_level == pytest.approx(1 - discoveries * 0.05 / 4)
