"""The pages over HTTP without a browser: escaping in the markup, clear answers for what is not there."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.dashboard.warehouse_builder import PAYLOAD

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def client(filled):
    from evalops.dashboard import DashboardSettings, create_app

    return TestClient(create_app(filled["engine"], settings=DashboardSettings.from_config(filled["cfg"]),
                                 report_dir=filled["cfg"].report_dir))


def _ab_ids(filled):
    from evalops.warehouse import load_ab_tests

    return [int(i) for i in load_ab_tests(filled["engine"])["id"]]


def test_hostile_query_text_is_escaped_in_the_markup(client, filled):
    # (a quote in text needs no escape: the sanitiser's serialiser writes it as is)
    escaped = '&lt;script&gt;window.__pwned=1&lt;/script&gt;&lt;img src=x onerror="window.__pwned=2"&gt;'
    seen = 0
    for ab_id in _ab_ids(filled):
        html = client.get(f"/ab/{ab_id}").text
        assert "<script" not in html and "<img" not in html
        seen += escaped in html
    assert seen >= 2  # the planted gold query and the planted production query
    assert PAYLOAD not in client.get("/").text


def test_what_is_not_there_is_a_404_page(client):
    for path in ("/ab/999999", "/trends?retriever=nope", "/trends?measure=P@7", "/trends?dataset=web",
                 "/reports/..%2F..%2F..%2Fetc%2Fpasswd", "/reports/nothing/report.html"):
        reply = client.get(path)
        assert reply.status_code == 404 and "Not found" in reply.text, path


def test_run_rows_link_to_their_report(client, filled):
    import re

    html = client.get("/runs").text
    links = sorted(set(re.findall(r'href="(/reports/[^"]+)"', html)))
    assert len(links) == 2  # one report per day
    for link in links:
        reply = client.get(link)
        assert reply.status_code == 200 and "handbook-search" in reply.text


def test_an_empty_warehouse_says_so(tmp_path):
    from evalops.dashboard import create_app
    from evalops.warehouse import create_warehouse_engine, upgrade

    engine = create_warehouse_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    upgrade(engine)
    empty = TestClient(create_app(engine))
    assert "holds no runs yet" in empty.get("/").text
    assert empty.get("/trends").status_code == 404
    assert empty.get("/runs").status_code == 200 and empty.get("/alerts").status_code == 200


def test_data_docs_are_listed_and_served_without_scripts_or_cdns(client, filled):
    import re

    listing = client.get("/datadocs")
    pages = re.findall(r'href="(/datadocs/files/validations/[^"]+\.html)"', listing.text)
    assert len(pages) >= 1 and len(set(pages)) == len(pages)
    for page in pages:
        html = client.get(page).text
        assert "<script" not in html.lower()
        assert not re.search(r'<(link|img|script)\b[^>]*(href|src)="(https?:)?//', html)
        for asset in re.findall(r'<link[^>]*href="([^"]+\.css)"', html):
            url = asset if asset.startswith("/") else page.rsplit("/", 1)[0] + "/" + asset
            assert client.get(url).status_code == 200, url
    runs = client.get("/runs").text
    assert 'href="/datadocs#day-' in runs


def test_the_ab_page_shows_results_per_segment_and_judged_coverage(client, filled):
    from evalops.warehouse import load_ab_tests

    stored = load_ab_tests(filled["engine"])
    gold = stored[(stored["family"] == "gold")].iloc[0]
    html = client.get(f"/ab/{int(gold['id'])}").text
    assert 'id="segments"' in html and "<h3>type</h3>" in html and "<h3>language</h3>" in html
    for row in gold["segments"]:
        assert f"<td>{row['segment']}</td>" in html
    assert "type segments of handbook-search@" in html  # each table names its family
    assert f"judged coverage ({gold['judged_coverage']['measure']})" in html
    overview = client.get("/").text
    assert 'class="muted judged"' in overview


def test_the_overview_shows_each_floor_and_whether_it_holds(filled):
    import dataclasses

    from evalops.dashboard import DashboardSettings, create_app

    settings = DashboardSettings.from_config(filled["cfg"])
    measure = settings.alert_measures[0]
    floors = ((("gold", measure, 0.99, "mean", "critical"),), (("gold", measure, 0.01, "lower_bound", "warning"),))
    pages = [TestClient(create_app(filled["engine"], settings=dataclasses.replace(settings, floors=f),
                                   report_dir=filled["cfg"].report_dir)).get("/").text for f in floors]
    assert "floor 0.99 breached (critical)" in pages[0] and f"{measure} mean" in pages[0]
    assert "floor 0.01</span>" in pages[1] and "breached" not in pages[1].split("floor 0.01")[1][:20]


def test_the_ab_page_shows_the_one_interval_the_decision_was_read_from(client, filled):
    """One interval per comparison: the family-adjusted decision interval with its level; the comparison's
    separate bootstrap interval of the delta is not printed beside it (it stays in the warehouse)."""
    from evalops.util import numfmt
    from evalops.warehouse import load_ab_tests

    stored = load_ab_tests(filled["engine"])
    for _, ab in stored[stored["interval_low"].notna()].iterrows():
        html = client.get(f"/ab/{int(ab['id'])}").text
        low, high = numfmt.number(ab["interval_low"], signed=True), numfmt.number(ab["interval_high"], signed=True)
        assert f"[{low}, {high}]" in html and f"{low} to {high}" in html
        assert f"decision interval ({numfmt.level(ab['interval_level'])})" in html
        boot = numfmt.number(ab["delta_ci_low"], signed=True)
        assert boot == low or boot not in html, boot


def test_a_trend_range_is_read_as_such_and_equals_the_year_cut_to_it(filled):
    """The trend page reads only its range's rows; they are the rows of the whole history cut to the range."""
    import datetime as dt

    from evalops.dashboard.trends import _cut
    from evalops.warehouse import dashboard as wh

    engine = filled["engine"]
    measures = wh.dashboard_measures(engine)
    retriever = sorted(measures)[0]
    measure = measures[retriever][0]
    everything = wh.dashboard_trend(engine, retriever, measure)
    timings = wh.dashboard_timings(engine, retriever)
    newest = max(r["logical_date"] for r in everything)
    for days in (0, 1, 2, 90):
        ranged = wh.dashboard_trend(engine, retriever, measure, days=days)
        assert ranged == _cut(everything, days)[0]
        assert wh.dashboard_timings(engine, retriever, days=days) == _cut(timings, days)[0]
        if days:
            assert min(r["logical_date"] for r in ranged) >= newest - dt.timedelta(days=days)


