"""Source shares, precision and shifts (evalops.sources) and spread with the long-document rule
(evalops.spread), against hand counts and numpy."""

from __future__ import annotations

import numpy as np
import pytest

from evalops.segments import AGGREGATE_FACETS, segment_aggregates
from evalops.sources import SourcePolicy, share_shifts, source_shares
from evalops.spread import LONG, OTHER, long_document_segments, spread

LABELS = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B", "c1": "C"}


def test_shares_are_the_pooled_count_of_top_k_slots_and_precision_counts_judged_documents_only():
    ranked = {"q1": [("a1", 0), ("b1", 1), ("x9", 2), ("a2", 3)],  # x9: no source; a2 below k=3
              "q2": [("b2", 0), ("a3", 1)]}  # fewer than k documents: fewer slots
    grades = {"q1": {"a1": 1, "b1": 0}, "q2": {"b2": 2, "a3": 0}}
    policy = SourcePolicy(field="source", k=3, max_shift=0.2)
    shares = {s.source: s for s in source_shares(ranked, LABELS, policy, grades)}
    assert sorted(shares) == ["(none)", "A", "B"]
    assert {s: (v.slots, v.total) for s, v in shares.items()} == {"(none)": (1, 5), "A": (2, 5), "B": (2, 5)}
    assert shares["A"].share == pytest.approx(2 / 5)
    assert shares["A"].precision == pytest.approx(1 / 2)  # a1 relevant, a3 not
    assert shares["B"].precision == pytest.approx(1 / 2)  # b2 relevant (grade 2), b1 not
    assert shares["(none)"].precision is None  # nothing judged
    assert sum(s.share for s in shares.values()) == pytest.approx(1.0)


def test_a_document_listed_twice_at_one_rank_counts_once():
    ranked = {"q": [("a1", 0), ("a1", 0), ("b1", 1)]}
    shares = source_shares(ranked, LABELS, SourcePolicy("source", 5, None))
    assert [(s.source, s.slots) for s in shares] == [("A", 1), ("B", 1)]


def test_a_shift_beyond_the_bound_is_breached_and_a_vanished_source_counts_zero():
    policy = SourcePolicy("source", 2, 0.25)
    base = source_shares({"q": [("a1", 0), ("b1", 1)]}, LABELS, policy)
    cand = source_shares({"q": [("c1", 0), ("b1", 1)]}, LABELS, policy)
    shifts = {s.source: s for s in share_shifts(base, cand, policy.max_shift)}
    assert shifts["A"].baseline == 0.5 and shifts["A"].candidate == 0.0 and shifts["A"].breached
    assert shifts["C"].shift == 0.5 and shifts["C"].breached
    assert not shifts["B"].breached and shifts["B"].shift == 0.0
    assert not any(s.breached for s in share_shifts(base, cand, None))  # no bound: never breached


def test_spread_equals_numpy():
    rng = np.random.default_rng(7)
    values = rng.random(37)
    got = spread(np.r_[values, np.nan])  # NaN is left out, as the mean leaves it out
    assert got["var"] == pytest.approx(np.var(values, ddof=1))
    assert got["std"] == pytest.approx(np.std(values, ddof=1))
    assert [got["p10"], got["median"], got["p90"]] == pytest.approx(np.quantile(values, [0.1, 0.5, 0.9]))
    assert spread([0.5]) == {"std": None, "var": None, "p10": 0.5, "median": 0.5, "p90": 0.5}
    assert spread([]) == dict.fromkeys(("std", "var", "p10", "median", "p90"))


def test_long_document_segment_follows_the_recorded_percentile():
    lengths = {"d1": 10, "d2": 20, "d3": 30, "d4": 400, "d5": 500}
    grades = {"q1": {"d4": 1, "d5": 2}, "q2": {"d1": 1, "d4": 0}, "q3": {"d1": 0}, "q4": {"d3": 1, "d5": 1}}
    segments, rule = long_document_segments(grades, lengths, 50)
    assert rule.threshold == np.percentile([10, 20, 30, 400, 500], 50) == 30
    # q1: mean 450 > 30; q2: only d1 is relevant (10); q3: nothing relevant, no segment; q4: mean 265
    assert segments == {"q1": LONG, "q2": OTHER, "q4": LONG}
    assert "50th percentile" in rule.describe()


def test_segment_aggregates_carry_the_spread_of_each_segment():
    import pandas as pd

    rng = np.random.default_rng(3)
    qids = [f"q{i}" for i in range(40)]
    values = rng.random(40)
    frame = pd.DataFrame({"query_id": qids, "measure": "nDCG@10", "value": values})
    attributes = {q: {"length": LONG if i % 3 == 0 else OTHER} for i, q in enumerate(qids)}
    rows = {r["segment"]: r for r in segment_aggregates(frame, attributes, ["nDCG@10"], AGGREGATE_FACETS)}
    long_values = values[[i for i in range(40) if i % 3 == 0]]
    assert rows[LONG]["n"] == len(long_values)
    assert rows[LONG]["mean"] == pytest.approx(long_values.mean())
    assert rows[LONG]["std"] == pytest.approx(long_values.std(ddof=1))
    assert rows[LONG]["var"] == pytest.approx(long_values.var(ddof=1))
    assert [rows[LONG][k] for k in ("p10", "median", "p90")] == pytest.approx(
        np.quantile(long_values, [0.1, 0.5, 0.9]))
    # the comparisons' facets leave length out: it is read in the per-version aggregates only
    assert not segment_aggregates(frame, attributes, ["nDCG@10"])
