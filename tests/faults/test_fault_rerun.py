"""SIGKILL a re-run of a finished day at every step: the day, its history and its baseline stay as they were.

A re-run of a finished day only opens attempts beside its runs (``evalops.warehouse.record_run``); killed
at any step (plan, score, the final write, compare, decide, alerts, report), `evalops history` shows the day
as before, the baseline still names the same succeeded run, the next day's run (which gives up expired
leases) leaves the day alone, and a re-run after that re-does the day cleanly. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from tests.warehouse.warehouse_helpers import scratch_pg_database

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900, method="thread")]  # a hang guard for four runs

REPO = Path(__file__).resolve().parents[2]
INCLUDE = REPO / "include"
DRIVER = Path(__file__).with_name("kill_driver.py")
DAY, NEXT_DAY = "2024-05-30", "2024-05-31"
STAGES = ["after_plan", "mid_score", "in_final_write", "after_first_compare", "after_decide", "after_alerts",
          "after_report"]
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
# Read at import, as tests/pipeline/test_pipeline_postgres.py does.
_TEST_URL = os.environ.get("EVALOPS_TEST_POSTGRES_URL")


@pytest.fixture(params=BACKENDS)
def warehouse_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'warehouse.db'}"
        return
    if not _TEST_URL:
        pytest.skip("EVALOPS_TEST_POSTGRES_URL is not set")
    with scratch_pg_database(_TEST_URL, "evalops_rerun") as url:
        yield url


def history(url: str, *args: str) -> list[dict]:
    """`evalops history` as JSON, without the times a re-done run changes (started_at, finished_at)."""
    from evalops.cli import main

    out = CliRunner().invoke(main, ["history", "--url", url, *args, "--format", "json"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    return [{k: v for k, v in row.items() if k not in ("started_at", "finished_at")} for row in json.loads(out.output)]


def day_rows(url: str) -> list[tuple]:
    from sqlalchemy import create_engine, select

    from evalops.warehouse.models import EvalRunModel

    runs = EvalRunModel.__table__
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(
                select(runs.c.id, runs.c.version, runs.c.status, runs.c.lease_expires_at, runs.c.attempt_started_at)
                .where(runs.c.dag_run_id == f"cli__{DAY}").order_by(runs.c.id))]
    finally:
        engine.dispose()


def the_baseline(cfg):
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import get_run
    from evalops.warehouse.baselines import baseline_history_rows

    engine = engine_for(cfg)
    (current,) = [b for b in baseline_history_rows(engine, "handbook-search") if b["is_current"]]
    return current["id"], current["run_id"], get_run(engine, current["run_id"]).status


@pytest.mark.parametrize("stage", STAGES)
def test_a_killed_re_run_of_a_finished_day_leaves_the_day_and_its_baseline(stage, warehouse_url, tmp_path):
    from evalops.config import load_config
    from evalops.pipeline import RunContext, promote, run_local

    overlay = tmp_path / "more.yaml"  # a second deployed version, compared with the baseline
    overlay.write_text(yaml.safe_dump({"retrievers": [{
        "name": "handbook-search", "version": "1.1", "adapter": "builtin", "deployed": True, "owner": "tests",
        "params": {"kind": "bm25", "k1": 1.2, "b": 0.75, "tokenizer": {"chinese": "whole"}},
    }]}))
    env = {
        "EVALOPS_HOME": str(tmp_path), "EVALOPS_GOLD_SET": str(INCLUDE / "goldset"),
        "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"), "EVALOPS_REGISTRY": str(INCLUDE / "retrievers.yaml"),
        "EVALOPS_RETRIEVERS_OVERLAY": str(overlay), "EVALOPS_LOG_SAMPLE_SIZE": "0",
        "EVALOPS_WAREHOUSE_URL": warehouse_url,
    }
    cfg = load_config(tmp_path, environ=env)
    run_local(cfg, RunContext.for_day(DAY))
    promote(cfg, retriever="handbook-search", version="1.0", reason="the finished day", promoted_by="tests")
    latest, day_history = history(warehouse_url), history(warehouse_url, "-m", "nDCG@10")
    baseline = the_baseline(cfg)
    finished = day_rows(warehouse_url)
    assert baseline[2] == "succeeded" and {r[2] for r in finished} == {"succeeded"} and len(finished) == 2

    child_env = {k: v for k, v in os.environ.items() if not k.startswith("EVALOPS_")}
    child_env["PYTHONPATH"] = str(REPO)
    killed = subprocess.run(
        [sys.executable, str(DRIVER), stage, DAY, json.dumps({**env, "EVALOPS_RUN_LEASE_SECONDS": "1"})],
        env=child_env, capture_output=True, text=True, timeout=300,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert history(warehouse_url) == latest  # the day reads as before
    assert the_baseline(cfg) == baseline
    assert {r[2] for r in day_rows(warehouse_url)} == {"succeeded"}

    time.sleep(1.5)  # the killed attempts' lease (1 s) expires; the next day's run gives them up
    run_local(cfg, RunContext.for_day(NEXT_DAY))
    assert [r[:3] + (r[3], r[4]) for r in day_rows(warehouse_url)] == [r[:3] + (None, None) for r in finished]
    assert [r for r in history(warehouse_url, "-m", "nDCG@10") if r["logical_date"].startswith(DAY)] == day_history
    assert the_baseline(cfg) == baseline

    run_local(cfg, RunContext.for_day(DAY))  # a re-run re-does the day cleanly, in the same rows
    assert [r[:3] for r in day_rows(warehouse_url)] == [r[:3] for r in finished]
    assert [r for r in history(warehouse_url, "-m", "nDCG@10") if r["logical_date"].startswith(DAY)] == day_history
    assert the_baseline(cfg) == baseline


def test_a_run_stopped_by_an_error_gives_up_its_runs_at_once(tmp_path, monkeypatch):
    """Not killed but stopped by an error after planning: a run that never finished is `abandoned` with the
    cause at once, and a re-run's attempts are dropped, the finished day untouched (no lease to wait out)."""
    import evalops.pipeline.local as local
    from evalops.config import load_config
    from evalops.pipeline import RunContext, run_local

    url = f"sqlite:///{tmp_path / 'warehouse.db'}"
    cfg = load_config(tmp_path, environ={
        "EVALOPS_HOME": str(tmp_path), "EVALOPS_GOLD_SET": str(INCLUDE / "goldset"),
        "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"), "EVALOPS_REGISTRY": str(INCLUDE / "retrievers.yaml"),
        "EVALOPS_LOG_SAMPLE_SIZE": "0", "EVALOPS_WAREHOUSE_URL": url,
    })

    def broken(*args, **kwargs):
        raise RuntimeError("the comparison broke")

    with monkeypatch.context() as patch:
        patch.setattr(local, "compare_version", broken)
        with pytest.raises(RuntimeError, match="the comparison broke"):
            run_local(cfg, RunContext.for_day(DAY))
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import get_run

    ((run_id, *_),) = day_rows(url)
    stopped = get_run(engine_for(cfg), run_id)
    assert stopped.status == "abandoned" and stopped.lease_expires_at is None
    assert stopped.error == "abandoned: the run stopped before finishing: RuntimeError: the comparison broke"

    run_local(cfg, RunContext.for_day(DAY))  # the day, finished
    finished = day_rows(url)
    with monkeypatch.context() as patch:
        patch.setattr(local, "compare_version", broken)
        with pytest.raises(RuntimeError):
            run_local(cfg, RunContext.for_day(DAY))
    assert day_rows(url) == finished  # succeeded, no lease, no attempt: as it was
    assert get_run(engine_for(cfg), run_id).error is None
