"""The protocol's conventions: answers are checked, never repaired; ranks are kept; cuts follow trec_eval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalops.errors import RetrieverError
from evalops.retrievers import Query, QueryResult, coerce_result, coerce_results, top_k

Q = Query("q1", "text")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ([("b", 3.0), ("a", 2.0)], (("b", 3.0), ("a", 2.0))),
        ([("b", 2.0), ("a", 2.0)], (("b", 2.0), ("a", 2.0))),  # ties are allowed
        (["z", "a", "m"], (("z", None), ("a", None), ("m", None))),  # unscored: the order is the ranking
        ([("z", None), ("a", None)], (("z", None), ("a", None))),
        ([], ()),
        ([("a", 1)], (("a", 1.0),)),
        ((("a", np.float32(1.5)),), (("a", 1.5),)),
    ],
)
def test_valid_answers_are_kept_as_returned(answer, expected):
    res = coerce_result(Q, answer, k=10)
    assert res.ok and res.ranked == expected


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ([("a", 1.0), ("b", 2.0)], "score rises from 1.0 at rank 1 to 2.0 at rank 2"),
        ([("a", 1.0), ("a", 0.5)], "rank 2: document 'a' is listed twice"),
        ([("a", 1.0), ("b", None)], "mixes scored and unscored documents"),
        ([("a", math.nan)], "rank 1: score nan is not finite"),
        ([("a", math.inf)], "rank 1: score inf is not finite"),
        ([(7, 1.0)], "rank 1: doc id must be a string, got int"),
        ([("a", "high")], "rank 1: score must be a number or None, got str"),
        ([("a", True)], "rank 1: score must be a number or None, got bool"),
        ([("a", 1.0, "extra")], "rank 1: expected (doc_id, score) or doc_id, got tuple"),
        ("a string", "expected a ranked list, got str"),
        (None, "expected a ranked list, got NoneType"),
    ],
)
def test_answers_the_evaluator_could_not_rank_as_returned_fail_that_query(answer, message):
    res = coerce_result(Q, answer, k=10)
    assert not res.ok
    assert res.error.startswith("query 'q1': ")
    assert message in res.error


def test_longer_answers_are_cut_to_k_keeping_order():
    res = coerce_result(Q, [("c", 3.0), ("b", 2.0), ("a", 1.0)], k=2)
    assert res.ranked == (("c", 3.0), ("b", 2.0))


def test_a_problem_beyond_k_does_not_fail_the_query():
    assert coerce_result(Q, [("c", 3.0), ("b", 2.0), ("b", 1.0)], k=2).ok


def test_query_results_pass_through_with_their_failure_or_retries():
    failed = QueryResult.failure("q1", "timed out", retries=2)
    assert coerce_result(Q, failed, 5) is failed
    ok = coerce_result(Q, QueryResult("q1", (("a", 2.0), ("b", 1.0), ("c", 0.5)), retries=1, seconds=0.2), 2)
    assert ok.ranked == (("a", 2.0), ("b", 1.0)) and ok.retries == 1 and ok.seconds == 0.2
    other = coerce_result(Q, QueryResult("q9", ()), 5)
    assert other.error == "answer is for query 'q9', not 'q1'"


def test_a_generated_answer_passes_through_and_one_that_is_not_text_fails_the_query():
    ok = coerce_result(Q, QueryResult("q1", (("a", 2.0),), answer="Refunds take 14 days."), 5)
    assert ok.ok and ok.answer == "Refunds take 14 days."
    bad = coerce_result(Q, QueryResult("q1", (("a", 2.0),), answer={"text": "x"}), 5)  # type: ignore[arg-type]
    assert not bad.ok and bad.error == "query 'q1': the answer must be a string or None, got dict"


def test_a_batch_of_the_wrong_length_is_an_error():
    with pytest.raises(RetrieverError, match="returned 1 results for 2 queries"):
        coerce_results([Q, Query("q2", "x")], [[]], 5)


def test_top_k_follows_trec_eval_order_and_cuts_ties_at_k_by_doc_id_descending():
    ids = np.array(["a", "b", "c", "d", "e"], dtype=object)
    scores = np.array([1.0, 3.0, 1.0, 0.0, 1.0])
    assert top_k(scores, ids, 10) == (("b", 3.0), ("e", 1.0), ("c", 1.0), ("a", 1.0))  # 0 left out
    assert top_k(scores, ids, 2) == (("b", 3.0), ("e", 1.0))
    assert top_k(scores, ids, 10, keep_zero=True)[-1] == ("d", 0.0)


def test_top_k_agrees_with_a_full_sort_on_random_scores():
    rng = np.random.default_rng(7)
    ids = np.array([f"d{i:03d}" for i in range(300)], dtype=object)
    scores = rng.integers(0, 20, size=300).astype(float)  # many ties
    full = sorted(((s, d) for s, d in zip(scores, ids) if s != 0), key=lambda x: (-x[0], [-ord(c) for c in x[1]]))
    for k in (1, 10, 57, 300):
        assert [d for d, _ in top_k(scores, ids, k)] == [d for _, d in full[:k]]
