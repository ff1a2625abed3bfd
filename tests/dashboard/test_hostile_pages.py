"""Every page evalops writes or serves, loaded in headless Chromium with markup and script payloads in the
data: document ids, query texts, retriever names, versions and measure names. A payload that ran would set
``window.__pwned`` or add an element to the DOM; both are checked in the page itself.

The pages: the run report (``report.html``), the Great Expectations Data Docs as written to disk (a failed
gold-set validation whose unexpected values are the payloads), the dashboard served over HTTP (every page
reachable from the overview, the Data Docs and the reports included) and its static export.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

PAYLOAD = ('"\'><img src=x id=pwn1 onerror="window.__pwned=1"><script>window.__pwned=2</script>'
           '<svg id=pwn3 onload="window.__pwned=3"></svg><iframe id=pwn4 src="javascript:parent.__pwned=4"></iframe>')
_PLANTED = "#pwn1, #pwn3, #pwn4, img[src=x]"
_ACTIVE = "[onerror], [onload], [onclick], iframe, object, embed"


def _no_payload_ran(page, where: str) -> None:
    page.wait_for_timeout(50)  # let an image error or a frame load fire, if anything could
    assert page.evaluate("window.__pwned") is None, f"a payload executed on {where}"
    assert page.locator(_PLANTED).count() == 0, f"a payload became markup on {where}"
    assert page.locator(_ACTIVE).count() == 0, f"an event handler or frame on {where}"
    csp = page.locator('meta[http-equiv="Content-Security-Policy"]')
    assert csp.count() >= 1 and "default-src 'none'" in csp.first.get_attribute("content"), where


@pytest.fixture(scope="module")
def hostile_docs(tmp_path_factory) -> Path:
    """A failed gold-set validation whose unexpected values carry the payload (a doc id, a query type)."""
    from evalops.contracts import GoldSetRules, validate_gold_set
    from evalops.goldset import GoldSet
    from evalops.knowledge import KnowledgeBaseSnapshot
    from tests.goldset.conftest import gold_frames, kb_frame

    queries, judgments = gold_frames()
    queries.loc[0, "text"] = "refunds " + PAYLOAD
    queries.loc[1, "type"] = "semantic" + PAYLOAD
    judgments.loc[0, "doc_id"] = "d1" + PAYLOAD
    docs = tmp_path_factory.mktemp("hostile-docs")
    rules = GoldSetRules(min_queries=10, no_answer_share=(0.05, 0.30), allowed_grades=(0, 1, 2))
    report = validate_gold_set(GoldSet.from_frames(queries, judgments, source="hostile"),
                               KnowledgeBaseSnapshot.from_frame(kb_frame(), source="kb"), rules,
                               docs_dir=docs, raise_on_failure=False)
    assert report.failures and any("d1" + PAYLOAD in map(str, f.examples) for f in report.failures)
    return docs


@pytest.fixture(scope="module")
def hostile_engine(filled, tmp_path_factory):
    """A copy of the pipeline's warehouse with the payload appended to every retriever name, version,
    measure name, query text, promotion reason and alert message."""
    import sqlalchemy as sa

    from evalops.warehouse import create_warehouse_engine

    copy = tmp_path_factory.mktemp("hostile-warehouse") / "warehouse.db"
    with sqlite3.connect(filled["engine"].url.database) as source, sqlite3.connect(copy) as target:
        source.backup(target)  # the write-ahead log included
    engine = create_warehouse_engine(f"sqlite:///{copy}")
    suffix = sa.literal(PAYLOAD)
    with engine.begin() as db:
        for table, columns in {"eval_runs": ("retriever", "version"), "measures": ("name",),
                               "query_texts": ("text",), "baselines": ("retriever", "reason"),
                               "alerts": ("retriever", "version", "measure", "message")}.items():
            t = sa.Table(table, sa.MetaData(), autoload_with=db)
            db.execute(t.update().values({c: t.c[c] + suffix for c in columns}))
    return engine


def test_the_report_runs_nothing(browser, filled, tmp_path):
    from evalops.reports import ABResult, ReportData, VersionScores, write_report
    from tests.conftest import comparison_of

    measure = "nDCG@10" + PAYLOAD
    agg = {measure: {"mean": 0.6, "ci_low": 0.55, "ci_high": 0.65, "n": 64}}
    ab = ABResult(
        retriever="handbook" + PAYLOAD, baseline_version="v1" + PAYLOAD, candidate_version="v2" + PAYLOAD,
        query_set="gold", comparison=comparison_of(**{
            "measure": measure, "n": 64, "baseline_mean": 0.6, "candidate_mean": 0.5, "delta": -0.1,
            "delta_ci_low": -0.14, "delta_ci_high": -0.06, "p_value": 0.001, "p_adjusted": 0.002,
            "effect_size_dz": -0.5, "wins": 5, "ties": 30, "losses": 29, "decision": "regression",
            "reasons": ["a material drop " + PAYLOAD], "severity": "critical", "criterion": "material",
            "interval_low": -0.15, "interval_high": -0.05, "interval_level": 0.98, "margin": 0.01, "family_size": 1}),
        worst_queries=[{"query_id": "q1" + PAYLOAD, "baseline": 1.0, "candidate": 0.0, "delta": -1.0,
                        "text": PAYLOAD}],
        family="gold", coverage="all answered " + PAYLOAD,
    )
    data = ReportData(
        run_key="manual__2024-06-02", day="2024-06-02" + PAYLOAD, generated_at="2024-06-02T03:04:05+00:00",
        fingerprint="fp" + PAYLOAD, fingerprint_components={"gold_set_version": "gs" + PAYLOAD, "measures": [measure]},
        policies={"ties": PAYLOAD}, title="evalops" + PAYLOAD,
        versions=[VersionScores("handbook" + PAYLOAD, "v1" + PAYLOAD, "baseline", "gold", agg, n_queries=64),
                  VersionScores("handbook" + PAYLOAD, "v2" + PAYLOAD, "candidate", "gold", agg, n_queries=64)],
        ab_results=[ab], changes=["kb " + PAYLOAD], stale_baselines=[PAYLOAD],
        alerts=[{"kind": "regression", "title": "Regression " + PAYLOAD, "delivered": False}],
    )
    written = [write_report(data, tmp_path).html, *Path(filled["cfg"].report_dir).rglob("report.html")]
    context = browser.new_context()
    page = context.new_page()
    for html in written:
        page.goto(html.as_uri())
        _no_payload_ran(page, str(html))
    page.goto(written[0].as_uri())
    assert "onerror=\"window.__pwned=1\"" in page.locator("body").inner_text()  # shown as text
    context.close()


def test_the_written_data_docs_run_nothing(browser, hostile_docs):
    pages = sorted(hostile_docs.rglob("*.html"))
    assert len(pages) >= 5  # the index, two suites and two validations
    context = browser.new_context()
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                  else route.abort())
    page = context.new_page()
    for html in pages:
        page.goto(html.as_uri())
        _no_payload_ran(page, str(html.relative_to(hostile_docs)))
    failed = next(p for p in pages if "gold_judgments" in p.parts and "validations" in p.parts)
    page.goto(failed.as_uri())
    assert "d1\"'><img src=x id=pwn1" in page.locator("body").inner_text()  # the unexpected value, as text
    context.close()


def _crawl(page, start: str, limit: int = 400) -> list[str]:
    seen, queue = [], [start]
    while queue and len(seen) < limit:
        url = queue.pop(0).split("#")[0]
        if url in seen:
            continue
        seen.append(url)
        response = page.goto(url)
        assert response is not None and response.status < 500, url
        if url.endswith((".png", ".css", ".md")):
            continue
        _no_payload_ran(page, url)
        for href in page.locator("a[href]").evaluate_all("as => as.map(a => a.href)"):
            if href.startswith(start) and href.split("#")[0] not in seen:
                queue.append(href)
    return seen


def test_the_served_dashboard_runs_nothing(browser, hostile_engine, hostile_docs, filled):
    from evalops.dashboard import DashboardSettings, create_app
    from tests.dashboard.conftest import Server

    settings = DashboardSettings(data_docs=hostile_docs)
    running = Server(create_app(hostile_engine, settings=settings, report_dir=filled["cfg"].report_dir)).start()
    try:
        context = browser.new_context()
        page = context.new_page()
        page.on("dialog", lambda d: d.dismiss())
        visited = _crawl(page, running.url + "/")
        assert any("/ab/" in u for u in visited) and any("/datadocs/files/validations/" in u for u in visited)
        assert any("/reports/" in u for u in visited) and any("/trends" in u for u in visited)
        context.close()
    finally:
        running.stop()


def test_the_export_runs_nothing(browser, hostile_engine, hostile_docs, filled, tmp_path):
    from evalops.dashboard import DashboardSettings, export_site

    written = export_site(hostile_engine, tmp_path / "site", settings=DashboardSettings(data_docs=hostile_docs),
                          report_dir=filled["cfg"].report_dir)
    pages = [*written, *(tmp_path / "site" / "reports").rglob("report.html")]
    assert any("datadocs" in p.parts for p in pages)
    context = browser.new_context()
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                  else route.abort())
    page = context.new_page()
    for html in pages:
        page.goto(html.as_uri())
        _no_payload_ran(page, str(html.relative_to(tmp_path)))
    context.close()
