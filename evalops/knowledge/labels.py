"""Per-document labels the knowledge base carries beside its text: a document's source (``evalops.sources``)
and its length (``evalops.spread``).

The source is a field of the BEIR corpus rows, declared in the project (``knowledge_base.sources.field``):
``source`` is read at the top level of a row, then in its ``metadata``; a dotted name (``metadata.origin``)
is a path into the row. The field is not part of a document's content hash (a relabelled source changes no
retrieval), so the labels are read from the corpus file, not from the snapshot.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from evalops.errors import ConfigError, FormatError
from evalops.util.safetext import plain

__all__ = ["SOURCE_NAME_LIMIT", "document_lengths", "document_sources"]

SOURCE_NAME_LIMIT = 200  # characters of a source name (the warehouse column's width)


def _lookup(row: dict[str, Any], field: str) -> Any:
    if field in row:
        return row[field]
    metadata = row.get("metadata")
    if isinstance(metadata, dict) and field in metadata:
        return metadata[field]
    node: Any = row
    for part in field.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def document_sources(path: str | os.PathLike[str], field: str) -> dict[str, str]:
    """``{doc_id: source}`` of a BEIR corpus (``corpus.jsonl`` or its folder) for the documents that carry
    ``field``. A value that is not a non-empty string is an error naming the file, the line and the fix.
    Names are kept as given, with control and bidi characters removed and cut to :data:`SOURCE_NAME_LIMIT`;
    every medium escapes them where it shows them."""
    p = Path(path)
    corpus = p / "corpus.jsonl" if p.is_dir() else p
    if not corpus.is_file() or corpus.suffix.lower() != ".jsonl":
        raise ConfigError(f"knowledge_base.sources.field is {field!r}, but {p} is not a BEIR corpus.jsonl (or a "
                          "folder holding one): only corpus rows carry a source field; unset the setting")
    out: dict[str, str] = {}
    with open(corpus, encoding="utf-8-sig") as handle:
        for line_no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise FormatError(f"invalid JSON ({exc.msg})", path=str(corpus), line=line_no) from None
            if not isinstance(row, dict) or "_id" not in row:
                raise FormatError("a corpus row must be an object with an _id", path=str(corpus), line=line_no)
            value = _lookup(row, field)
            if value is None:
                continue
            if not isinstance(value, str) or not plain(value, None).strip():
                raise FormatError(f"document {str(row['_id'])!r}: its source ({field}) is {value!r}; give a "
                                  "non-empty string or leave the field out", path=str(corpus), line=line_no)
            out[str(row["_id"])] = plain(value.strip(), SOURCE_NAME_LIMIT)
    return out


def document_lengths(docs: Any) -> dict[str, int]:
    """``{doc_id: characters of title and text}`` of a snapshot's documents frame (``doc_id``, ``title``,
    ``text``; a missing title or text counts 0)."""
    import pandas as pd

    frame = pd.DataFrame({"title": pd.Series(docs["title"], dtype=object),
                          "text": pd.Series(docs["text"], dtype=object)})
    lengths = (frame["title"].str.len().fillna(0) + frame["text"].str.len().fillna(0)).astype(int)
    return dict(zip(map(str, docs["doc_id"]), lengths.tolist(), strict=False))
