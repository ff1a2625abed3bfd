"""Row problems, normalisation and de-duplication into sampling units."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd

from evalops.contracts import QueryLogRules
from evalops.querylog import build_units, log_query_id, row_problems
from evalops.querylog.normalize import display_text, query_key

UTC = timezone.utc
START = datetime(2025, 3, 5, tzinfo=UTC)
RULES = QueryLogRules(START, START + timedelta(days=1), ("bm25-v1", "hybrid-rrf-v2"))


def frame(rows: list[tuple]) -> pd.DataFrame:
    f = pd.DataFrame(rows, columns=["timestamp", "query", "retriever_version", "segment"])
    f["timestamp"] = pd.to_datetime(f["timestamp"], utc=True)
    for col in ("query", "retriever_version", "segment"):
        f[col] = f[col].astype(object)
    return f


def test_row_problems_give_the_first_reason() -> None:
    f = frame([
        ("2025-03-05T01:00Z", "ok", "bm25-v1", "web"),
        (None, "no time", "bm25-v1", "web"),
        ("2025-03-04T23:59Z", "late", "bm25-v1", "web"),
        ("2025-03-05T01:00Z", 42, "bm25-v1", "web"),
        ("2025-03-05T01:00Z", " \t", "bm25-v1", "web"),
        ("2025-03-05T01:00Z", "x", "bm25-v0", "web"),
        ("2025-03-05T01:00Z", "x", None, "web"),
        ("2025-03-05T01:00Z", "x", "bm25-v1", None),
        ("2025-03-06T00:00Z", "end is exclusive", "bm25-v1", "web"),
    ])
    f["malformed"] = [None] * 8 + ["invalid JSON"]
    f["file"] = "/logs/date=2025-03-05/part-000.jsonl"
    f["line"] = range(1, 10)
    reasons = row_problems(f, RULES).tolist()
    where = " (date=2025-03-05/part-000.jsonl:{})"
    assert reasons == [
        None,
        "missing or unparseable timestamp" + where.format(2),
        "timestamp outside the data interval" + where.format(3),
        "query missing or not text" + where.format(4),
        "blank query" + where.format(5),
        "unknown retriever version bm25-v0" + where.format(6),
        "retriever version missing or not text" + where.format(7),
        "segment missing or not text" + where.format(8),
        "invalid JSON" + where.format(9),
    ]


def test_missing_column_and_naive_timestamps_make_every_row_bad() -> None:
    f = frame([("2025-03-05T01:00Z", "ok", "bm25-v1", "web")]).drop(columns="segment")
    assert row_problems(f, RULES).tolist() == ["column 'segment' missing"]
    naive = frame([("2025-03-05T01:00Z", "ok", "bm25-v1", "web")])
    naive["timestamp"] = naive["timestamp"].dt.tz_localize(None)
    assert row_problems(naive, RULES).tolist() == ["timestamp column is not timezone-aware"]


def test_normalisation() -> None:
    assert display_text("  How\u3000long   do refunds take？ ") == "How long do refunds take?"
    assert query_key("How long do refunds take?") == query_key("how long do refunds take") == "how long do refunds take"
    assert log_query_id("abc") == log_query_id("abc") and log_query_id("abc").startswith("log-")


def test_units_deduplicate_within_version_and_segment_after_scrubbing() -> None:
    f = frame([
        ("2025-03-05T03:00Z", "Refund to a@example.com?", "bm25-v1", "web"),
        ("2025-03-05T01:00Z", "refund to b@example.org", "bm25-v1", "web"),
        ("2025-03-05T02:00Z", "refund to <EMAIL>", "hybrid-rrf-v2", "web"),
        ("2025-03-05T04:00Z", "ORDER-2024", "bm25-v1", "mobile"),
        ("2025-03-05T05:00Z", "order-2024", "bm25-v1", "mobile"),
    ])
    units = build_units(f, "segment")
    table = units.table.sort_values(["retriever_version", "segment"]).reset_index(drop=True)
    assert table[["retriever_version", "segment", "occurrences"]].values.tolist() == [
        ["bm25-v1", "mobile", 2], ["bm25-v1", "web", 2], ["hybrid-rrf-v2", "web", 1]]
    web = table.iloc[1]
    assert web["text"] == "refund to <EMAIL>"  # the earliest row's text, scrubbed
    assert web["first_seen"] == pd.Timestamp("2025-03-05T01:00Z")
    assert web["query_id"] == table.iloc[2]["query_id"]  # same query, same id across versions
    assert units.pii_found == {"email": 2}
    assert len(units.row_unit) == 5 and units.row_unit[0] == units.row_unit[1]


def test_unit_numbering_ignores_row_order() -> None:
    f = frame([(f"2025-03-05T0{i}:00Z", f"q{i % 4}", ("bm25-v1", "hybrid-rrf-v2")[i % 2], "web") for i in range(8)])
    a = build_units(f, "segment").table.set_index("unit")["query_id"]
    b = build_units(f.iloc[::-1].reset_index(drop=True), "segment").table.set_index("unit")["query_id"]
    assert a.sort_index().tolist() == b.sort_index().tolist()
    assert np.array_equal(np.sort(a.index.to_numpy()), np.arange(len(a)))


def test_segments_are_scrubbed_like_query_texts() -> None:
    f = frame([
        ("2025-03-05T01:00Z", "refund", "bm25-v1", "partner john\uff20example.com"),
        ("2025-03-05T02:00Z", "refund", "bm25-v1", "partner mary@example.org"),
        ("2025-03-05T03:00Z", "refund", "bm25-v1", "card 4111\u00a01111\u00a01111\u00a01111"),
        ("2025-03-05T04:00Z", "refund", "bm25-v1", "web"),
    ])
    units = build_units(f, "segment")
    table = units.table.sort_values("segment").reset_index(drop=True)
    # two partners that differ only in the address are one segment; the card and the address are gone
    assert table[["segment", "occurrences"]].values.tolist() == [
        ["card <CARD>", 1], ["partner <EMAIL>", 2], ["web", 1]]
    assert units.pii_found == {"email": 2, "card": 1}


def test_scrub_labels_keeps_known_versions_and_scrubs_the_rest() -> None:
    from evalops.querylog.normalize import scrub_labels

    f = frame([
        ("2025-03-05T01:00Z", "refund", "svc@prod.example", "web"),  # known: the registry's own text, kept
        ("2025-03-05T02:00Z", "refund", "v2 john\uff20example.com", "partner mary@example.org"),
    ])
    out, found = scrub_labels(f, "segment", ["svc@prod.example"])
    assert out["retriever_version"].tolist() == ["svc@prod.example", "v2 <EMAIL>"]
    assert out["segment"].tolist() == ["web", "partner <EMAIL>"]
    assert found == {"email": 2}
    problems = [p for p in row_problems(out, RULES) if p]  # both versions unknown to RULES: quoted scrubbed
    assert problems == ["unknown retriever version svc@prod.example", "unknown retriever version v2 <EMAIL>"]
