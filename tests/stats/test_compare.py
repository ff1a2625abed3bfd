import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalops.stats import DECISIONS, Paired, Policy, PolicyError, adjust_and_decide, align, compare

RECORD_KEYS = {
    "n", "baseline_mean", "candidate_mean", "delta", "delta_ci_low", "delta_ci_high", "relative_change",
    "test", "statistic", "p_value", "p_adjusted", "effect_size_dz", "effect_size_ci", "wins", "ties",
    "losses", "decision", "reasons", "worst_queries", "severity", "criterion", "reason_code", "margin",
    "interval_low", "interval_high", "interval_level", "family_size", "coverage", "queries_lost", "alert",
}


def make_pair(n=80, shift=-0.06, seed=0, noise=0.15):
    rng = np.random.default_rng(seed)
    ids = [f"q{i:03d}" for i in range(n)]
    b = rng.random(n)
    c = np.clip(b + shift + rng.normal(0, noise, n), 0, 1)
    return align(dict(zip(ids, b)), dict(zip(ids, c)))


@pytest.mark.parametrize("test", ["t", "wilcoxon", "randomization"])
def test_record_has_every_field_and_is_strict_json(test):
    record = compare(make_pair(), measure="nDCG@10", policy=Policy(test=test)).to_dict()
    assert RECORD_KEYS <= set(record)
    json.dumps(record, allow_nan=False)
    assert record["test"] == test
    assert record["n"] == 80
    assert record["wins"] + record["ties"] + record["losses"] == 80
    assert record["delta"] == pytest.approx(record["candidate_mean"] - record["baseline_mean"])
    assert record["delta_ci_low"] < record["delta"] < record["delta_ci_high"]
    low, high = record["effect_size_ci"]
    assert low < record["effect_size_dz"] < high
    assert record["decision"] == "regression"
    assert record["p_adjusted"] == record["decision_p"]  # a family of one: the p of the decision's own test


def test_worst_queries_are_the_ten_largest_drops_with_both_scores():
    paired = make_pair()
    record = compare(paired, measure="m").to_dict()
    worst = record["worst_queries"]
    deltas = paired.deltas
    assert len(worst) == 10
    assert [w["delta"] for w in worst] == sorted(deltas)[:10]
    first = worst[0]
    i = paired.query_ids.tolist().index(first["query_id"])
    assert (first["baseline"], first["candidate"]) == (paired.baseline[i], paired.candidate[i])
    only_gains = align({"a": 0.1, "b": 0.2}, {"a": 0.3, "b": 0.2})
    assert compare(only_gains, measure="m").worst_queries == ()


def test_same_seed_same_record():
    paired = make_pair(n=300)
    policy = Policy(test="randomization")
    assert compare(paired, measure="m", policy=policy) == compare(paired, measure="m", policy=policy)
    other = compare(paired, measure="m", policy=policy, rng=99)
    assert other.delta_ci_low != compare(paired, measure="m", policy=policy).delta_ci_low


def test_threads_do_not_change_the_numbers(monkeypatch):
    from evalops.stats import bootstrap, randomization

    monkeypatch.setattr(randomization, "CHUNK_BYTES", 375 * 300)  # several chunks for each
    monkeypatch.setattr(bootstrap, "CHUNK_BYTES", 12 * 3000 * 300)
    paired = make_pair(n=3000)
    policy = Policy(test="randomization", n_resamples=2000)
    one = compare(paired, measure="m", policy=policy, workers=1)
    two = compare(paired, measure="m", policy=policy, workers=2)
    assert one == two


def test_swapping_the_versions_mirrors_the_comparison():
    paired = make_pair()
    swapped = Paired(paired.query_ids, paired.candidate, paired.baseline)
    forward = compare(paired, measure="m")
    backward = compare(swapped, measure="m")
    assert forward.p_value == pytest.approx(backward.p_value)
    assert forward.effect_size_dz == pytest.approx(-backward.effect_size_dz)
    assert (forward.decision, backward.decision) == ("regression", "improvement")
    assert (forward.wins, forward.losses) == (backward.losses, backward.wins)


