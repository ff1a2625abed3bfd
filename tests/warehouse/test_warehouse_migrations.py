"""Migrations: one head, upgrade from empty, and the models match the migrated schema on both backends."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect

from evalops.warehouse import create_warehouse_engine, current_revision, downgrade, head_revisions, upgrade
from evalops.warehouse.migrate import VERSION_TABLE
from evalops.warehouse.models import Base

TABLES = {
    "ab_tests",
    "alerts",
    "alert_deliveries",
    "baselines",
    "eval_fingerprints",
    "eval_runs",
    "gold_set_versions",
    "kb_snapshots",
    "judge_runs",
    "judgments",
    "measures",
    "query_scores",
    "query_texts",
    "run_aggregates",
    "run_timings",
}


def test_there_is_a_single_head():
    assert len(head_revisions()) == 1


def test_models_declare_the_expected_tables():
    assert set(Base.metadata.tables) == TABLES


def test_constraint_names_fit_postgresql_identifiers():
    names = []
    for table in Base.metadata.sorted_tables:
        names += [c.name for c in table.constraints] + [i.name for i in table.indexes]
    assert all(isinstance(n, str) and len(n) <= 63 for n in names), names


def test_upgrade_from_empty_then_models_match_the_schema(empty_url):
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    engine = create_warehouse_engine(empty_url)
    try:
        assert current_revision(engine) is None
        upgrade(engine)
        assert current_revision(engine) == head_revisions()[0]
        assert TABLES <= set(inspect(engine).get_table_names())
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True, "version_table": VERSION_TABLE})
            diffs = compare_metadata(context, Base.metadata)
        assert diffs == []
        upgrade(engine)  # upgrading an up-to-date schema is a no-op
        assert current_revision(engine) == head_revisions()[0]
    finally:
        engine.dispose()


def test_downgrade_to_base_removes_everything(empty_url):
    engine = create_warehouse_engine(empty_url)
    try:
        upgrade(engine)
        downgrade(engine, "base")
        assert current_revision(engine) is None
        assert not TABLES & set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_one_current_baseline_index_is_partial_on_is_current(empty_url, backend):
    # Alembic's autogenerate does not compare index predicates, so check the DDL itself.
    from sqlalchemy import text

    engine = create_warehouse_engine(empty_url)
    try:
        upgrade(engine)
        with engine.connect() as conn:
            if backend == "sqlite":
                ddl = conn.execute(text("SELECT sql FROM sqlite_master WHERE name = 'ux_baselines_current'")).scalar_one()
            else:
                ddl = conn.execute(
                    text("SELECT indexdef FROM pg_indexes WHERE indexname = 'ux_baselines_current'")
                ).scalar_one()
        normalised = " ".join(ddl.replace('"', "").split()).upper()
        assert "CREATE UNIQUE INDEX UX_BASELINES_CURRENT ON" in normalised
        assert "(RETRIEVER, FINGERPRINT_HASH)" in normalised
        assert normalised.endswith("WHERE IS_CURRENT")
    finally:
        engine.dispose()


@pytest.mark.parametrize("url", ["sqlite:///:memory:"])
def test_in_memory_sqlite_upgrades(url):
    engine = create_warehouse_engine(url)
    try:
        upgrade(engine)
        assert current_revision(engine) == head_revisions()[0]
    finally:
        engine.dispose()


def test_autogenerate_against_an_up_to_date_schema_finds_nothing(empty_url, tmp_path, monkeypatch):
    # Through the package's own env.py (render_as_batch on SQLite, TypeDecorators rendered as plain types).
    import shutil

    from evalops.warehouse import migrate

    (head,) = head_revisions()
    scripts = tmp_path / "migrations"
    shutil.copytree(migrate.MIGRATIONS_DIR, scripts, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(migrate, "MIGRATIONS_DIR", scripts)
    engine = create_warehouse_engine(empty_url)
    try:
        upgrade(engine)
        path = migrate.autogenerate_revision(engine, "nothing changed")
    finally:
        engine.dispose()
    body = open(path).read()
    assert f"down_revision: str | Sequence[str] | None = '{head}'" in body
    upgrade_body = body.split("def upgrade() -> None:")[1].split("def downgrade")[0]
    assert [line.strip() for line in upgrade_body.splitlines() if line.strip() and not line.strip().startswith("#")] == ["pass"]
