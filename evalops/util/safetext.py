"""Untrusted text (query text from production logs, retriever errors) made safe before any medium sees it.

:func:`plain` is the part every medium shares: control characters (C0 and C1, NUL included, except tab and
newline when asked to keep them) and bidi controls (U+202A-U+202E, U+2066-U+2069, U+200E/U+200F, U+061C),
which can make a terminal or a report show text in an order other than its bytes', are removed, and the
text is cut to ``limit`` characters with a marker saying how much was cut. Each medium then escapes its own
markup: :func:`markdown_inline` here, Slack in :func:`evalops.alerting.message.slack_text`, HTML with
Jinja2's autoescape, and a spreadsheet cell with :func:`csv_cell`.

:func:`refuse_unsafe` is the input side, the one rule every reader applies to ids (run, qrels and gold query
ids, document ids, knowledge-base ids) and to query texts: an id holds no control character at all (C0,
tab included, DEL and C1; an ANSI escape starts with ESC), no byte order mark (U+FEFF; the one that starts
a file is skipped by the readers) and no lone surrogate (a ``\\ud800`` JSON escape with no pair, which no
UTF-8 writer and no database can store). A query text follows the same rule but may hold tab, line feed
and carriage return (a pasted multi-line question); those become spaces wherever it is shown. Such input
is refused where it is read, naming the file and line, whatever the warehouse backend (PostgreSQL refuses
NUL in text; SQLite would store it). Document texts and titles are only held to the last part (no lone
surrogate): a form feed from a PDF page break is common there and harmless.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from typing import Any

from evalops.errors import FormatError

__all__ = ["DEFAULT_LIMIT", "ARROW_UNSAFE_ID", "ARROW_UNSAFE_TEXT", "csv_cell", "csv_text", "csv_uncell",
           "markdown_inline", "plain", "first_unsafe", "refuse_unsafe", "truncate", "unlinked", "unsafe_character",
           "WORD_JOINER"]

DEFAULT_LIMIT = 500

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")  # all but tab and newline
_BREAKS = re.compile(r"[\t\n\r\x0b\x0c]")

# What can start markup inside a line of markdown: links and images (``[``, ``]``, ``!``), ``*`` emphasis and
# strike-through, code spans, table cells and the escape character itself. ``&`` and ``<`` (entities and
# inline HTML) become HTML entities, which every viewer shows as the characters.
_MD_SPECIAL = re.compile(r"([\\`*\[\]!|~])")


# What makes a spreadsheet read a CSV cell as a formula (OWASP "CSV injection"): =SUM(...), +cmd|..., -2+3,
# @SUM(...), and a leading tab or carriage return that some importers drop before looking (and a line feed,
# which is whitespace to the same importers, and what csv_text writes for a carriage return).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")  # a plain decimal, nothing around it


def csv_cell(text: str) -> str:
    """``text`` as a CSV cell no spreadsheet runs as a formula: a cell starting with ``= + - @``, a tab, a
    carriage return or a line feed (after any single quotes) gets a leading ``'``; a number written as text (``-0.25``,
    ``+1e-3``) stays as it is, so numeric columns stay numbers. Only text cells go through here.

    The rule is reversible, for a reader that needs the original: drop the first character of a cell that
    starts with ``'`` when the rest would itself get a quote (``"'" + csv_cell(x)`` never collides with an
    ``x`` left alone, since a quote followed by a formula start is itself quoted)."""
    if text.lstrip("'")[:1] in _FORMULA_START and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


# What chat apps, PagerDuty's web app and mail clients link without any markup: a URL (``http://...``), a bare
# domain with a path (``evil.example/login``) and an e-mail address (``user@host.tld``). Each needs a dot, an
# ``@``, a colon or a slash joined to the letters around it (full-width and ideographic forms too: some
# linkers read them as the ASCII ones). A WORD JOINER (U+2060: no width, no line break) after each one
# splits the would-be link: the scheme is no longer followed by ``//``, and every label after a dot starts
# with a character that is no letter, so no top-level domain is recognised. A dot or colon between two
# digits (``0.4567``, ``12:00``) is a number or a time, and one before a space or the end ends a sentence:
# neither is ever a link, and those stay as they are.
_LINK_SEPARATOR = re.compile(r"(?:[@/\uff20\uff0f]"
                             r"|(?<!\d)[.:\u3002\uff0e\uff61\uff1a]|[.:\u3002\uff0e\uff61\uff1a](?!\d))"
                             r"(?=\S)")
WORD_JOINER = "\u2060"


def unlinked(text: str, keep: Iterable[str] = ()) -> str:
    """``text`` with nothing a chat app, PagerDuty or a mail client would turn into a link by itself (the
    comment above :data:`WORD_JOINER`); the strings of ``keep`` (a trusted report URL) stay as they are,
    wherever they occur. It reads the same; copied, it holds the invisible joiners."""
    kept = sorted({k for k in keep if k}, key=len, reverse=True)
    if not kept:
        return _LINK_SEPARATOR.sub(lambda m: m.group() + WORD_JOINER, text)
    parts = re.split("(" + "|".join(map(re.escape, kept)) + ")", text)
    return "".join(part if i % 2 else _LINK_SEPARATOR.sub(lambda m: m.group() + WORD_JOINER, part)
                   for i, part in enumerate(parts))


def csv_uncell(text: str) -> str:
    """The original of a cell :func:`csv_cell` wrote: ``'`` dropped when what follows would itself have got
    one (``'=SUM(A1)`` -> ``=SUM(A1)``, ``''=x`` -> ``'=x``); any other cell as it is. A spreadsheet reads
    such a cell the same way (a leading ``'`` marks text), so a file edited there reads back unchanged."""
    if text[:1] == "'" and csv_cell(text[1:]) == text:
        return text[1:]
    return text


def csv_text(header: Sequence[str] | None, rows: Iterable[Sequence[Any]]) -> str:
    """The CSV document every CSV evalops writes goes through: ``header`` (None: no header line) and
    ``rows``, each text cell through :func:`csv_cell` (numbers, booleans and None as :mod:`csv` writes
    them: ``None`` is an empty cell), ``\\n`` line ends, quoting as :mod:`csv`'s default dialect. A carriage
    return inside a cell is written as a line feed: Python's writer quotes a cell for its line terminator's
    characters only, and a bare CR left unquoted ends the row in spreadsheets and in Python's reader, so
    the rest of the cell (``=1+1`` after ``\\r``) would start a row of its own, unguarded."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if header is not None:
        writer.writerow([_csv_str(str(name)) for name in header])
    writer.writerows([_csv_str(v) if isinstance(v, str) else v for v in row] for row in rows)
    return buffer.getvalue()


def _csv_str(text: str) -> str:
    return csv_cell(text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text)


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


# -- the input rule ----------------------------------------------------------------------------------------

_ID_RANGES = "\x00-\x1f\x7f-\x9f\ufeff"
_TEXT_RANGES = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufeff"  # tab, line feed, carriage return allowed
_UNSAFE = {
    "id": re.compile(f"[{_ID_RANGES}\ud800-\udfff]"),
    "text": re.compile(f"[{_TEXT_RANGES}\ud800-\udfff]"),
    "document": re.compile("[\ud800-\udfff]"),
}
# The same classes for Arrow's regular expressions (RE2; Arrow strings are valid UTF-8, so no surrogates).
ARROW_UNSAFE_ID = "[\\x00-\\x1f\\x{7f}-\\x{9f}\\x{feff}]"
ARROW_UNSAFE_TEXT = "[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x{7f}-\\x{9f}\\x{feff}]"
_NAMES = {0: "a NUL byte", 0x1B: "an escape character (ESC, which starts an ANSI terminal sequence)",
          0x09: "a tab", 0x0A: "a line break", 0x0D: "a carriage return", 0x7F: "a DEL character",
          0xFEFF: "a byte order mark (U+FEFF)"}


def unsafe_character(value: str, kind: str = "id") -> str | None:
    """What the first character of ``value`` that ``kind`` (``"id"``, ``"text"`` for a query text,
    ``"document"`` for a document's text or title) may not hold is, and where; None when there is none."""
    found = _UNSAFE[kind].search(value)
    if found is None:
        return None
    code = ord(found.group())
    if code in _NAMES:
        what = _NAMES[code]
    elif 0xD800 <= code <= 0xDFFF:
        what = f"a lone surrogate escape (\\u{code:04x}, half of a pair, not a character)"
    else:
        what = f"the {'C0' if code < 0x20 else 'C1'} control character U+{code:04X}"
    return f"{what} at character {found.start() + 1}"


def first_unsafe(values: list[str], kind: str = "id") -> int | None:
    """The index of the first of ``values`` that holds a character ``kind`` may not hold, or None: one
    search over the values joined by spaces (allowed in every kind), then a look at each only when it hits."""
    if _UNSAFE[kind].search(" ".join(values)) is None:
        return None
    return next(i for i, value in enumerate(values) if _UNSAFE[kind].search(value))


def refuse_unsafe(value: str, what: str, kind: str = "id", *, path: str | None = None,
                  line: int | None = None) -> str:
    """``value`` when it follows the input rule for ``kind`` (the module docstring), else a
    :class:`~evalops.errors.FormatError` naming ``path``, ``line``, ``what`` (``"query id"``) and the
    character; the value is shown escaped (``repr``), so the message itself is safe on a terminal."""
    problem = unsafe_character(value, kind)
    if problem is None:
        return value
    fix = ("remove control characters, ANSI escapes and byte order marks from ids"
           if kind == "id" else "remove the control characters (tab and line breaks may stay)" if kind == "text"
           else "write the character the escape stands for, or remove the escape")
    shown = truncate(repr(value).encode("utf-8", "backslashreplace").decode("utf-8"), 80)
    raise FormatError(f"{what} holds {problem} ({shown}); {fix}", path=path, line=line)
