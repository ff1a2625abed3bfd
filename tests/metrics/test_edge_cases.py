"""Edge cases: empty runs, no-answer queries under both policies, duplicates, shallow runs, unscored runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalops.data import Qrels, Run
from evalops.errors import DuplicateDocumentError, InputError, MeasureError
from evalops.metrics import Policy, evaluate
from evalops.metrics.compute import per_query_values
from evalops.metrics.gold import Gold
from evalops.metrics.parse import parse_measures
from evalops.metrics.hits import locate_hits

QRELS = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}, "q3": {"x": 0}}  # q3: judged, nothing relevant
ZERO = Policy(no_answer="zero")


@pytest.mark.parametrize(
    "empty",
    [{}, Run([], [], []), pd.DataFrame({"query_id": [], "doc_id": [], "score": []})],
    ids=["dict", "Run", "frame"],
)
def test_an_empty_run_scores_every_gold_query_zero(empty):
    result = evaluate(QRELS, empty, ["nDCG@10", "P@5", "RR", "AP", "R-Prec"], ZERO)
    assert result.query_ids.tolist() == ["q1", "q2", "q3"]
    assert result.missing_from_run_ids == ("q1", "q2", "q3")
    for values in result.per_query.values():
        assert values.tolist() == [0.0, 0.0, 0.0]
    assert result.aggregates["P@5"].n == 3


def test_no_answer_query_is_excluded_and_reported_by_default():
    run = {"q1": {"a": 2.0}, "q2": {"c": 1.0}, "q3": {"x": 5.0}}
    result = evaluate(QRELS, run, ["P@1", "nDCG@10"])
    assert result.policy.no_answer == "exclude"
    assert result.query_ids.tolist() == ["q1", "q2"]
    assert result.no_answer_ids == {"P@1": ("q3",), "nDCG@10": ("q3",)}
    assert result.aggregates["P@1"].n == 2
    assert result.aggregates["P@1"].mean == 1.0
    assert result.to_json()["policies"]["no_answer_queries"] == {"P@1": ["q3"], "nDCG@10": ["q3"]}


def test_no_answer_query_scores_zero_under_the_zero_policy():
    run = {"q1": {"a": 2.0}, "q2": {"c": 1.0}, "q3": {"x": 5.0}}
    result = evaluate(QRELS, run, ["P@1", "nDCG@10"], ZERO)
    assert result.query_ids.tolist() == ["q1", "q2", "q3"]
    assert result.per_query["P@1"].tolist() == [1.0, 1.0, 0.0]
    assert result.aggregates["P@1"].n == 3
    assert result.aggregates["P@1"].mean == pytest.approx(2 / 3)
    assert result.no_answer_ids["P@1"] == ("q3",)  # still reported


def test_thresholds_that_differ_between_measures_give_nan_only_where_needed():
    run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}}
    result = evaluate(QRELS, run, ["P@1", "P(rel=2)@2"])
    assert result.query_ids.tolist() == ["q1", "q2"]  # q3 has no answer for either measure
    assert result.per_query["P@1"].tolist() == [1.0, 1.0]
    values = result.per_query["P(rel=2)@2"]
    assert values[0] == 0.5 and np.isnan(values[1])  # q2 has no grade-2 document
    assert result.aggregates["P(rel=2)@2"].n == 1
    frame = result.to_frame()
    assert len(frame) == 3 and not frame["value"].isna().any()
    assert result.to_json(per_query=True)["per_query"]["q2"] == {"P@1": 1.0}


def test_duplicates_raise_an_error_naming_query_and_document():
    with pytest.raises(DuplicateDocumentError) as err:
        evaluate(QRELS, Run(["q1", "q1", "q2"], ["a", "a", "c"], [1.0, 0.5, 1.0]), ["P@1"])
    assert "'q1'" in str(err.value) and "'a'" in str(err.value)
    frame = pd.DataFrame({"query_id": ["q2", "q1", "q2"], "doc_id": ["c", "b", "c"], "score": [1.0, 2.0, 3.0]})
    with pytest.raises(DuplicateDocumentError, match="query 'q2' lists document 'c' more than once"):
        evaluate(QRELS, frame, ["P@1"])
    # 1 and "1" are the same document id once ids are strings
    with pytest.raises(DuplicateDocumentError, match="query 'q1' lists document '1'"):
        evaluate(QRELS, {"q1": {1: 1.0, "1": 2.0}}, ["P@1"])


def test_cutoffs_deeper_than_the_run():
    run = {"q1": {"a": 1.0, "z": 0.5}, "q2": {"c": 1.0}}
    result = evaluate(QRELS, run, ["P@10", "R@1000", "Success@100", "nDCG@1000", "AP@1000"])
    assert result.per_query["P@10"].tolist() == [0.1, 0.1]
    assert result.per_query["R@1000"].tolist() == [0.5, 1.0]
    assert result.per_query["Success@100"].tolist() == [1.0, 1.0]
    assert result.per_query["AP@1000"].tolist() == [0.5, 1.0]


def test_an_unscored_run_keeps_the_retrievers_order():
    # doc-id-descending would rank z, m, a and put the relevant "a" last
    ranked = Run.from_ranked({"q1": ["m", "a", "z"], "q2": ["c"]})
    assert evaluate(QRELS, ranked, ["RR"]).per_query["RR"].tolist() == [0.5, 1.0]
    as_dict = {"q1": {"m": None, "a": None, "z": None}, "q2": {"c": None}}
    assert evaluate(QRELS, as_dict, ["RR"]).per_query["RR"].tolist() == [0.5, 1.0]
    frame = pd.DataFrame({"query_id": ["q2", "q1", "q1", "q1"], "doc_id": ["c", "m", "a", "z"]})
    assert evaluate(QRELS, frame, ["RR"]).per_query["RR"].tolist() == [0.5, 1.0]


def test_tied_scores_break_by_doc_id_descending():
    qrels = {"q": {"d10": 1}}
    run = {"q": {"d9": 1.0, "d10": 1.0, "d1": 1.0}}  # strcmp order: "d9" > "d10" > "d1"
    assert evaluate(qrels, run, ["RR"]).per_query["RR"].tolist() == [0.5]


def test_mixed_scored_and_unscored_documents_are_rejected():
    with pytest.raises(InputError, match="mixes scored and unscored"):
        evaluate(QRELS, {"q1": {"a": 1.0, "b": None}}, ["P@1"])


def test_run_queries_without_judgments_are_ignored_and_counted():
    run = {"q1": {"a": 1.0}, "zz": {"a": 1.0}, "yy": {"b": 1.0}}
    result = evaluate(QRELS, run, ["P@1"])
    assert result.ignored_run_query_ids == ("yy", "zz")
    assert result.to_json()["policies"]["ignored_run_queries"] == 2
    assert result.missing_from_run_ids == ("q2", "q3")


def test_non_string_ids_are_compared_as_strings():
    result = evaluate({1: {2: 1}, 3: {4: 1}}, {1: {2: 0.5, 5: 0.9}}, ["RR"], ZERO)
    assert result.query_ids.tolist() == ["1", "3"]
    assert result.per_query["RR"].tolist() == [0.5, 0.0]


def test_bad_inputs_raise_typed_errors():
    with pytest.raises(InputError, match="no judgments"):
        evaluate({}, {}, ["P@1"])
    with pytest.raises(InputError, match="run must be Run"):
        evaluate(QRELS, 42, ["P@1"])
    with pytest.raises(InputError, match="qrels must be Qrels"):
        evaluate([("q", "d", 1)], {}, ["P@1"])
    with pytest.raises(InputError, match="scores must be numbers"):
        evaluate(QRELS, {"q1": {"a": "high"}}, ["P@1"])
    with pytest.raises(InputError, match="grades must be integers"):
        evaluate({"q1": {"a": 1.5}}, {}, ["P@1"])
    with pytest.raises(MeasureError):
        evaluate(QRELS, {}, ["P"])
    with pytest.raises(InputError, match="no_answer policy 'drop'"):
        Policy(no_answer="drop")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="only .score desc at float32 precision, docid desc"):
        Policy(ties="random")
    with pytest.raises(InputError, match="policy must be"):
        evaluate(QRELS, {}, ["P@1"], policy="zero")  # type: ignore[arg-type]


def test_inputs_are_not_modified():
    qrels = Qrels.from_dict(QRELS)
    run = Run(["q1", "q1"], ["b", "a"], [np.nan, np.nan])
    before = (run.query_ids.copy(), run.doc_ids.copy(), run.scores.copy(), qrels.grades.copy())
    evaluate(qrels, run, ["P@1"])
    np.testing.assert_array_equal(run.scores, before[2])
    assert run.doc_ids.tolist() == before[1].tolist()
    np.testing.assert_array_equal(qrels.grades, before[3])


def test_chunking_does_not_change_values_and_reports_progress():
    rng = np.random.default_rng(3)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(10)} for i in range(50)}
    run = {f"q{i}": {f"d{j}": float(rng.integers(0, 4)) for j in range(0, 20, 2)} for i in range(50)}
    measures = parse_measures(["nDCG@5", "AP", "R-Prec", "RR", "P@3", "ContextPrecision@4", "F1@3"])
    gold = Gold.from_qrels(Qrels.from_dict(qrels))
    hits = locate_hits(gold, run)
    seen: list[tuple[int, int]] = []
    small = per_query_values(measures, gold, hits, progress=lambda done, total: seen.append((done, total)), chunk_cells=7)
    whole = per_query_values(measures, gold, hits)
    for m in measures:
        np.testing.assert_array_equal(small[m], whole[m])
    assert len(seen) > 10 and seen[-1] == (50, 50)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_evaluate_passes_progress_through():
    calls: list[tuple[int, int]] = []
    evaluate(QRELS, {}, ["P@1"], progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (3, 3)


def test_run_frames_of_any_id_dtype_give_the_same_values():
    frame = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["z", "a", "c"], "score": [2.0, 1.0, 1.0]})
    expected = evaluate(QRELS, frame, ["RR", "P@2"]).per_query
    for variant in (
        frame.astype({"query_id": object, "doc_id": object}),  # object columns (pandas 2 style)
        frame.astype({"query_id": "string", "doc_id": "string"}),
    ):
        got = evaluate(QRELS, variant, ["RR", "P@2"]).per_query
        for name in expected:
            np.testing.assert_array_equal(got[name], expected[name])
    numeric = pd.DataFrame({"query_id": [1, 1], "doc_id": [5, 6], "score": [1.0, 2.0]})  # converted with str()
    assert evaluate({"1": {"5": 1}}, numeric, ["RR"]).per_query["RR"].tolist() == [0.5]


def test_run_frames_with_missing_ids_or_bad_scores_are_rejected():
    with pytest.raises(InputError, match="row 1 has no doc_id"):
        evaluate(QRELS, pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", None], "score": [1.0, 2.0]}), ["RR"])
    with pytest.raises(InputError, match="missing column"):
        evaluate(QRELS, pd.DataFrame({"qid": ["q1"], "doc_id": ["a"]}), ["RR"])
    with pytest.raises(InputError, match="scores must be numbers"):
        evaluate(QRELS, pd.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "score": ["high"]}), ["RR"])
    with pytest.raises(InputError, match="mixes scored and unscored"):
        evaluate(QRELS, pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1.0, None]}), ["RR"])


def test_the_one_duplicate_pair_check_confirms_collisions_and_names_the_first_repeat():
    from evalops.data import first_repeated_row

    pairs = [("q1", "a"), ("q1", "b"), ("q2", "a"), ("q1", "b"), ("q2", "a")]
    identity = lambda rows: [pairs[i] for i in rows]  # noqa: E731
    collide = np.zeros(len(pairs), dtype=np.uint64)  # every key collides: only the pairs decide
    assert first_repeated_row(collide, identity) == 3
    assert first_repeated_row(collide, identity, np.argsort(collide, kind="stable")) == 3
    assert first_repeated_row(collide[:3], identity) is None
    assert first_repeated_row(np.arange(5, dtype=np.uint64), identity) is None  # distinct keys: no look
