"""Migration between chunk-id judgments and text-anchored judgments.

* :func:`anchor_judgments`: each chunk-id judgment ``(query, chunk, grade)`` becomes the text-anchored
  judgment of the chunk's span, through the manifest of the chunking that was current when the judgment
  was made, with the excerpt cut from the source text. A judgment whose chunk the manifest does not list,
  or whose span the source text no longer holds, is not converted and is listed with the reason.
* :func:`chunk_judgments`: back: a text-anchored judgment whose span is exactly one chunk's span becomes
  that chunk's judgment. Anything else is listed (a span no chunk has, or one several chunks share). For
  judgments made on a chunking, converting through the same manifest gives the original judgments back.
  To judge a *different* chunking from spans, use :func:`evalops.chunking.aggregate.chunk_qrels`
  (overlap with a threshold) instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evalops.chunking.judgments import AnchoredJudgment, AnchoredJudgments
from evalops.chunking.manifest import ChunkManifest
from evalops.chunking.sources import SourceTexts
from evalops.data import Qrels

__all__ = ["Migration", "anchor_judgments", "chunk_judgments"]


@dataclass(frozen=True)
class Migration:
    """The converted judgments and what was not converted: ``(query_id, id, reason)`` per row left out."""

    judgments: Any
    unconverted: tuple[tuple[str, str, str], ...]
    total: int

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "converted": self.total - len(self.unconverted),
                "unconverted": len(self.unconverted), "examples": [list(u) for u in self.unconverted[:10]]}


def anchor_judgments(qrels: Any, manifest: ChunkManifest, sources: SourceTexts) -> Migration:
    """Chunk-id judgments (``Qrels`` or ``{qid: {chunk_id: grade}}``) -> text-anchored judgments."""

    if not isinstance(qrels, Qrels):
        qrels = Qrels.from_dict(qrels)
    rows: list[AnchoredJudgment] = []
    missed: list[tuple[str, str, str]] = []
    for q, c, g in zip(qrels.query_ids, qrels.doc_ids, qrels.grades, strict=False):
        q, c = str(q), str(c)
        chunk = manifest.get(c)
        if chunk is None:
            missed.append((q, c, f"chunk not in chunking {manifest.name!r} ({manifest.chunking_id})"))
        elif chunk.doc_id not in sources:
            missed.append((q, c, f"its document {chunk.doc_id!r} is not in {sources.name}"))
        elif chunk.end > len(sources.text(chunk.doc_id)) or chunk.length == 0:
            missed.append((q, c, (f"its span [{chunk.start}, {chunk.end}) is empty or past the end of document "
                                  f"{chunk.doc_id!r}")))
        else:
            excerpt = sources.text(chunk.doc_id)[chunk.start:chunk.end]
            rows.append(AnchoredJudgment(q, chunk.doc_id, chunk.start, chunk.end, excerpt, int(g)))
    converted = AnchoredJudgments.of(rows, sources, source=qrels.source)
    return Migration(converted, tuple(missed), len(qrels))


def chunk_judgments(judgments: AnchoredJudgments, manifest: ChunkManifest) -> Migration:
    """Text-anchored judgments -> chunk-id judgments (``Qrels``) of the chunks with exactly their spans."""

    at: dict[tuple[str, int, int], list[str]] = {}
    for c in manifest.chunks:
        at.setdefault((c.doc_id, c.start, c.end), []).append(c.chunk_id)
    qs: list[str] = []
    cs: list[str] = []
    gs: list[int] = []
    missed: list[tuple[str, str, str]] = []
    for j in judgments:
        ids = at.get((j.doc_id, j.start, j.end), [])
        where = f"{j.doc_id}[{j.start}:{j.end}]"
        if len(ids) != 1:
            missed.append((j.query_id, where, "no chunk has this span" if not ids
                           else f"chunks {ids[:3]} share this span"))
            continue
        qs.append(j.query_id)
        cs.append(ids[0])
        gs.append(j.grade)
    qrels = Qrels(np.array(qs, dtype=object), np.array(cs, dtype=object), np.array(gs, dtype=np.int64),
                  judgments.source)
    return Migration(qrels, tuple(missed), len(judgments))
