"""Chunk manifests: which span of which source document each chunk of a chunking is.

A chunking of the knowledge base is a table of chunks ``(chunk_id, doc_id, start, end)``: chunk
``chunk_id`` is the characters ``[start, end)`` of document ``doc_id``'s text
(:mod:`evalops.chunking.sources`). Chunks may overlap (sliding windows) and need not cover a document.

Identity (see :mod:`evalops.chunking.conditions` for how the fingerprint uses it):

* ``chunking_id``: first 16 hex digits of SHA-256 over the ``[chunk_id, doc_id, start, end]`` rows sorted
  by chunk id (:func:`evalops.fingerprint.content_digest`): what retrievers depend on. It does not hash
  the text, so a chunking is named apart from the text it cuts;
* ``source_snapshot_id``: the snapshot id of the source text the spans point into (the unchunked
  documents' :class:`evalops.knowledge.KnowledgeBaseSnapshot`), when known.

A manifest is read from rows that carry the spans (:meth:`ChunkManifest.of`, :func:`read_chunk_manifest`)
or made by locating each chunk's text in its source document (:func:`locate_chunks`, which reports the
chunks it could not place).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from evalops.chunking.sources import SourceTexts
from evalops.errors import FormatError, InputError
from evalops.fingerprint import content_digest
from evalops.formats.jsonl import read_jsonl, write_jsonl

__all__ = ["Chunk", "ChunkManifest", "LocateReport", "locate_chunks", "read_chunk_manifest", "write_chunk_manifest"]


@dataclass(frozen=True)
class Chunk:
    """One chunk: ``[start, end)`` of document ``doc_id``'s text."""

    chunk_id: str
    doc_id: str
    start: int
    end: int

    @property
    def length(self) -> int:
        return self.end - self.start


