"""Aggregates, the JSON shape and the long frame of an EvaluationResult."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from evalops.metrics import Policy, evaluate, summarize

QRELS = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1, "d": 2}, "q4": {"e": 0}}
RUN = {"q1": {"a": 1.0}, "q2": {"x": 2.0, "b": 1.0}, "q3": {"y": 1.0}, "extra": {"a": 1.0}}


def test_summarize_matches_the_t_interval():
    values = np.array([0.2, 0.5, 0.9, 0.4, np.nan])
    agg = summarize(values)
    finite = values[:4]
    assert agg.n == 4
    assert agg.mean == pytest.approx(finite.mean())
    assert agg.std == pytest.approx(finite.std(ddof=1))
    low, high = stats.t.interval(0.95, 3, loc=finite.mean(), scale=stats.sem(finite))
    assert (agg.ci_low, agg.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert (agg.min, agg.max) == (0.2, 0.9)


def test_summarize_small_samples():
    one = summarize(np.array([0.5]))
    assert (one.n, one.mean, one.min, one.max) == (1, 0.5, 0.5, 0.5)
    assert math.isnan(one.std) and math.isnan(one.ci_low) and math.isnan(one.ci_high)
    none = summarize(np.array([np.nan]))
    assert none.n == 0 and math.isnan(none.mean)
    constant = summarize(np.array([1.0, 1.0, 1.0]))
    assert (constant.std, constant.ci_low, constant.ci_high) == (0.0, 1.0, 1.0)


def test_json_shape_is_exactly_the_documented_one():
    result = evaluate(QRELS, RUN, ["nDCG@10", "MRR"])
    payload = result.to_json()
    assert list(payload) == ["measures", "policies"]
    assert list(payload["measures"]) == ["nDCG@10", "RR"]
    assert set(payload["measures"]["RR"]) == {"mean", "n", "std", "min", "max", "ci_low", "ci_high"}
    assert payload["measures"]["RR"]["n"] == 3
    assert payload["measures"]["RR"]["mean"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert payload["policies"] == {
        "no_answer": "exclude",
        "ties": "score desc at float32 precision, docid desc (trec_eval)",
        "missing_from_run": "zero",
        "run_queries_not_in_qrels": "ignore",
        "no_answer_queries": {"nDCG@10": ["q4"], "RR": ["q4"]},
        "missing_from_run_queries": ["q4"],
        "ignored_run_queries": 1,
        "unjudged_documents": {"nDCG@10": "non-relevant", "RR": "non-relevant"},
        "queries_under_trec_eval": {"nDCG@10": 4, "RR": 4},  # q4 has no relevant document: out of the means
    }
    assert "queries_under_trec_eval" not in evaluate(QRELS, RUN, ["MRR"], Policy(no_answer="zero")).policies()
    with_queries = result.to_json(per_query=True)
    assert list(with_queries) == ["measures", "per_query", "policies"]
    assert with_queries["per_query"] == {
        "q1": {"nDCG@10": 1.0, "RR": 1.0},
        "q2": {"nDCG@10": pytest.approx(1 / math.log2(3)), "RR": 0.5},
        "q3": {"nDCG@10": 0.0, "RR": 0.0},
    }
    json.dumps(with_queries, allow_nan=False)  # plain floats and strings only


def test_to_frame_is_long_and_aligned():
    result = evaluate(QRELS, RUN, ["P@1", "RR"], Policy(no_answer="zero"))
    frame = result.to_frame()
    assert list(frame.columns) == ["query_id", "measure", "value"]
    assert len(frame) == 2 * 4
    rr = frame[frame["measure"] == "RR"].set_index("query_id")["value"].to_dict()
    assert rr == {"q1": 1.0, "q2": 0.5, "q3": 0.0, "q4": 0.0}
    assert result.mean("RR") == pytest.approx(1.5 / 4)


def test_result_records_the_run_name_and_measures():
    from evalops.data import Run

    result = evaluate(QRELS, Run.from_dict(RUN, name="bm25-v2"), ["Hit@1"])
    assert result.run_name == "bm25-v2"
    assert [str(m) for m in result.measures] == ["Success@1"]
    assert result.policy == Policy()


def test_repr_html_is_a_small_escaped_table():
    from evalops.data import Run
    from evalops.metrics import Policy, evaluate

    run = Run.from_dict({"q1": {"a": 2.0}, "q2": {"b": 1.0}}, name="<script>alert(1)</script>")
    result = evaluate({"q1": {"a": 1}, "q2": {"b": 0}, "q3": {"c": 1}}, run, ["P@1", "NumRet"], Policy())
    page = result._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("<tr>") == 3  # the header and two measures
    assert "2 of 3" in page and "missing from the run (scored 0): 1 queries" in page
