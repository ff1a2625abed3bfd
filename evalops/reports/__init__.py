"""Run reports: markdown and self-contained HTML (charts inlined as base64 SVG), one directory per run.

The charts are SVG drawn from the report's numbers (:mod:`evalops.reports.charts`); no plotting library.
"""

from evalops.reports.model import ABResult, ReportData, VersionScores
from evalops.reports.render import render_html, render_markdown
from evalops.reports.write import ReportPaths, report_dir_for, write_report

__all__ = [
    "ABResult",
    "ReportData",
    "ReportPaths",
    "VersionScores",
    "render_html",
    "render_markdown",
    "report_dir_for",
    "write_report",
]