@dataclass(frozen=True, eq=False)
class ChunkManifest:
    """The chunks of one chunking, sorted by chunk id. ``name`` labels the chunking in reports."""

    chunks: tuple[Chunk, ...]
    name: str = "chunking"
    source_snapshot_id: str | None = None
    _index: dict[str, Chunk] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, rows: Iterable[Chunk | Mapping[str, Any]], *, name: str = "chunking",
           source_snapshot_id: str | None = None, sources: SourceTexts | None = None,
           where: str | None = None, lines: Sequence[int] | None = None) -> ChunkManifest:
        """Checked chunks: ids unique, ``0 <= start <= end``; with ``sources`` also every document known and
        every span within its text (``source_snapshot_id`` then defaults to the sources'). A bad row is a
        ``FormatError`` naming ``where`` and the row (1-based), or its line in ``lines`` (a file's)."""
        chunks: list[Chunk] = []
        seen: dict[str, int] = {}
        for n, row in enumerate(rows, start=1):
            i = lines[n - 1] if lines is not None else n
            chunk = row if isinstance(row, Chunk) else _chunk(row, where, i)
            if chunk.chunk_id in seen:
                raise FormatError(f"chunk id {chunk.chunk_id!r} appears twice (first at {seen[chunk.chunk_id]}); "
                                  "give each chunk its own id", path=where, line=i)
            seen[chunk.chunk_id] = i
            if not 0 <= chunk.start <= chunk.end:
                raise FormatError(f"chunk {chunk.chunk_id!r} has span [{chunk.start}, {chunk.end}); a span needs "
                                  "0 <= start <= end", path=where, line=i)
            if sources is not None:
                if chunk.doc_id not in sources:
                    raise FormatError(f"chunk {chunk.chunk_id!r} cuts document {chunk.doc_id!r}, which is not in "
                                      f"{sources.name}; give the source the chunking was made from", path=where, line=i)
                if chunk.end > len(sources.text(chunk.doc_id)):
                    raise FormatError(f"chunk {chunk.chunk_id!r} ends at {chunk.end}, past the end of document "
                                      f"{chunk.doc_id!r} ({len(sources.text(chunk.doc_id))} characters)",
                                      path=where, line=i)
            chunks.append(chunk)
        chunks.sort(key=lambda c: c.chunk_id)
        sid = source_snapshot_id or (sources.snapshot_id if sources is not None else None)
        return cls(tuple(chunks), name, sid)

    def __len__(self) -> int:
        return len(self.chunks)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self.index

    @property
    def index(self) -> dict[str, Chunk]:
        """Chunk id -> chunk (built once)."""
        if not self._index:
            self._index.update({c.chunk_id: c for c in self.chunks})
        return self._index

    def get(self, chunk_id: str) -> Chunk | None:
        return self.index.get(chunk_id)

    @cached_property
    def chunking_id(self) -> str:
        """The chunking's identity (module docstring): spans only, never the text."""
        return content_digest([[c.chunk_id, c.doc_id, c.start, c.end] for c in self.chunks])

    def by_document(self) -> dict[str, list[Chunk]]:
        """Document id -> its chunks by start (then end, then id)."""
        out: dict[str, list[Chunk]] = {}
        for c in self.chunks:
            out.setdefault(c.doc_id, []).append(c)
        for chunks in out.values():
            chunks.sort(key=lambda c: (c.start, c.end, c.chunk_id))
        return out

    def texts(self, sources: SourceTexts) -> dict[str, str]:
        """Chunk id -> its text cut from ``sources`` (what a retriever indexes)."""
        return {c.chunk_id: sources.text(c.doc_id)[c.start:c.end] for c in self.chunks}

    def describe(self) -> dict[str, Any]:
        """What reports and the warehouse record about the chunking."""
        lengths = sorted(c.length for c in self.chunks)
        return {"name": self.name, "chunking_id": self.chunking_id, "source_snapshot_id": self.source_snapshot_id,
                "chunks": len(self.chunks), "documents": len({c.doc_id for c in self.chunks}),
                "median_chars": lengths[len(lengths) // 2] if lengths else 0}

    def to_records(self) -> list[dict[str, Any]]:
        return [{"chunk_id": c.chunk_id, "doc_id": c.doc_id, "start": c.start, "end": c.end} for c in self.chunks]


def _int(value: Any, name: str, where: str | None, row: int) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise FormatError(f"{name} is {value!r}; it must be a non-negative integer (a character offset)", path=where,
                      line=row)


def _chunk(row: Mapping[str, Any], where: str | None, i: int) -> Chunk:
    cid = row.get("chunk_id", row.get("_id"))
    missing = [n for n, v in (("chunk_id", cid), ("doc_id", row.get("doc_id")), ("start", row.get("start")),
                              ("end", row.get("end"))) if v is None or v == ""]
    if missing:
        raise FormatError(f"missing {missing}; a manifest row is chunk_id (or _id), doc_id, start, end", path=where,
                          line=i)
    return Chunk(str(cid), str(row["doc_id"]), _int(row["start"], "start", where, i), _int(row["end"], "end", where, i))


@dataclass(frozen=True)
class LocateReport:
    """What :func:`locate_chunks` could not place: ``failed`` holds ``(chunk_id, reason)``."""

    total: int
    failed: tuple[tuple[str, str], ...]

    @property
    def located(self) -> int:
        return self.total - len(self.failed)

    @property
    def failure_rate(self) -> float:
        return len(self.failed) / self.total if self.total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "located": self.located, "failed": len(self.failed),
                "failure_rate": self.failure_rate, "examples": [list(f) for f in self.failed[:10]]}


def locate_chunks(rows: Iterable[Mapping[str, Any]], sources: SourceTexts, *, name: str = "chunking",
                  where: str | None = None) -> tuple[ChunkManifest, LocateReport]:
    """A manifest from chunk texts: rows ``chunk_id`` (or ``_id``), ``text`` and, when known, ``doc_id``.

    Each chunk's text is searched for exactly (no normalisation: a chunk whose text differs from the source
    cannot be scored by span) in its document, first from where the previous chunk of that document
    started (chunkers emit a document's chunks in order, and a repeated passage then lands on the right
    occurrence), then from the beginning. Without ``doc_id`` every source document is searched in id order
    and the first match is taken. Chunks that cannot be placed are left out and listed in the report with
    the reason; the caller decides whether the failure rate is acceptable.
    """
    placed: list[Chunk] = []
    failed: list[tuple[str, str]] = []
    cursor: dict[str, int] = {}
    total = 0
    seen: set[str] = set()
    for i, row in enumerate(rows, start=1):
        total += 1
        cid = row.get("chunk_id", row.get("_id"))
        text = row.get("text")
        if cid is None or cid == "" or not isinstance(text, str):
            raise FormatError("a chunk row needs chunk_id (or _id) and text (a string)", path=where, line=i)
        cid = str(cid)
        if cid in seen:
            raise FormatError(f"chunk id {cid!r} appears twice; give each chunk its own id", path=where, line=i)
        seen.add(cid)
        if not text:
            failed.append((cid, "empty text"))
            continue
        doc = row.get("doc_id")
        candidates: Sequence[str] = [str(doc)] if doc not in (None, "") else sorted(sources.texts)
        if doc not in (None, "") and str(doc) not in sources:
            failed.append((cid, f"document {str(doc)!r} is not in {sources.name}"))
            continue
        for did in candidates:
            body = sources.text(did)
            at = body.find(text, cursor.get(did, 0))
            if at < 0:
                at = body.find(text)
            if at >= 0:
                cursor[did] = at
                placed.append(Chunk(cid, did, at, at + len(text)))
                break
        else:
            failed.append((cid, "text not found in its document" if doc not in (None, "")
                           else "text not found in any document"))
    manifest = ChunkManifest.of(placed, name=name, sources=sources, where=where)
    return manifest, LocateReport(total, tuple(failed))


def read_chunk_manifest(path: str | os.PathLike[str], *, name: str | None = None,
                        sources: SourceTexts | None = None) -> ChunkManifest:
    """A manifest from JSON Lines rows ``{"chunk_id", "doc_id", "start", "end"}`` (``_id`` for
    ``chunk_id`` too: a chunked BEIR corpus that carries its spans reads as it is; other fields ignored)."""

    p = Path(path)
    if not p.exists():
        raise FormatError("file not found", path=str(p))
    rows, lines = [], []
    for line, record in read_jsonl(p):
        rows.append(_chunk(record, str(p), line))
        lines.append(line)
    if not rows:
        raise InputError(f"{p}: no chunks; a manifest lists one chunk per line")
    return ChunkManifest.of(rows, name=name or p.stem, sources=sources, where=str(p), lines=lines)


def write_chunk_manifest(manifest: ChunkManifest, path: str | os.PathLike[str]) -> Path:

    p = Path(path)
    write_jsonl(manifest.to_records(), p)
    return p
