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
