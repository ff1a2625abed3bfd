"""Text-anchored judgments: relevance as an excerpt of a source document, so it survives re-chunking.

One judgment is ``(query_id, doc_id, start, end, excerpt, grade)``: the characters ``[start, end)`` of the
document's text (:mod:`evalops.chunking.sources`) are relevant to the query with ``grade`` (an integer; 0
records an excerpt an annotator read and found not relevant). ``excerpt`` is the text of the span, kept
for verification: reading checks it against the source, so a judgment made on another version of the
text is refused instead of scoring the wrong characters.

File formats (rows in any order; ``relevance`` may stand for ``grade``):

* JSON Lines: ``{"query_id": "1", "doc_id": "d7", "start": 0, "end": 120, "excerpt": "...", "grade": 1}``;
* CSV with a header: ``query_id,doc_id,start,end,excerpt,grade``.

``excerpt`` may be left out (or empty): it is then taken from the source. The same (query, doc, start,
end) twice is an error. Chunk-id gold sets (TREC qrels, BEIR) are read as before, by
:mod:`evalops.formats`; :mod:`evalops.chunking.migrate` converts between the two.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evalops.chunking.sources import SourceTexts
from evalops.data import Qrels
from evalops.errors import FormatError
from evalops.fingerprint import content_digest
from evalops.formats.jsonl import read_jsonl, write_jsonl

__all__ = ["AnchoredJudgment", "AnchoredJudgments", "read_anchored_judgments", "write_anchored_judgments"]

COLUMNS: tuple[str, ...] = ("query_id", "doc_id", "start", "end", "excerpt", "grade")


@dataclass(frozen=True)
class AnchoredJudgment:
    """One text-anchored judgment (see the module docstring)."""

    query_id: str
    doc_id: str
    start: int
    end: int
    excerpt: str
    grade: int


@dataclass(frozen=True, eq=False)
class AnchoredJudgments:
    """Text-anchored judgments as a tuple of :class:`AnchoredJudgment`, sorted by (query, doc, start, end).

    ``source`` names where they came from. Build with :meth:`of` (checks spans and excerpts against the
    source texts) or :func:`read_anchored_judgments`.
    """

    rows: tuple[AnchoredJudgment, ...]
    source: str | None = None
    _by_query: dict[str, tuple[AnchoredJudgment, ...]] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, rows: Iterable[AnchoredJudgment | Mapping[str, Any]], sources: SourceTexts,
           source: str | None = None) -> AnchoredJudgments:
        """Checked judgments. A row is refused (``FormatError`` naming ``source`` and the row, 1-based) when
        its document is unknown, its span is out of the text's range, its excerpt differs from the text at
        the span, its grade is not an integer, or it repeats a judged span."""
        out: list[AnchoredJudgment] = []
        seen: dict[tuple[str, str, int, int], int] = {}
        for i, row in enumerate(rows, start=1):
            j = _checked(row if isinstance(row, Mapping) else row.__dict__, sources, source, i)
            key = (j.query_id, j.doc_id, j.start, j.end)
            if key in seen:
                raise FormatError(f"query {j.query_id!r} judges span [{j.start}, {j.end}) of document {j.doc_id!r} "
                                  f"again (first in row {seen[key]}); keep one judgment per span", path=source, line=i)
            seen[key] = i
            out.append(j)
        out.sort(key=lambda j: (j.query_id, j.doc_id, j.start, j.end))
        return cls(tuple(out), source)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[AnchoredJudgment]:
        return iter(self.rows)

    @property
    def query_ids(self) -> list[str]:
        """The judged queries, sorted."""
        return sorted(self.by_query())

    def by_query(self) -> dict[str, tuple[AnchoredJudgment, ...]]:
        """Query id -> its judgments (computed once)."""
        if not self._by_query:
            grouped: dict[str, list[AnchoredJudgment]] = {}
            for j in self.rows:
                grouped.setdefault(j.query_id, []).append(j)
            self._by_query.update({q: tuple(js) for q, js in grouped.items()})
        return self._by_query

    @property
    def version(self) -> str:
        """Content hash of the judgments (16 hex digits): row order and file format do not change it."""
        return content_digest([[j.query_id, j.doc_id, j.start, j.end, j.grade] for j in self.rows])

    def to_records(self) -> list[dict[str, Any]]:
        return [dict(zip(COLUMNS, (j.query_id, j.doc_id, j.start, j.end, j.excerpt, j.grade), strict=True))
                for j in self.rows]

    def document_qrels(self) -> Any:
        """Document-level judgments (``evalops.data.Qrels``): each judged (query, document) with the highest
        grade of its excerpts, for document runs (:func:`evalops.chunking.aggregate.document_run`)."""

        best: dict[tuple[str, str], int] = {}
        for j in self.rows:
            key = (j.query_id, j.doc_id)
            best[key] = max(best.get(key, j.grade), j.grade)
        keys = sorted(best)
        return Qrels(np.array([q for q, _ in keys], dtype=object), np.array([d for _, d in keys], dtype=object),
                     np.array([best[k] for k in keys], dtype=np.int64), self.source)


def _integer(value: Any, name: str, source: str | None, row: int) -> int:
    if isinstance(value, bool):
        value = None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if not isinstance(value, (int, np.integer)):
        raise FormatError(f"{name} is {value!r}; it must be an integer", path=source, line=row)
    return int(value)


def _checked(row: Mapping[str, Any], sources: SourceTexts, source: str | None, i: int) -> AnchoredJudgment:
    if "grade" not in row and "relevance" in row:
        row = {**row, "grade": row["relevance"]}
    missing = [c for c in ("query_id", "doc_id", "start", "end", "grade") if row.get(c) in (None, "")]
    if missing:
        raise FormatError(f"missing {missing}; a text-anchored judgment needs {list(COLUMNS)} (excerpt optional)",
                          path=source, line=i)
    qid, did = str(row["query_id"]), str(row["doc_id"])
    start, end = _integer(row["start"], "start", source, i), _integer(row["end"], "end", source, i)
    grade = _integer(row["grade"], "grade", source, i)
    if did not in sources:
        raise FormatError(f"document {did!r} is not in {sources.name} (snapshot {sources.snapshot_id}); judge a "
                          "document of the source text, or point at the source the judgments were made on",
                          path=source, line=i)
    text = sources.text(did)
    if not 0 <= start < end <= len(text):
        raise FormatError(f"span [{start}, {end}) is out of range for document {did!r} ({len(text)} characters); "
                          "a span needs 0 <= start < end <= the text's length", path=source, line=i)
    excerpt = row.get("excerpt")
    actual = text[start:end]
    if excerpt is None or excerpt == "" or (isinstance(excerpt, float) and np.isnan(excerpt)):
        excerpt = actual
    elif str(excerpt) != actual:
        found = text.find(str(excerpt))
        hint = (f"; the excerpt occurs at [{found}, {found + len(str(excerpt))}): fix start and end"
                if found >= 0 else "; the excerpt occurs nowhere in the document: the source text changed, or "
                "the excerpt was edited")
        raise FormatError(f"excerpt does not match document {did!r} at [{start}, {end}) (the source reads "
                          f"{_short(actual)!r}, the row {_short(str(excerpt))!r}){hint}", path=source, line=i)
    return AnchoredJudgment(qid, did, start, end, str(excerpt), grade)


def _short(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def read_anchored_judgments(path: str | os.PathLike[str], sources: SourceTexts) -> AnchoredJudgments:
    """Read and check a text-anchored gold set: ``.csv`` (a header row) or JSON Lines (anything else).
    Errors name the file and the line (the CSV header is line 1)."""
    p = Path(path)
    if p.suffix.lower() == ".csv":
        rows = list(_csv_rows(p))
    else:

        rows = list(read_jsonl(p))
    if not rows:
        raise FormatError("no judgments; a text-anchored gold set needs at least one row", path=str(p))
    judged: list[AnchoredJudgment] = []
    seen: dict[tuple[str, str, int, int], int] = {}
    for line, record in rows:
        j = _checked(record, sources, str(p), line)
        key = (j.query_id, j.doc_id, j.start, j.end)
        if key in seen:
            raise FormatError(f"query {j.query_id!r} judges span [{j.start}, {j.end}) of document {j.doc_id!r} "
                              f"again (first on line {seen[key]}); keep one judgment per span", path=str(p), line=line)
        seen[key] = line
        judged.append(j)
    judged.sort(key=lambda j: (j.query_id, j.doc_id, j.start, j.end))
    return AnchoredJudgments(tuple(judged), str(p))


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise FormatError("file not found", path=str(path))
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None:
            return
        unknown = [c for c in reader.fieldnames if c not in (*COLUMNS, "relevance")]
        if unknown:
            raise FormatError(f"unknown column(s) {unknown}; the columns are {list(COLUMNS)}", path=str(path), line=1)
        start = 1
        try:
            for record in reader:
                yield start + 1, record
                start = reader.line_num
        except (csv.Error, UnicodeDecodeError) as exc:
            raise FormatError(f"not readable as CSV ({exc})", path=str(path), line=reader.line_num) from None


def write_anchored_judgments(judgments: AnchoredJudgments, path: str | os.PathLike[str]) -> Path:
    """JSON Lines, one judgment per line, sorted (``.csv``: CSV with a header)."""
    p = Path(path)
    if p.suffix.lower() == ".csv":
        with open(p, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(COLUMNS))
            writer.writeheader()
            writer.writerows(judgments.to_records())
        return p

    write_jsonl(judgments.to_records(), p)
    return p

