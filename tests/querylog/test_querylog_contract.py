"""The query-log contract: each expectation, broken beyond the tolerated share, fails under its name."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest

from evalops.errors import ValidationError
from evalops.contracts import QueryLogRules, validate_query_logs

pytestmark = pytest.mark.slow

UTC = timezone.utc
START = datetime(2025, 3, 5, tzinfo=UTC)
RULES = QueryLogRules(START, START + timedelta(days=1), ("bm25-v1", "hybrid-rrf-v2"), max_malformed_share=0.05)
SHARE = "share of malformed rows within bounds"


def window(n: int = 100) -> pd.DataFrame:
    frame = pd.DataFrame({
        "timestamp": pd.date_range(START, periods=n, freq="10min", tz="UTC"),
        "query": pd.Series([f"query {i}" for i in range(n)], dtype=object),
        "retriever_version": pd.Series(np.where(np.arange(n) % 2, "bm25-v1", "hybrid-rrf-v2"), dtype=object),
        "segment": pd.Series(np.where(np.arange(n) % 3, "web", "mobile"), dtype=object),
    })
    frame["malformed"] = pd.Series([None] * n, dtype=object)
    return frame


def broken(column: str, value: object, rows: int = 10) -> pd.DataFrame:
    frame = window()
    frame[column] = frame[column].astype(object) if column != "timestamp" else frame[column]
    frame.loc[: rows - 1, column] = [value] * rows
    return frame


def test_valid_window_passes() -> None:
    report = validate_query_logs(window(), RULES, docs_dir=None)
    assert report.ok and report.checked == 17


@pytest.mark.parametrize(
    ("frame", "rule"),
    [
        (window().drop(columns="segment"), "required column 'segment' present"),
        (window().assign(timestamp=window()["timestamp"].dt.tz_localize(None)), "timestamp is a timezone-aware time"),
        (broken("timestamp", pd.NaT), "timestamp present and parseable"),
        (broken("timestamp", pd.Timestamp("2025-03-04T23:00Z")), "timestamps inside the run's data interval"),
        (broken("timestamp", pd.Timestamp("2025-03-06T00:00Z")), "timestamps inside the run's data interval"),
        (broken("query", 1234), "query is text"),
        (broken("query", None), "non-empty query text"),
        (broken("query", "  "), "non-empty query text"),
        (broken("retriever_version", "bm25-v0-canary"), "known retriever versions"),
        (broken("retriever_version", None), "retriever_version present"),
        (broken("segment", 7), "segment is text"),
        (broken("segment", None), "segment present"),
    ],
    ids=["missing column", "naive timestamps", "unparseable timestamps", "before the interval", "at the interval end",
         "query not text", "query missing", "blank query", "unknown version", "version missing", "segment not text",
         "segment missing"],
)
def test_each_broken_expectation_fails_under_its_name(frame: pd.DataFrame, rule: str) -> None:
    report = validate_query_logs(frame, RULES, docs_dir=None, raise_on_failure=False)
    assert rule in report.failed_rules, report.summary()
    assert set(report.failed_rules) - {rule, SHARE} <= {"non-empty query text"}, report.summary()
    assert SHARE in report.failed_rules  # every broken row is also a malformed row


def test_a_few_bad_rows_are_tolerated() -> None:
    report = validate_query_logs(broken("retriever_version", "bm25-v0-canary", rows=4), RULES, docs_dir=None)
    assert report.ok
    assert "4 malformed" in report.subject


def test_bad_rows_of_several_kinds_add_up_to_the_share() -> None:
    frame = broken("retriever_version", "bm25-v0-canary", rows=3)
    frame.loc[50:52, "malformed"] = "invalid JSON"
    frame.loc[50:52, ["query", "retriever_version", "segment"]] = None
    frame.loc[50:52, "timestamp"] = pd.NaT
    report = validate_query_logs(frame, RULES, docs_dir=None, raise_on_failure=False)
    assert report.failed_rules == [SHARE], report.summary()  # 6% in all, each kind alone within 5%
    assert report.failures[0].unexpected_count == 6
    assert "invalid JSON" in report.summary() and "unknown retriever version bm25-v0-canary" in report.summary()


def test_empty_window() -> None:
    report = validate_query_logs(window(0), RULES, docs_dir=None, raise_on_failure=False)
    assert report.failed_rules == ["window is not empty"]


def test_failure_raises_with_the_summary() -> None:
    with pytest.raises(ValidationError, match="known retriever versions"):
        validate_query_logs(broken("retriever_version", "bm25-v0-canary", rows=50), RULES, docs_dir=None)
