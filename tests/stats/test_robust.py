"""The skew-robust decision interval (``interval="robust"``, the default): named cases and its guarantees."""

import math

import numpy as np
import pytest

from evalops.stats import Policy, PolicyError, decide_deltas
from evalops.stats.robust import betting_interval, log_wealth, read_robust, robust_interval
from evalops.stats.student_t import t_quantile

POLICY = Policy()


def test_ten_total_failures_in_three_hundred_queries_alert():
    d = np.r_[np.full(10, -1.0), np.zeros(290)]
    out = decide_deltas(d, POLICY, measure="P@10")
    assert out.interval_method == "betting" and out.alert
    assert out.decision.label == "regression" and out.interval[1] < 0


def test_three_hundred_identical_tiny_drops_are_no_change():
    out = decide_deltas(np.full(300, -0.0003), POLICY, measure="nDCG@10")
    assert (out.decision.label, out.decision.criterion, out.alert) == ("no_change", "equivalence", False)


@pytest.mark.parametrize("d", [[-0.1, -0.1000001], [-0.1, -0.1], [-0.5] * 5 + [0.0] * 100])
def test_fewer_than_six_changed_queries_never_alert(d):
    out = decide_deltas(np.asarray(d), POLICY, measure="nDCG@10")
    assert (out.decision.label, out.decision.reason_code, out.alert) == ("inconclusive", "too_few_nonzero", False)
    assert "would decide it" in out.decision.reasons[-1]


def test_deltas_outside_the_unit_range_too_skewed_for_t_are_skewed_small_sample():
    d = np.r_[np.full(8, -40.0), np.full(30, 1.0)]  # token counts: no betting interval, too skewed for t
    out = decide_deltas(d, POLICY, measure="context_tokens")
    assert (out.decision.label, out.decision.reason_code) == ("inconclusive", "skewed_small_sample")
    assert out.queries_needed is not None and out.queries_needed > len(d)


def sparse_skewed_null(rng, sims, n):
    """P@10-like deltas: 87 % zero, drops of 0.1 on 9.75 %, gains of 0.3 on 3.25 %: mean exactly 0, skew +3."""
    u = rng.uniform(size=(sims, n))
    return np.where(u < 0.0975, -0.1, np.where(u < 0.13, 0.3, 0.0))


def test_sparse_skewed_aa_at_thirty_queries_stays_under_the_documented_share():
    # the t rule alarms here (a sample that missed the rare gains looks like a clean drop)
    rng = np.random.default_rng(7)
    sims = 600
    samples = sparse_skewed_null(rng, sims, 30)
    robust = np.mean([decide_deltas(d, POLICY, measure="P@10", size_hint=False).alert for d in samples])
    plain = np.mean([decide_deltas(d, Policy(interval="t"), measure="P@10", size_hint=False).alert
                     for d in samples])
    bound = 0.025 + 3 * math.sqrt(0.025 * 0.975 / sims)
    assert robust <= bound
    assert plain > bound  # the failure the robust interval exists for


def test_betting_interval_holds_its_level_on_a_skewed_bounded_mean():
    rng = np.random.default_rng(3)
    misses = 0
    for _ in range(200):
        d = sparse_skewed_null(rng, 1, 60)[0]
        lo, hi = betting_interval(d, 0.025)
        misses += not (lo <= 0.0 <= hi)
    assert misses <= 10  # at most 5 % (2.5 % per side); betting by Ville's inequality is conservative


def test_betting_wealth_is_monotone_and_order_free():
    rng = np.random.default_rng(4)
    d = np.clip(rng.normal(-0.05, 0.3, 80), -1, 1)
    below = [float(log_wealth(d, m, "below", 0.025)) for m in (-0.2, -0.1, 0.0, 0.1)]
    assert below == sorted(below)
    assert float(log_wealth(d[::-1], 0.0, "below", 0.025)) == pytest.approx(below[2])
    assert float(log_wealth(rng.permutation(d), 0.0, "below", 0.025)) == pytest.approx(below[2])


@pytest.mark.parametrize("seed", range(4))
def test_the_decision_p_is_below_the_tail_exactly_when_the_interval_decides(seed):
    rng = np.random.default_rng(seed)
    d = np.clip(rng.exponential(0.1, 400) - 0.1 - 0.004 * seed, -1, 1)
    for tail in (0.025, 0.005, 0.0005):
        r = robust_interval(d, tail, t_quantile(399, 1 - tail))
        assert r.branch == "t"
        assert (r.interval[1] < 0) == (r.p_below < tail)
        assert (r.interval[0] > 0) == (r.p_above < tail)


