"""Markdown and self-contained HTML renderings of a run report, from Jinja2 templates (``templates/``).

The content is :func:`evalops.reports.tables.report_sections` (data: sections, bullets with a kind, cells
with a tone); the templates only lay it out. Every piece of text is escaped for its format: production
query text is untrusted. Both formats first drop control and bidi characters and cut long text with a
marker (:mod:`evalops.util.safetext`). HTML is autoescaped by Jinja2 everywhere; markdown goes through
:func:`evalops.util.safetext.markdown_inline` (``&`` and ``<`` as entities, link, image, emphasis, pipe and
backtick syntax backslash-escaped), so a query like ``[phish](http://...)`` is shown, never linked or loaded.
Charts are SVG (or PNG) bytes: inlined as base64 ``data:`` image URIs in HTML, referenced as sibling files
in markdown.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from evalops.reports.model import ReportData
from evalops.reports.tables import report_sections
from evalops.util.htmlpolicy import REPORT_CSP, sanitized_page
from evalops.util.safetext import markdown_inline, plain

if TYPE_CHECKING:  # pragma: no cover
    import jinja2

__all__ = ["TEMPLATES", "render_markdown", "render_html", "render_related", "md_escape"]

TEMPLATES = Path(__file__).resolve().parent / "templates"
TEXT_LIMIT = 2000  # characters per cell or line; a 20,000-character query is cut with a marker

# the deltas chart draws the interval each decision read (its family's level), not a 95% one
_CHART_ALT = {"means": "Measures per version with 95% CIs",
              "deltas": "Candidate minus baseline with each decision interval (at its family's level)"}


def md_escape(text: str) -> str:
    """Escape text for a markdown table cell or line (:func:`evalops.util.safetext.markdown_inline`): no link,
    image, emphasis, HTML, pipe or backtick survives; control and bidi characters go; long text is cut."""
    return markdown_inline(str(text), TEXT_LIMIT)


def _data_uri(image: bytes) -> str:
    """A chart's bytes as a base64 ``data:`` URI, typed by its content (PNG or SVG)."""
    kind = "image/png" if image.startswith(b"\x89PNG") else "image/svg+xml"
    return f"data:{kind};base64,{base64.b64encode(image).decode('ascii')}"


def _md_inline(text: str) -> str:
    """Our own sentences may use `code` spans; every other markup character is escaped."""
    parts = plain(text, TEXT_LIMIT).split("`")
    return "`".join(part if i % 2 else md_escape(part) for i, part in enumerate(parts))


def _plain(text: object) -> str:
    return plain(str(text), TEXT_LIMIT)


def _code_spans(text: str):
    """Escaped text whose own `code` spans become <code> (the backticks survive escaping unchanged)."""
    from markupsafe import Markup, escape

    parts = str(escape(_plain(text))).split("`")
    return Markup("".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts)))


@functools.cache
def _environment(html: bool) -> jinja2.Environment:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=html,  # markdown is escaped by its own filters, not as HTML
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(md=md_escape, md_inline=_md_inline, plain=_plain, code_spans=_code_spans,
                       data_uri=_data_uri)
    return env


def render_markdown(data: ReportData, chart_files: Mapping[str, str] | None = None,
                    related: Sequence[tuple[str, str]] = ()) -> str:
    """The report as GitHub-flavoured markdown. ``chart_files`` maps a chart name to a relative image path;
    ``related``: (label, relative URL) of the other reports in the run's folder, linked under the title."""
    text = _environment(False).get_template("report.md.j2").render(
        title=data.title, sections=report_sections(data), charts=dict(chart_files or {}), chart_alt=_CHART_ALT,
        related=list(related),
    )
    return text.rstrip() + "\n"


def render_related(related: Sequence[tuple[str, str]], html: bool) -> str:
    """The line under the title that links the other reports of the run's folder, as the report renders it
    (an HTML ``<nav class="related">`` or a markdown line); empty without any."""
    name = "related.html.j2" if html else "related.md.j2"
    return _environment(html).get_template(name).render(related=list(related))


def render_html(data: ReportData, charts: Mapping[str, bytes] | None = None,
                related: Sequence[tuple[str, str]] = ()) -> str:
    """The report as one self-contained HTML page: inline CSS, charts as base64 images, no external request, no
    script (its Content-Security-Policy meta tag says so to the browser); the rendered page then goes through
    the sanitiser (:func:`evalops.util.htmlpolicy.sanitized_page`)."""
    page = _environment(True).get_template("report.html.j2").render(
        title=data.title, day=data.day, sections=report_sections(data), charts=dict(charts or {}),
        chart_alt=_CHART_ALT, csp=REPORT_CSP, related=list(related),
    )
    return sanitized_page(page, REPORT_CSP)
