"""`evalops run` exits with the undelivered-alerts code while the webhook is down; `evalops alerts retry`
delivers the alert once the webhook is back, under one key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from tests.faults.servers import SearchService, Webhook, dead_port

from evalops.alerting.delivery import UNDELIVERED_ALERTS_EXIT
from evalops.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600, method="thread")]  # a hang guard for two pipeline runs

INCLUDE = Path(__file__).resolve().parents[2] / "include"


def test_undelivered_alerts_set_the_exit_code_and_alerts_retry_delivers_them(tmp_path, monkeypatch):
    with (INCLUDE / "knowledge_base" / "corpus.jsonl").open(encoding="utf-8") as f:
        doc_ids = [json.loads(line)["_id"] for line in f if line.strip()][:20]
    service = SearchService(doc_ids, fail_ids=frozenset({"q001"}))  # one query of many: a partial version
    overlay = tmp_path / "remote.yaml"
    overlay.write_text(yaml.safe_dump({"retrievers": [{
        "name": "handbook-search", "version": "3.0-remote", "adapter": "http", "deployed": True, "owner": "tests",
        "params": {"url": f"http://127.0.0.1:{service.port}/search", "max_retries": 0},
    }]}))
    monkeypatch.chdir(tmp_path)
    for key, value in {
        "EVALOPS_HOME": str(tmp_path), "EVALOPS_GOLD_SET": str(INCLUDE / "goldset"),
        "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"), "EVALOPS_REGISTRY": str(INCLUDE / "retrievers.yaml"),
        "EVALOPS_RETRIEVERS_OVERLAY": str(overlay), "EVALOPS_LOG_SAMPLE_SIZE": "0",
        "EVALOPS_WAREHOUSE_URL": f"sqlite:///{tmp_path / 'wh.db'}",
        "EVALOPS_WEBHOOK_URL": f"http://127.0.0.1:{dead_port()}/hook",
    }.items():
        monkeypatch.setenv(key, value)
    runner = CliRunner()
    try:
        first = runner.invoke(main, ["run", "--date", "2024-05-31"], catch_exceptions=False)
        assert first.exit_code == UNDELIVERED_ALERTS_EXIT, first.output
        assert "(undelivered)" in first.output

        hook = Webhook([("ok",)])
        monkeypatch.setenv("EVALOPS_WEBHOOK_URL", hook.url)
        try:
            backoff = runner.invoke(main, ["alerts", "retry", "--json"], catch_exceptions=False)
            assert backoff.exit_code == UNDELIVERED_ALERTS_EXIT and hook.received == []  # within the backoff
            retried = runner.invoke(main, ["alerts", "retry", "--force", "--json"], catch_exceptions=False)
            assert retried.exit_code == 0, retried.output
            (outcome,) = json.loads(retried.output)
            assert outcome["delivery_status"] == "delivered" and outcome["notifiers"]["webhook"] == "delivered"
            again = runner.invoke(main, ["alerts", "retry", "--force"], catch_exceptions=False)
            assert again.exit_code == 0 and "no alert to retry" in again.output
        finally:
            hook.stop()
    finally:
        service.stop()
    assert len(hook.received) == 1 and len(hook.distinct_keys()) == 1
    assert hook.received[0]["body"]["alert_key"] == hook.received[0]["key"]
