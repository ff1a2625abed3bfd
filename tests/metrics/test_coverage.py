"""judged_coverage: the candidate's judged coverage against the baseline's, and what to judge."""

from __future__ import annotations

import numpy as np
import pytest

from evalops.formats import read_qrels, read_run
from evalops.judged.coverage import judged_coverage
from evalops.metrics import evaluate

QRELS = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"x": 1}}
BASELINE = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 1.0, "y": 0.5}}
CANDIDATE = {"q1": {"new1": 3.0, "a": 2.0, "new2": 1.0}, "q2": {"x": 2.0, "z": 1.0, "y": 0.5}, "q9": {"n": 1.0}}


def test_by_hand():
    cov = judged_coverage(QRELS, BASELINE, CANDIDATE, 2)
    assert cov.query_ids.tolist() == ["q1", "q2"]
    assert cov.baseline.tolist() == [1.0, 0.5]
    assert cov.candidate.tolist() == [0.5, 0.5]
    assert cov.difference == pytest.approx((0.5 + 0.5) / 2 - (1.0 + 0.5) / 2)
    # top 2 of the candidate: new1, a | x, z; the query without judgments (q9) is not counted
    assert cov.unjudged == (("q1", "new1"), ("q2", "z"))
    assert cov.unjudged_documents == 2
    assert cov.to_dict() == {
        "measure": "Judged@2",
        "baseline": 0.75,
        "candidate": 0.5,
        "difference": -0.25,
        "unjudged_documents": 2,
    }


def test_the_same_run_has_no_difference():
    cov = judged_coverage(QRELS, BASELINE, BASELINE, 3)
    assert cov.difference == 0.0
    assert cov.unjudged == (("q2", "y"),)


def test_removed_judgments_are_exactly_the_unjudged_documents(shared_data):
    """Remove judgments from a copy of the qrels: the candidate's coverage drops and the unjudged
    documents include exactly the removed ones that its top k holds."""
    qrels = read_qrels(shared_data / "scifact").to_dict()
    run = read_run(shared_data / "scifact" / "runs" / "bm25.trec")
    first = evaluate(qrels, run, ["Judged@10"])
    before = judged_coverage(qrels, run, run, 10)
    assert before.difference == 0.0
    np.testing.assert_array_equal(before.candidate, first.per_query["Judged@10"])
    from evalops.metrics.topk import top_k

    top = top_k(run, 10)
    removed = set()
    thinned = {q: dict(docs) for q, docs in qrels.items()}
    for q in sorted(thinned)[::3]:
        for d in list(thinned[q]):
            if d in top.get(q, []) and len(thinned[q]) > 1:
                del thinned[q][d]
                removed.add((q, d))
    assert len(removed) > 10
    after = judged_coverage(thinned, run, run, 10)
    assert set(after.unjudged) - set(before.unjudged) == removed
    assert after.unjudged_documents == before.unjudged_documents + len(removed)
