from __future__ import annotations

import base64
import re
import sys

import pytest

from evalops.reports import ABResult, ReportData, VersionScores, render_html, render_markdown, write_report
from tests.conftest import comparison_of

EVIL = '<script>alert("x")</script> | `rm` & <img src=x onerror=1>'


def _ab(version: str, decision: str, delta: float, query_set: str = "gold", measure: str = "nDCG@10") -> ABResult:
    record = comparison_of(**{
        "measure": measure, "n": 64, "baseline_mean": 0.6, "candidate_mean": 0.6 + delta, "delta": delta,
        "delta_ci_low": delta - 0.04, "delta_ci_high": delta + 0.04, "p_value": 0.0004, "p_adjusted": 0.0012,
        "effect_size_dz": delta * 5, "wins": 5, "ties": 30, "losses": 29, "decision": decision,
        "reasons": ["the whole interval lies below -0.01: a material drop (critical)"],
        "severity": "critical" if decision == "regression" else None,
        "criterion": "material" if decision == "regression" else None, "interval_low": delta - 0.05,
        "interval_high": delta + 0.05, "interval_level": 1 - 0.05 / 3, "margin": 0.01, "family_size": 3,
    })
    return ABResult(
        retriever="handbook", baseline_version="v1", candidate_version=version, query_set=query_set,
        comparison=record,
        worst_queries=[{"query_id": "p17", "baseline": 1.0, "candidate": 0.0, "delta": -1.0, "text": EVIL}],
        family="gold",
        coverage="baseline answered 64 of 64 judged queries (100%), candidate 64 of 64 (100%); every judged query "
                 "was answered by both",
    )


@pytest.fixture
def data() -> ReportData:
    agg = {"nDCG@10": {"mean": 0.6, "ci_low": 0.55, "ci_high": 0.65, "n": 64},
           "R@100": {"mean": 0.9, "ci_low": 0.85, "ci_high": 0.95, "n": 64}}
    return ReportData(
        run_key="manual__2024-06-02T03:00:00+00:00",
        day="2024-06-02",
        generated_at="2024-06-02T03:04:05+00:00",
        fingerprint="fp-abc123",
        fingerprint_components={"gold_set_version": "gs-111", "kb_snapshot": "kb-222",
                                "measures": ["nDCG@10", "R@100"]},
        policies={"ties": "doc id descending", "no_answer": "exclude", "alpha": 0.05, "min_effect_dz": 0.2},
        versions=[
            VersionScores("handbook", "v1", "baseline", "gold", agg, n_queries=64),
            VersionScores("handbook", "v2-hybrid", "candidate", "gold", agg, n_queries=64),
            VersionScores("handbook", "v3-degraded", "candidate", "gold", agg, status="partial", n_queries=63,
                          n_failed=1),
            VersionScores("handbook", "v1", "baseline", "production", agg, n_queries=40),
        ],
        ab_results=[_ab("v2-hybrid", "improvement", 0.05), _ab("v3-degraded", "regression", -0.12),
                    _ab("v3-degraded", "no_change", -0.01, query_set="production")],
        changes=["knowledge base kb-000 -> kb-222: 3 added, 1 removed, 2 changed documents"],
        stale_baselines=["handbook v1: stored baseline is stale (kb_snapshot changed); re-scored in this run"],
        alerts=[{"kind": "regression", "title": "Regression: handbook v3-degraded on nDCG@10", "delivered": False}],
    )


def test_html_escapes_untrusted_query_text(data):
    page = render_html(data)
    assert "<script>" not in page and "onerror=1>" not in page
    # Escaped by Jinja2's autoescape, then re-serialised by the sanitiser (a quote in text needs no escape).
    assert '&lt;script&gt;alert("x")&lt;/script&gt;' in page
    assert page.count("<script") == 0


def test_markdown_escapes_untrusted_query_text(data):
    md = render_markdown(data)
    assert "<script>" not in md
    assert "&lt;script>" in md and "&lt;img" in md
    row = next(line for line in md.splitlines() if line.startswith("| p17"))
    # the pipe in the text is escaped, so the row keeps exactly 5 cells
    assert len(re.findall(r"(?<!\\)\|", row)) == 6


