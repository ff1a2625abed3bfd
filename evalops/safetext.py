"""Untrusted text (query text from production logs, retriever errors) made safe before any medium sees it.

:func:`plain` is the part every medium shares: control characters (C0 and C1, NUL included, except tab and
newline when asked to keep them) and bidi controls (U+202A-U+202E, U+2066-U+2069, U+200E/U+200F, U+061C),
which can make a terminal or a report show text in an order other than its bytes', are removed, and the
text is cut to ``limit`` characters with a marker saying how much was cut. Each medium then escapes its own
markup: :func:`markdown_inline` here, Slack in :func:`evalops.alerting.message.slack_text`, HTML with
Jinja2's autoescape, and a spreadsheet cell with :func:`csv_cell`.
"""

from __future__ import annotations

import re

__all__ = ["DEFAULT_LIMIT", "csv_cell", "markdown_inline", "plain", "truncate"]

DEFAULT_LIMIT = 500

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")  # all but tab and newline
_BREAKS = re.compile(r"[\t\n\r\x0b\x0c]")

# What can start markup inside a line of markdown: links and images (``[``, ``]``, ``!``), ``*`` emphasis and
# strike-through, code spans, table cells and the escape character itself. ``&`` and ``<`` (entities and
# inline HTML) become HTML entities, which every viewer shows as the characters.
_MD_SPECIAL = re.compile(r"([\\`*\[\]!|~])")


# What makes a spreadsheet read a CSV cell as a formula (OWASP "CSV injection"): =SUM(...), +cmd|..., -2+3,
# @SUM(...), and a leading tab or carriage return that some importers drop before looking.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")  # a plain decimal, nothing around it


def csv_cell(text: str) -> str:
    """``text`` as a CSV cell no spreadsheet runs as a formula: a cell starting with ``= + - @``, a tab or a
    carriage return (after any single quotes) gets a leading ``'``; a number written as text (``-0.25``,
    ``+1e-3``) stays as it is, so numeric columns stay numbers. Only text cells go through here.

    The rule is reversible, for a reader that needs the original: drop the first character of a cell that
    starts with ``'`` when the rest would itself get a quote (``"'" + csv_cell(x)`` never collides with an
    ``x`` left alone, since a quote followed by a formula start is itself quoted)."""
    if text.lstrip("'")[:1] in _FORMULA_START and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def truncate(text: str, limit: int = DEFAULT_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, ending with ``… (N more characters)`` when it was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"… ({len(text) - limit} more characters)"


def plain(text: str, limit: int | None = DEFAULT_LIMIT, *, keep_newlines: bool = False) -> str:
    """``text`` without control and bidi characters (line breaks and tabs become spaces unless
    ``keep_newlines``), then truncated to ``limit`` characters."""
    text = str(text).replace("\r\n", "\n").replace("\r", "\n")
    if not keep_newlines:
        text = _BREAKS.sub(" ", text)
    text = _CONTROL.sub("", text)
    return truncate(text, limit) if limit is not None else text


def markdown_inline(text: str, limit: int | None = DEFAULT_LIMIT) -> str:
    """:func:`plain` text escaped for inline markdown: no link, image, emphasis, HTML or table cell can start."""
    text = plain(text, limit).replace("&", "&amp;").replace("<", "&lt;")
    return _MD_SPECIAL.sub(r"\\\1", text)
