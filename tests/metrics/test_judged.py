"""Judged@k, bpref and condensed lists on small hand-computed cases, and their edge cases."""

from __future__ import annotations

import numpy as np
import pytest

from evalops.metrics import Policy, evaluate

# q1's ranking: a (3.0), n1 (2.5, unjudged), b (2.0, grade 0), c (1.0, grade 2), z (0.5, grade -1)
QRELS = {"q1": {"a": 1, "b": 0, "c": 2, "z": -1, "r": 1}, "q2": {"x": 0}, "q3": {"y": 1}}
RUN = {"q1": {"a": 3.0, "n1": 2.5, "b": 2.0, "c": 1.0, "z": 0.5}, "q2": {"u": 1.0, "x": 0.5}, "other": {"a": 1.0}}


def _values(measures, policy=Policy(no_answer="zero")):
    result = evaluate(QRELS, RUN, measures, policy)
    assert result.query_ids.tolist() == ["q1", "q2", "q3"]
    return {m: result.per_query[m].tolist() for m in result.per_query}


def test_judged_counts_any_judgment_and_divides_by_the_shorter_of_k_and_the_run():
    values = _values(["Judged@1", "Judged@2", "Judged@5", "Judged@10"])
    assert values["Judged@1"] == [1.0, 0.0, 0.0]
    assert values["Judged@2"] == [0.5, 0.5, 0.0]
    # 4 of q1's 5 retrieved are judged (z's negative grade is a judgment); q2 retrieved 2, one judged;
    # q3 is not in the run and scores 0
    assert values["Judged@5"] == [0.8, 0.5, 0.0]
    assert values["Judged@10"] == [0.8, 0.5, 0.0]


def test_judged_is_not_subject_to_the_no_answer_policy():
    result = evaluate(QRELS, RUN, ["Judged@2", "P@2"])  # exclude: q2 has no relevant document
    assert result.query_ids.tolist() == ["q1", "q2", "q3"]
    assert result.per_query["Judged@2"].tolist() == [0.5, 0.5, 0.0]
    assert np.isnan(result.per_query["P@2"][1])
    assert result.no_answer_ids["Judged@2"] == ()
    only = evaluate(QRELS, RUN, ["Judged@2"])
    assert only.aggregates["Judged@2"].n == 3


def test_bpref_by_hand():
    values = _values(["Bpref", "Bpref(rel=2)"])
    # rel=1: R = 3 (a, c, r), N = 1 (b). a has no judged non-relevant above it: 1; c has b above:
    # 1 - min(1, 3) / min(1, 3) = 0; r is not retrieved: 0. (1 + 0 + 0) / 3.
    assert values["Bpref"][0] == pytest.approx(1 / 3)
    # rel=2: R = 1 (c), N = 3 (a, b, r). Above c: a and b, 1 - min(2, 1) / min(3, 1) = 0.
    assert values["Bpref(rel=2)"][0] == 0.0
    assert values["Bpref"][1:] == [0.0, 0.0]  # no relevant document; not retrieved


def test_condensed_list_by_hand():
    values = _values(["P(judged_only=True)@2", "RR(judged_only=True)", "RR", "nDCG(judged_only=True)@2"])
    # condensed q1: a (1), b (0), c (2); n1 (unjudged) and z (negative grade) are removed
    assert values["P(judged_only=True)@2"][0] == 0.5
    assert values["RR(judged_only=True)"][0] == 1.0
    assert values["RR"][0] == 1.0
    ideal = 2 + 1 / np.log2(3)
    assert values["nDCG(judged_only=True)@2"][0] == pytest.approx(1 / ideal)
    rr2 = _values(["RR(rel=2,judged_only=True)", "RR(rel=2)"])
    assert rr2["RR(rel=2,judged_only=True)"][0] == pytest.approx(1 / 3)  # c is third of a, b, c
    assert rr2["RR(rel=2)"][0] == pytest.approx(1 / 4)  # and fourth in the run


def test_the_unjudged_rule_of_each_measure_is_named_in_the_policies():
    result = evaluate(QRELS, RUN, ["nDCG@10", "nDCG(judged_only=True)@10", "Bpref", "Judged@10"])
    rules = result.to_json()["policies"]["unjudged_documents"]
    assert rules["nDCG@10"] == "non-relevant"
    assert "trec_eval -J" in rules["nDCG(judged_only=True)@10"]
    assert set(rules) == {"nDCG@10", "nDCG(judged_only=True)@10", "Bpref", "Judged@10"}


def test_judged_measures_with_an_empty_run_score_zero():
    result = evaluate(QRELS, {}, ["Judged@10", "Bpref", "nDCG(judged_only=True)@10"], Policy(no_answer="zero"))
    for values in result.per_query.values():
        assert values.tolist() == [0.0, 0.0, 0.0]


def test_qrels_with_only_non_relevant_judgments():
    qrels = {"q": {"a": 0, "b": 0}}
    run = {"q": {"a": 1.0, "c": 0.5, "b": 0.2}}
    result = evaluate(qrels, run, ["Judged@3", "Bpref", "P(judged_only=True)@2"], Policy(no_answer="zero"))
    assert result.per_query["Judged@3"].tolist() == [pytest.approx(2 / 3)]
    assert result.per_query["Bpref"].tolist() == [0.0]
    assert result.per_query["P(judged_only=True)@2"].tolist() == [0.0]


def test_judged_measures_leave_the_input_unchanged():
    qrels = {q: dict(d) for q, d in QRELS.items()}
    run = {q: dict(d) for q, d in RUN.items()}
    evaluate(qrels, run, ["Judged@10", "Bpref", "AP(judged_only=True)"])
    assert qrels == QRELS and run == RUN


def test_judged_breaks_ties_at_the_cutoff_as_every_other_measure_does():
    """ir_measures' own Judged provider sorts ties by doc id ascending, unlike its trec_eval measures;
    evalops ranks once, so Judged@1 and P@1 look at the same document (d2: doc id descending)."""
    qrels = {"q": {"d1": 1}}
    run = {"q": {"d1": 1.0, "d2": 1.0}}
    result = evaluate(qrels, run, ["Judged@1", "P@1", "Judged@2"])
    assert result.per_query["Judged@1"].tolist() == [0.0]
    assert result.per_query["P@1"].tolist() == [0.0]
    assert result.per_query["Judged@2"].tolist() == [0.5]
