"""Where a knowledge-base snapshot comes from: a BEIR corpus, a directory of documents, a SQL table, or a
manifest written earlier.

* BEIR: ``corpus.jsonl`` (``{"_id", "title", "text"}`` per line), or a folder holding one. Read through
  ``evalops.formats.read_beir_corpus``, which refuses duplicated ids with the file and line.
* Directory: every file under the folder whose suffix is in ``suffixes`` is one document. The id is the
  path relative to the folder (POSIX separators, suffix kept), the title is empty, the text is the file
  content (UTF-8). Files are read in sorted order; hidden files and folders are skipped.
* SQL table: one row per document, read with SQLAlchemy (``url`` or an ``Engine``). Ids and text come
  from the named columns; the title column is optional.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from evalops.errors import FormatError, InputError
from evalops.formats.beir import read_beir_corpus_arrow, read_beir_corpus_columns
from evalops.knowledge.snapshot import MANIFEST_KIND, KnowledgeBaseSnapshot
from evalops.util.safetext import refuse_unsafe

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

__all__ = [
    "snapshot_from_beir",
    "snapshot_from_directory",
    "snapshot_from_sql",
    "load_snapshot",
    "DOCUMENT_SUFFIXES",
]

DOCUMENT_SUFFIXES: tuple[str, ...] = (".txt", ".md", ".markdown", ".rst")


def snapshot_from_beir(path: str | os.PathLike[str]) -> KnowledgeBaseSnapshot:
    """From a BEIR ``corpus.jsonl`` file or a folder that contains one."""
    p = Path(path)
    corpus = p / "corpus.jsonl" if p.is_dir() else p
    columns = read_beir_corpus_arrow(corpus)  # a plain file Arrow reads as the line reader would
    if columns is not None:
        snapshot = KnowledgeBaseSnapshot.from_arrow(*columns, source=str(corpus))
        if snapshot is not None:
            return snapshot
    ids, titles, texts = read_beir_corpus_columns(corpus)  # a repeated id or bad line: named with its line
    return KnowledgeBaseSnapshot.from_columns(ids, titles, texts, source=str(corpus))


def snapshot_from_directory(
    folder: str | os.PathLike[str], suffixes: Sequence[str] = DOCUMENT_SUFFIXES
) -> KnowledgeBaseSnapshot:
    """One document per file under ``folder`` (see module docs)."""
    root = Path(folder)
    if not root.is_dir():
        raise FormatError("not a directory", path=str(root))
    wanted = {s.lower() for s in suffixes}
    ids: list[str] = []
    texts: list[str] = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts) or not path.is_file():
            continue
        if path.suffix.lower() not in wanted:
            continue
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as exc:
            raise FormatError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=str(path)) from None
        ids.append(refuse_unsafe(rel.as_posix(), "document id (the file's path)", path=str(path)))
    if not ids:
        raise FormatError(f"no documents with suffix {sorted(wanted)} found", path=str(root))
    frame = pd.DataFrame({"doc_id": ids, "title": [""] * len(ids), "text": texts})
    return KnowledgeBaseSnapshot.from_frame(frame, source=str(root))


def snapshot_from_sql(
    url: str | Engine,
    table: str,
    *,
    id_column: str = "doc_id",
    text_column: str = "text",
    title_column: str | None = None,
    schema: str | None = None,
) -> KnowledgeBaseSnapshot:
    """From a SQL table (``url`` is a SQLAlchemy URL or an ``Engine``)."""
    import sqlalchemy as sa

    engine = sa.create_engine(url) if isinstance(url, str) else url
    cols = [id_column, text_column] + ([title_column] if title_column else [])
    tbl = sa.table(table, *(sa.column(c) for c in cols), schema=schema)
    where = f"{engine.url.render_as_string(hide_password=True)} table {table!r}"
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.select(*tbl.c)).all()
    except sa.exc.SQLAlchemyError as exc:
        raise InputError(f"{where}: could not read documents ({exc.__class__.__name__}: {str(exc).splitlines()[0]})") from None
    finally:
        if isinstance(url, str):
            engine.dispose()
    for row, values in enumerate(rows, 1):
        if isinstance(values[0], str):
            refuse_unsafe(values[0], f"document id (column {id_column!r}, row {row})", path=where)
    frame = pd.DataFrame([tuple(r) for r in rows], columns=cols)
    return KnowledgeBaseSnapshot.from_frame(frame, source=where, id_col=id_column, title_col=title_column, text_col=text_column)


def _is_manifest(path: Path) -> bool:
    if path.suffix.lower() != ".json":
        return False
    with open(path, "rb") as fh:  # bytes: a file that is not UTF-8 is not a manifest, and not a crash
        head = fh.read(200)
    return MANIFEST_KIND.encode() in head


def load_snapshot(source: str | os.PathLike[str], *, table: str | None = None, **sql: Any) -> KnowledgeBaseSnapshot:
    """Pick the reader from ``source``: a SQLAlchemy URL (with ``table``), a manifest ``.json``, a
    ``corpus.jsonl`` (or a folder holding one), or else a directory of documents."""
    text = str(source)
    if "://" in text:
        if not table:
            raise InputError(f"{text}: a SQL source needs the table name (--table)")
        return snapshot_from_sql(text, table, **sql)
    p = Path(source)
    if p.is_file():
        if _is_manifest(p):
            return KnowledgeBaseSnapshot.from_manifest(p)
        return snapshot_from_beir(p)
    if p.is_dir():
        return snapshot_from_beir(p) if (p / "corpus.jsonl").is_file() else snapshot_from_directory(p)
    raise FormatError("no such file or directory", path=text)
