"""Measures from judge labels: the RAGAS formula, equality with ContextPrecision@k, IR measures over judge qrels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalops.judges.measures import average_repeats, judge_qrels, judge_variance, ragas_context_precision
from evalops.metrics import evaluate


def seed_formula(v):
    """The source texts' formula, written out: sum_k (precision@k * v_k) / relevant items in the top K."""
    total = sum(v)
    if total == 0:
        return 0.0
    return sum((sum(v[: k + 1]) / (k + 1)) * v[k] for k in range(len(v))) / total


@pytest.mark.parametrize("labels, expected", [
    ([1, 1, 1], 1.0),
    ([0, 0, 0], 0.0),
    ([1, 0, 0], 1.0),
    ([0, 1, 0], 0.5),
    ([0, 0, 1], 1 / 3),
    ([1, 0, 1], (1 + 2 / 3) / 2),
    ([0, 1, 1, 0, 1], (1 / 2 + 2 / 3 + 3 / 5) / 3),
])
def test_ragas_context_precision_hand_made(labels, expected):
    assert ragas_context_precision(labels) == pytest.approx(expected)
    assert ragas_context_precision(labels) == pytest.approx(seed_formula(labels))


def test_a_missing_label_excludes_the_query():
    assert np.isnan(ragas_context_precision([1, None, 1]))
    assert ragas_context_precision([1, 0, None], k=2) == 1.0


def test_graded_labels_are_thresholded():
    assert ragas_context_precision([0, 2, 1], rel=2) == pytest.approx(0.5)


def test_equals_context_precision_on_gold_labels():
    rng = np.random.default_rng(7)
    qrels, run, labels = {}, {}, {}
    for q in range(40):
        qid = f"q{q}"
        docs = [f"d{i}" for i in range(12)]
        qrels[qid] = {d: int(rng.integers(0, 3)) for d in docs if rng.random() < 0.6}
        ranked = list(rng.permutation(docs))
        run[qid] = {d: float(len(ranked) - r) for r, d in enumerate(ranked)}
        labels[qid] = [qrels[qid].get(d, 0) for d in ranked]
    for k in (1, 5, 10):
        result = evaluate(qrels, run, [f"ContextPrecision@{k}"])
        theirs = dict(zip(result.query_ids, result.per_query[f"ContextPrecision@{k}"]))
        compared = [q for q, v in theirs.items() if not np.isnan(v)]
        assert len(compared) >= 30
        ours = [ragas_context_precision(labels[q], k) for q in compared]
        assert np.allclose([theirs[q] for q in compared], ours)


def test_judge_labels_as_qrels_feed_every_ir_measure():
    triples = [("q1", "a", 3.0), ("q1", "b", 0.0), ("q1", "c", 1.0), ("q2", "a", None), ("q2", "b", 1.0)]
    run = {"q1": ["b", "a", "c"], "q2": ["a", "b"]}
    qrels, excluded = judge_qrels(triples, run, k=3)
    assert excluded == ["q2"]
    assert qrels == {"q1": {"a": 3, "b": 0, "c": 1}}
    ranked = {q: {d: float(10 - i) for i, d in enumerate(docs)} for q, docs in run.items() if q in qrels}
    result = evaluate(qrels, ranked, ["nDCG@3", "P@2"])
    gains = [0, 3, 1]
    dcg = sum(g / np.log2(i + 2) for i, g in enumerate(gains))
    ideal = sum(g / np.log2(i + 2) for i, g in enumerate(sorted(gains, reverse=True)))
    assert result.per_query["nDCG@3"][0] == pytest.approx(dcg / ideal)
    assert result.per_query["P@2"][0] == pytest.approx(0.5)


def test_repeats_are_averaged_before_pairing():
    frame = pd.DataFrame({"query_id": ["a", "a", "a", "b", "b", "b"], "sample": [0, 1, 2] * 2,
                          "value": [1.0, 0.0, 1.0, 0.5, 0.5, np.nan]})
    avg = average_repeats(frame)
    assert avg["value"].tolist() == pytest.approx([2 / 3, 0.5])
    var = judge_variance(frame)
    assert var["within_query_variance"] == pytest.approx((np.var([1, 0, 1], ddof=1) + 0.0) / 2)
