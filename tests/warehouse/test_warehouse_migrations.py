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
    "annotation_adjudications",
    "annotation_labels",
    "alert_deliveries",
    "baselines",
    "eval_fingerprints",
    "eval_runs",
    "gold_set_merges",
    "segment_spreads",
    "source_shares",
    "gold_set_versions",
    "kb_snapshots",
    "judge_runs",
    "judgments",
    "measures",
    "query_scores",
    "query_texts",
    "run_aggregates",
    "run_rankings",
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


def test_a_warehouse_with_data_upgrades_on_sqlite(tmp_path):
    """Batch migrations copy a table (eval_runs) that other rows reference; with foreign keys enforced that
    copy failed on every existing SQLite warehouse. The rows survive, still referenced."""
    import datetime as dt

    import pandas as pd
    from sqlalchemy import text

    from evalops.fingerprint import EvalFingerprint
    from evalops.warehouse import RunKey, record_gold_set_version, record_kb_snapshot, record_run

    engine = create_warehouse_engine(f"sqlite:///{tmp_path / 'old.db'}")
    try:
        upgrade(engine, "5c1e9a7d2b40")  # before the revision that rebuilds eval_runs
        record_gold_set_version(engine, "g1", name="g", n_queries=2, n_judgments=2)
        record_kb_snapshot(engine, "k1", n_documents=2, content_hash="k1")
        fp = EvalFingerprint.of("g1", "k1", ["nDCG@10"], {"k": 10})
        when = dt.datetime(2024, 6, 1, tzinfo=dt.timezone.utc)
        scores = pd.DataFrame({"query_id": ["q1", "q2"], "measure": ["nDCG@10"] * 2, "value": [0.5, 1.0]})
        with engine.begin() as conn:  # an old-schema row, written as the old code wrote it
            conn.execute(text(
                "INSERT INTO eval_fingerprints (hash, gold_set_version, kb_snapshot_id, measures, policies, created_at) "
                "VALUES (:h, 'g1', 'k1', '[\"nDCG@10\"]', '{\"k\": 10}', '2024-06-01 00:00:00+00:00')"), {"h": fp.hash})
            conn.execute(text(
                "INSERT INTO eval_runs (dag_id, dag_run_id, retriever, version, dataset, logical_date, status, "
                "started_at, fingerprint_hash, n_queries, n_failed, failed_query_ids, created_at, updated_at) "
                "VALUES ('d', 'r', 'bm25', '1.0', 'gold', :t, 'succeeded', :t, :h, 2, 0, '[]', :t, :t)"),
                {"t": when.isoformat(), "h": fp.hash})
            conn.execute(text("INSERT INTO measures (name) VALUES ('nDCG@10')"))
            conn.execute(text("INSERT INTO query_scores (run_id, measure_id, query_id, value) "
                              "SELECT r.id, m.id, 'q1', 0.5 FROM eval_runs r, measures m"))
        upgrade(engine)
        assert current_revision(engine) == head_revisions()[0]
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM query_scores")).scalar_one() == 1
            assert conn.execute(text("SELECT n_retries FROM eval_runs")).scalar_one() == 0
            assert conn.execute(text("PRAGMA foreign_key_check")).fetchall() == []
            assert conn.execute(text("PRAGMA foreign_keys")).scalar_one() == 1  # enforced again afterwards
        record_run(engine, RunKey("d", "r2", "bm25", "1.0", "gold"), fingerprint=fp, logical_date=when,
                   status="succeeded", started_at=when, n_queries=2, scores=scores)
    finally:
        engine.dispose()