@pytest.mark.parametrize("render", [render_markdown, render_html])
def test_report_has_every_required_part(data, render):
    text = render(data)
    for expected in ("fp-abc123", "gs-111", "kb-222", "no_answer", "exclude", "alpha", "0.05",
                     "v2-hybrid", "v3-degraded", "REGRESSION", "improvement", "p17",
                     "re-scored in this run", "3 added, 1 removed", "implicit-feedback",
                     "1 failed, excluded", "not delivered",
                     "decision interval", "98.33%", "REGRESSION (critical) (material)", "3 (gold)",
                     "a material drop (critical)"):
        assert expected in text, expected
    # before any number of the A/B section: how many queries each side answered
    ab = text[text.index("A/B results against the baseline"):]
    assert ab.index("baseline answered 64 of 64 judged queries") < ab.index("0.6000")


def test_production_results_are_kept_apart(data):
    md = render_markdown(data)
    gold_part, prod_part = md.split("## Production queries", 1)
    assert "| handbook | v1 | baseline | complete | 40 |" in prod_part
    assert "| 40 |" not in gold_part


def test_written_html_is_self_contained_with_svg_charts(data, tmp_path):
    paths = write_report(data, tmp_path)
    page = paths.html.read_text()
    images = re.findall(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 2
    means = base64.b64decode(images[0]).decode("utf-8")
    assert means.startswith("<svg ") and "<script" not in means
    assert not re.search(r'(src|href)="(http|//)', page)
    md = paths.markdown.read_text()
    assert "(means.svg)" in md and (paths.directory / "means.svg").read_bytes() == base64.b64decode(images[0])
    assert paths.directory == tmp_path / "manual__2024-06-02T03_00_00_00_00"
    # the alt texts say which interval each chart draws: the deltas chart the decision's, not a 95% one
    assert 'alt="Measures per version with 95% CIs"' in page
    assert "alt=\"Candidate minus baseline with each decision interval (at its family's level)\"" in page
    # a re-run of the same run key overwrites, it does not add files, and drops an older release's charts
    before = sorted(p.name for p in paths.directory.iterdir())
    (paths.directory / "means.png").write_bytes(b"\x89PNG")
    (paths.directory / "notes.txt").write_text("a user's file")
    write_report(data, tmp_path)
    assert sorted(p.name for p in paths.directory.iterdir()) == sorted(before + ["notes.txt"])


def test_charts_carry_the_numbers_and_escape_names(data):
    import xml.etree.ElementTree as ET

    from evalops.reports.charts import delta_chart_svg, means_chart_svg

    evil = VersionScores("handbook", EVIL + "\x1b\u202e", "candidate", "gold", data.versions[0].aggregates,
                         n_queries=64)
    means = means_chart_svg([data.versions[0], evil]).decode("utf-8")
    ET.fromstring(means)  # well-formed XML: the hostile name is escaped, its control characters gone
    assert "<script" not in means and "&lt;script&gt;" in means
    assert "nDCG@10: mean 0.6000 (95% CI 0.5500 to 0.6500)" in means and "R@100" in means
    assert means_chart_svg([data.versions[-1]]) is None  # production only: nothing to draw for gold
    deltas = delta_chart_svg([r for r in data.ab_results if r.query_set == "gold"]).decode("utf-8")
    ET.fromstring(deltas)
    assert "v3-degraded · nDCG@10 [gold]: delta -0.1200, decision interval [-0.1700, -0.0700] (regression)" in deltas
    assert 'fill="#c0392b"' in deltas and 'fill="#1e8449"' in deltas  # coloured by decision
    assert delta_chart_svg([]) is None


@pytest.mark.parametrize("names", [
    ["1.0", "2.0-hybrid", "2.0-truncated", "3.0-vector", "3.0-hybrid", "3.0-rerank"],  # three a row
    ["1.0-a-longer-name-for-the-version", "2.0-another-quite-long-version-name", "3.0"],  # two or one a row
    ["v" * 150, "2.0"],  # cut, with its marker, in one column
])
def test_the_legend_labels_stay_within_their_column(data, names):
    import xml.etree.ElementTree as ET

    from evalops.reports.charts import _CHAR_WIDTH, means_chart_svg

    agg = data.versions[0].aggregates
    versions = [VersionScores("handbook-search", n, "candidate", "gold", agg, n_queries=64,
                              stored_baseline=(i == 0)) for i, n in enumerate(names)]
    svg = ET.fromstring(means_chart_svg(versions))
    ns = "{http://www.w3.org/2000/svg}"
    swatches = [float(r.get("x")) for r in svg.iter(f"{ns}rect") if r.get("width") == "12"]
    labels = [t for t in svg.iter(f"{ns}text") if t.text and t.text.startswith("handbook-search ")]
    assert len(labels) == len(names) == len(swatches)
    width = float(svg.get("width"))
    for label in labels:  # a label ends before the next swatch in its row (or the chart's edge)
        x = float(label.get("x"))
        nxt = min([s for s in swatches if s > x] + [width])
        assert x + len(label.text) * _CHAR_WIDTH <= nxt, label.text
    assert any("more characters" in t.text for t in labels) == (len(names[0]) > 100)


def _not_compared(data: ReportData, versions: list[VersionScores], **fields) -> ReportData:
    return ReportData(**{**data.__dict__, "ab_results": [], "alerts": [], "changes": [], "stale_baselines": [],
                         "versions": versions, **fields})


def test_report_when_every_deployed_version_is_a_baseline(data):
    agg = data.versions[0].aggregates
    only = _not_compared(data, [VersionScores("handbook", "v1", "baseline", "gold", agg, n_queries=64)])
    md = render_markdown(only)
    assert "No alerts." in md and "No candidate was compared (every deployed version is its retriever's baseline)." in md
    assert "Nothing: same fingerprint" in md


def test_first_day_says_once_that_there_is_no_baseline_even_when_a_version_failed(data):
    agg = data.versions[0].aggregates
    note = "handbook has no baseline yet, so nothing is compared; promote a run with 'evalops promote'"
    first_day = _not_compared(data, [
        VersionScores("handbook", "v1", "deployed", "gold", agg, n_queries=64),
        VersionScores("handbook", "v2", "deployed", "gold", {}, status="failed", n_queries=64, n_failed=60),
    ], no_baseline=[note])
    for text in (render_markdown(first_day), render_html(first_day)):
        assert text.count("has no baseline yet") == 1
        assert text.index("has no baseline yet") > text.index("A/B results against the baseline")
        assert "No candidate was compared" not in text and "because it failed" not in text
        assert "same versions as the stored baselines" not in text  # there are none


def test_a_failed_candidate_is_named_with_its_failed_queries_not_called_a_baseline(data):
    agg = data.versions[0].aggregates
    failed = _not_compared(data, [
        VersionScores("handbook", "v1", "baseline", "gold", agg, n_queries=300),
        VersionScores("handbook", "rerank", "candidate", "gold", {}, status="failed", n_queries=300, n_failed=293),
        VersionScores("handbook", "broken", "candidate", "gold", {}, status="failed", n_queries=300),
    ])
    md, page = render_markdown(failed), render_html(failed)
    sentence = ("Not compared because they failed: handbook rerank (293 of 300 gold queries failed); "
                "handbook broken (gold: scoring failed).")
    for text in (md, page):
        assert text.count(sentence) == 1
        assert "No candidate was compared" not in text and "no baseline" not in text
    one = _not_compared(data, failed.versions[:2])
    assert "handbook rerank was not compared because it failed (293 of 300 gold queries failed)." in render_markdown(one)
    # beside a candidate that was compared, the failed one is still named
    mixed = ReportData(**{**one.__dict__, "versions": one.versions + [data.versions[1]],
                          "ab_results": [_ab("v2-hybrid", "improvement", 0.05)]})
    assert "handbook rerank was not compared because it failed" in render_markdown(mixed)


def test_importing_reports_does_not_import_matplotlib():
    import subprocess

    code = "import evalops.reports, sys; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_sections_are_data_not_sniffed_text(data):
    """An alert is marked because it is an alert, a decision coloured because it is one: a note that
    starts with "ALERT" or a cell reading "improvement" is plain text."""
    import dataclasses

    page = render_html(dataclasses.replace(data, notes=["ALERT (fake): not an alert"]))
    assert '<li class="alert">ALERT (regression): Regression: handbook v3-degraded' in page
    assert "<li>ALERT (fake): not an alert</li>" in page
    assert '<td class="regression">REGRESSION (critical) (material)</td>' in page
    assert '<td class="improvement">improvement</td>' in page
    quiet = render_html(dataclasses.replace(data, policies={"improvement": "improvement"}))
    assert "<td>improvement</td>" in quiet  # a policy value, not a decision


def test_markdown_and_html_come_from_the_templates(data, monkeypatch, tmp_path):
    from evalops.reports import render

    (tmp_path / "report.md.j2").write_text("custom {{ title|md }}\n")
    (tmp_path / "report.html.j2").write_text("<b>{{ title|plain }}</b>\n")
    monkeypatch.setattr(render, "TEMPLATES", tmp_path)
    render._environment.cache_clear()
    try:
        evil = dataclasses_replace(data, title="<i>[x](y)</i>")
        assert render_markdown(evil) == "custom &lt;i>\\[x\\](y)&lt;/i>\n"
        assert "<body><b>&lt;i&gt;[x](y)&lt;/i&gt;</b>\n</body>" in render_html(evil)  # then through the sanitiser
    finally:
        render._environment.cache_clear()


def dataclasses_replace(data, **changes):
    import dataclasses

    return dataclasses.replace(data, **changes)


def _ab_tables(page: str) -> list[str]:
    return [t for t in re.findall(r"<table[^>]*>.*?</table>", page, re.DOTALL) if "baseline → candidate" in t]


def test_the_ab_table_shows_the_decision_right_after_the_measure_and_the_rest_under_each_row(data):
    """At 1280 px the A/B table fits: the decision and what it read lead; the test's p, d_z, W/T/L, margin,
    family and judged coverage go into a details line under each row, every number still there and escaped."""
    import dataclasses
    import html

    judged = {"measure": "Judged@10", "baseline": 0.9531, "candidate": 0.8875, "difference": -0.0656,
              "unjudged_documents": 41}
    evil = dataclasses.replace(data.ab_results[0], retriever=EVIL, family=EVIL, comparison=dataclasses.replace(
        data.ab_results[0].comparison, judged_coverage=judged))
    page = render_html(dataclasses.replace(data, ab_results=[evil, *data.ab_results[1:]]))
    gold, production = _ab_tables(page)
    header = re.findall(r"<th>(.*?)</th>", gold)
    assert header == ["retriever", "baseline → candidate", "measure", "decision", "delta", "decision interval",
                      "adjusted p (decision)", "baseline", "candidate", "n"]
    rows = re.findall(r"<tr>(.*?)</tr>\s*<tr class=\"details\">(.*?)</tr>", gold, re.DOTALL)
    assert len(rows) == 2 and len(re.findall(r"<tr class=\"details\">", production)) == 1
    main, details = rows[0]
    assert re.findall(r"<td[^>]*>(.*?)</td>", main)[3:5] == ["improvement", "+0.0500"]
    assert "<script" not in gold and html.escape(EVIL, quote=False) in main
    assert f'<td colspan="{len(header)}">' in details
    for label, value in (("p (reported test)", "4.0e-04"), ("d_z", "+0.25"), ("W/T/L", "5/30/29"),
                         ("margin", "0.01"), ("family", f"3 ({html.escape(EVIL, quote=False)})"),
                         ("judged coverage", "Judged@10 0.953 → 0.887 (-0.066; 41 unjudged)")):
        assert f'<span class="label">{label}</span> {value}</span>' in details, label
    # markdown keeps its sixteen columns in their places
    md = render_markdown(data)
    assert ("| retriever | baseline → candidate | measure | n | baseline | candidate | delta | p (reported test) | "
            "adjusted p (decision) | d_z | W/T/L | decision interval | margin | family | decision | judged coverage |"
            ) in md


def test_the_report_links_the_conversations_report_of_its_folder(data, tmp_path):
    """A conversations report in the run's folder is linked under the title (a relative link), whether it was
    there when the report was written or written after it (link_related), and unlinked once it is gone."""
    from evalops.reports.write import link_related

    plain = write_report(data, tmp_path / "plain")
    assert "conversations" not in plain.html.read_text() and "conversations" not in plain.markdown.read_text()
    late = write_report(data, tmp_path / "late")
    nested = late.directory / "conversations" / "conversations.html"
    nested.parent.mkdir()
    nested.write_text("<p>conversations</p>")
    assert link_related(late.directory)
    page, md = late.html.read_text(), late.markdown.read_text()
    link = ('<nav class="related">Also in this folder: <a href="conversations/conversations.html">conversations '
            'report</a></nav>')
    assert page.index("<h1>") < page.index(link) < page.index("<h2>Summary</h2>")
    assert md.startswith("# evalops run report\n\nAlso in this folder: "
                         "[conversations report](conversations/conversations.html)\n\n## Summary\n")
    early = write_report(data, late.directory.parent)  # the same run written again with the report there
    assert early.html.read_text() == page
    assert link_related(late.directory) and late.markdown.read_text().count("Also in this folder") == 1
    nested.unlink()
    (late.directory / "conversations.html").write_text("<p>conversations</p>")  # beside the report
    link_related(late.directory)
    page = late.html.read_text()
    assert page.count('<nav class="related">') == 1 and '<a href="conversations.html">conversations report</a>' in page
    (late.directory / "conversations.html").unlink()
    link_related(late.directory)
    assert late.html.read_text() == plain.html.read_text() and late.markdown.read_text() == plain.markdown.read_text()
    assert not link_related(tmp_path / "nothing")
