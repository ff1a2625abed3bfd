"""Query logs from OpenTelemetry traces: OTLP JSON exports of OpenInference retriever spans.

A file named ``*.otlp.json`` or ``*.otlp.jsonl`` (optionally ``.gz`` / ``.zst``), in a date partition like
every log file, holds OTLP ``ExportTraceServiceRequest`` objects in the OTLP JSON encoding: one object for
the whole file, or one per line (the OpenTelemetry Collector's file exporter). Each object is
``{"resourceSpans": [{"resource": {"attributes": [...]}, "scopeSpans": [{"spans": [...]}]}]}`` and an
attribute is ``{"key": ..., "value": {"stringValue" | "intValue" | "doubleValue" | "boolValue" |
"arrayValue": ...}}`` (``intValue`` is a decimal string, as 64-bit integers are in OTLP JSON).

Every span whose ``openinference.span.kind`` is ``RETRIEVER`` is one log row; other spans (LLM, chain,
embedding) are skipped. The row's fields (the same canonical fields as every log, and the same contracts
and scrubbing downstream):

* ``timestamp``: the span's ``startTimeUnixNano``, as UTC;
* ``query``: the attribute ``input.value`` (when ``input.mime_type`` is ``application/json``, the JSON
  object's ``query`` or ``input`` text);
* ``retriever_version``: the attribute ``service.version``; the segment: the attribute named like the
  segment column; ``clicked_doc_ids`` / ``cited_doc_ids``: attributes of those names (arrays of ids);
* ``retrieved_doc_ids`` / ``retrieved_scores``: ``retrieval.documents.N.document.id`` and ``.score`` in
  the order of N (the retriever's ranking). Only the ids and scores are read, never the documents' text.

``columns`` (the log reader's mapping) names other attributes for these fields. A span's own attribute
wins over its resource's. Every other attribute is dropped on reading. A line that is not JSON, a request
that is not an object, or an attribute of the wrong type makes a row with a ``malformed`` reason, as in
the JSONL reader; ``line`` is the request's line (its span's position in a one-object file).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from evalops.errors import FormatError
from evalops.formats._source import as_source
from evalops.querylog._parse import TEXT_FIELDS, finish

__all__ = ["parse_otlp", "OTLP_SUFFIXES", "OTLP_ATTRIBUTES", "RETRIEVED_COLUMNS"]

OTLP_SUFFIXES: tuple[str, ...] = tuple(f".otlp.{kind}{z}" for kind in ("json", "jsonl") for z in ("", ".gz", ".zst"))
# canonical field -> the attribute read when the column mapping leaves the field's name as is
OTLP_ATTRIBUTES: dict[str, str] = {"query": "input.value", "retriever_version": "service.version"}
RETRIEVED_COLUMNS: tuple[str, ...] = ("retrieved_doc_ids", "retrieved_scores")
SPAN_KIND = "openinference.span.kind"
_DOCUMENT = re.compile(r"retrieval\.documents\.(\d+)\.document\.(id|score)")


class _Bad(ValueError):
    """A malformed value; the message is the row's reason."""


def _any_value(value: Any) -> Any:
    """An OTLP JSON ``AnyValue`` as a Python value."""
    if not isinstance(value, dict) or len(value) != 1:
        raise _Bad("an attribute value is not an OTLP AnyValue")
    (kind, inner), = value.items()
    if kind == "stringValue" and isinstance(inner, str):
        return inner
    if kind == "intValue" and isinstance(inner, (str, int)) and not isinstance(inner, bool):
        try:
            return int(inner)
        except ValueError:
            raise _Bad(f"intValue {str(inner)[:20]!r} is not an integer") from None
    if kind == "doubleValue" and isinstance(inner, (int, float, str)) and not isinstance(inner, bool):
        try:
            return float(inner)  # "NaN" and "Infinity" are strings in OTLP JSON
        except ValueError:
            raise _Bad(f"doubleValue {str(inner)[:20]!r} is not a number") from None
    if kind == "boolValue" and isinstance(inner, bool):
        return inner
    if kind == "arrayValue" and isinstance(inner, dict):
        return [_any_value(v) for v in inner.get("values", [])]
    raise _Bad(f"attribute value {kind} is not supported here")


def _attributes(items: Any) -> dict[str, Any]:
    if items is None:
        return {}
    if not isinstance(items, list):
        raise _Bad("attributes is not a list")
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise _Bad("an attribute has no key")
        out[item["key"]] = _any_value(item.get("value"))
    return out


