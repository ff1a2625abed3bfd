"""Query texts: stored once per query set version, an existing text kept, any text round-trips (both backends;
PostgreSQL writes them through COPY into a temporary table, SQLite through one batched INSERT)."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from evalops.errors import WarehouseError
from evalops.warehouse.dashboard import record_query_texts, stored_query_text_ids


def _stored(engine, version: str) -> dict[str, str]:
    with engine.connect() as conn:
        return dict(conn.execute(text("SELECT query_id, text FROM query_texts WHERE query_set_version = :v"),
                                 {"v": version}).all())


def test_query_texts_are_stored_once_and_kept(engine):
    odd = {"q1": "tab\there, newline\nthere, a backslash \\ and \\N", "q2": "é ü 中文 'quoted' \"double\"", "q3": ""}
    assert record_query_texts(engine, "v1", odd) == 3
    assert _stored(engine, "v1") == odd
    assert record_query_texts(engine, "v1", {"q1": "changed", "q4": "new"}) == 2
    assert _stored(engine, "v1") == {**odd, "q4": "new"}  # a stored text is kept
    assert stored_query_text_ids(engine, "v1") == {"q1", "q2", "q3", "q4"}
    assert record_query_texts(engine, "v2", {}) == 0 and _stored(engine, "v2") == {}
    assert record_query_texts(engine, "v2", {"q1": "other version"}) == 1
    assert _stored(engine, "v2") == {"q1": "other version"} and _stored(engine, "v1")["q1"] == odd["q1"]


def test_a_query_id_too_long_stores_nothing(engine, backend):
    if backend == "sqlite":
        pytest.skip("SQLite does not enforce VARCHAR lengths")
    with pytest.raises(WarehouseError, match="query texts of v1"):
        record_query_texts(engine, "v1", {"ok": "fine", "x" * 600: "too long"})
    assert _stored(engine, "v1") == {}
    assert record_query_texts(engine, "v1", {"ok": "fine"}) == 1  # the temporary table went with the transaction
