"""The pooled betting sequence over daily production looks: its wealth, its level and its power."""

import math

import numpy as np
import pytest

from evalops.errors import InputError
from evalops.stats.robust import CAP
from evalops.stats.sequence import GRID, drop_sequence, sequence_log_wealth

TAIL = 0.025


def test_wealth_is_the_average_of_the_constant_bettors():
    d = np.array([-0.3, 0.0, 0.5, -1.0, 1.0, -0.2])
    for m in (0.0, -0.01):
        expected = []
        for t in range(1, len(d) + 1):
            gamblers = [math.prod(1.0 + CAP / (1.0 - m) / 2**g * (m - x) for x in d[:t]) for g in range(GRID)]
            expected.append(math.log(sum(gamblers) / GRID))
        np.testing.assert_allclose(sequence_log_wealth(d, m), expected, rtol=1e-12)


def _skewed_null(rng, shape):
    # sparse and right-skewed, true mean exactly 0: rare large gains, many small losses
    big = rng.random(shape) < 0.05
    return np.where(big, 0.95, -0.05)


def test_sixty_days_of_skewed_aa_alarm_at_most_tail():
    rng = np.random.default_rng(7)
    sims, days, daily = 300, 40, 150
    ends = np.arange(daily, days * daily + 1, daily) - 1
    threshold = math.log(1.0 / TAIL)
    alarms = 0
    for sign in (1.0, -1.0):
        d = sign * _skewed_null(rng, (sims, days * daily))
        alarms += int((sequence_log_wealth(d, 0.0)[:, ends] >= threshold).any(axis=1).sum())
    rate = alarms / (2 * sims)
    assert rate <= TAIL + 3 * math.sqrt(TAIL * (1 - TAIL) / (2 * sims))


def test_a_sustained_small_drop_is_found_after_it_starts():
    rng = np.random.default_rng(3)
    days = [np.clip(rng.normal(-0.02 if k >= 19 else 0.0, 0.29, 200), -1, 1) for k in range(60)]
    out = drop_sequence(days, TAIL, points=(0.0, -0.01))
    assert out.alarm[0] is not None and 19 <= out.alarm[0] < 60
    assert len(out.log_wealth) == 60 and out.log_wealth[out.alarm[0]][0] >= math.log(1 / TAIL)


def test_no_drop_no_alarm_and_empty_days_keep_the_wealth():
    rng = np.random.default_rng(5)
    days = [np.clip(rng.normal(0.0, 0.2, 100), -1, 1), np.array([]), np.clip(rng.normal(0.0, 0.2, 100), -1, 1)]
    out = drop_sequence(days, TAIL)
    assert out.alarm == (None,)
    assert out.log_wealth[1] == out.log_wealth[0]


@pytest.mark.parametrize("bad", [np.array([0.5, -1.5]), np.array([2.0])])
def test_deltas_outside_the_unit_range_are_refused(bad):
    with pytest.raises(InputError, match=r"\[-1, 1\]"):
        sequence_log_wealth(bad, 0.0)


# -- pooled_decision: the regression rule's table read from the pooled test --------------------------------