def test_query_scores_lose_the_run_key_and_on_sqlite_the_rowid_keeping_their_rows(empty_url, backend):
    """Revision a4d2f6b8c1e9: no foreign key from query_scores to eval_runs (a per-row trigger on every COPY),
    and on SQLite a WITHOUT ROWID table (Alembic's comparison sees neither the rowid nor, on SQLite, the
    table's rebuild). Scores written before survive the upgrade and the downgrade, which puts both back.
    (The run is written at the head, whose record_run writes columns of later revisions, then taken down.)"""
    import datetime as dt

    import pandas as pd
    from sqlalchemy import text

    from evalops.fingerprint import EvalFingerprint
    from evalops.warehouse import RunKey, load_scores, record_gold_set_version, record_kb_snapshot, record_run

    def keys() -> list:
        return [(fk["referred_table"], fk["options"].get("ondelete")) for fk in inspect(engine).get_foreign_keys("query_scores")]

    def ddl() -> str:
        with engine.connect() as conn:
            found = conn.execute(text("SELECT sql FROM sqlite_master WHERE name = 'query_scores'")).scalar_one()
        return " ".join(found.split()).upper()

    engine = create_warehouse_engine(empty_url)
    try:
        upgrade(engine)
        record_gold_set_version(engine, "g1", name="g", n_queries=3, n_judgments=3)
        record_kb_snapshot(engine, "k1", n_documents=2, content_hash="k1")
        fp = EvalFingerprint.of("g1", "k1", ["nDCG@10", "P@10"], {"k": 10})
        when = dt.datetime(2024, 6, 1, tzinfo=dt.timezone.utc)
        scores = pd.DataFrame({"query_id": ["q2", "q10", "q1", "q2", "q10", "q1"], "measure": ["P@10"] * 3 + ["nDCG@10"] * 3,
                               "value": [0.1, float("nan"), 0.3, 0.4, 0.5, 0.6]})
        run = record_run(engine, RunKey("d", "r", "bm25", "1.0", "gold"), fingerprint=fp, logical_date=when,
                         status="succeeded", started_at=when, n_queries=3, scores=scores)

        def stored() -> pd.DataFrame:
            return load_scores(engine, run.id).sort_values(["measure", "query_id"], ignore_index=True)

        before = stored()
        assert len(before) == 6
        downgrade(engine, "9f3c5a1e7b42")
        assert keys() == [("eval_runs", "CASCADE")]
        pd.testing.assert_frame_equal(stored(), before)
        upgrade(engine)
        assert keys() == []
        if backend == "sqlite":
            assert ddl().endswith("WITHOUT ROWID") and "REFERENCES" not in ddl()
        pd.testing.assert_frame_equal(stored(), before)
        downgrade(engine, "9f3c5a1e7b42")
        assert keys() == [("eval_runs", "CASCADE")]
        if backend == "sqlite":
            assert "WITHOUT ROWID" not in ddl()
        pd.testing.assert_frame_equal(stored(), before)
    finally:
        engine.dispose()


def test_score_rows_are_written_in_primary_key_order():
    """Measure id, then query id by code point (SQLite's BINARY collation, PostgreSQL's under C)."""
    import numpy as np

    from evalops.warehouse._bulk import primary_key_order

    qids = np.array(["q2", "q10", "Q1", "é", "q1", "q2", "z", "q10"], dtype=object)
    mids = np.array([2, 2, 2, 2, 1, 1, 1, 1])
    order = primary_key_order(mids, qids)
    assert list(zip(mids[order].tolist(), qids[order].tolist())) == sorted(zip(mids.tolist(), qids.tolist()))


def test_the_quick_head_is_alembics_head():
    from evalops.warehouse.migrate import quick_head

    assert quick_head() == head_revisions()[0]


