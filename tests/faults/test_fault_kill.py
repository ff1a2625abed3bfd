"""SIGKILL at each write stage, then the next day's run: no `running` row is left, nothing half-written is
read as a result, and every alert reaches the receiver exactly once."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from tests.faults.servers import Webhook, dead_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600, method="thread")]  # a hang guard for two pipeline runs

REPO = Path(__file__).resolve().parents[2]
INCLUDE = REPO / "include"
DRIVER = Path(__file__).with_name("kill_driver.py")
STAGES = ["after_plan", "mid_score", "in_final_write", "after_first_compare", "in_alert_delivery"]


@pytest.mark.parametrize("stage", STAGES)
def test_a_run_killed_at_a_write_stage_leaves_nothing_running_after_the_next_run(stage, tmp_path):
    from sqlalchemy import func, select

    from evalops.config import load_config
    from evalops.pipeline import IncompleteRunError, RunContext, run_local
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import list_alerts
    from evalops.warehouse.models import EvalRunModel, QueryScoreModel

    overlay = tmp_path / "down.yaml"  # a dead service: its version fails and raises an alert
    overlay.write_text(yaml.safe_dump({"retrievers": [{
        "name": "handbook-search", "version": "9.9-down", "adapter": "http", "deployed": True, "owner": "tests",
        "params": {"url": f"http://127.0.0.1:{dead_port()}/search", "timeout": 1, "max_retries": 0},
    }]}))
    env = {
        "EVALOPS_HOME": str(tmp_path), "EVALOPS_GOLD_SET": str(INCLUDE / "goldset"),
        "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"), "EVALOPS_REGISTRY": str(INCLUDE / "retrievers.yaml"),
        "EVALOPS_RETRIEVERS_OVERLAY": str(overlay), "EVALOPS_LOG_SAMPLE_SIZE": "0",
    }
    hook = Webhook([("ok",)])
    try:
        child_env = {k: v for k, v in os.environ.items() if not k.startswith("EVALOPS_")}
        child_env.update(EVALOPS_WEBHOOK_URL=hook.url, PYTHONPATH=str(REPO))
        killed = subprocess.run(
            [sys.executable, str(DRIVER), stage, "2024-05-30", json.dumps({**env, "EVALOPS_RUN_LEASE_SECONDS": "1"})],
            env=child_env, capture_output=True, text=True, timeout=300,
        )
        assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
        time.sleep(1.5)  # the killed run's lease (1 s) expires

        os.environ["EVALOPS_WEBHOOK_URL"] = hook.url
        try:
            cfg = load_config(tmp_path, environ=env)
            with pytest.raises(IncompleteRunError, match="9.9-down"):
                run_local(cfg, RunContext.for_day("2024-05-31"))
        finally:
            del os.environ["EVALOPS_WEBHOOK_URL"]
    finally:
        hook.stop()

    engine = engine_for(cfg)
    runs = EvalRunModel.__table__
    scores = QueryScoreModel.__table__
    with engine.connect() as conn:
        rows = conn.execute(select(runs.c.id, runs.c.version, runs.c.status, runs.c.abandoned_at,
                                   runs.c.dag_run_id)).all()
        scored = dict(conn.execute(select(scores.c.run_id, func.count()).group_by(scores.c.run_id)).all())
    assert rows and not [r for r in rows if r.status == "running"], rows
    for r in rows:
        if r.status == "abandoned":
            assert r.abandoned_at is not None and scored.get(r.id, 0) == 0  # nothing half-written kept
    day2 = [r for r in rows if r.dag_run_id.endswith("2024-05-31")]
    assert {r.version: r.status for r in day2} == {"1.0": "succeeded", "9.9-down": "failed"}
    if stage in ("after_plan", "mid_score", "in_final_write"):
        assert {r.status for r in rows if r not in day2} == {"abandoned"}

    alerts = list_alerts(engine)
    assert set(alerts["delivery_status"]) == {"delivered"}
    counts = collections.Counter(r["key"] for r in hook.received)
    assert counts and set(counts.values()) == {1}, counts  # exactly one distinct key per alert at the receiver
    assert len(counts) == len(alerts)
