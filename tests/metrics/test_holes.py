"""evalops.judged.holes: judged coverage of a comparison, and the holes pooled and prioritised."""

from __future__ import annotations

import math

import pytest

from evalops.judged.holes import cutoff_of, judged_measures, judged_shift, prioritise_holes, rank_weight, unjudged_top
from evalops.metrics import evaluate

QRELS = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"x": 1}}
BASELINE = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 1.0, "y": 0.5}}
CANDIDATE = {"q1": {"new1": 3.0, "a": 2.0, "new2": 1.0}, "q2": {"x": 2.0, "z": 1.0, "y": 0.5}, "q9": {"n": 1.0}}


def test_cutoffs_and_the_judged_measures():
    assert cutoff_of("nDCG@10", 100) == 10 and cutoff_of("AP", 100) == 100
    assert judged_measures(["nDCG@10", "RR@10", "R@100", "AP"], 100) == ["Judged@10", "Judged@100"]
    assert judged_measures(["nDCG@5", "Judged@5"], 100) == []


def test_unjudged_top_by_hand():
    # a document judged 0 is judged; the query without judgments (q9) is not a gold query
    assert unjudged_top(QRELS, CANDIDATE, 3) == {"q1": [("new1", 0), ("new2", 2)], "q2": [("z", 1), ("y", 2)]}
    assert unjudged_top(QRELS, BASELINE, 3) == {"q2": [("y", 1)]}


def test_judged_shift_agrees_with_judged_at_k():
    k = 2
    b = evaluate(QRELS, BASELINE, [f"Judged@{k}"])
    c = evaluate(QRELS, CANDIDATE, [f"Judged@{k}"])
    per = lambda r: dict(zip(r.query_ids.tolist(), r.per_query[f"Judged@{k}"].tolist()))  # noqa: E731
    shift = judged_shift("nDCG@2", per(b), per(c), unjudged_top(QRELS, CANDIDATE, 3), k)
    assert (shift.measure, shift.baseline, shift.candidate) == ("Judged@2", 0.75, 0.5)
    assert shift.difference == pytest.approx(-0.25)
    assert shift.unjudged_documents == 2  # new1 (rank 0) and z (rank 1); new2 is at rank 2
    assert judged_shift("nDCG@2", per(b), per(c), {}, k, queries=["q2"]).difference == 0.0
    assert judged_shift("nDCG@2", {}, per(c), {}, k) is None  # a baseline scored before Judged@k


def test_holes_are_pooled_and_ordered_by_what_they_could_change():
    unjudged = {
        "1.0": {"q1": [("d", 0), ("e", 3)], "q2": [("s", 1)]},
        "2.0": {"q1": [("n", 0), ("d", 1)], "q2": [("s", 1), ("far", 9)]},
    }
    holes = prioritise_holes(unjudged, [("1.0", "2.0")], k=5)
    got = [(h.query_id, h.doc_id, round(h.priority, 6), h.versions) for h in holes]
    w = lambda r: 1 / math.log2(r + 2)  # noqa: E731
    assert got == [
        ("q1", "n", round(w(0), 6), ("2.0",)),
        ("q1", "e", round(w(3), 6), ("1.0",)),
        ("q1", "d", round(w(0) - w(1), 6), ("1.0", "2.0")),
        ("q2", "s", 0.0, ("1.0", "2.0")),  # the same rank in both: judging it changes nothing, listed last
    ]
    assert rank_weight(None, 5) == rank_weight(5, 5) == 0.0
    # a version compared twice counts for each comparison it is in
    twice = prioritise_holes({**unjudged, "3.0": {"q1": [("n", 0)]}}, [("1.0", "2.0"), ("1.0", "3.0")], k=5)
    assert twice[0].doc_id == "n" and twice[0].priority == pytest.approx(2 * w(0))
