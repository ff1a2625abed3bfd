"""The comparison records the pipeline passes between tasks: coverage, the rule's fields, the policy."""

from __future__ import annotations

import numpy as np
import pytest

from evalops.pipeline.comparing import _coverage
from evalops.stats import Comparison
from evalops.stats import Policy, PolicyError, adjust_and_decide, align, compare


def _pair(n=200, shift=-0.03, seed=0):
    rng = np.random.default_rng(seed)
    ids = [f"q{i}" for i in range(n)]
    b = rng.uniform(0.2, 0.9, n)
    return align(dict(zip(ids, b)), dict(zip(ids, np.clip(b + shift + rng.normal(0, 0.05, n), 0, 1))))


def test_coverage_says_how_many_each_side_answered_and_how_the_rest_were_treated():
    full = _coverage(300, 300, 300)
    assert full.describe().endswith("every judged query was answered by both")
    partial = _coverage(300, 300, 240)
    assert partial.describe().startswith("baseline answered 300 of 300 judged queries (100%), candidate 240 of 300")
    assert "left out of the comparison (never scored as 0)" in partial.describe()
    comp = compare(_pair(240), measure="nDCG@10", coverage=partial)
    assert (comp.decision, comp.reason_code) == ("inconclusive", "partial_run")  # 80% < 90%
    assert compare(_pair(285), measure="nDCG@10", coverage=_coverage(300, 300, 285)).decision == "regression"


def test_records_travel_between_tasks_with_every_field_of_the_rule():
    family = adjust_and_decide([compare(_pair(seed=s), measure="nDCG@10", policy=Policy(seed=3),
                                        coverage=_coverage(200, 200, 200)) for s in (1, 2)])
    back = [Comparison.from_record(c.to_record()) for c in family]
    assert back == family
    assert back[0].family_size == 2 and back[0].interval_level == pytest.approx(0.975)
    # decided again from the stored record (the deltas travel with it), the result is the same
    assert adjust_and_decide(back) == family


def test_a_stored_policy_with_min_effect_is_refused():
    record = compare(_pair(), measure="nDCG@10").to_record()
    record["policy"]["min_effect"] = 0.2
    with pytest.raises(PolicyError, match="replaced|min_delta"):
        Comparison.from_record(record)
