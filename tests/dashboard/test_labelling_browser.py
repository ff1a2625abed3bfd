"""The labelling flow in headless Chromium: name yourself, grade, skip; the forms post under the page's
Content-Security-Policy, no script runs (the hostile query and document open no dialog), nothing is fetched
from elsewhere. (Access keys are browser-UI shortcuts that synthetic key events do not reach, so the buttons
are clicked and their access keys checked as attributes.)"""

from __future__ import annotations

import json

import pytest

from evalops.judges.generate import queue_row, write_queue

from tests.dashboard.conftest import Server

pytestmark = pytest.mark.slow

HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)">'


@pytest.fixture
def labelling_server(tmp_path):
    from evalops.dashboard import create_app
    from evalops.dashboard.auth import DashboardAuth
    from evalops.dashboard.labelling import LabellingSettings
    from evalops.warehouse import create_warehouse_engine, upgrade

    engine = create_warehouse_engine(f"sqlite:///{tmp_path / 'warehouse.db'}")
    upgrade(engine)
    kb = tmp_path / "corpus.jsonl"
    kb.write_text("".join(json.dumps({"_id": d, "title": "", "text": HOSTILE + f" text of {d}"}) + "\n"
                          for d in ("D1", "D2")))
    rows = [queue_row(source="hole", query=f"{HOSTILE} query {q}", query_id=q, doc_id=d, proposed_grade=None,
                      origin=f"gold: s 2 vs 1, top 10; priority {p}; in 2") for q, d, p in (("Q1", "D1", "0.9"),
                                                                                          ("Q2", "D2", "0.5"))]
    write_queue(tmp_path / "queue.jsonl", rows)
    app = create_app(engine, auth=DashboardAuth(basic=("team", "pw")),
                     labelling=LabellingSettings(queue=tmp_path / "queue.jsonl", knowledge_base=kb))
    running = Server(app).start()
    yield running, engine, [r["item_id"] for r in rows]
    running.stop()
    engine.dispose()


def test_an_annotator_grades_and_skips_and_no_script_runs(browser, labelling_server):
    server, engine, items = labelling_server
    context = browser.new_context(http_credentials={"username": "team", "password": "pw"})
    tab = context.new_page()
    errors, requests = [], []
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
    tab.on("request", lambda r: requests.append(r.url))
    try:
        tab.goto(f"{server.url}/label")
        tab.fill("input[name=annotator]", "ana")
        tab.click("form.annotator button")
        tab.click("a.start")
        assert tab.locator("td.query").inner_text().startswith("<script>")  # shown as text
        assert tab.locator("button[accesskey='2']").inner_text().startswith("2")
        tab.click("button[accesskey='2']")
        tab.wait_for_url(f"**/label/item/{items[1]}")
        tab.click("button[accesskey='s']")  # skip the second
        tab.wait_for_url(f"{server.url}/label")
    finally:
        context.close()
    from evalops.warehouse.labels import load_labels

    assert [(label.item_id, label.annotator, label.grade) for label in load_labels(engine)] == [
        (items[0], "ana", 2), (items[1], "ana", None)]
    assert errors == []
    assert all(url.startswith(server.url) for url in requests), requests
