"""Chunk runs and text-anchored judgments in the shapes every existing measure reads.

* :func:`document_run`: a document run from a chunk run (passage-to-document aggregation, as in MS MARCO
  document ranking; Dai and Callan 2019):

  - ``maxp``: a document scores the highest score of its retrieved chunks;
  - ``firstp``: a document scores the score of its *first* chunk (the one that starts earliest in the
    document); a document whose first chunk was not retrieved is not ranked.

  A query without scores (the retriever's own order) is given the scores n, n-1, ..., 1 in its rank order
  first, so both rules read "higher is better". Scored against document judgments
  (:meth:`evalops.chunking.judgments.AnchoredJudgments.document_qrels`), every measure of
  :func:`evalops.metrics.evaluate` applies.
* :func:`chunk_qrels`: chunk-level judgments derived from span overlap. A chunk is judged for a query when
  it overlaps a judged excerpt of the same document by at least ``threshold`` of the *shorter* of the two
  (``overlap / min(|chunk|, |excerpt|) >= threshold``: the smaller piece is mostly inside the other, so a
  long excerpt makes each chunk inside it relevant, and a short excerpt makes the chunk that holds it
  relevant). Its grade is the highest grade of such excerpts. Excerpts with no chunk over the threshold
  are listed (their query may then have no relevant chunk: the chunking lost the passage).

Both policies go into the fingerprint (:mod:`evalops.chunking.conditions`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evalops.chunking.judgments import AnchoredJudgment, AnchoredJudgments
from evalops.chunking.manifest import ChunkManifest
from evalops.data import Qrels, Run
from evalops.errors import InputError
from evalops.metrics.ranking import trec_eval_order

__all__ = ["AGGREGATIONS", "DEFAULT_OVERLAP_THRESHOLD", "ChunkQrels", "chunk_qrels", "document_run"]

AGGREGATIONS: tuple[str, ...] = ("maxp", "firstp")
DEFAULT_OVERLAP_THRESHOLD = 0.5


def document_run(run: Any, manifest: ChunkManifest, aggregation: str = "maxp") -> Any:
    """The document run (``evalops.data.Run``, doc ids = source document ids) of a chunk run, in columns
    (one hash look-up of the chunk ids, one sort by (query, document)): 1 M rows in about 2 s on 2 cores,
    where a loop over the rows took 14 s."""
    import pandas as pd


    if aggregation not in AGGREGATIONS:
        raise InputError(f"aggregation {aggregation!r} is not known; use one of {list(AGGREGATIONS)}")
    if not isinstance(run, Run):
        run = Run.from_dict(run) if isinstance(run, dict) else Run.from_frame(run)
    at = pd.Index(np.array([c.chunk_id for c in manifest.chunks], dtype=object), dtype=object).get_indexer(
        pd.Index(run.doc_ids, dtype=object))
    if (at < 0).any():
        row = int(np.flatnonzero(at < 0)[0])
        raise InputError(f"{run.source or run.name}: query {run.query_ids[row]!r} retrieves chunk "
                         f"{run.doc_ids[row]!r}, which chunking {manifest.name!r} ({manifest.chunking_id}) does "
                         "not list")
    qcodes, queries = run._query_codes()  # first-appearance codes, shared with the Run's own checks
    scores = np.array(run.scores, dtype=np.float64)
    unscored = np.isnan(scores)
    if unscored.any():  # the retriever's order: n, n-1, ..., 1 down each such query's ranking
        order = trec_eval_order(scores, run.doc_ids, run.query_ids)
        codes = qcodes[order]
        sizes = np.bincount(codes, minlength=len(queries))
        position = np.empty(len(order), dtype=np.int64)  # rank within the query, in trec order
        by_query = np.argsort(codes, kind="stable")
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        position[by_query] = np.arange(len(order)) - starts[codes[by_query]]
        pseudo = np.empty(len(order))
        pseudo[order] = (sizes[codes] - position).astype(np.float64)
        scores = np.where(unscored, pseudo, scores)
    doc_names, doc_of_chunk = np.unique(np.array([c.doc_id for c in manifest.chunks], dtype=object),
                                        return_inverse=True)
    keep = np.ones(len(at), dtype=bool)
    if aggregation == "firstp":
        firsts = {cs[0].chunk_id for cs in manifest.by_document().values()}
        keep = np.array([c.chunk_id in firsts for c in manifest.chunks], dtype=bool)[at]
    name = f"{run.name}:{aggregation}"
    if not keep.any():
        return Run(np.zeros(0, dtype=object), np.zeros(0, dtype=object), np.zeros(0), name, run.source)
    # one group per (query, document): the best score of its kept chunks
    key = qcodes[keep] * np.int64(len(doc_names)) + doc_of_chunk[at[keep]]
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    first = np.flatnonzero(np.concatenate([[True], sorted_key[1:] != sorted_key[:-1]]))
    best = np.maximum.reduceat(scores[keep][order], first)
    group = sorted_key[first]
    return Run(queries[group // len(doc_names)], doc_names[group % len(doc_names)], best, name, run.source)


@dataclass(frozen=True)
class ChunkQrels:
    """Derived chunk judgments (``qrels``, an ``evalops.data.Qrels``) and the excerpts no chunk took."""

    qrels: Any
    unmapped: tuple[AnchoredJudgment, ...]
    threshold: float

    @property
    def lost_queries(self) -> list[str]:
        """Queries with a relevant excerpt but no relevant chunk."""
        relevant = {j.query_id for j in self.unmapped if j.grade > 0}
        kept = {str(q) for q, g in zip(self.qrels.query_ids, self.qrels.grades, strict=False) if g > 0}
        return sorted(relevant - kept)


def chunk_qrels(judgments: AnchoredJudgments, manifest: ChunkManifest,
                threshold: float = DEFAULT_OVERLAP_THRESHOLD) -> ChunkQrels:
    """Chunk-level graded judgments of a chunking (module docstring)."""

    if not 0 < threshold <= 1:
        raise InputError(f"overlap threshold {threshold!r} must be in (0, 1]")
    by_doc = manifest.by_document()
    starts = {d: np.array([c.start for c in cs]) for d, cs in by_doc.items()}
    best: dict[tuple[str, str], int] = {}
    unmapped: list[AnchoredJudgment] = []
    for j in judgments:
        chunks = by_doc.get(j.doc_id, [])
        took = False
        stop = int(np.searchsorted(starts.get(j.doc_id, np.zeros(0)), j.end, side="left")) if chunks else 0
        for c in chunks[:stop]:  # chunks that start before the excerpt ends
            overlap = min(c.end, j.end) - max(c.start, j.start)
            shorter = min(c.length, j.end - j.start)
            if overlap > 0 and shorter > 0 and overlap >= threshold * shorter:
                key = (j.query_id, c.chunk_id)
                best[key] = max(best.get(key, j.grade), j.grade)
                took = True
        if not took:
            unmapped.append(j)
    keys = sorted(best)
    qrels = Qrels(np.array([q for q, _ in keys], dtype=object), np.array([c for _, c in keys], dtype=object),
                  np.array([best[k] for k in keys], dtype=np.int64), judgments.source)
    return ChunkQrels(qrels, tuple(unmapped), threshold)
