"""Write one run's report (markdown, HTML and chart SVGs) into its own directory."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from evalops.reports.charts import delta_chart_svg, means_chart_svg
from evalops.reports.model import ReportData
from evalops.reports.render import render_html, render_markdown
from evalops.util.storage import write_atomic

__all__ = ["ReportPaths", "write_report", "report_dir_for"]


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
    _atomic_write(md, render_markdown(data, chart_files).encode("utf-8"))
    _atomic_write(page, render_html(data, charts).encode("utf-8"))
    return ReportPaths(directory, md, page)


def _atomic_write(path: Path, content: bytes) -> None:
    write_atomic(path, content)  # no temporary file is left behind when the disk is full
