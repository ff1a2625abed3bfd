"""JSON Lines: one JSON object per line, read with the line number of each record."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from evalops.errors import FormatError

__all__ = ["read_jsonl", "write_jsonl"]


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, record)`` for each non-blank line. Bad JSON or a non-object raises
    ``FormatError`` naming the file and line."""
    p = Path(path)
    if not p.is_file():
        raise FormatError("file not found", path=str(p))
    with open(p, encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise FormatError(f"invalid JSON ({exc.msg} at column {exc.colno})", path=str(p), line=lineno) from None
            if not isinstance(record, dict):
                raise FormatError(
                    f"expected a JSON object per line, found {type(record).__name__}", path=str(p), line=lineno
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
