"""A run's decisions live in the warehouse (``ab_tests``, each row with the comparison's whole record): after
the work folder is lost, the report, the alerts, the results event and the gate read every decision, worst
queries included, from there; a row stored before ``ab_tests.record`` existed falls back to its columns; with
the decisions gone from the warehouse too, the gate fails closed (``missing``, exit 7) naming the comparison
it cannot find.

Day 1 scores and promotes handbook-search 1.0 on the sample data in include/; day 2 deploys the planted
regression (2.0-truncated: BM25 over half the knowledge base).
"""

from __future__ import annotations

import shutil

import pytest

from tests.cli.test_gate import DAY1, DAY2, _registry
from tests.dags.conftest import INCLUDE

pytestmark = pytest.mark.slow


def _specs(result):
    """The typed version specs of a run's result (``run_local`` returns their JSON form)."""
    from evalops.pipeline.specs import VersionSpec

    return [VersionSpec.from_xcom(v) for v in result["versions"]]

def _day2(tmp_path):
    from evalops.config import load_config
    from evalops.pipeline import RunContext, run_local
    from evalops.pipeline.promotion import promote

    env = {"EVALOPS_HOME": str(tmp_path), "EVALOPS_WAREHOUSE_URL": f"sqlite:///{tmp_path / 'warehouse.db'}",
           "EVALOPS_GOLD_SET": str(INCLUDE / "goldset"), "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"),
           "EVALOPS_REGISTRY": _registry(tmp_path / "day1.yaml", {"1.0"}), "EVALOPS_LOG_SAMPLE_SIZE": "0"}
    run_local(load_config(tmp_path, environ=env), RunContext.for_day(DAY1))
    promote(load_config(tmp_path, environ=env), retriever="handbook-search", version="1.0", promoted_by="test",
            reason="the deployed version")
    env["EVALOPS_REGISTRY"] = _registry(tmp_path / "day2.yaml", {"1.0", "2.0-truncated"})
    cfg = load_config(tmp_path, environ=env)
    day2 = RunContext.for_day(DAY2)
    return cfg, day2, run_local(cfg, day2)


def _seen(cfg, day2, result):
    """What each reader makes of the run's decisions: the report's rows, the regression alerts, the results
    event's decisions and the gate's cases with its exit code."""
    from evalops.gate import cases_for_run, gate_exit_code
    from evalops.pipeline.alerts import regression_alerts_for
    from evalops.pipeline.deciding import load_decisions
    from evalops.pipeline.env import run_env
    from evalops.pipeline.publishing import build_report_data
    from evalops.pipeline.results import result_event
    from evalops.pipeline.store import engine_for

    versions = _specs(result)
    env = run_env(cfg)
    report = build_report_data(env, day2, versions, result["alerts"])
    rows = [(r.candidate_version, r.query_set, r.comparison.measure, r.comparison.decision, r.family,
             r.comparison.delta, r.comparison.p_adjusted, tuple(q["query_id"] for q in r.worst_queries))
            for r in report.ab_results]
    decisions = load_decisions(engine_for(cfg), versions)
    alerts = sorted((a.dedup_key, a.message) for a in regression_alerts_for(env, day2, decisions))
    event = result_event(env, day2, versions, result["alerts"], result["report"])["decisions"]
    cases = cases_for_run(cfg, day2, result)
    return rows, alerts, event, [(c.version, c.measure, c.outcome, c.kind, c.decision) for c in cases], \
        int(gate_exit_code(cases))


def test_a_lost_work_folder_loses_no_decision_and_the_gate_fails_closed_without_the_warehouse_rows(tmp_path):
    from sqlalchemy import delete, select, update

    from evalops.exitcodes import ExitCode
    from evalops.gate import cases_for_run, gate_exit_code
    from evalops.pipeline.store import engine_for
    from evalops.pipeline.workdir import work_root
    from evalops.warehouse.models import ABTestModel, AlertModel

    cfg, day2, result = _day2(tmp_path)
    before = _seen(cfg, day2, result)
    rows, alerts, event, cases, code = before
    assert code == ExitCode.REGRESSION and len(alerts) == 1
    assert {("2.0-truncated", m) for m in ("nDCG@10", "RR@10", "R@100")} <= {(r[0], r[2]) for r in rows}
    assert len(event) == len(rows) > 0

    def worst(version="2.0-truncated", measure="nDCG@10"):
        from evalops.pipeline.deciding import load_decisions

        [d] = [d for d in load_decisions(engine_for(cfg), _specs(result))
               if (d.version, d.comparison.measure) == (version, measure)]
        return d.comparison.worst_queries

    assert worst()  # the details no column holds come with the row's record
    assert any(r[-1] for r in rows) and all("worst" in m.lower() for _, m in alerts)

    shutil.rmtree(work_root(cfg))
    assert not any(work_root(cfg).rglob("*.json"))
    assert _seen(cfg, day2, result) == before  # every decision, alert, verdict and worst query, from the warehouse
    assert worst()

    candidate = next(s for s in result["versions"] if s["version"] == "2.0-truncated")
    ab_tests, alerts = ABTestModel.__table__, AlertModel.__table__
    # (rows stored before ab_tests.record existed get their record when the warehouse is upgraded:
    # tests/warehouse/test_warehouse_migrations.py)
    lost = select(ab_tests.c.id).where(ab_tests.c.candidate_run_id == candidate["run_id"])
    with engine_for(cfg).begin() as conn:  # the rows gone (the alert keeps its text, not its link)
        conn.execute(update(alerts).where(alerts.c.ab_test_id.in_(lost)).values(ab_test_id=None))
        conn.execute(delete(ab_tests).where(ab_tests.c.candidate_run_id == candidate["run_id"]))
    cases = cases_for_run(cfg, day2, result)
    missing = [c for c in cases if c.kind == "missing"]
    assert gate_exit_code(cases) == ExitCode.WAREHOUSE_ERROR == 7
    assert {(c.version, c.measure, c.outcome) for c in missing} == {
        ("2.0-truncated", m, "error") for m in ("nDCG@10", "RR@10", "R@100")}
    assert all(f"baseline run {candidate['baseline_run_id']}) cannot be found in the warehouse" in c.message
               for c in missing)
