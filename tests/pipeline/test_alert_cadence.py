"""One alert per regression, not per day: three daily runs of an unchanged regression notify on the first
day and on the reminder (``alerting.remind_every_days``), store the day between as ``suppressed``, and the
gate fails on every one of the three days."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalops.goldset import load_gold_set
from tests.alerting.hook_server import hook_server

pytestmark = pytest.mark.slow


def test_three_days_of_an_unchanged_regression_send_the_alert_and_its_reminder(repo_root, planted_project,
                                                                                monkeypatch):
    from evalops.gate import cases_for_run
    from evalops.pipeline import RunContext, run_local
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import list_alerts

    gold = load_gold_set(repo_root / "include" / "goldset")
    pads = planted_project.pads
    relevant = gold.judgments[gold.judgments["grade"] > 0].groupby("query_id")["doc_id"].apply(list).to_dict()
    baseline, candidate = {}, {}
    for q in gold.queries["query_id"]:  # queries with no relevant document get the pads on both sides
        docs = relevant.get(q, [])
        fill = [p for p in pads if p not in docs][: max(0, 10 - len(docs))]
        baseline[q] = docs + fill
        candidate[q] = fill + docs  # the same ten documents, the relevant ones pushed to the bottom
    with hook_server() as hook:
        monkeypatch.setenv("CADENCE_TEST_HOOK", f"http://127.0.0.1:{hook.server_address[1]}/hook")
        cfg, day2, first = planted_project(
            gold, baseline, candidate, ["nDCG@10"],
            extra="alerting: {webhook_env: CADENCE_TEST_HOOK, webhook_conn_id: null, remind_every_days: 2}\n")
        day3 = RunContext.for_day("2024-06-03")
        second = run_local(cfg, day3)
        day4 = RunContext.for_day("2024-06-04")
        third = run_local(cfg, day4)
        sent = [body for _, _, body in hook.received]

    def regressions(result):
        return [a for a in result["alerts"] if a["kind"] == "regression"]

    (a2,), (a3,), (a4,) = regressions(first), regressions(second), regressions(third)
    assert a2["delivery_status"] == "delivered" and "suppressed" not in a2
    assert a3["delivery_status"] == "suppressed"
    assert a3["suppressed"].startswith("already sent on 2024-06-02") and "next reminder on 2024-06-04" in a3["suppressed"]
    assert a4["delivery_status"] == "delivered" and "suppressed" not in a4
    # two notifications for three days: the first alert and the reminder
    texts = [json.dumps(body) for body in sent]
    assert len(sent) == 2, texts
    assert "sent again (reminder: unchanged since 2024-06-02, last sent 2024-06-02" in texts[1]
    # every day's finding is stored; the day in between is not to be sent, nor retried
    stored = list_alerts(engine_for(cfg)).to_dict("records")
    rows = sorted((str(r["day"]), r["delivery_status"]) for r in stored if r["kind"] == "regression")
    assert rows == [("2024-06-02", "delivered"), ("2024-06-03", "suppressed"), ("2024-06-04", "delivered")]
    # the gate fails on each day: the cadence governs notification, not the verdict
    for run, result in ((day2, first), (day3, second), (day4, third)):
        assert [c.outcome for c in cases_for_run(cfg, run, result) if c.version == "2.0"] == ["failure"]
    # the report of the day in between says the alert was suppressed as already sent
    report = (Path(second["report"]).parent / "report.md").read_text()
    assert "not sent again: already sent on 2024-06-02" in report
