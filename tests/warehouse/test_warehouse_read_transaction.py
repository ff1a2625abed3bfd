"""A reader's transaction takes no write lock: a deferred BEGIN on SQLite, READ ONLY on PostgreSQL; a
writer's still opens with BEGIN IMMEDIATE (SQLite) and may write."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import text

from evalops.errors import WarehouseError
from evalops.warehouse._db import transaction
from evalops.warehouse.dashboard import dashboard_version


def test_a_writer_is_not_locked_out_by_an_open_read(engine, backend) -> None:
    with transaction(engine, "reading", read_only=True) as conn:
        assert conn.execute(text("SELECT count(*) FROM eval_runs")).scalar() == 0
        if backend == "sqlite":  # a writer that will not wait: BEGIN IMMEDIATE fails at once if a lock is held
            other = sqlite3.connect(engine.url.database, timeout=0, isolation_level=None)
            try:
                other.execute("BEGIN IMMEDIATE")
                other.execute("ROLLBACK")
            finally:
                other.close()
        else:
            with pytest.raises(Exception, match="read-only transaction"):
                conn.exec_driver_sql("CREATE TEMPORARY TABLE t_ro (x int); INSERT INTO t_ro VALUES (1)")
    assert dashboard_version(engine) is not None  # the dashboard's own reads


def test_a_write_transaction_still_takes_the_write_lock(engine, backend) -> None:
    if backend != "sqlite":
        pytest.skip("the write lock at BEGIN is SQLite's")
    with transaction(engine, "writing") as conn:
        conn.execute(text("SELECT 1"))
        other = sqlite3.connect(engine.url.database, timeout=0, isolation_level=None)
        try:
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")
        finally:
            other.close()


def test_errors_in_a_read_transaction_name_what_failed(engine) -> None:
    with pytest.raises(WarehouseError, match="reading the moon failed"):
        with transaction(engine, "reading the moon", read_only=True) as conn:
            conn.execute(text("SELECT * FROM no_such_table"))


def test_the_history_reads_while_a_writer_holds_the_lock(tmp_path, monkeypatch) -> None:
    """``evalops history``'s reads take no write lock: on SQLite they answer while another process holds
    one (a writer's BEGIN IMMEDIATE would wait out the busy timeout and fail)."""
    from evalops.warehouse import create_warehouse_engine, upgrade
    from evalops.warehouse.history import latest_run_rows, measure_history_rows, run_mean_rows

    monkeypatch.setenv("EVALOPS_WAREHOUSE_BUSY_TIMEOUT", "0.2")
    path = tmp_path / "warehouse.db"
    engine = create_warehouse_engine(f"sqlite:///{path}")
    upgrade(engine)
    writer = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("INSERT INTO measures (name) VALUES ('P@5')")
        assert latest_run_rows(engine) == []
        assert measure_history_rows(engine, "bm25", "P@5") == []
        assert run_mean_rows(engine, [1]) == {}
        writer.execute("COMMIT")
    finally:
        writer.close()
        engine.dispose()
