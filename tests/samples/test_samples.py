"""RAGAS and DeepEval sample shapes (plain dicts and objects; neither package is imported)."""

from types import SimpleNamespace

import pytest

from evalops.errors import InputError
from evalops.metrics import evaluate
from evalops.samples import deepeval_qrels_run, ragas_qrels_run

RAGAS = [
    {"user_input": "what is bm25?", "retrieved_context_ids": ["d3", "d1", "d9"], "reference_context_ids": ["d1"]},
    {"user_input": "dense retrieval?", "retrieved_context_ids": ["d5"], "reference_context_ids": ["d5", "d7"]},
]


def test_ragas_samples_become_judgments_and_a_ranking():
    qrels, run = ragas_qrels_run(RAGAS)
    assert qrels == {"what is bm25?": {"d1": 1}, "dense retrieval?": {"d5": 1, "d7": 1}}
    assert run == {"what is bm25?": ["d3", "d1", "d9"], "dense retrieval?": ["d5"]}
    result = evaluate(qrels, run, ["RR", "R@3"])
    assert result.mean("RR") == pytest.approx((0.5 + 1.0) / 2)
    assert result.mean("R@3") == pytest.approx((1.0 + 0.5) / 2)


def test_ragas_texts_stand_in_for_ids_and_objects_work_like_dicts():
    sample = SimpleNamespace(id="s1", user_input="q", retrieved_contexts=["t2", "t1"], reference_contexts=["t1"],
                             retrieved_context_ids=None, reference_context_ids=None)
    qrels, run = ragas_qrels_run([sample])
    assert qrels == {"s1": {"t1": 1}} and run == {"s1": ["t2", "t1"]}


def test_deepeval_test_cases():
    cases = [{"input": "q1", "retrieval_context": ["ctx b", "ctx a"], "context": ["ctx a"]}]
    qrels, run = deepeval_qrels_run(cases)
    assert evaluate(qrels, run, ["RR"]).mean("RR") == pytest.approx(0.5)


@pytest.mark.parametrize(
    "samples, fragment",
    [
        ([{"user_input": "q", "retrieved_context_ids": ["a"]}], "RAGAS sample 0: no reference_context_ids"),
        ([RAGAS[0], RAGAS[0]], "RAGAS sample 1: query 'what is bm25\\?' repeats"),
        ([{"retrieved_context_ids": ["a"], "reference_context_ids": ["a"]}], "sample 0: no user_input"),
        ([{"user_input": "q", "retrieved_context_ids": "a", "reference_context_ids": ["a"]}], "must be a list"),
        ([], "no RAGAS samples given"),
    ],
)
def test_bad_samples_are_refused_with_their_index(samples, fragment):
    with pytest.raises(InputError, match=fragment):
        ragas_qrels_run(samples)
