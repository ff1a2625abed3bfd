"""Reading a window: partitions, tolerance for bad lines, Parquet, gzip, SQL."""

from __future__ import annotations

import gzip
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import sqlalchemy as sa

from evalops.errors import ConfigError, FormatError, InputError
from evalops.querylog import log_partitions, read_log_table, read_log_window

UTC = timezone.utc
START = datetime(2025, 3, 5, tzinfo=UTC)
END = START + timedelta(days=1)


def test_only_the_partitions_of_the_interval_are_read(tmp_path: Path, make_row, put_rows) -> None:
    put_rows(tmp_path, "2025-03-04", [make_row("2025-03-04T10:00:00Z", "old")])
    put_rows(tmp_path, "2025-03-05", [make_row(query="today")])
    put_rows(tmp_path, "2025-03-06", [make_row("2025-03-06T10:00:00Z", "new")])
    (tmp_path / "2025-03-05-extra.jsonl").write_text(json.dumps(make_row(query="flat layout")) + "\n")
    (tmp_path / "notes.jsonl").write_text("{}\n")  # no date: not a partition
    assert sorted(log_partitions(tmp_path)) == [datetime(2025, 3, d).date() for d in (4, 5, 6)]
    window = read_log_window(tmp_path, START, END)
    assert sorted(window.frame["query"]) == ["flat layout", "today"]
    two_days = read_log_window(tmp_path, START, END + timedelta(days=1))
    assert len(two_days.frame) == 3


def test_fields_are_typed_and_other_fields_dropped(tmp_path: Path, make_row, put_rows) -> None:
    put_rows(tmp_path, "2025-03-05", [make_row(user_id="u1", email="a@b.c", clicked_doc_ids=["d1", 2], cited_doc_ids=None),
                                      make_row("2025-03-05T12:00:00+08:00")])
    frame = read_log_window(tmp_path, START, END).frame
    assert "user_id" not in frame.columns and "email" not in frame.columns
    assert str(frame["timestamp"].dtype) == "datetime64[us, UTC]"
    assert frame["timestamp"].iloc[1] == pd.Timestamp("2025-03-05T04:00:00Z")
    assert frame["clicked_doc_ids"].iloc[0] == ["d1", "2"]
    assert frame["line"].tolist() == [1, 2]
    assert frame["malformed"].isna().all()


def test_bad_lines_become_malformed_rows(tmp_path: Path, make_row, put_rows) -> None:
    put_rows(tmp_path, "2025-03-05", [
        make_row(), '{"timestamp": "2025-03-05T10:0', "[1, 2]", "", make_row(clicked_doc_ids="d1"),
        make_row(ts="yesterday", cited_doc_ids=[{"id": 1}]),
    ])
    frame = read_log_window(tmp_path, START, END).frame
    assert frame["malformed"].tolist() == [None, "invalid JSON", "not a JSON object", "clicked_doc_ids: feedback is not a JSON list",
                                           "cited_doc_ids: feedback is not a list of doc ids"]
    assert frame["line"].tolist() == [1, 2, 3, 5, 6]  # the blank line 4 is skipped, numbering kept
    assert pd.isna(frame["timestamp"].iloc[4])  # "yesterday" is no time: null, reported by the row checks
    assert frame["clicked_doc_ids"].iloc[3] is None


def test_wrong_types_are_nulled_and_reported(tmp_path: Path, make_row, put_rows) -> None:
    rows = [make_row(query=f"q{i}") for i in range(3000)]  # long enough for several parsing chunks
    rows[5] = make_row(query=1234)
    rows[1500] = make_row(ts=1741168800)
    rows[2999] = make_row(clicked_doc_ids=["d1", None])
    rows[2000] = make_row(segment=["web"])
    put_rows(tmp_path, "2025-03-05", rows)
    frame = read_log_window(tmp_path, START, END).frame
    assert len(frame) == 3000 and frame["line"].tolist() == list(range(1, 3001))
    bad = frame[frame["malformed"].notna()]
    assert dict(zip(bad["line"], bad["malformed"])) == {
        6: "query is int, not text",
        1501: "timestamp is int, not text",
        2001: "segment is list, not text",
        3000: "clicked_doc_ids: feedback is not a list of doc ids",
    }
    assert pd.isna(frame.loc[5, "query"]) and frame.loc[4, "query"] == "q4"
    assert str(frame["query"].dtype) == "str"


def test_feedback_as_json_text_is_parsed(tmp_path: Path, make_row, put_rows) -> None:
    put_rows(tmp_path, "2025-03-05", [make_row(clicked_doc_ids='["a", "b"]')])
    assert read_log_window(tmp_path, START, END).frame["clicked_doc_ids"].iloc[0] == ["a", "b"]