def test_the_quick_head_declines_what_it_cannot_read_plainly(tmp_path, monkeypatch):
    import shutil

    from evalops.warehouse import migrate

    scripts = tmp_path / "migrations"
    shutil.copytree(migrate.MIGRATIONS_DIR, scripts, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(migrate, "MIGRATIONS_DIR", scripts)
    (head,) = head_revisions()
    second = scripts / "versions" / "second_head.py"
    second.write_text(f"revision: str = 'b0b0b0b0b0b0'\ndown_revision: str | None = '{head}'\n")
    assert migrate.quick_head() == "b0b0b0b0b0b0"
    second.write_text("revision = 'b0b0b0b0b0b0'\ndown_revision = ('a', 'b')\n")  # a merge revision
    assert migrate.quick_head() is None
    second.write_text("revision = 'b0b0b0b0b0b0'\ndown_revision = '07f3ed2060d6'\n")  # a second head
    assert migrate.quick_head() is None


def test_upgrading_a_warehouse_at_the_head_does_not_run_alembic(empty_url, monkeypatch):
    from alembic import command

    from evalops.warehouse import migrate
    from evalops.warehouse.migrate import stamp

    def refuse(*_args, **_kwargs):
        raise AssertionError("alembic's upgrade ran")

    engine = create_warehouse_engine(empty_url)
    try:
        upgrade(engine)
        monkeypatch.setattr(command, "upgrade", refuse)
        upgrade(engine)  # at the head: one query, no Alembic
        assert migrate.at_head(engine)
        stamp(engine, "9f3c5a1e7b42")
        assert not migrate.at_head(engine) and current_revision(engine) == "9f3c5a1e7b42"
        with pytest.raises(AssertionError, match="alembic's upgrade ran"):
            upgrade(engine)
    finally:
        engine.dispose()


def test_an_ab_test_stored_without_its_record_gets_it_from_its_columns(empty_url, backend):
    """Revision f2a9c4e7b1d6: the readers read a comparison from ``record`` alone, so a row stored before
    that column (``record`` NULL, written at the previous head as the old code wrote it) gets the record its
    columns hold, and a row stored with its record keeps it; ``record`` is then NOT NULL."""
    import json

    from sqlalchemy import text
    from warehouse_helpers import Seeder

    from evalops.warehouse import ab_test_results
    from tests.conftest import comparison_of

    engine = create_warehouse_engine(empty_url)
    try:
        upgrade(engine, "e6b1d3f5a7c9")  # the previous head
        seed = Seeder(engine)
        base, cand = seed.run("v1"), seed.run("v2")
        kept = comparison_of(measure="P@5", baseline_name="bm25@v1", candidate_name="bm25@v2", n=3,
                             decision="no_change", notes=["kept"], policy={"alpha": 0.1})
        stored_record = json.dumps({k: v for k, v in kept.to_record().items() if k != "deltas"})
        with engine.begin() as conn:  # rows as the code of that head wrote them (the old one: columns only)
            conn.execute(text("INSERT INTO measures (name) VALUES ('nDCG@10'), ('P@5')"))
            for measure, record in (("P@5", stored_record), ("nDCG@10", None)):
                conn.execute(text(
                "INSERT INTO ab_tests (baseline_run_id, candidate_run_id, measure_id, n, baseline_mean, "
                "candidate_mean, delta, delta_ci_low, delta_ci_high, ci_level, test, p_value, p_adjusted, d_z, "
                "d_z_ci_low, d_z_ci_high, "
                "wins, ties, losses, decision, reasons, policy, created_at, severity, criterion, margin, interval_low, "
                "interval_high, interval_level, family_size, family, record) SELECT :b, :c, m.id, 40, 0.6, 0.5, "
                "-0.1, -0.15, -0.05, 0.95, 't', 0.001, 0.002, -0.5, -0.8, -0.2, 5, 10, 25, 'regression', "
                "'[\"a material drop\"]', "
                "'{\"alpha\": 0.05, \"alert_on\": \"critical\", \"min_effect\": 0.2}', '2024-05-01 03:00:00+00:00', "
                "'critical', 'material', 0.02, -0.16, -0.04, 0.975, 2, 'gold', :record FROM measures m "
                "WHERE m.name = :measure"), {"b": base.id, "c": cand.id, "record": record, "measure": measure})
        upgrade(engine)
        assert current_revision(engine) == head_revisions()[0]
        assert not {c["name"]: c for c in inspect(engine).get_columns("ab_tests")}["record"]["nullable"]
        stored = {r.comparison.measure: r for r in ab_test_results(engine, candidate_run_id=cand.id,
                                                                   baseline_run_id=base.id)}
        assert stored["P@5"].comparison.to_record() == kept.to_record()  # a row with its record keeps it
        old = stored["nDCG@10"]
        c = old.comparison
        assert (old.family, c.baseline_name, c.candidate_name, c.n) == ("gold", "bm25@v1", "bm25@v2", 40)
        assert (c.delta, c.interval_low, c.interval_high, c.p_adjusted, c.effect_size_dz) == (
            -0.1, -0.16, -0.04, 0.002, -0.5)
        assert (c.effect_size_ci, c.decision, c.severity, c.reasons, c.family_size) == (
            (-0.8, -0.2), "regression", "critical", ("a material drop",), 2)
        assert c.alert and c.higher_is_better and c.worst_queries == () and c.notes == ()
        assert c.policy.alpha == 0.05 and c.policy.alert_on == "critical"  # min_effect left out of the record
        old_row = "FROM ab_tests a JOIN measures m ON m.id = a.measure_id WHERE m.name = 'nDCG@10'"
        with engine.connect() as conn:  # the column keeps the policy as it was stored
            assert "min_effect" in str(conn.execute(text(f"SELECT a.policy {old_row}")).scalar_one())
        # a7c3e5f1d9b2: the record is stored once, beside the columns SQL reads (and b8d4f2a6c0e3's judge run);
        # its downgrade puts the copies back
        columns = {c["name"] for c in inspect(engine).get_columns("ab_tests")}
        assert columns == {"id", "baseline_run_id", "candidate_run_id", "measure_id", "decision", "policy",
                           "created_at", "family", "segments", "record", "judge_run_id"}
        downgrade(engine, "f2a9c4e7b1d6")
        with engine.connect() as conn:
            copied = conn.execute(text(f"SELECT a.n, a.delta, a.d_z, a.d_z_ci_high, a.ci_level, a.severity "
                                       f"{old_row}")).one()
        assert tuple(copied) == (40, -0.1, -0.5, -0.2, 0.95, "critical")
        downgrade(engine, "e6b1d3f5a7c9")
        assert {c["name"]: c for c in inspect(engine).get_columns("ab_tests")}["record"]["nullable"]
    finally:
        engine.dispose()


def _judge_migration():
    """The module of revision b8d4f2a6c0e3 (its data moves, run here a second time)."""
    import importlib.util

    from evalops.warehouse.migrate import MIGRATIONS_DIR

    (path,) = MIGRATIONS_DIR.glob("versions/*_b8d4f2a6c0e3_*.py")
    spec = importlib.util.spec_from_file_location("judge_label_comparisons_are_ab_tests", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_judge_comparisons_move_from_judge_runs_into_ab_tests_and_back(empty_url, backend):
    """Revision b8d4f2a6c0e3: the comparisons a judge step kept in ``judge_runs.results["comparisons"]`` (its
    public view, with family, look and, on the production sample, the policy key) become ``ab_tests`` rows
    naming the judge run; the human-label readers do not see them; a second pass adds no rows; one whose runs
    are gone stays; the downgrade puts back exactly what was there."""
    from sqlalchemy import JSON, column, func, select, table, text, update
    from warehouse_helpers import Seeder

    from evalops.warehouse import ab_test_results, load_ab_tests
    from evalops.warehouse.abtests import judge_ab_tests
    from evalops.warehouse.judgments import load_judge_runs, record_judge_run
    from evalops.warehouse.looks import policy_key
    from tests.conftest import comparison_of

    def view(scope, measure, delta, **beside):
        c = comparison_of(measure=measure, baseline_name="bm25@v1", candidate_name="bm25@v2", n=30, delta=delta,
                          p_value=0.01, p_adjusted=0.02, decision="regression", reasons=["a drop"],
                          policy={"alpha": 0.1, "seed": 7})
        out = {**c.to_dict(), "family": f"judge-{scope}", **beside}
        if scope == "production":
            out["policy"] = policy_key(c.policy.to_dict())
        return out

    engine = create_warehouse_engine(empty_url)
    try:
        upgrade(engine, "a7c3e5f1d9b2")  # the previous head
        seed = Seeder(engine)
        fp = seed.fingerprint()
        runs = {(d, v): seed.run(v, dataset=d, dag_run_id="d1", fingerprint=fp).id
                for d in ("gold", "production") for v in ("v1", "v2")}
        gone = {**view("gold", "judge:P@5", -0.2, look=None), "candidate": "bm25@v9"}
        stored = {
            "gold": {"policy": {"pool": "union"}, "versions": {"v1": {"P@5": 0.5}}, "per_query": {"v1": {}},
                     "families": {"judge-gold": {"size": 2, "looks": {}}}, "excluded_queries": [],
                     "comparisons": [view("gold", "judge:nDCG@5", -0.1, look=None),
                                     view("gold", "judge:P@5", 0.05, look=None), gone]},
            "production": {"families": {"judge-production": {"size": 1, "looks": {"bm25@v2": 3}}},
                           "comparisons": [view("production", "judge:nDCG@5", -0.3, look=3)]},
        }
        ids = {scope: record_judge_run(engine, dag_id="retrieval_eval", dag_run_id="d1", scope=scope, values={
            "judge": {"model": "m", "kind": "llm"}, "prompt": "p@1", "items": 4, "requests": 4, "cache_hits": 0,
            "input_tokens": 1, "output_tokens": 1, "cost": 0.0, "missing": 0, "missing_reasons": {},
            "gate": {"status": "alerting", "reason": "kappa"}, "agreement": None, "results": results})
            for scope, results in stored.items()}

        upgrade(engine)
        assert current_revision(engine) == head_revisions()[0]
        moved = judge_ab_tests(engine, ids.values())
        gold, production = moved[ids["gold"]], moved[ids["production"]]
        assert [(r.comparison.measure, r.comparison.delta, r.family) for r in gold] == [
            ("judge:nDCG@5", -0.1, "judge-gold"), ("judge:P@5", 0.05, "judge-gold")]
        assert {(r.candidate_run_id, r.baseline_run_id) for r in gold} == {(runs["gold", "v2"], runs["gold", "v1"])}
        (p,) = production
        assert (p.candidate_run_id, p.judge_run_id, p.comparison.decision) == (
            runs["production", "v2"], ids["production"], "regression")
        assert p.comparison.policy.alpha == 0.1  # the production comparison's policy key is its policy
        results = load_judge_runs(engine).set_index("scope")["results"]
        assert results["gold"]["comparisons"] == [gone]  # its runs are not in the warehouse: it stays
        assert "comparisons" not in results["production"]
        # the readers of the fingerprint's labels never see a judge-label comparison
        assert ab_test_results(engine, candidate_run_id=runs["gold", "v2"], baseline_run_id=runs["gold", "v1"]) == []
        assert len(load_ab_tests(engine)) == 0

        def count() -> int:
            with engine.connect() as conn:
                return int(conn.execute(select(func.count()).select_from(text("ab_tests"))).scalar_one())

        module = _judge_migration()
        with engine.begin() as conn:  # a second pass, over the comparison that stayed: no row added
            assert module.move_into_ab_tests(conn) == 0
        assert count() == 3

        downgrade(engine, "a7c3e5f1d9b2")
        assert "judge_run_id" not in {c["name"] for c in inspect(engine).get_columns("ab_tests")}
        assert count() == 0
        back = load_judge_runs(engine).set_index("scope")["results"]
        assert back["production"] == stored["production"]
        assert back["gold"]["comparisons"] == [gone, *stored["gold"]["comparisons"][:2]]

        judge_runs = table("judge_runs", column("id"), column("results", JSON()))
        with engine.begin() as conn:  # as first stored, and upgraded again: the same rows
            conn.execute(update(judge_runs).where(judge_runs.c.id == ids["gold"]).values(results=stored["gold"]))
        upgrade(engine)
        upgrade(engine)  # at the head: nothing runs
        assert count() == 3
    finally:
        engine.dispose()