def _days(shifts, daily=200, seed=3):
    """Balanced days: half the queries at +0.25 + shift, half at -0.25 + shift (sd 0.25), seeded order."""
    rng = np.random.default_rng(seed)
    signs = np.repeat([1.0, -1.0], daily // 2)
    return [rng.permutation(signs) * 0.25 + s for s in shifts]


def test_the_pooled_decision_reads_the_rule_table_from_the_sequence():
    from evalops.stats.sequence import pooled_decision

    one = pooled_decision(_days([-0.03]), TAIL, 0.01)
    assert one.decision == "inconclusive" and one.reason_code == "underpowered" and one.decided_at is None
    assert one.lower < -0.03 < one.upper and one.looks == 1 and one.queries == 200
    drop = pooled_decision(_days([-0.03] * 12), TAIL, 0.01)
    assert (drop.decision, drop.severity, drop.criterion) == ("regression", "critical", "material")
    assert drop.upper < -0.01 and drop.lower < -0.03 < drop.upper and drop.looks == 12
    gain = pooled_decision(_days([0.03] * 12), TAIL, 0.01)
    assert (gain.decision, gain.severity) == ("improvement", "critical")
    same = pooled_decision(_days([0.0] * 60), TAIL, 0.01)
    assert (same.decision, same.criterion) == ("no_change", "equivalence") and -0.01 < same.lower < same.upper < 0.01
    # one-sided: no gain is ever declared under "less"
    assert pooled_decision(_days([0.03] * 12), TAIL, 0.01, "less").decision != "improvement"


def test_a_drop_once_shown_stays_shown_and_an_earlier_equivalence_does_not_hide_it():
    from evalops.stats.sequence import pooled_decision

    # 40 quiet days show equivalence; a drop of 0.02 from then on is a regression once enough days pool
    quiet = pooled_decision(_days([0.0] * 40), TAIL, 0.01, bounds=False)
    assert quiet.decision == "no_change"
    later = pooled_decision(_days([0.0] * 40 + [-0.02] * 40), TAIL, 0.01, bounds=False)
    assert later.decision == "regression" and later.decided_at > 40
    # the days after a drop was shown do not take it back (the sequence rejected "no query dropped")
    back = pooled_decision(_days([-0.05] * 10 + [0.0] * 5), TAIL, 0.01, bounds=False)
    assert back.decision == "regression" and back.decided_at <= 10


def test_the_pooled_decision_refuses_what_it_cannot_read():
    from evalops.stats.sequence import pooled_decision

    with pytest.raises(InputError, match="at least one look"):
        pooled_decision([], TAIL, 0.01)
    with pytest.raises(InputError, match="margin"):
        pooled_decision(_days([0.0]), TAIL, 1.5)
    with pytest.raises(InputError, match=r"\[-1, 1\]"):
        pooled_decision([np.array([1.5, -0.2])], TAIL, 0.01)


def _reference_log_wealth(d, m):
    """The wealth as first written: every gambler's wealth at every delta, mixed at every delta."""
    out = None
    for g in range(GRID):
        wealth = np.cumsum(np.log1p(CAP / (1.0 - m) / 2.0**g * (m - d)), axis=-1)
        out = wealth if out is None else np.logaddexp(out, wealth)
    return out - math.log(GRID)


def test_the_wealth_read_at_the_ends_of_days_is_the_wealth_of_every_delta_there():
    from evalops.stats.sequence import pooled_decision

    rng = np.random.default_rng(11)
    for trial in range(20):
        days = [np.clip(rng.normal(rng.uniform(-0.05, 0.02), rng.uniform(0.05, 0.5), rng.integers(0, 300)), -1, 1)
                for _ in range(rng.integers(1, 25))]
        stream = np.concatenate(days)
        ends = np.cumsum([len(x) for x in days]) - 1
        ends = ends[ends >= 0]
        for m in (-0.3, -0.01, 0.0, 0.02, 0.5):
            if len(stream):
                reference = _reference_log_wealth(stream, m)
                np.testing.assert_allclose(sequence_log_wealth(stream, m, at=ends), reference[ends], rtol=0, atol=1e-12)
                np.testing.assert_allclose(sequence_log_wealth(stream, m), reference, rtol=0, atol=1e-12)
        # the decision and its bounds, read from the same numbers: identical
        look = pooled_decision(days, TAIL, 0.01)
        again = pooled_decision(days, TAIL, 0.01, bounds=False)
        assert (look.decision, look.decided_at) == (again.decision, again.decided_at)
        if len(stream):
            threshold = math.log(1.0 / TAIL)
            edge = 1.0 - 2.0**-20

            def shown(m, s=stream):
                return bool(_reference_log_wealth(s, m)[-1] >= threshold)  # the last look's wealth

            def bound(s):  # the bisection on the reference wealth at the last look
                lo, hi = -edge, edge
                if shown(lo, s):
                    return lo
                if not shown(hi, s):
                    return 1.0
                for _ in range(30):
                    mid = 0.5 * (lo + hi)
                    lo, hi = (lo, mid) if shown(mid, s) else (mid, hi)
                return hi

            assert look.upper == bound(stream) and look.lower == -bound(-stream)


def test_deltas_that_are_not_numbers_are_refused():
    with pytest.raises(InputError, match=r"\[-1, 1\]"):
        sequence_log_wealth(np.array([0.1, np.nan]), 0.0)


# -- the change detector: a change is found whenever it starts ------------------------------------------------

def test_the_detector_is_the_weighted_mixture_over_start_looks():
    from evalops.stats.sequence import change_log_wealth, day_log_factors, start_weight

    rng = np.random.default_rng(2)
    days = [np.clip(rng.normal(-0.01, 0.3, k), -1, 1) for k in (5, 0, 7, 3)]
    factors = np.stack([day_log_factors(d, -0.02) for d in days])
    got = change_log_wealth(factors)
    for k in range(len(days)):
        started = sum(start_weight(j + 1) * np.mean([math.exp(factors[j:k + 1, g].sum()) for g in range(GRID)])
                      for j in range(k + 1))
        assert math.isclose(got[k], math.log(started + 1.0 / (k + 2)), rel_tol=1e-12)
    assert math.isclose(sum(start_weight(j) for j in range(1, 10**6)), 1.0, rel_tol=1e-5)


def test_a_late_drop_is_found_where_the_mean_since_the_restart_hides_it():
    from evalops.stats.sequence import pooled_decision

    # 40 quiet days, then 20 days at twice the margin: the mean since the restart is -0.013, inside +-0.02
    late = pooled_decision(_days([0.0] * 40 + [-0.04] * 20), TAIL, 0.02)
    assert late.decision == "regression" and 40 < late.decided_at <= 60 and 38 <= late.change_from <= 42
    assert "reject" in late.reason and f"began about look {late.change_from}" in late.reason
    assert late.lower <= late.upper and late.lower < -0.0134 < late.upper


def test_identical_behaviour_never_alarms_and_ends_in_equivalence():
    from evalops.stats.sequence import pooled_decision

    same = pooled_decision(_days([0.0] * 60), TAIL, 0.02)
    assert same.decision == "no_change" and same.change_from is None
    rng = np.random.default_rng(9)
    sims, days, daily = 300, 60, 50  # skewed identical behaviour, both directions, vectorised
    from evalops.stats.sequence import change_log_wealth, day_log_factors

    alarms = 0
    for sign in (1.0, -1.0):
        d = sign * _skewed_null(rng, (sims, days, daily))
        alarms += int((change_log_wealth(day_log_factors(d, 0.0)) >= math.log(1 / TAIL)).any(axis=1).sum())
    assert alarms / (2 * sims) <= TAIL + 3 * math.sqrt(TAIL * (1 - TAIL) / (2 * sims))


def test_a_drop_once_shown_is_not_taken_back_by_a_later_equivalence():
    from evalops.stats.sequence import pooled_decision

    shown = pooled_decision(_days([0.0] * 30 + [-0.03] * 15), TAIL, 0.05, bounds=False)
    assert (shown.decision, shown.severity) == ("regression", "warning")
    # the same history, then 60 quiet days: the mean since the restart is shown inside the margin, the drop stays
    later = pooled_decision(_days([0.0] * 30 + [-0.03] * 15 + [0.0] * 60), TAIL, 0.05, bounds=False)
    assert (later.decision, later.severity, later.decided_at) == ("regression", "warning", shown.decided_at)


def test_the_bounds_are_ordered_whatever_the_history():
    from evalops.stats.sequence import pooled_decision

    rng = np.random.default_rng(4)
    for _ in range(15):
        k = int(rng.integers(2, 30))
        at = int(rng.integers(1, k))
        shifts = [0.0] * at + [float(rng.choice([-0.3, 0.3]))] * (k - at)
        days = [np.clip(rng.normal(s, 0.1, 40), -1, 1) for s in shifts]
        look = pooled_decision(days, TAIL, 0.02, iterations=20)
        assert look.lower <= look.upper