def test_a_page_reads_through_one_connection_and_reads_what_the_engine_reads(filled):
    """Each page checks out one connection for all its reads (a year's trend page made eight checkouts,
    each a ping and a BEGIN), and the page read through that connection is the page read read by read."""
    import dataclasses

    from sqlalchemy import event

    from evalops.dashboard import DashboardSettings, create_app
    from evalops.dashboard.links import AppLinks
    from evalops.dashboard.trends import trend_page
    from evalops.warehouse import dashboard as wh

    engine = filled["engine"]
    measures = wh.dashboard_measures(engine)
    retriever = sorted(measures)[0]
    checkouts: list[object] = []
    uncached = dataclasses.replace(DashboardSettings.from_config(filled["cfg"]), cache_seconds=0)
    client = TestClient(create_app(engine, settings=uncached))  # every request reads

    def count(*_args):
        checkouts.append(1)

    event.listen(engine, "checkout", count)
    try:
        for path in ("/", f"/trends?retriever={retriever}&measure={measures[retriever][0]}&days=0",
                     f"/ab/{_ab_ids(filled)[0]}", "/runs", "/alerts"):
            checkouts.clear()
            assert client.get(path).status_code == 200, path
            assert len(checkouts) == 1, (path, len(checkouts))
    finally:
        event.remove(engine, "checkout", count)
    settings, links = DashboardSettings.from_config(filled["cfg"]), AppLinks("", reports=False)
    for days in (0, 90):
        with engine.connect() as conn:
            shared = trend_page(conn, links, settings, retriever=retriever, days=days)
        assert shared == trend_page(engine, links, settings, retriever=retriever, days=days)


def test_the_ab_page_of_a_plain_gold_set_counts_queries(client, filled):
    """Without conversations the histogram, its heading and the wins, ties and losses all count queries."""
    import re

    from evalops.warehouse import load_ab_tests

    ab = load_ab_tests(filled["engine"]).iloc[0]
    html = client.get(f"/ab/{int(ab['id'])}").text
    assert "<h2>Per-query deltas</h2>" in html and "the histogram counts" not in html
    [label] = re.findall(r'aria-label="distribution of per-query deltas \((\d+) queries\)"', html)
    bins = [int(c) for c in re.findall(r'<rect class="bin"[^>]*><title>[^<]*: (\d+)</title>', html)]
    assert sum(bins) == int(label) > 0
    assert f"won on {int(ab['wins'])} queries" in html and "turn" not in html.split('id="per-item"')[1][:400]