def test_gzip_and_parquet(tmp_path: Path, make_row) -> None:
    part = tmp_path / "date=2025-03-05"
    part.mkdir()
    with gzip.open(part / "a.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.write(json.dumps(make_row(query="zipped")) + "\n")
    pd.DataFrame([make_row(query="columnar", clicked_doc_ids=["d1"])]).assign(
        timestamp=pd.Timestamp("2025-03-05T11:00:00")  # naive: read as UTC
    ).to_parquet(part / "b.parquet")
    frame = read_log_window(tmp_path, START, END).frame
    assert frame["query"].tolist() == ["zipped", "columnar"]
    assert frame["timestamp"].iloc[1] == pd.Timestamp("2025-03-05T11:00:00Z")
    assert frame["clicked_doc_ids"].iloc[1] == ["d1"]


def test_column_mapping(tmp_path: Path, put_rows) -> None:
    put_rows(tmp_path, "2025-03-05", [{"ts": "2025-03-05T01:00:00Z", "q": "x", "model": "bm25-v1", "channel": "app"}])
    frame = read_log_window(tmp_path, START, END, segment_column="channel",
                            columns={"timestamp": "ts", "query": "q", "retriever_version": "model"}).frame
    assert frame[["query", "retriever_version", "channel"]].iloc[0].tolist() == ["x", "bm25-v1", "app"]
    with pytest.raises(ConfigError, match="unknown log field 'user'"):
        read_log_window(tmp_path, START, END, columns={"user": "u"})


def test_missing_partitions_and_bad_intervals(tmp_path: Path, make_row, put_rows) -> None:
    put_rows(tmp_path, "2025-03-01", [make_row()])
    with pytest.raises(InputError, match=r"no log partition for 2025-03-05 \.\. 2025-03-05 \(partitions found: 2025-03-01 \.\. 2025-03-01\)"):
        read_log_window(tmp_path, START, END)
    with pytest.raises(ConfigError, match="timezone-aware"):
        read_log_window(tmp_path, datetime(2025, 3, 5), END)
    with pytest.raises(ConfigError, match="empty data interval"):
        read_log_window(tmp_path, END, START)
    with pytest.raises(FormatError, match="not a directory"):
        read_log_window(tmp_path / "nope", START, END)


def test_sql_table_window(tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'logs.db'}")
    meta = sa.MetaData()
    table = sa.Table("query_log", meta, sa.Column("timestamp", sa.DateTime), sa.Column("query", sa.String),
                     sa.Column("retriever_version", sa.String), sa.Column("segment", sa.String),
                     sa.Column("clicked_doc_ids", sa.String), sa.Column("user_id", sa.String))
    meta.create_all(engine)
    rows = [
        {"timestamp": datetime(2025, 3, 4, 23, 59), "query": "before", "segment": "web"},
        {"timestamp": datetime(2025, 3, 5, 0, 0), "query": "first", "segment": "web", "clicked_doc_ids": '["d1"]', "user_id": "u1"},
        {"timestamp": datetime(2025, 3, 5, 23, 0), "query": "last", "segment": "app"},
        {"timestamp": datetime(2025, 3, 6, 0, 0), "query": "after", "segment": "web"},
    ]
    with engine.begin() as conn:  # executemany takes its columns from the first row: give every row every key
        conn.execute(table.insert(), [{"retriever_version": "bm25-v1", "clicked_doc_ids": None, "user_id": None, **r} for r in rows])
    window = read_log_table(engine, "query_log", START, END)
    frame = window.frame
    assert frame["query"].tolist() == ["first", "last"]
    assert frame["clicked_doc_ids"].iloc[0] == ["d1"] and "user_id" not in frame.columns
    assert str(frame["timestamp"].dtype).endswith("UTC]")
    assert frame["cited_doc_ids"].isna().all()  # the column does not exist in the table
    with pytest.raises(InputError, match="no timestamp column 'ts'"):
        read_log_table(engine, "query_log", START, END, columns={"timestamp": "ts"})
    engine.dispose()


@pytest.mark.postgres
def test_postgres_table_window(postgres_schema) -> None:
    engine, schema = postgres_schema
    meta = sa.MetaData(schema=schema)
    table = sa.Table("query_log", meta, sa.Column("timestamp", sa.DateTime(timezone=True)), sa.Column("query", sa.String),
                     sa.Column("retriever_version", sa.String), sa.Column("segment", sa.String),
                     sa.Column("clicked_doc_ids", sa.String))
    meta.create_all(engine)
    plus8 = timezone(timedelta(hours=8))
    with engine.begin() as conn:
        conn.execute(table.insert(), [
            {"timestamp": datetime(2025, 3, 5, 7, 59, tzinfo=plus8), "query": "before", "retriever_version": "v",
             "segment": "web", "clicked_doc_ids": None},  # 2025-03-04 23:59 UTC
            {"timestamp": datetime(2025, 3, 5, 8, 0, tzinfo=plus8), "query": "first", "retriever_version": "v",
             "segment": "web", "clicked_doc_ids": '["d1"]'},
        ])
    frame = read_log_table(engine, "query_log", START, END, schema=schema).frame
    assert frame["query"].tolist() == ["first"]
    assert frame["timestamp"].iloc[0] == pd.Timestamp("2025-03-05T00:00:00Z")
    assert frame["clicked_doc_ids"].iloc[0] == ["d1"]
