"""Write one run's report (markdown, HTML and chart SVGs) into its own directory."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from evalops.reports.charts import delta_chart_svg, means_chart_svg
from evalops.reports.model import ReportData
from evalops.reports.render import render_html, render_markdown, render_related
from evalops.util.htmlpolicy import REPORT_CSP, sanitized_page
from evalops.util.storage import write_atomic

__all__ = ["RELATED", "ReportPaths", "link_related", "related_reports", "write_report", "report_dir_for"]

# The other reports a run's folder may hold, linked under its report's title when they are there: the
# conversations report (evalops.conversations.report) that the demo writes beside the day's run report, or
# that `evalops conversations --report-dir` writes into a run's folder.
RELATED = (("conversations/conversations.html", "conversations report"),
           ("conversations.html", "conversations report"))
_RELATED_HTML = re.compile(r'\n?<nav class="related">.*?</nav>', re.DOTALL)


@dataclass(frozen=True)
class ReportPaths:
    directory: Path
    markdown: Path
    html: Path


def report_dir_for(root: str | os.PathLike[str], run_key: str) -> Path:
    """``root/<run key made filesystem-safe>``: one directory per run, overwritten by a re-run of it."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", run_key).strip("._") or "run"
    return Path(root) / safe


def write_report(data: ReportData, root: str | os.PathLike[str]) -> ReportPaths:
    """Render and write ``report.md``, ``report.html`` and the chart SVGs. Writes are atomic per file
    (temp file + rename), so a reader never sees half a report; a chart file of an earlier render of the same
    run that this one does not draw (a PNG of an older release, a chart with nothing to plot now) is removed."""
    directory = report_dir_for(root, data.run_key)
    directory.mkdir(parents=True, exist_ok=True)
    drawn = (
        ("means", means_chart_svg(data.versions)),
        ("deltas", delta_chart_svg([r for r in data.ab_results if r.query_set == "gold"])),
    )
    charts = {name: svg for name, svg in drawn if svg}
    chart_files = {}
    for name, svg in charts.items():
        _atomic_write(directory / f"{name}.svg", svg)
        chart_files[name] = f"{name}.svg"
    for name, _ in drawn:  # an earlier render's chart this one does not draw (or a PNG of a release before SVG)
        for stale in {f"{name}.svg", f"{name}.png"} - set(chart_files.values()):
            (directory / stale).unlink(missing_ok=True)
    md = directory / "report.md"
    page = directory / "report.html"
    related = related_reports(directory)
    _atomic_write(md, render_markdown(data, chart_files, related).encode("utf-8"))
    _atomic_write(page, render_html(data, charts, related).encode("utf-8"))
    return ReportPaths(directory, md, page)


def related_reports(directory: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(label, relative URL) of each report of :data:`RELATED` that ``directory`` holds, in that order."""
    return [(label, quote(path)) for path, label in RELATED if (Path(directory) / path).is_file()]


def link_related(directory: str | os.PathLike[str]) -> bool:
    """Link the related reports ``directory`` holds now (one written after the run's report) from its
    ``report.html`` and ``report.md``: the line under the title is written anew, as :func:`write_report`
    renders it. False when the folder holds no run report."""
    directory = Path(directory)
    md, page = directory / "report.md", directory / "report.html"
    if not (md.is_file() and page.is_file()):
        return False
    related = related_reports(directory)
    html = _RELATED_HTML.sub("", page.read_text(encoding="utf-8"), count=1)
    nav = render_related(related, html=True).rstrip("\n")
    if nav:
        html = html.replace("</h1>", "</h1>\n" + nav, 1)
    text = md.read_text(encoding="utf-8")
    title_end = text.find("\n\n") + 2  # the report starts with its title line
    rest = text[title_end:]
    if rest.startswith("Also in this folder: "):  # the earlier line
        rest = rest.split("\n\n", 1)[1]
    _atomic_write(md, (text[:title_end] + render_related(related, html=False) + rest).encode("utf-8"))
    _atomic_write(page, sanitized_page(html, REPORT_CSP).encode("utf-8"))
    return True


def _atomic_write(path: Path, content: bytes) -> None:
    write_atomic(path, content)  # no temporary file is left behind when the disk is full
