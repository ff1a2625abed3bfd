"""The headline of an alert on the overview and the alerts page is the alert's own title, also for a re-sent one,
whose message opens with the cadence's note (``[evalops: sent again (reminder: ...)]``)."""

from __future__ import annotations

import datetime as dt

from fastapi.testclient import TestClient

TITLE = "Regression: bm25 2.0 on nDCG@10 (0.6433 -> 0.3640) <script>window.__pwned=1</script>"
NOTE = "[evalops: sent again (reminder: unchanged since 2024-06-02, last sent 2024-06-02); first sent 2024-06-02]"


def _summaries(html: str) -> list[str]:
    import html as markup
    import re

    return [markup.unescape(s) for s in re.findall(r"<summary>(.*?)</summary>", html, flags=re.S)]


def test_a_reminder_is_headed_by_its_title_not_by_the_cadence_note(tmp_path):
    from evalops.dashboard import create_app
    from evalops.warehouse import create_warehouse_engine, upgrade
    from evalops.warehouse.alerts import record_alert

    engine = create_warehouse_engine(f"sqlite:///{tmp_path / 'alerts.db'}")
    upgrade(engine)
    today = dt.datetime.now(dt.UTC).date()
    common = {"kind": "regression", "retriever": "bm25", "version": "2.0", "measure": "nDCG@10",
              "severity": "warning", "payload": {"title": TITLE}}
    record_alert(engine, day=today - dt.timedelta(days=1), message=f"{TITLE}\ndelta -0.2792", **common)
    record_alert(engine, day=today, message=f"{NOTE}\n{TITLE}\ndelta -0.2792", **common)
    client = TestClient(create_app(engine))
    for path in ("/alerts", "/"):
        page = client.get(path).text
        summaries = _summaries(page)
        assert len(summaries) == 2 and all(s.strip() == TITLE for s in summaries), (path, summaries)
        assert "sent again (reminder" in page  # the note is still in the message below
        assert "<script>window" not in page  # the stored title is escaped like the message


def test_an_alert_stored_without_a_title_is_headed_by_its_first_line(tmp_path):
    from evalops.dashboard import create_app
    from evalops.warehouse import create_warehouse_engine, upgrade
    from evalops.warehouse.alerts import record_alert

    engine = create_warehouse_engine(f"sqlite:///{tmp_path / 'alerts.db'}")
    upgrade(engine)
    record_alert(engine, kind="retriever_failed", retriever="bm25", version="2.0", severity="critical",
                 day=dt.datetime.now(dt.UTC).date(), message="bm25 2.0 failed on 12 queries\ntimeouts")
    summaries = _summaries(TestClient(create_app(engine)).get("/alerts").text)
    assert [s.strip() for s in summaries] == ["bm25 2.0 failed on 12 queries"]