def _spans(request: Any) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(resource attributes, span) of every span of one ``ExportTraceServiceRequest``."""
    if not isinstance(request, dict):
        raise _Bad("not a JSON object")
    for resource_spans in request.get("resourceSpans") or []:
        resource = _attributes(((resource_spans or {}).get("resource") or {}).get("attributes"))
        for scope_spans in resource_spans.get("scopeSpans") or []:
            for span in (scope_spans or {}).get("spans") or []:
                yield resource, span


def _timestamp(nanos: Any) -> str:
    if isinstance(nanos, bool) or not isinstance(nanos, (str, int)) or not str(nanos).isdigit():
        raise _Bad("startTimeUnixNano is not a count of nanoseconds")
    seconds, rest = divmod(int(nanos), 1_000_000_000)
    return datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=rest // 1000).isoformat()


def _query(attrs: Mapping[str, Any], name: str) -> Any:
    value = attrs.get(name)
    if name == "input.value" and isinstance(value, str) and attrs.get("input.mime_type") == "application/json":
        try:
            parsed = json.loads(value)
        except ValueError:
            raise _Bad("input.value is not the JSON its input.mime_type says") from None
        text = parsed.get("query", parsed.get("input")) if isinstance(parsed, dict) else None
        if not isinstance(text, str):
            raise _Bad("input.value (JSON) has no query or input text")
        return text
    return value


def _documents(attrs: Mapping[str, Any]) -> tuple[list[str] | None, list[float] | None]:
    found: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        match = _DOCUMENT.fullmatch(key)
        if match:
            found.setdefault(int(match[1]), {})[match[2]] = value
    if not found:
        return None, None
    ids: list[str] = []
    scores: list[float] = []
    for n in sorted(found):
        doc = found[n]
        if not isinstance(doc.get("id"), (str, int)) or isinstance(doc.get("id"), bool):
            raise _Bad(f"retrieval.documents.{n}.document.id is missing or not an id")
        score = doc.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
            raise _Bad(f"retrieval.documents.{n}.document.score is not a number")
        ids.append(str(doc["id"]))
        scores.append(float("nan") if score is None else float(score))
    return ids, scores


def _row(resource: Mapping[str, Any], span: Any, names: Mapping[str, str]) -> tuple[dict[str, Any], str | None] | None:
    """One canonical row of a retriever span (None for another kind of span), and its malformed reason."""
    row: dict[str, Any] = {c: None for c in (*names, *RETRIEVED_COLUMNS)}
    try:
        if not isinstance(span, dict):
            raise _Bad("a span is not a JSON object")
        attrs = {**resource, **_attributes(span.get("attributes"))}
        if attrs.get(SPAN_KIND) != "RETRIEVER":
            return None
        row["timestamp"] = _timestamp(span.get("startTimeUnixNano"))
        for canonical, name in names.items():
            if canonical == "timestamp":
                continue
            attribute = OTLP_ATTRIBUTES.get(canonical, name) if name == canonical else name
            row[canonical] = _query(attrs, attribute) if canonical == "query" else attrs.get(attribute)
        row["retrieved_doc_ids"], row["retrieved_scores"] = _documents(attrs)
    except _Bad as bad:
        return row, str(bad)
    return row, None


def _requests(path: Path) -> Iterator[tuple[int, Any]]:
    """(line, parsed request or the exception) of each request in the file."""
    try:
        text = b"".join(as_source(path).chunks()).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 text ({exc.reason} at byte {exc.start}); save the export as UTF-8",
                          path=str(path)) from None
    try:
        yield 0, json.loads(text)  # one object for the whole file (line 0: spans are numbered instead)
        return
    except ValueError:
        pass
    for lineno, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                yield lineno, json.loads(line)
            except ValueError as exc:
                yield lineno, exc


def parse_otlp(path: Path, names: Mapping[str, str], segment_column: str) -> pd.DataFrame:
    """Parse an OTLP JSON trace export into the canonical log frame (module docstring)."""
    columns: dict[str, list[Any]] = {c: [] for c in (*names, *RETRIEVED_COLUMNS)}
    reasons: list[str | None] = []
    lines: list[int] = []
    span_no = 0

    def add(row: Mapping[str, Any], reason: str | None, line: int) -> None:
        for c in columns:
            columns[c].append(row.get(c))
        reasons.append(reason)
        lines.append(line)

    empty = {c: None for c in columns}
    for lineno, request in _requests(path):
        if isinstance(request, ValueError):
            add(empty, "invalid JSON", lineno)
            continue
        try:
            for resource, span in _spans(request):
                span_no += 1
                made = _row(resource, span, names)
                if made is not None:
                    add(made[0], made[1], lineno or span_no)
        except _Bad as bad:
            add(empty, str(bad), lineno or span_no + 1)
    text_fields = ("timestamp", *TEXT_FIELDS, segment_column)
    retrieved = {c: columns.pop(c) for c in RETRIEVED_COLUMNS}
    frame = finish(columns, reasons, lines, text_fields)
    for c, values in retrieved.items():
        frame[c] = pd.Series(values, dtype=object)
    return frame

