"""JSON Lines: one JSON object per line, read with the line number of each record."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from evalops.errors import FormatError
from evalops.formats._source import Source, as_source

__all__ = ["read_jsonl", "write_jsonl"]


def read_jsonl(path: str | os.PathLike[str] | Source) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, record)`` for each non-blank line. Bad JSON, a non-object, text that is not
    UTF-8 or a damaged ``.gz``/``.zst`` raises ``FormatError`` naming the file and line. A byte order
    mark is skipped; ``-`` reads standard input."""
    source = as_source(path)
    for lineno, line in source.lines():
        if not line.strip():
            continue
        text = source.decode(line, lineno)
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(f"invalid JSON ({exc.msg} at column {exc.colno})", path=source.name, line=lineno) from None
        except RecursionError:
            raise FormatError("JSON nested too deeply", path=source.name, line=lineno) from None
        if not isinstance(record, dict):
            raise FormatError(
                f"expected a JSON object per line, found {type(record).__name__}", path=source.name, line=lineno
            )
        yield lineno, record


def write_jsonl(records: Iterable[Mapping[str, Any]], path: str | os.PathLike[str]) -> int:
    """Write records, one compact JSON object per line (UTF-8, not ASCII-escaped). Returns the count."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
            n += 1
    return n
