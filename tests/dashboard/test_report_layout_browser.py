"""The run report (report.html) as a search engineer reads it on a laptop: at 1280 px the A/B tables need no
sideways scrolling and each decision is on screen, in Debian's headless Chromium."""

from __future__ import annotations

import dataclasses

from evalops.reports import write_report
from tests.reports.test_reports import EVIL, _ab, data as report_data

_MEASURE = """() => [...document.querySelectorAll('table')]
  .filter(t => [...t.querySelectorAll('th')].some(h => h.textContent === 'baseline → candidate'))
  .map(t => {
    const box = t.parentElement;
    const col = [...t.querySelectorAll('thead th')].findIndex(h => h.textContent === 'decision');
    const decisions = [...t.querySelectorAll('tbody tr')].map(r => r.children[col])
      .filter(c => c && !c.hasAttribute('colspan')).map(c => c.getBoundingClientRect().right);
    return {scroll: box.scrollWidth, client: box.clientWidth, decisions: decisions,
            page: document.documentElement.scrollWidth};
  })"""


def test_the_ab_tables_fit_1280_px_with_every_decision_on_screen(browser, tmp_path, screenshots):
    data = report_data.__wrapped__()
    judged = {"measure": "Judged@10", "baseline": 0.9531, "candidate": 0.8875, "difference": -0.0656,
              "unjudged_documents": 41}
    results = [dataclasses.replace(r, comparison=dataclasses.replace(r.comparison, judged_coverage=judged))
               for r in [*data.ab_results, _ab("v4-dense-rerank-with-a-longer-name", "improvement", 0.03,
                                               measure="R@100")]]
    results[0] = dataclasses.replace(results[0], family=EVIL)
    page_file = write_report(dataclasses.replace(data, ab_results=results), tmp_path).html
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        tab = context.new_page()
        tab.goto(page_file.as_uri())
        tables = tab.evaluate(_MEASURE)
        tab.screenshot(path=str(screenshots / "report-ab-1280.png"), full_page=True)
    finally:
        context.close()
    assert len(tables) == 2
    for t in tables:
        assert t["scroll"] <= t["client"], t  # no sideways scrolling inside the table's box
        assert t["page"] <= 1280, t
        assert t["decisions"] and all(0 < right <= 1280 for right in t["decisions"]), t
