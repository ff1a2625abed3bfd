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
