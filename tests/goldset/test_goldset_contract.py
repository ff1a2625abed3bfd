"""The gold-set contract: each expectation, broken in exactly one way, fails under its own name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from evalops.errors import ValidationError
from evalops.contracts import GoldSetRules, validate_gold_set
from evalops.goldset import GoldSet
from evalops.knowledge import KnowledgeBaseSnapshot

pytestmark = pytest.mark.slow  # the first Great Expectations import costs ~6 s

Frames = tuple[pd.DataFrame, pd.DataFrame]


def _set(frame: pd.DataFrame, mask: pd.Series, column: str, value: object) -> pd.DataFrame:
    frame = frame.copy()
    frame[column] = frame[column].astype(object)
    frame.loc[mask, column] = [value] * int(mask.sum())
    return frame


def dup_query_id(q: pd.DataFrame, j: pd.DataFrame) -> Frames:
    return pd.concat([q, q[q.query_id == "q2"]], ignore_index=True), j


def blank_text(q: pd.DataFrame, j: pd.DataFrame) -> Frames:
    return _set(q, q.query_id == "q3", "text", "   "), j


def null_text(q: pd.DataFrame, j: pd.DataFrame) -> Frames:
    return _set(q, q.query_id == "q3", "text", None), j


def unknown_type(q: pd.DataFrame, j: pd.DataFrame) -> Frames:
    return _set(q, q.query_id == "q4", "type", "semantc"), j


def keyword_missing(q: pd.DataFrame, j: pd.DataFrame) -> Frames:
    return _set(q, q.type == "keyword", "type", "semantic"), j


def too_many_no_answer(q: pd.DataFrame, j: pd.DataFrame) -> Frames:
    moved = ["q4", "q5", "q6"]  # 4 of 10 no_answer, their judgments turned non-relevant
    return _set(q, q.query_id.isin(moved), "type", "no_answer"), _set(j, j.query_id.isin(moved), "grade", 0)


def no_answer_with_relevant(q: pd.DataFrame, j: pd.DataFrame) -> Frames:
    return q, _set(j, j.query_id == "q10", "grade", 1)


def answerable_without_relevant(q: pd.DataFrame, j: pd.DataFrame) -> Frames:
    return q, _set(j, j.query_id == "q3", "grade", 0)


def grade_out_of_range(q: pd.DataFrame, j: pd.DataFrame) -> Frames:
    return q, _set(j, (j.query_id == "q2") & (j.doc_id == "d3"), "grade", 3)


def duplicate_pair(q: pd.DataFrame, j: pd.DataFrame) -> Frames:
    return q, pd.concat([j, j[(j.query_id == "q7")]], ignore_index=True)


def query_id_typo(q: pd.DataFrame, j: pd.DataFrame) -> Frames:
    return q, _set(j, (j.query_id == "q1") & (j.doc_id == "d2"), "query_id", "q01")


def query_id_too_long(q: pd.DataFrame, j: pd.DataFrame) -> Frames:
    long_id = "q" * 501  # the warehouse stores query ids of up to 500 characters
    return _set(q, q.query_id == "q3", "query_id", long_id), _set(j, j.query_id == "q3", "query_id", long_id)


CASES: list[tuple[str, Callable[[pd.DataFrame, pd.DataFrame], Frames], str]] = [
    ("query id too long for the warehouse", query_id_too_long, "query ids fit the warehouse"),
    ("duplicate query id", dup_query_id, "unique query ids"),
    ("blank query text", blank_text, "non-empty query text"),
    ("null query text", null_text, "non-empty query text"),
    ("unknown query type", unknown_type, "known query types"),
    ("a query type missing", keyword_missing, "each query type present"),
    ("no_answer share too high", too_many_no_answer, "no_answer share within bounds"),
    ("no_answer query with a relevant doc", no_answer_with_relevant, "no_answer queries have no relevant judgment"),
    ("answerable query without a relevant doc", answerable_without_relevant, "answerable queries have a relevant judgment"),
    ("grade out of range", grade_out_of_range, "grades in the allowed set"),
    ("duplicate judgment", duplicate_pair, "no duplicate (query, doc) pairs"),
    ("query id typo in the judgments", query_id_typo, "judged queries exist in the queries"),
]


def test_the_valid_gold_set_passes(gold: GoldSet, snapshot: KnowledgeBaseSnapshot, rules: GoldSetRules) -> None:
    report = validate_gold_set(gold, snapshot, rules, docs_dir=None)
    assert report.ok, report.summary()
    assert report.checked == 13
    assert "passed (13 expectations)" in report.summary()


@pytest.mark.parametrize(("label", "breaker", "rule"), CASES, ids=[c[0] for c in CASES])
def test_each_broken_expectation_fails_under_its_name(
    label: str,
    breaker: Callable[[pd.DataFrame, pd.DataFrame], Frames],
    rule: str,
    snapshot: KnowledgeBaseSnapshot,
    make_frames: Callable[[], Frames],
    rules: GoldSetRules,
) -> None:
    gold = GoldSet.from_frames(*breaker(*make_frames()), source=label)
    report = validate_gold_set(gold, snapshot, rules, docs_dir=None, raise_on_failure=False)
    assert report.failed_rules == [rule], report.summary()
    assert rule in report.summary()


def test_too_few_queries(gold: GoldSet, snapshot: KnowledgeBaseSnapshot) -> None:
    rules = GoldSetRules(min_queries=11, no_answer_share=(0.05, 0.30))
    report = validate_gold_set(gold, snapshot, rules, docs_dir=None, raise_on_failure=False)
    assert report.failed_rules == ["minimum number of queries"]
    assert "observed 10" in report.summary() and ">= 11" in report.summary()
    # the failure names the setting that lowers the floor, so a small gold set is one edit away from running
    assert "gold_set.rules.min_queries" in report.summary()


def test_no_answer_share_too_low(gold: GoldSet, snapshot: KnowledgeBaseSnapshot) -> None:
    rules = GoldSetRules(min_queries=10, no_answer_share=(0.2, 0.5))
    report = validate_gold_set(gold, snapshot, rules, docs_dir=None, raise_on_failure=False)
    assert report.failed_rules == ["no_answer share within bounds"]
    assert "observed 0.1" in report.summary()


def test_stale_judgment_after_rechunking_names_the_missing_doc(gold: GoldSet, make_kb, rules: GoldSetRules) -> None:
    rechunked = make_kb([f"d{i}" for i in range(1, 13) if i != 8])
    report = validate_gold_set(gold, rechunked, rules, docs_dir=None, raise_on_failure=False)
    rule = f"every judged doc exists in the knowledge-base snapshot {rechunked.snapshot_id}"
    assert report.failed_rules == [rule]
    failure = report.failures[0]
    assert failure.unexpected_count == 1 and failure.examples == ["d8"]
    assert "'d8'" in report.summary()


def test_failure_raises_validation_error_with_summary_and_data_docs(
    gold: GoldSet, make_kb, rules: GoldSetRules, tmp_path: Path
) -> None:
    rechunked = make_kb(["d1", "d2"])
    with pytest.raises(ValidationError) as info:
        validate_gold_set(gold, rechunked, rules, docs_dir=tmp_path / "docs")
    err = info.value
    assert "every judged doc exists in the knowledge-base snapshot" in err.summary
    assert {f["rule"] for f in err.failures} == {f"every judged doc exists in the knowledge-base snapshot {rechunked.snapshot_id}"}
    assert err.failures[0]["unexpected_count"] == 10  # 13 judgments, 3 of them on d1 or d2
    assert err.docs_path is not None and Path(err.docs_path).is_file()
    pages = list((tmp_path / "docs" / "validations").rglob("*.html"))
    assert pages, "a validation page is written for each table"
    assert any("doc_id_missing_from_kb" in p.read_text(encoding="utf-8") for p in pages)


def test_without_a_snapshot_the_stale_check_is_reported_as_skipped(gold: GoldSet, rules: GoldSetRules) -> None:
    report = validate_gold_set(gold, None, rules, docs_dir=None)
    assert report.ok
    assert report.checked == 12
    assert any("not checked" in n for n in report.notes)
