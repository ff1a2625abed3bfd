"""The warehouse's own Alembic version table, the move from the legacy one, and the migration commands
(`evalops db history | stamp | upgrade --sql`, and the `alembic` CLI with the repository's alembic.ini)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import inspect, text

from evalops.cli import main
from evalops.warehouse import create_warehouse_engine, current_revision, head_revisions, upgrade
from evalops.warehouse.migrate import LEGACY_VERSION_TABLE, VERSION_TABLE

REPO = Path(__file__).resolve().parents[2]
AIRFLOW_REVISION = "29ce7909c52b"  # a revision of Airflow's own, which shares alembic_version


def _tables(engine) -> set[str]:
    return set(inspect(engine).get_table_names())


def _versions(engine, table: str) -> list[str]:
    with engine.connect() as conn:
        return sorted(r[0] for r in conn.execute(text(f"SELECT version_num FROM {table}")))


def _make_legacy(engine, *, airflow_row: bool) -> str:
    """A warehouse as an earlier release left it: its revision in alembic_version."""
    upgrade(engine)
    head = head_revisions()[0]
    with engine.begin() as conn:
        conn.execute(text(f"DROP TABLE {VERSION_TABLE}"))
        conn.execute(text(f"CREATE TABLE {LEGACY_VERSION_TABLE} (version_num VARCHAR(32) NOT NULL PRIMARY KEY)"))
        conn.execute(text(f"INSERT INTO {LEGACY_VERSION_TABLE} VALUES (:r)"), {"r": head})
        if airflow_row:
            conn.execute(text(f"INSERT INTO {LEGACY_VERSION_TABLE} VALUES (:r)"), {"r": AIRFLOW_REVISION})
    return head


def test_the_revision_lives_in_the_evalops_table(empty_url):
    engine = create_warehouse_engine(empty_url)
    try:
        upgrade(engine)
        assert VERSION_TABLE in _tables(engine) and LEGACY_VERSION_TABLE not in _tables(engine)
        assert _versions(engine, VERSION_TABLE) == [head_revisions()[0]]
    finally:
        engine.dispose()


@pytest.mark.parametrize("airflow_row", [False, True])
def test_a_legacy_warehouse_moves_to_the_evalops_table_at_the_next_upgrade(empty_url, airflow_row):
    engine = create_warehouse_engine(empty_url)
    try:
        head = _make_legacy(engine, airflow_row=airflow_row)
        assert current_revision(engine) == head  # read from the legacy table until it moves
        upgrade(engine)
        assert _versions(engine, VERSION_TABLE) == [head]
        if airflow_row:  # Airflow's revision stays where Airflow expects it
            assert _versions(engine, LEGACY_VERSION_TABLE) == [AIRFLOW_REVISION]
        else:
            assert LEGACY_VERSION_TABLE not in _tables(engine)
        upgrade(engine)
        assert current_revision(engine) == head
    finally:
        engine.dispose()


def test_an_airflow_only_alembic_version_is_left_alone(tmp_path):
    engine = create_warehouse_engine(f"sqlite:///{tmp_path / 'shared.db'}")
    try:
        with engine.begin() as conn:
            conn.execute(text(f"CREATE TABLE {LEGACY_VERSION_TABLE} (version_num VARCHAR(32) NOT NULL PRIMARY KEY)"))
            conn.execute(text(f"INSERT INTO {LEGACY_VERSION_TABLE} VALUES (:r)"), {"r": AIRFLOW_REVISION})
        assert current_revision(engine) is None
        upgrade(engine)
        assert _versions(engine, LEGACY_VERSION_TABLE) == [AIRFLOW_REVISION]
        assert _versions(engine, VERSION_TABLE) == [head_revisions()[0]]
    finally:
        engine.dispose()


@pytest.fixture
def url(tmp_path, monkeypatch):
    value = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("EVALOPS_WAREHOUSE_URL", value)
    return value


def invoke(*args: str):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_db_history_marks_head_and_current(url):
    listed = json.loads(invoke("db", "history", "--format", "json"))
    assert [r["revision"] for r in listed][-1] == "07f3ed2060d6" and listed[0]["is_head"]
    assert not any(r["is_current"] for r in listed)
    invoke("db", "upgrade")
    text_out = invoke("db", "history")
    assert f"-> {head_revisions()[0]} (head, current)" in text_out
    assert "<base> -> 07f3ed2060d6" in text_out


def test_db_stamp_records_a_revision_without_migrating(url, tmp_path):
    out = invoke("db", "stamp", "07f3ed2060d6")
    assert "stamped at 07f3ed2060d6" in out
    engine = create_warehouse_engine(url)
    try:
        assert current_revision(engine) == "07f3ed2060d6"
        assert "eval_runs" not in _tables(engine)  # nothing was migrated
        invoke("db", "stamp", "base")
        assert current_revision(engine) is None
    finally:
        engine.dispose()


def test_db_upgrade_sql_prints_the_ddl_and_touches_nothing(url, tmp_path):
    sql = invoke("db", "upgrade", "--sql")
    assert "CREATE TABLE eval_runs" in sql and f"CREATE TABLE {VERSION_TABLE}" in sql
    assert f"INSERT INTO {VERSION_TABLE}" in sql
    assert not (tmp_path / "cli.db").exists()
    step = invoke("db", "upgrade", "--sql", "--from", "07f3ed2060d6")
    assert "CREATE TABLE eval_runs" not in step and "ALTER TABLE eval_runs ADD COLUMN contracts" in step
    pg = invoke("db", "upgrade", "--sql", "--url", "postgresql+psycopg://someone:secret@db.invalid/evalops")
    assert "CREATE TABLE eval_runs" in pg and "secret" not in pg


def test_the_alembic_cli_works_from_the_repository(tmp_path):
    env = {**os.environ, "EVALOPS_WAREHOUSE_URL": f"sqlite:///{tmp_path / 'a.db'}"}
    alembic = [sys.executable, "-m", "alembic"]
    run = lambda *a: subprocess.run([*alembic, *a], cwd=REPO, env=env, capture_output=True, text=True,  # noqa: E731
                                    timeout=300)
    done = run("upgrade", "head")
    assert done.returncode == 0, done.stderr
    current = run("current")
    assert current.returncode == 0 and f"{head_revisions()[0]} (head)" in current.stdout, current.stderr
    engine = create_warehouse_engine(env["EVALOPS_WAREHOUSE_URL"])
    try:
        assert _versions(engine, VERSION_TABLE) == [head_revisions()[0]]
    finally:
        engine.dispose()


def test_history_shows_one_result_per_date_unless_asked_for_the_superseded(url):
    import datetime as dt

    import pandas as pd

    from evalops.warehouse import record_aggregates
    from warehouse_helpers import Seeder

    invoke("db", "upgrade")
    engine = create_warehouse_engine(url)
    try:
        seed = Seeder(engine)
        fp = seed.fingerprint()
        day = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
        ids = []
        for dag_run_id, mean in (("manual__1", 0.4), ("manual__2", 0.42)):
            run = seed.run("v1", fingerprint=fp, dag_run_id=dag_run_id, logical_date=day)
            record_aggregates(engine, run.id, pd.DataFrame({"measure": ["nDCG@10"], "n": [5], "mean": [mean],
                                                            "ci_low": [0.3], "ci_high": [0.5]}),
                              ci_level=0.95, ci_method="t")
            ids.append(run.id)
    finally:
        engine.dispose()
    shown = json.loads(invoke("history", "bm25", "-m", "nDCG@10", "--format", "json"))
    assert [r["run_id"] for r in shown] == [ids[1]]
    every = json.loads(invoke("history", "bm25", "-m", "nDCG@10", "--superseded", "--format", "json"))
    assert [(r["run_id"], r["superseded"], r["superseded_by"]) for r in every] == [
        (ids[0], True, ids[1]), (ids[1], False, None)]