def test_vectorised_reading_matches_the_interval():
    rng = np.random.default_rng(5)
    rng.uniform(size=(50, 80))
    u = rng.uniform(size=(50, 80))
    # 40 % of queries lose 0.1, 5 % gain 0.3, the rest unchanged: skewed, with enough moved queries for the
    # strict t-interval to stand beside the betting interval
    D = np.where(u < 0.4, -0.1, np.where(u < 0.45, 0.3, 0.0))
    tail = 0.025
    reading = read_robust(D, tail, (-0.01, 0.0, 0.01), t_crit=t_quantile(79, 1 - tail))
    for i, d in enumerate(D):
        r = robust_interval(d, tail, t_quantile(79, 1 - tail))
        if r.interval is None:
            continue
        for k, p in enumerate((-0.01, 0.0, 0.01)):
            # at 0 the strict t-interval's claim counts too (robust_interval's strict_side)
            assert reading.below[k][i] == (r.interval[1] < p or (p == 0.0 and r.strict_side == "below"))
            assert reading.above[k][i] == (r.interval[0] > p or (p == 0.0 and r.strict_side == "above"))
    assert any(robust_interval(d, tail, t_quantile(79, 1 - tail)).strict_side == "below" for d in D)


def test_interval_is_recorded_in_the_policy_and_old_policies_load():
    assert Policy().to_dict()["interval"] == "robust"
    old = {**Policy().to_dict(), "interval": "t", "alert_on_query_drops": False}
    assert Policy.from_dict(old).interval == "t"
    with pytest.raises(PolicyError, match="interval must be one of robust, t, bootstrap"):
        Policy(interval="normal")


def _heavy_tailed_drop(up: int) -> np.ndarray:
    # 300 queries: most move a little (a drop of about 0.03), 25 a lot (``up`` of them up), three by a whole point
    core = np.round(np.linspace(-0.1, 0.04, 275), 4)
    return np.r_[core, np.full(up, 0.3), np.full(22 - up, -0.3), np.full(3, -1.0)]


def test_symmetric_heavy_tails_at_n_300_are_decided_by_t_not_the_betting_width():
    from evalops.stats.robust import BRANCHES, branch, cochran_n, sample_skewness, tails_balanced

    d = _heavy_tailed_drop(12)
    assert cochran_n(sample_skewness(d)) > len(d)  # the sample skewness alone (-3.4) would send it to betting
    assert tails_balanced(d)
    assert BRANCHES[int(branch(d)[0])] == "t"
    out = decide_deltas(d, POLICY, measure="AP")
    assert out.decision.label == "regression" and out.alert
    # the same sample with its extreme deltas on one side is a real skew: the betting interval decides
    skewed = -_heavy_tailed_drop(22)
    assert not tails_balanced(skewed)
    assert BRANCHES[int(branch(skewed)[0])] == "betting"


@pytest.mark.parametrize("sign", (1.0, -1.0))
def test_the_skew_correction_only_widens_and_its_p_matches_each_side(sign):
    from evalops.stats.robust import skew_ends

    rng = np.random.default_rng(11)
    d = sign * np.clip(rng.exponential(0.1, 400) - 0.1, -1, 1) - 0.012  # right (left) skew, a small drop
    n, tail = len(d), 0.025
    t = t_quantile(n - 1, 1 - tail)
    mean, se = d.mean(), d.std(ddof=1) / np.sqrt(n)
    lo, hi = skew_ends(mean, se, sign * 2.0, n, t)
    assert lo <= mean - t * se and hi >= mean + t * se  # never inwards
    assert (hi > mean + t * se) == (sign > 0) and (lo < mean - t * se) == (sign < 0)
    for tail in (0.025, 0.005):
        r = robust_interval(d, tail, t_quantile(n - 1, 1 - tail))
        assert r.branch == "t"
        assert (r.interval[1] < 0) == (r.p_below < tail)
        assert (r.interval[0] > 0) == (r.p_above < tail)


def test_claims_past_the_margin_are_read_at_half_the_per_side_error_on_the_t_branch():
    from evalops.stats.robust import material_t

    rng = np.random.default_rng(6)
    D = np.clip(rng.normal(-0.013, 0.03, (60, 400)), -1, 1)
    tail = 0.025
    reading = read_robust(D, tail, (-0.01, 0.0, 0.01), t_crit=t_quantile(399, 1 - tail), material=0.01)
    assert material_t(400, tail) == pytest.approx(t_quantile(399, 1 - tail / 2))
    for i, d in enumerate(D):
        r = robust_interval(d, tail, t_quantile(399, 1 - tail))
        assert r.branch == "t" and r.material[0] <= r.interval[0] and r.material[1] >= r.interval[1]
        assert reading.material_below[i] == (r.material[1] < -0.01)
        assert reading.below[0][i] == (r.interval[1] < -0.01)
    # some samples lie below -0.01 by the interval but not by the material reading: warnings, not critical
    between = reading.below[0] & ~reading.material_below
    assert between.any()
    out = decide_deltas(D[np.argmax(between)], Policy(min_delta=0.01), size_hint=False)
    assert (out.decision.label, out.decision.severity) == ("regression", "warning")
    assert any("half the per-side error" in r for r in out.decision.reasons)
    assert "its material reading reaches past -0.01" in out.decision.reasons[-1]


