"""Markdown and self-contained HTML renderings of a run report.

Every piece of text is escaped for its format: production query text is untrusted. HTML gets entity
escaping everywhere (``html.escape`` with quotes); markdown gets ``&`` and ``<`` escaped too (GitHub and
most viewers render inline HTML), plus escaped table pipes and backticks and flattened newlines.
Charts are PNG bytes: inlined as base64 ``data:`` URIs in HTML, referenced as sibling files in markdown.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping

from evalops.reports.model import ReportData
from evalops.reports.tables import Table, report_sections

__all__ = ["render_markdown", "render_html", "md_escape"]

_CHART_ALT = {"means": "Measures per version", "deltas": "Candidate minus baseline with 95% CI"}


def _no_html(text: str) -> str:
    """``&`` and ``<`` are what can start markup; ``>`` alone cannot, so arrows stay readable."""
    return text.replace("&", "&amp;").replace("<", "&lt;")


def md_escape(text: str) -> str:
    """Escape text for a markdown table cell or line: markup, pipes, backticks, newlines."""
    out = _no_html(str(text))
    return out.replace("|", "\\|").replace("`", "\\`").replace("\r", " ").replace("\n", " ")


def _md_inline(text: str) -> str:
    """Our own sentences may use `code` spans; only their markup is escaped."""
    return _no_html(text).replace("\n", " ")


def _md_table(table: Table) -> list[str]:
    lines = ["| " + " | ".join(md_escape(h) for h in table.header) + " |",
             "|" + "|".join("---" for _ in table.header) + "|"]
    lines += ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in table.rows]
    return lines


def render_markdown(data: ReportData, chart_files: Mapping[str, str] | None = None) -> str:
    """The report as GitHub-flavoured markdown. ``chart_files`` maps a chart name to a relative PNG path."""
    charts = chart_files or {}
    lines = [f"# {md_escape(data.title)}", ""]
    for section in report_sections(data):
        lines += [f"## {md_escape(section.title)}", ""]
        for p in section.paragraphs:
            lines += [_md_inline(p), ""]
        if section.bullets:
            lines += [f"- {md_escape(b)}" for b in section.bullets] + [""]
        for caption, table in section.tables:
            if caption:
                lines += [f"**{md_escape(caption)}**", ""]
            lines += _md_table(table) + [""]
        for name in section.charts:
            if name in charts:
                lines += [f"![{_CHART_ALT.get(name, name)}]({charts[name]})", ""]
    return "\n".join(lines).rstrip() + "\n"


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC","Source Han Sans SC",
"PingFang SC","Hiragino Sans GB","Microsoft YaHei","WenQuanYi Micro Hei","Droid Sans Fallback",sans-serif;
margin:2rem 0;color:#222;padding:0 1.5rem}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.3rem .55rem;text-align:left;vertical-align:top}
th{background:#f3f4f6}
td.regression{color:#c0392b;font-weight:700}td.improvement{color:#1e8449;font-weight:700}
caption{text-align:left;font-weight:600;padding:.3rem 0}
code{background:#f3f4f6;padding:0 .2rem}
.alert{color:#c0392b;font-weight:600}
img{max-width:100%}
"""


def _h(text: str) -> str:
    return html.escape(str(text), quote=True)


def _html_inline(text: str) -> str:
    """Escape, then turn our own `code` spans into <code> (the backticks survive escaping unchanged)."""
    parts = _h(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def _html_table(caption: str, table: Table) -> list[str]:
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{_h(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{_h(h)}</th>" for h in table.header) + "</tr></thead><tbody>")
    for row in table.rows:
        cells = []
        for c in row:
            cls = c.lower() if c.lower() in ("regression", "improvement") else ""
            cells.append(f'<td class="{cls}">{_h(c)}</td>' if cls else f"<td>{_h(c)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return out


def render_html(data: ReportData, charts: Mapping[str, bytes] | None = None) -> str:
    """The report as one self-contained HTML page: inline CSS, charts as base64 PNG, no external request."""
    charts = charts or {}
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_h(data.title)} · {_h(data.day)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{_h(data.title)}</h1>",
    ]
    for section in report_sections(data):
        out.append(f"<h2>{_h(section.title)}</h2>")
        out += [f"<p>{_html_inline(p)}</p>" for p in section.paragraphs]
        if section.bullets:
            out.append("<ul>")
            for b in section.bullets:
                cls = ' class="alert"' if b.startswith("ALERT") else ""
                out.append(f"<li{cls}>{_h(b)}</li>")
            out.append("</ul>")
        for caption, table in section.tables:
            out += _html_table(caption, table)
        for name in section.charts:
            png = charts.get(name)
            if png:
                b64 = base64.b64encode(png).decode("ascii")
                out.append(f'<img alt="{_h(_CHART_ALT.get(name, name))}" src="data:image/png;base64,{b64}">')
    out.append("</body></html>")
    return "\n".join(out) + "\n"
