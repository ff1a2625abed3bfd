"""Failures through the pipeline on a real (SQLite) warehouse: a dead webhook, a dead retriever."""

from __future__ import annotations

import pytest
import yaml

from evalops.alerting import validation_alert
from tests.alerting.hook_server import dead_url, hook_server, url_of
from tests.dags.conftest import INCLUDE

pytestmark = pytest.mark.slow


def _env(tmp_path, **extra):
    return {
        "EVALOPS_HOME": str(tmp_path),
        "EVALOPS_GOLD_SET": str(INCLUDE / "goldset"),
        "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"),
        "EVALOPS_REGISTRY": str(INCLUDE / "retrievers.yaml"),
        "EVALOPS_LOG_SAMPLE_SIZE": "0",
        **extra,
    }


def test_dead_webhook_leaves_the_alert_stored_and_undelivered(tmp_path, monkeypatch):
    from evalops.config import load_config
    from evalops.pipeline.notify import deliver
    from evalops.pipeline.store import engine_for, migrate_warehouse
    from evalops.warehouse import list_alerts

    cfg = load_config(tmp_path, environ=_env(tmp_path))
    migrate_warehouse(cfg)
    alert = validation_alert(stage="gold_set", summary="2 duplicate judgments", day="2024-06-01")

    monkeypatch.setenv("EVALOPS_WEBHOOK_URL", dead_url())
    (outcome,) = deliver(cfg.alerting, engine_for(cfg), [alert])
    stored = list_alerts(engine_for(cfg))
    assert not outcome.delivered
    assert list(stored["delivery_status"]) == ["undelivered"]
    error = stored["delivery_error"].iloc[0]
    assert "webhook unreachable" in error and "s3cr3t" not in error

    with hook_server() as server:  # the webhook is back: the stored alert is sent, not stored again
        monkeypatch.setenv("EVALOPS_WEBHOOK_URL", url_of(server))
        (outcome,) = deliver(cfg.alerting, engine_for(cfg), [alert])
        assert outcome.delivered and len(server.received) == 1
    stored = list_alerts(engine_for(cfg))
    assert list(stored["delivery_status"]) == ["delivered"] and list(stored["delivery_attempts"]) == [2]


def test_a_dead_retriever_fails_its_version_alerts_and_fails_the_run_after_the_report(tmp_path):
    from evalops.config import load_config
    from evalops.pipeline import IncompleteRunError, RunContext, run_local
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import RunKey, find_run, list_alerts

    overlay = tmp_path / "down.yaml"
    overlay.write_text(yaml.safe_dump({"retrievers": [{
        "name": "handbook-search", "version": "9.9-down", "adapter": "http", "deployed": True, "owner": "tests",
        "params": {"url": dead_url(), "timeout": 0.5, "max_retries": 0},
    }]}))
    cfg = load_config(tmp_path, environ=_env(tmp_path, EVALOPS_RETRIEVERS_OVERLAY=str(overlay)))
    run = RunContext.for_day("2024-05-31")
    with pytest.raises(IncompleteRunError, match="9.9-down"):
        run_local(cfg, run)
    engine = engine_for(cfg)
    down = find_run(engine, RunKey(run.dag_id, run.run_id, "handbook-search", "9.9-down", "gold"))
    healthy = find_run(engine, RunKey(run.dag_id, run.run_id, "handbook-search", "1.0", "gold"))
    assert down.status == "failed" and down.n_failed == down.n_queries and "failure budget" in down.error
    assert healthy.status == "succeeded"
    alerts = list_alerts(engine)
    assert list(alerts["kind"]) == ["retriever_failed"] and list(alerts["version"]) == ["9.9-down"]
    report = (cfg.report_dir / "cli_cli__2024-05-31" / "report.md").read_text()
    assert "9.9-down" in report and "failed" in report


def test_a_version_that_fails_to_load_is_a_failed_version_and_the_others_are_stored(tmp_path):
    # A factory that raises when it is built (a run file is read when the run is planned instead, so a
    # malformed one is bad input: tests/project/test_own_data.py)
    from evalops.config import load_config
    from evalops.pipeline import IncompleteRunError, RunContext, run_local
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import list_alerts
    from evalops.warehouse.history import latest_runs

    overlay = tmp_path / "broken.yaml"
    overlay.write_text(yaml.safe_dump({"retrievers": [{
        "name": "handbook-search", "version": "7.0-broken", "adapter": "python", "deployed": True,
        "owner": "tests", "params": {"entry_point": "json:loads", "factory": True},
    }]}))
    cfg = load_config(tmp_path, environ=_env(tmp_path, EVALOPS_RETRIEVERS_OVERLAY=str(overlay)))
    with pytest.raises(IncompleteRunError, match="7.0-broken"):
        run_local(cfg, RunContext.for_day("2024-05-31"))
    engine = engine_for(cfg)
    runs = latest_runs(engine, statuses=("succeeded", "partial", "failed", "running", "abandoned"))
    by_version = dict(zip(runs["version"], runs["status"]))
    assert by_version == {"1.0": "succeeded", "7.0-broken": "failed"}  # nothing left running
    alerts = list_alerts(engine)
    assert list(alerts["kind"]) == ["retriever_failed"] and list(alerts["version"]) == ["7.0-broken"]
    message = alerts["message"].iloc[0]  # the error says why the version could not be built
    assert "version 7.0-broken could not be loaded: TypeError" in message, message