@pytest.mark.parametrize("n, drop", [(8, -0.1), (30, -0.05)])
def test_constant_drops_are_decided_as_documented(n, drop):
    """docs/statistics.md: a constant sample cannot alone show a drop of the mean (a rare query that moved the
    other way by up to 1 would explain it), so it is inconclusive with the n that would decide; a constant
    loss of query_drop or more is a regression by the broken-queries question."""
    got = decide_deltas(np.full(n, drop), Policy()).decision
    assert got.label == "inconclusive" and got.reason_code == "skewed_small_sample"
    assert "a constant sample cannot rule out a rare query that moved the other way" in " ".join(got.reasons)
    for k in (8, 30):  # a constant loss of query_drop: regression (the broken-queries question, or the mean's)
        broken = decide_deltas(np.full(k, -0.3), Policy()).decision
        assert broken.label == "regression" and broken.criterion in ("broken_queries", "material")


def _nonzero_count(d, tol=0.0):
    """The count the rule used before ``moved_count``: every non-zero delta."""
    return (np.abs(d) > np.asarray(tol)[..., None]).sum(axis=-1)


def test_moved_count_is_the_deltas_off_the_common_value():
    from evalops.stats.robust import moved_count

    rng = np.random.default_rng(3)
    D = np.round(rng.choice([-0.1, 0.0, 0.1, 0.2], size=(200, 40), p=[0.1, 0.6, 0.2, 0.1]) - 0.013, 10)
    largest = np.array([np.unique(d, return_counts=True)[1].max() for d in D])  # a hand count
    assert np.array_equal(moved_count(D), np.minimum(40 - largest, (D != 0).sum(axis=1)))
    assert int(moved_count(np.r_[np.zeros(26), -0.1, -0.1, 0.1, 0.4])) == 4  # the common value 0
    assert int(moved_count(np.linspace(-0.2, 0.1, 30))) == 30  # no two deltas equal: every one moved
    assert int(moved_count(np.full(12, -0.05))) == 0


def test_a_shifted_bulk_is_not_read_as_changed_queries(monkeypatch):
    from scipy import stats

    from evalops.stats import robust

    # 45 queries at -0.01 and five others: what a held-out P@10 null (26 unchanged queries, two at -0.1, one
    # +0.1, one +0.4, re-centred) gives in a sample that missed its +0.4 query; the paired t-test calls it a drop
    d = np.r_[np.full(45, -0.01), np.full(3, -0.11), np.full(2, 0.09)]
    assert stats.ttest_1samp(d, 0.0, alternative="less").pvalue < 0.01
    out = decide_deltas(d, POLICY, measure="P@10", size_hint=False)
    # the betting interval decides (the strict t-interval beside it is read but makes no claim: the bets on a
    # drop of 0.012 hardly grow)
    assert out.interval_method.startswith("betting")
    assert (out.decision.label, out.alert) == ("inconclusive", False)
    monkeypatch.setattr(robust, "moved_count", _nonzero_count)  # the rule before: 50 "changed" queries, t
    before = decide_deltas(d, POLICY, measure="P@10", size_hint=False)
    assert before.decision.label == "regression" and before.alert


def test_held_out_like_sparse_null_keeps_its_level(monkeypatch):
    from evalops.stats import robust

    pool = np.r_[np.zeros(26), -0.1, -0.1, 0.1, 0.4]  # SciFact's third-party run, P@10 (benchmark figure 8)
    null = pool - pool.mean()
    rng = np.random.default_rng(40)
    samples = null[rng.integers(0, len(null), (4000, 50))]
    tail = 0.025
    bound = tail + 3 * math.sqrt(tail * (1 - tail) / len(samples))

    def drop_rate() -> float:
        r = read_robust(samples, tail, (-0.01, 0.0, 0.01), t_crit=t_quantile(49, 1 - tail))
        return float(np.mean(r.below[1]))  # every drop alert has its interval below 0

    assert drop_rate() <= bound
    monkeypatch.setattr(robust, "moved_count", _nonzero_count)
    assert drop_rate() > 2 * bound  # 7.7 %: the rule before alarmed here


@pytest.mark.parametrize("rest", (0.0, -0.004))
def test_planted_broken_queries_are_still_found(rest):
    # 10 % of 100 queries broken (each losing 0.37), the others unchanged or all moved by the same small amount
    d = np.r_[np.full(10, -0.37), np.full(90, rest)]
    out = decide_deltas(d, POLICY, measure="nDCG@10", size_hint=False)
    assert out.decision.label == "regression" and out.alert