def test_correction_spans_every_measure_and_version():
    weak = make_pair(n=60, shift=-0.05, seed=3)  # p = 0.033 alone
    null = make_pair(n=60, shift=0.0, seed=4)
    policy = Policy(min_delta=0.001)
    family = [compare(p, measure=m, policy=policy) for p, m in [(weak, "a"), (null, "b"), (null, "c")]]
    alone = family[0]
    assert alone.p_value < 0.05 and alone.decision == "regression" and alone.interval_high < 0
    corrected = adjust_and_decide(family)
    # the family's Bonferroni interval (level 1 - 0.05/3) reaches 0: no longer a regression
    assert corrected[0].decision != "regression" and corrected[0].interval_high >= 0
    assert corrected[0].interval_level == pytest.approx(1 - 0.05 / 3)
    assert corrected[0].interval_low < alone.interval_low
    # the reported adjusted p is the decision's: Bonferroni's m p beside Bonferroni's interval, not Holm's
    assert corrected[0].p_adjusted == pytest.approx(min(1.0, 3 * alone.decision_p)) and corrected[0].p_adjusted >= 0.05
    assert all(c.family_size == 3 for c in corrected)
    assert all(c.p_adjusted == pytest.approx(min(1.0, 3 * c.decision_p)) for c in corrected)
    bh = adjust_and_decide([compare(p, measure=m, policy=Policy(correction="bh")) for p, m in
                            [(weak, "a"), (null, "b")]])
    assert bh[0].p_adjusted <= min(1.0, 2 * alone.decision_p)
    old = adjust_and_decide([compare(p, measure=m, policy=Policy(min_delta=0.001, interval="t"))
                             for p, m in [(weak, "a"), (null, "b"), (null, "c")]])
    assert old[0].p_adjusted == pytest.approx(min(1.0, 3 * alone.p_value))  # the t policy: Holm on the t-test
    assert adjust_and_decide([]) == []


def test_family_members_must_share_a_policy():
    paired = make_pair()
    with pytest.raises(PolicyError, match="different policy"):
        adjust_and_decide([compare(paired, measure="a"), compare(paired, measure="b", policy=Policy(alpha=0.01))])


def test_intersection_drops_are_noted():
    paired = align({"a": 0.1, "b": 0.2, "c": 0.3, "x": 0.4}, {"a": 0.2, "b": 0.3, "c": 0.35},
                   missing="intersection")
    record = compare(paired, measure="m").to_dict()
    assert record["n"] == 3
    assert any("1 queries scored by one side only" in note for note in record["notes"])


@pytest.mark.parametrize(
    ("baseline", "candidate", "decision"),
    [
        ([], [], "inconclusive"),
        ([0.3], [0.1], "inconclusive"),
        ([1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], "no_change"),  # zero-variance metric, no change
        ([0.0] * 12, [0.0] * 12, "no_change"),  # every query scores 0 on both: relative change 0, not 0/0
        # zero-variance metric that moved: twelve identical gains cannot show a gain for any shape of delta
        ([0.0] * 12, [0.1] * 12, "inconclusive"),
        ([0.3, 0.6], [0.2, 0.5], "inconclusive"),  # constant deltas, too few queries
    ],
)
@pytest.mark.parametrize("test", ["t", "wilcoxon", "randomization"])
def test_degenerate_inputs_give_defined_records(baseline, candidate, decision, test):
    ids = [str(i) for i in range(len(baseline))]
    comp = compare(align((ids, baseline), (ids, candidate)), measure="m", policy=Policy(test=test))
    assert comp.decision == decision
    record = comp.to_dict()
    json.dumps(record, allow_nan=False)
    assert not any(isinstance(v, float) and math.isnan(v) for v in record.values())


def test_degenerate_values_are_the_documented_ones():
    ids = [str(i) for i in range(12)]
    zero = compare(align((ids, [0.5] * 12), (ids, [0.5] * 12)), measure="m")
    assert (zero.p_value, zero.effect_size_dz, zero.effect_size_ci, zero.relative_change) == (1.0, 0.0, (0.0, 0.0), 0.0)
    moved = compare(align((ids, [0.0] * 12), (ids, [0.1] * 12)), measure="m")
    assert moved.relative_change is None and moved.effect_size_dz == 1000.0
    assert moved.p_value == pytest.approx(2.0**-11)
    one = compare(align({"a": 0.4}, {"a": 0.2}), measure="m")
    assert one.delta == pytest.approx(-0.2) and one.effect_size_dz is None and one.delta_ci_low is None
    empty = compare(align({}, {}), measure="m")
    assert empty.baseline_mean is None and empty.p_value == 1.0


scores = st.lists(st.sampled_from([0.0, 0.1, 0.25, 1 / 3, 0.5, 0.75, 1.0]), min_size=0, max_size=25)


@settings(max_examples=80, deadline=None)
@given(baseline=scores, offsets=st.lists(st.sampled_from([-0.25, -0.1, 0.0, 0.0, 0.1]), min_size=25, max_size=25),
       test=st.sampled_from(["t", "wilcoxon", "randomization"]))
def test_any_small_input_gives_a_finite_record(baseline, offsets, test):
    candidate = [min(1.0, max(0.0, b + o)) for b, o in zip(baseline, offsets)]
    ids = [str(i) for i in range(len(baseline))]
    comp = compare(align((ids, baseline), (ids, candidate)), measure="m",
                   policy=Policy(test=test, n_resamples=500))
    assert comp.decision in DECISIONS
    assert 0.0 <= comp.p_value <= 1.0
    for value in comp.to_dict().values():
        if isinstance(value, float):
            assert math.isfinite(value)
    if comp.effect_size_ci is not None:
        assert all(math.isfinite(x) for x in comp.effect_size_ci)
