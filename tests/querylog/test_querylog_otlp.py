"""Query logs from OTLP JSON trace exports (OpenInference retriever spans), read like every other log."""

from __future__ import annotations

import gzip
import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd

from evalops.contracts.logrows import row_problems
from evalops.contracts.rules import QueryLogRules
from evalops.querylog import log_partitions, read_log_window, scrub_many

UTC = timezone.utc
START = datetime(2025, 3, 5, tzinfo=UTC)
END = START + timedelta(days=1)
FIXTURE = Path(__file__).parent / "fixtures" / "retriever_spans.otlp.json"


def _window(tmp_path: Path, name: str = "traces.otlp.json", text: str | None = None):
    folder = tmp_path / "date=2025-03-05"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    if text is None:
        shutil.copy(FIXTURE, target)
    else:
        target.write_text(text, encoding="utf-8")
    return read_log_window(tmp_path, START, END)


def test_retriever_spans_become_log_rows(tmp_path: Path) -> None:
    frame = _window(tmp_path).frame
    assert len(frame) == 4  # the LLM span is not a retrieval
    first = frame.iloc[0]
    assert first["timestamp"] == pd.Timestamp("2025-03-05T10:00:00Z")
    assert first["query"] == "how long does a refund take? mail me at ann@example.com"
    assert first["retriever_version"] == "bm25-v1"  # the resource's service.version
    assert first["segment"] == "billing"
    assert first["retrieved_doc_ids"] == ["doc-17", "doc-4", "88"]  # by N, numerically (10 after 1)
    assert first["retrieved_scores"] == [12.5, 9.25, 3.0]
    assert first["clicked_doc_ids"] == ["doc-4"]
    assert "user.id" not in frame.columns and "user_id" not in frame.columns
    second = frame.iloc[1]
    assert second["query"] == "cancel my plan"  # input.value as JSON (input.mime_type)
    assert second["retriever_version"] == "hybrid-rrf-v2"  # the span's attribute wins over the resource's
    assert frame["malformed"].tolist()[:2] == [None, None]


def test_bad_spans_are_malformed_rows_not_exceptions(tmp_path: Path) -> None:
    frame = _window(tmp_path).frame
    assert frame["malformed"].iloc[2] == "query is int, not text"
    assert frame["malformed"].iloc[3] == "retrieval.documents.0.document.id is missing or not an id"
    assert frame["line"].tolist() == [1, 3, 4, 5]  # the span's position in a one-object file


def test_line_delimited_export_with_a_broken_line(tmp_path: Path) -> None:
    request = json.loads(FIXTURE.read_text())
    text = json.dumps(request) + "\n{not json\n" + json.dumps([1]) + "\n"
    frame = _window(tmp_path, "part-0.otlp.jsonl", text).frame
    assert frame["malformed"].tolist()[-2:] == ["invalid JSON", "not a JSON object"]
    assert frame["line"].tolist() == [1, 1, 1, 1, 2, 3]


def test_gzip_and_partitions(tmp_path: Path) -> None:
    folder = tmp_path / "date=2025-03-05"
    folder.mkdir()
    with gzip.open(folder / "traces.otlp.json.gz", "wb") as f:
        f.write(FIXTURE.read_bytes())
    assert list(log_partitions(tmp_path)) == [START.date()]
    assert len(read_log_window(tmp_path, START, END).frame) == 4


def test_same_contracts_and_scrubbing(tmp_path: Path) -> None:
    frame = _window(tmp_path).frame
    problems = row_problems(frame, QueryLogRules(START, END, ("bm25-v1", "hybrid-rrf-v2")))
    assert problems.isna().tolist() == [True, True, False, False]
    scrubbed, found = scrub_many(frame["query"].iloc[:1].tolist())
    assert "ann@example.com" not in scrubbed[0] and sum(found.values()) >= 1


def test_an_otlp_window_is_validated_scrubbed_and_sampled_like_any_log(tmp_path: Path) -> None:
    from evalops.querylog import draw_log_sample

    window = _window(tmp_path)
    rules = QueryLogRules(START, END, ("bm25-v1", "hybrid-rrf-v2"), max_malformed_share=0.6)
    sample = draw_log_sample(window, rules, logical_date="2025-03-05", size=2, docs_dir=None)
    assert sample.report.failures == [] and sample.dropped_rows == 2
    assert sample.pii_found == {"email": 1}
    assert not any("ann@example.com" in text for text in sample.sample["text"])
    assert sorted(sample.sample["retriever_version"]) == ["bm25-v1", "hybrid-rrf-v2"]
