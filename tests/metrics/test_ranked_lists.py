"""Plain ranked lists ``{qid: [doc, ...]}`` (RAGAS's retrieved context ids): list order is rank order."""

import pytest

from evalops.data import Run
from evalops.errors import DuplicateDocumentError, InputError
from evalops.metrics import evaluate

QRELS = {"q1": {"a": 1, "b": 1}, "q2": {"x": 2}}


def test_list_order_is_rank_order_and_matches_the_scored_dict():
    lists = {"q1": ["c", "a", "b"], "q2": ["x"]}
    scored = {"q1": {"c": 3.0, "a": 2.0, "b": 1.0}, "q2": {"x": 1.0}}
    measures = ["P@2", "RR", "nDCG@3", "AP", "SetP", "NumRet"]
    got = evaluate(QRELS, lists, measures)
    want = evaluate(QRELS, scored, measures)
    assert {m: a.mean for m, a in got.aggregates.items()} == {m: a.mean for m, a in want.aggregates.items()}
    assert got.mean("RR") == pytest.approx(0.75)


def test_synthetic_scores_descend_in_list_order():
    run = Run.from_lists({"q": ["z", "a", "m"]})
    assert run.doc_ids.tolist() == ["z", "a", "m"]
    assert run.scores.tolist() == [3.0, 2.0, 1.0]


@pytest.mark.parametrize(
    "run, error, fragment",
    [
        ({"q1": ["a", "a"]}, DuplicateDocumentError, "'a'"),
        ({"q1": "abc"}, InputError, "query 'q1' holds str"),
        ({"q1": [("a", 1.0)]}, InputError, "position 1 holds tuple"),
        ({"q1": ["a"], "q2": {"x": 1.0}}, InputError, "query 'q2' holds dict"),
    ],
)
def test_bad_lists_are_refused_naming_the_query(run, error, fragment):
    with pytest.raises(error, match=fragment):
        evaluate(QRELS, run, ["P@1"])
