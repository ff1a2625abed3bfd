"""The dashboard's "Sources and spread" page in headless Chromium, on a warehouse whose candidate took its
top 5 from one source named with a script: the shares, the shift beyond the bound, the spread per segment
with the long-document segment, every value shown as text."""

from __future__ import annotations

import pytest

from tests.dashboard.sources_builder import HOSTILE

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sources_server(tmp_path_factory, repo_root):
    from evalops.dashboard import DashboardSettings, create_app
    from evalops.pipeline.store import engine_for
    from tests.dashboard.conftest import Server
    from tests.dashboard.sources_builder import build_sourced_project

    built = build_sourced_project(tmp_path_factory.mktemp("sources-dashboard"), repo_root)
    cfg = built["cfg"]
    engine = engine_for(cfg)
    running = Server(create_app(engine, settings=DashboardSettings.from_config(cfg),
                                report_dir=cfg.report_dir)).start()
    yield running, built, engine
    running.stop()


def test_sources_page_shows_shares_shift_and_spread_as_text(page, sources_server, screenshots):
    from evalops.pipeline.sources import read_sources
    from evalops.pipeline.specs import VersionSpec
    from evalops.warehouse import load_segment_spreads

    server, built, engine = sources_server
    page.goto(server.url + "/")
    page.locator("nav a", has_text="Sources").click()
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == "Sources and spread"
    candidate = page.locator("section.version-breakdown", has_text="s 2.0")
    rows = candidate.locator("table.sources tr.source-row")
    assert rows.count() == 3  # the hostile source, and the two the baseline had and the candidate lost
    hostile = candidate.locator("table.sources tr.source-row.breached", has_text="window.__pwned")
    cells = hostile.locator("td")
    assert cells.nth(0).inner_text() == HOSTILE  # the name as text, never markup
    spec = next(VersionSpec.from_xcom(v) for v in built["result"]["versions"] if v["version"] == "2.0")
    record = read_sources(built["cfg"], built["day2"], spec.run_id)
    [share] = record["shares"]
    assert cells.nth(2).inner_text() == f"{100 * share['share']:.1f}%" == "100.0%"
    [shift] = [s for s in record["shifts"] if s["source"] == HOSTILE]
    assert cells.nth(6).inner_text().startswith(f"{100 * shift['shift']:+.1f} pt")
    assert "beyond the bound" in cells.nth(6).inner_text()

    spreads = candidate.locator("table.spreads tr.spread-row")
    stored = load_segment_spreads(engine, spec.run_id)
    assert spreads.count() == len(stored)
    long_row = candidate.locator("table.spreads tr.long-documents", has_text="nDCG@10")
    stored_long = next(r for r in stored if r["facet"] == "length" and r["segment"] == "long"
                       and r["measure"] == "nDCG@10")
    texts = [long_row.locator("td").nth(i).inner_text() for i in range(10)]
    assert texts[:4] == ["relevant-document length", "long", "nDCG@10", str(stored_long["n"])]
    assert texts[5] == f"{stored_long['std']:.4f}" and texts[8] == f"{stored_long['median']:.4f}"
    assert page.locator("table.source-history tr", has_text="2024-06-02").count() >= 3
    page.screenshot(path=str(screenshots / "sources-and-spread.png"), full_page=True)
    assert page.evaluate("window.__pwned") is None, "a source name executed"
    assert page.console_errors == [] and page.page_errors == []
    assert all(u.startswith(server.url) for u in page.requests)



def test_sources_page_charts_each_source_s_share_by_day_with_its_figures(page, sources_server, screenshots):
    """Each version's section has a small line chart of its sources' shares by day (the dashboard's SVG line
    chart): a point per share row of the history, each titled with the figures the tables show, the hostile
    source name drawn as text."""
    import re

    server, _, _ = sources_server
    page.goto(server.url + "/sources")
    history = page.locator("table.source-history tbody tr")
    rows = [[history.nth(i).locator("td").nth(j).inner_text() for j in range(8)] for i in range(history.count())]
    title = re.compile(r"^(\S+) · (.*): share (\S+) \((\d+ of \d+) slots\), precision (.+), shift (\S+ pt|–)$",
                       re.DOTALL)
    for version in ("1.0", "2.0"):
        section = page.locator("section.version-breakdown", has_text=f"s {version}")
        chart = section.locator("figure.share-chart svg.chart")
        assert chart.count() == 1
        points = [title.match(t) for t in chart.locator("circle.point title").all_text_contents()]
        assert all(points)
        # the day, source, share, precision and shift of each point: those of its row in the share history
        assert sorted(m.group(1, 2, 3, 5, 6) for m in points) == sorted(
            (day, source, share, precision, shift) for day, _, v, _, source, share, precision, shift in rows
            if v == version)
        # the slots of the latest day: those of the version's sources table
        table = section.locator("table.sources tr.source-row")
        slots = {table.nth(i).locator("td").nth(0).inner_text(): table.nth(i).locator("td").nth(1).inner_text()
                 for i in range(table.count())}
        latest = max(m.group(1) for m in points)
        assert {m.group(2): m.group(4) for m in points if m.group(1) == latest} == slots
        legend = section.locator("figure.share-chart .legend").inner_text()
        assert HOSTILE in legend and "policy-handbook" in legend
    section = page.locator("section.version-breakdown", has_text="s 2.0")
    assert (f"2024-06-02 · {HOSTILE}: share 100.0% (430 of 430 slots), precision –, shift +35.6 pt"
            in section.locator("figure.share-chart circle.point title").all_text_contents())
    section.locator("figure.share-chart").screenshot(path=str(screenshots / "sources-share-chart.png"))
    assert page.evaluate("window.__pwned") is None, "a source name executed"
    assert page.console_errors == [] and page.page_errors == []
