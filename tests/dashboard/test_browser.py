"""A person's path through the dashboard in headless Chromium: overview → trend → A/B detail → worst
queries, on a warehouse the pipeline filled, with hostile query text in the gold set and the logs."""

from __future__ import annotations

import re

import pytest

from tests.dashboard.warehouse_builder import GOLD_PAYLOAD_ID, PAYLOAD

pytestmark = pytest.mark.slow


def _only_local(page, server) -> None:
    foreign = [u for u in page.requests if not u.startswith(server.url)]
    assert foreign == [], f"the page fetched from elsewhere: {foreign}"


def _clean(page) -> None:
    assert page.console_errors == [], page.console_errors
    assert page.page_errors == [], page.page_errors
    assert page.evaluate("window.__pwned") is None, "a payload executed"


def _ab_row(filled, version, dataset, measure="nDCG@10"):
    from evalops.warehouse import load_ab_tests

    runs = {s["run_id"]: s for s in filled["result"]["versions"]}
    frame = load_ab_tests(filled["engine"])
    rows = [r for r in frame.itertuples() if r.measure == measure and r.candidate_run_id in runs
            and runs[r.candidate_run_id]["version"] == version and runs[r.candidate_run_id]["dataset"] == dataset]
    assert len(rows) == 1
    return rows[0]


def test_overview_to_trend_to_ab_to_worst_queries(page, server, filled, screenshots):
    from evalops.warehouse import load_aggregates

    page.goto(server.url + "/")
    assert page.locator("h1").inner_text() == "Overview"
    gold = page.locator('table.overview[data-dataset="gold"]')
    truncated = gold.locator('tr[data-version="2.0-truncated"]')
    assert "regression" in truncated.locator(".decision").first.inner_text()
    assert gold.locator('tr[data-version="1.0"]').locator(".tag.baseline").inner_text() == "baseline"
    run_id = next(s["run_id"] for s in filled["result"]["versions"]
                  if s["version"] == "2.0-truncated" and s["dataset"] == "gold")
    mean = load_aggregates(filled["engine"], run_id).set_index("measure").loc["nDCG@10", "mean"]
    assert truncated.locator("td.num").first.inner_text().startswith(f"{mean:.3f}")
    alert = page.locator("table.alerts tr.alert-row")
    assert alert.count() == 1
    assert re.search(r"regression\s+handbook-search\s+2\.0-truncated\s+nDCG@10", alert.first.inner_text())
    assert truncated.locator("a.alert-count").inner_text() == "1"
    page.screenshot(path=str(screenshots / "1-overview.png"), full_page=True)
    _clean(page)

    gold.locator("thead a", has_text="nDCG@10").click()
    page.wait_for_load_state()
    assert "nDCG@10 over time" in page.locator("h1").inner_text()
    promotion = page.locator("#trend-chart g.marker-promotion")
    assert promotion.count() == 1
    assert "baseline promoted: 1.0 by tests" in promotion.locator("title").text_content()
    events = page.locator("table.markers tr.marker-row")
    texts = [events.nth(i).inner_text() for i in range(events.count())]
    assert any("baseline promoted" in t and "day 1 <b>baseline</b>" in t for t in texts), texts
    assert any("alert" in t and "2.0-truncated" in t for t in texts), texts
    assert page.locator("#trend-chart circle.point").count() == 7  # 1.0 on both days, five candidates on day 2
    page.screenshot(path=str(screenshots / "2-trend.png"), full_page=True)
    _clean(page)

    page.locator('#trend-chart a:has(circle[data-series="2.0-truncated"])').click()
    page.wait_for_load_state()
    expected = _ab_row(filled, "2.0-truncated", "gold")
    assert page.locator(".decision-line").inner_text() == "regression"
    numbers = page.locator("table.numbers").inner_text()
    assert f"delta\t{expected.delta:+.4f}" in numbers
    assert f"{expected.wins} / {expected.ties} / {expected.losses}" in numbers
    assert page.locator(".wtl").inner_text() == f"wins {expected.wins} · ties {expected.ties} · losses {expected.losses}"
    assert page.locator("#delta-histogram rect.bin").count() > 0
    assert "hash" in page.locator("table.fingerprint").inner_text()
    assert "alpha" in page.locator("table.policy").inner_text()

    more = page.locator("#worst-queries details.more-losses")
    if more.count():
        more.locator("summary").click()
    worst = page.locator("#worst-queries table.worst tr", has=page.locator(f'code:text-is("{GOLD_PAYLOAD_ID}")'))
    assert worst.count() == 1
    cell = worst.locator("td.query-text")
    assert PAYLOAD in cell.inner_text()  # shown as text...
    assert cell.locator("script, img").count() == 0  # ...not parsed as markup
    assert page.locator("main img, main script").count() == 0
    worst.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "3-ab-gold.png"), full_page=True)
    _clean(page)
    _only_local(page, server)


def test_a_production_query_with_payloads_renders_as_text(page, server, filled, screenshots):
    expected = _ab_row(filled, "2.0-truncated", "production")
    page.goto(server.url + f"/ab/{expected.id}")
    more = page.locator("#worst-queries details.more-losses")
    if more.count():
        more.locator("summary").click()
    cells = page.locator("#worst-queries td.query-text")
    texts = [cells.nth(i).inner_text() for i in range(cells.count())]
    planted = [t for t in texts if PAYLOAD in t]
    assert planted == [f"air purifier filter light blinking orange {PAYLOAD}"], texts
    assert page.locator("main img, main script").count() == 0
    page.screenshot(path=str(screenshots / "4-ab-production.png"), full_page=True)
    _clean(page)
    _only_local(page, server)


def test_runs_and_alerts_filter(page, server, filled):
    page.goto(server.url + "/runs")
    assert page.locator("table.runs tr.run-row").count() == 14  # 2 on day 1 (gold + production), 12 on day 2
    page.select_option('select[name="dataset"]', "production")
    page.click("form.filters button")
    page.wait_for_load_state()
    rows = page.locator("table.runs tr.run-row")
    assert rows.count() == 7 and all("production" in rows.nth(i).inner_text() for i in range(rows.count()))
    page.goto(server.url + "/alerts?severity=info")
    assert page.locator("tr.alert-row").count() == 0
    page.goto(server.url + "/alerts")
    assert page.locator("tr.alert-row").count() == 1
    _clean(page)
