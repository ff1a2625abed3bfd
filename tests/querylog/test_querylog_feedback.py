"""Implicit feedback as weak judgments, kept apart from the gold set; the annotation queue."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalops.errors import ConfigError, InputError
from evalops.querylog import FeedbackPolicy, annotation_queue, weak_judgments, write_annotation_queue


@pytest.fixture
def rows() -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame]:
    rows = pd.DataFrame({
        "clicked_doc_ids": [["d1", "d2"], None, ["d1"], [], ["d9"]],
        "cited_doc_ids": [None, ["d2"], ["d3"], None, None],
    })
    row_unit = np.array([0, 0, 1, 2, 3])
    sample = pd.DataFrame({
        "unit": [0, 1, 2],
        "query_id": ["log-a", "log-a", "log-b"],  # units 0 and 1: one query served by two versions
        "text": ["refund time", "refund time", "lamp reset"],
        "retriever_version": ["bm25-v1", "hybrid-rrf-v2", "bm25-v1"],
        "segment": ["web", "web", "app"],
        "occurrences": [2, 1, 1],
        "first_seen": pd.to_datetime(["2025-03-05T01:00Z", "2025-03-05T02:00Z", "2025-03-05T03:00Z"], utc=True),
    })
    return rows, row_unit, sample


def test_weak_judgments_grade_clicks_and_citations(rows) -> None:
    frame, row_unit, sample = rows
    weak = weak_judgments(frame, row_unit, sample, FeedbackPolicy(), source="implicit-feedback:2025-03-05")
    assert weak.to_dict() == {"log-a": {"d1": 1, "d2": 2, "d3": 2}}  # cited beats clicked; unit 3 not sampled
    assert weak.source == "implicit-feedback:2025-03-05"
    custom = weak_judgments(frame, row_unit, sample, FeedbackPolicy(clicked_grade=1, cited_grade=1), source="x")
    assert custom.to_dict()["log-a"] == {"d1": 1, "d2": 1, "d3": 1}
    with pytest.raises(ConfigError):
        FeedbackPolicy(clicked_grade=0)


def test_no_feedback_gives_empty_judgments(rows) -> None:
    frame, row_unit, sample = rows
    weak = weak_judgments(frame.drop(columns=["clicked_doc_ids", "cited_doc_ids"]), row_unit, sample, FeedbackPolicy(), "x")
    assert len(weak) == 0


def test_annotation_queue_lists_sampled_queries_without_feedback(rows, tmp_path: Path) -> None:
    frame, row_unit, sample = rows
    weak = weak_judgments(frame, row_unit, sample, FeedbackPolicy(), "x")
    queue = annotation_queue(sample, weak)
    assert queue["query_id"].tolist() == ["log-b"] and queue["text"].tolist() == ["lamp reset"]
    write_annotation_queue(queue, tmp_path / "q.csv")
    write_annotation_queue(queue, tmp_path / "q.jsonl")
    with open(tmp_path / "q.csv", newline="", encoding="utf-8") as fh:
        assert next(csv.DictReader(fh))["first_seen"] == "2025-03-05T03:00:00+00:00"
    record = json.loads((tmp_path / "q.jsonl").read_text().splitlines()[0])
    assert record["occurrences"] == 1 and record["retriever_versions"] == "bm25-v1"
    with pytest.raises(InputError, match=r"\.csv or \.jsonl"):
        write_annotation_queue(queue, tmp_path / "q.xlsx")


def test_annotation_queue_csv_neutralises_formulas(tmp_path: Path) -> None:
    """Query text comes from the logs: a spreadsheet must not run it. The JSON Lines form keeps it as is."""
    queue = pd.DataFrame({"query_id": ["log-1", "log-2"], "text": ["=HYPERLINK(\"http://evil\")", "-0.25"],
                          "retriever_versions": ["@v1", "v1"], "segment": ["web", "+app"], "occurrences": [-1, 2],
                          "first_seen": pd.to_datetime(["2025-03-05T03:00Z", "2025-03-05T04:00Z"], utc=True)})
    write_annotation_queue(queue, tmp_path / "q.csv")
    with open(tmp_path / "q.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[0]["text"] == "'=HYPERLINK(\"http://evil\")" and rows[1]["text"] == "-0.25"
    assert rows[0]["retriever_versions"] == "'@v1" and rows[1]["segment"] == "'+app"
    assert rows[0]["occurrences"] == "-1" and rows[0]["first_seen"] == "2025-03-05T03:00:00+00:00"
    write_annotation_queue(queue, tmp_path / "q.jsonl")
    assert json.loads((tmp_path / "q.jsonl").read_text().splitlines()[0])["text"] == "=HYPERLINK(\"http://evil\")"
