import pytest

from evalops.stats import Evidence, Policy, PolicyError, decide

POLICY = Policy(alpha=0.05, min_effect=0.2, min_delta=0.01)


def ev(p, dz, delta, *, n=300, direction=None, dz_ci=None, delta_ci=None, **kw):
    if direction is None:
        direction = 0 if delta is None else (delta > 0) - (delta < 0)
    return Evidence(n=n, delta=delta, effect_size_dz=dz, p_value=p, p_adjusted=p, direction=direction,
                    effect_size_ci=dz_ci, delta_ci=delta_ci, **kw)


@pytest.mark.parametrize(
    ("evidence", "label"),
    [
        # significant and material both ways
        (ev(0.001, -0.35, -0.04), "regression"),
        (ev(0.001, 0.35, 0.04), "improvement"),
        # BOTH conditions are needed: significant but a tiny effect, or a tiny delta
        (ev(0.001, -0.15, -0.04), "no_change"),
        (ev(0.001, -0.35, -0.005), "no_change"),
        # exactly at the minimums counts
        (ev(0.01, -0.2, -0.01), "regression"),
        # p exactly alpha is not below alpha
        (ev(0.05, -0.5, -0.1, dz_ci=(-0.9, 0.0), delta_ci=(-0.2, 0.0)), "inconclusive"),
        # large effect, not significant, intervals reach the minimums: too few queries
        (ev(0.2, -0.5, -0.1, n=8, dz_ci=(-1.2, 0.3), delta_ci=(-0.25, 0.05)), "inconclusive"),
        # not significant and the intervals rule out a material change
        (ev(0.4, -0.05, -0.002, dz_ci=(-0.16, 0.06), delta_ci=(-0.008, 0.004)), "no_change"),
        # ruled out by the delta interval alone (a material change needs both)
        (ev(0.4, -0.05, -0.002, dz_ci=(-0.3, 0.2), delta_ci=(-0.008, 0.004)), "no_change"),
        # intervals not computed: cannot rule anything out
        (ev(0.4, -0.05, -0.002), "inconclusive"),
        # the test's direction disagrees with the mean delta (possible with Wilcoxon)
        (ev(0.001, -0.35, -0.04, direction=1), "inconclusive"),
        # degenerate
        (ev(1.0, None, None, n=1), "inconclusive"),
        (ev(1.0, None, None, n=0), "inconclusive"),
        (ev(1.0, 0.0, 0.0, n=40, degenerate="all_zero"), "no_change"),
        (ev(2.0**-9, -1000.0, -0.1, n=10, degenerate="constant", dz_ci=(-1000.0, -1000.0),
            delta_ci=(-0.1, -0.1)), "regression"),
        (ev(0.25, -1000.0, -0.1, n=3, degenerate="constant", dz_ci=(-1000.0, -1000.0),
            delta_ci=(-0.1, -0.1)), "inconclusive"),
    ],
)
def test_rule_table(evidence, label):
    decision = decide(evidence, POLICY)
    assert decision.label == label, decision.reasons
    assert decision.reasons and all(isinstance(r, str) and r for r in decision.reasons)


def test_reasons_say_why_in_words():
    reasons = decide(ev(0.001, -0.35, -0.04), POLICY).reasons
    assert reasons[0].startswith("p = 0.001 < alpha = 0.05 (paired t-test, two-sided")
    assert "|d_z| = 0.35 >= minimum 0.2" in reasons
    assert "|delta| = 0.04 >= minimum 0.01" in reasons
    assert reasons[-1].endswith("a regression")
    family = decide(Evidence(n=50, delta=-0.04, effect_size_dz=-0.5, p_value=0.001, p_adjusted=0.006,
                             direction=-1, family_size=6), POLICY).reasons
    assert "adjusted p = 0.006" in family[0] and "Holm-adjusted over 6 comparisons" in family[0]
    small = decide(ev(0.2, -0.5, -0.1, n=8, dz_ci=(-1.2, 0.3), delta_ci=(-0.25, 0.05)), POLICY).reasons
    assert "about 199 give 80% power" in small[-1]
    constant = decide(ev(0.25, -1000.0, -0.1, n=3, degenerate="constant"), POLICY).reasons
    assert "at best p = 0.25; at least 6 are needed" in constant[-1]


def test_adjusted_p_value_is_the_one_that_counts():
    evidence = Evidence(n=100, delta=-0.05, effect_size_dz=-0.4, p_value=0.01, p_adjusted=0.08, direction=-1)
    assert decide(evidence, POLICY).label != "regression"


def test_one_sided_policies_look_one_way():
    less = Policy(alternative="less", min_effect=0.2)
    assert decide(ev(0.001, -0.4, -0.05), less).label == "regression"
    gain = decide(ev(0.9, 0.4, 0.05, dz_ci=(0.1, 0.7), delta_ci=(0.01, 0.09)), less)
    assert gain.label == "no_change" and "only looks for drops" in gain.reasons[-1]
    greater = Policy(alternative="greater", min_effect=0.2)
    assert decide(ev(0.001, 0.4, 0.05), greater).label == "improvement"


def test_no_minimums_means_significance_alone_decides():
    bare = Policy(min_effect=0.0, min_delta=0.0)
    assert decide(ev(0.03, -0.13, -0.001), bare).label == "regression"
    assert decide(ev(0.3, -0.06, -0.001), bare).label == "no_change"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.5}, "alpha"),
        ({"alternative": "lower"}, "alternative"),
        ({"min_effect": -0.1}, "min_effect"),
        ({"min_delta": -1}, "min_delta"),
        ({"correction": "bonferroni"}, "correction"),
        ({"test": "sign"}, "test"),
        ({"zero_method": "drop"}, "zero_method"),
        ({"ci_method": "basic"}, "ci_method"),
        ({"n_resamples": 10}, "n_resamples"),
        ({"seed": -1}, "seed"),
    ],
)
def test_policy_validation(kwargs, message):
    with pytest.raises(PolicyError, match=message):
        Policy(**kwargs)


def test_numpy_numbers_become_plain_python_numbers():
    import numpy as np

    policy = Policy(alpha=np.float64(0.01), seed=np.int64(20260101), n_resamples=np.int32(500))
    assert type(policy.seed) is int and type(policy.n_resamples) is int and type(policy.alpha) is float
    assert policy == Policy(alpha=0.01, seed=20260101, n_resamples=500)


def test_policy_travels_as_a_dict():
    policy = Policy(test="wilcoxon", correction="bh", seed=20260101)
    assert Policy(**policy.to_dict()) == policy
    assert policy.confidence == pytest.approx(0.95)
