"""``evalops gate`` after the work folder is deleted, through the command line.

The work folder holds a run's intermediate files (shard scores, comparison files); the warehouse holds its
results and decisions (``ab_tests``). ``evalops gate`` runs the day's steps again (each is idempotent: the
same warehouse runs, the same ``ab_tests`` rows replaced) and then judges from the warehouse. So a deleted
work folder is re-created, and the verdict is the one the folder's presence gives: the planted regression
still fails the gate (exit 4) with a message naming it, and the report lists every decision the warehouse
holds. A CI runner starts with no work folder at all; it must get the same answer.

When a decision the run should have stored cannot be found in the warehouse (its row deleted, and the
re-run's write of it lost), the gate fails closed: exit 7, one ``error`` case naming the comparison, and the
report still lists every decision the warehouse holds.

Day 1 scores and promotes handbook-search 1.0 on the sample data in include/; day 2 deploys the planted
regression (2.0-truncated: BM25 over half the knowledge base).
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode
from tests.cli.test_gate import DAY1, DAY2, _registry, project_env

pytestmark = pytest.mark.slow

MEASURES = ("nDCG@10", "RR@10", "R@100")


@pytest.fixture
def project(tmp_path):
    """Day 1 scored and 1.0 promoted, day 2 (the regression) run with ``evalops run``; yields (home, env)."""
    env = project_env(tmp_path)
    runner = CliRunner()
    assert runner.invoke(main, ["run", "--date", DAY1], env=env).exit_code == 0
    promoted = runner.invoke(main, ["promote", "handbook-search", "1.0", "--reason", "day 1", "--by", "tests"], env=env)
    assert promoted.exit_code == 0, promoted.output
    env["EVALOPS_REGISTRY"] = _registry(tmp_path / "day2.yaml", {"1.0", "2.0-truncated"})
    ran = runner.invoke(main, ["run", "--date", DAY2], env=env)
    assert ran.exit_code == 0, ran.output
    return tmp_path, env


def _config(home: Path, env: dict):
    from evalops.config import load_config

    return load_config(home, environ={k: v for k, v in env.items() if v is not None})


def _work_folder(home: Path, env: dict) -> Path:
    from evalops.pipeline.workdir import work_root

    folder = work_root(_config(home, env))
    assert folder.is_dir() and any(folder.rglob("*.parquet"))  # the shard scores `evalops run` wrote
    return folder


def _stored_decisions(home: Path, env: dict) -> set[tuple[str, str, str, str]]:
    """(retriever, version, measure, decision) of every decision of day 2 in the warehouse's ``ab_tests``."""
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import get_run, load_ab_tests

    engine = engine_for(_config(home, env))
    out = set()
    for row in load_ab_tests(engine).to_dict("records"):
        run = get_run(engine, int(row["candidate_run_id"]))
        if f"{run.logical_date:%Y-%m-%d}" == DAY2:
            out.add((run.key.retriever, run.key.version, row["measure"], row["decision"]))
    return out


def _gate(env: dict, *args: str):
    junit = ("--junit-xml", str(Path(env["EVALOPS_HOME"]) / "junit.xml"))  # not the working folder's default
    return CliRunner().invoke(main, ["gate", "--date", DAY2, "--format", "json", *junit, *args], env=env)


def _report_lists(report: Path, decisions) -> None:
    text = report.read_text()
    for retriever, version, measure, decision in decisions:
        assert f"- {retriever} {version} {measure} (gold): {decision}:" in text, (version, measure)


def test_the_gate_after_the_work_folder_is_deleted_gives_the_verdict_the_folder_gave(project):
    home, env = project
    kept = _gate(env)
    assert kept.exit_code == ExitCode.REGRESSION, kept.output
    before = json.loads(kept.stdout)  # the steps go to stderr

    shutil.rmtree(_work_folder(home, env))
    gated = _gate(env)
    assert gated.exit_code == ExitCode.REGRESSION == 4, gated.output  # non-zero, naming the regression
    after = json.loads(gated.stdout)
    assert after["gate"] == before["gate"]  # every case, message and number as with the folder
    [failing] = [c for c in after["gate"]["cases"] if c["outcome"] != "passed"]
    assert (failing["version"], failing["measure"], failing["kind"]) == ("2.0-truncated", "nDCG@10", "regression")
    assert failing["message"].startswith("regression (critical): nDCG@10 0.6433 -> 0.3640")
    assert _work_folder(home, env).is_dir()  # the day's steps ran again and wrote it anew

    decisions = _stored_decisions(home, env)
    assert {(v, m) for _, v, m, _ in decisions} == {("2.0-truncated", m) for m in MEASURES}
    _report_lists(Path(after["report"]).with_suffix(".md"), decisions)


def test_a_decision_missing_from_the_warehouse_fails_the_gate_closed_naming_it(project, monkeypatch):
    """The candidate's nDCG@10 decision is deleted from ``ab_tests`` and the gate's re-run cannot store it
    again (its write is lost): the gate cannot tell, so it errors with exit 7 naming the comparison."""
    import evalops.pipeline.deciding
    from sqlalchemy import delete, select, update

    from evalops.pipeline.store import engine_for
    from evalops.warehouse.models import ABTestModel, AlertModel, MeasureModel

    home, env = project
    store = evalops.pipeline.deciding.record_ab_tests  # the decide step's write
    monkeypatch.setattr(evalops.pipeline.deciding, "record_ab_tests", lambda engine, results: store(
        engine, [r for r in results if r.comparison.measure != "nDCG@10"]))
    ab_tests, alerts, measures = ABTestModel.__table__, AlertModel.__table__, MeasureModel.__table__
    lost = select(ab_tests.c.id).where(ab_tests.c.measure_id.in_(
        select(measures.c.id).where(measures.c.name == "nDCG@10")))
    with engine_for(_config(home, env)).begin() as conn:  # the alert keeps its text, not its link
        conn.execute(update(alerts).where(alerts.c.ab_test_id.in_(lost)).values(ab_test_id=None))
        conn.execute(delete(ab_tests).where(ab_tests.c.id.in_(lost)))
    shutil.rmtree(_work_folder(home, env))

    junit = home / "junit.xml"
    gated = _gate(env)
    assert gated.exit_code == ExitCode.WAREHOUSE_ERROR == 7, gated.output
    payload = json.loads(gated.stdout)
    [missing] = [c for c in payload["gate"]["cases"] if c["outcome"] != "passed"]
    assert (missing["version"], missing["measure"], missing["outcome"], missing["kind"]) == (
        "2.0-truncated", "nDCG@10", "error", "missing")
    assert missing["message"].startswith("missing: the nDCG@10 comparison of handbook-search 2.0-truncated "
                                         "against 1.0 (baseline run ")
    assert missing["delta"] is None and missing["decision"] is None
    [error] = ET.parse(junit).getroot().iter("error")
    assert error.get("type") == "missing" and "nDCG@10 comparison" in error.get("message")

    decisions = _stored_decisions(home, env)
    assert {(v, m) for _, v, m, _ in decisions} == {("2.0-truncated", m) for m in ("RR@10", "R@100")}
    _report_lists(Path(payload["report"]).with_suffix(".md"), decisions)
