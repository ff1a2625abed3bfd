"""Span measures of a chunk run: how much of the relevant text the retrieved chunks hold, and how much else.

After Smith and Troynikov, "Evaluating Chunking Strategies for Retrieval" (Chroma, 2024) and its code
(``chunking_evaluation``'s ``BaseEvaluation._scores_from_dataset_and_retrievals``). For one query, with
``E`` the relevant excerpts (grade > 0; the union per document, so a character judged twice counts once)
and ``C`` the retrieved chunks (the first ``k`` in rank order, or as many as fit a budget)::

    I         = | union(C) ∩ E |                     each relevant unit retrieved counts once
    recall    = I / |E|
    precision = I / Σ_c |c|                          overlap "repeat" (Chroma): a unit that two retrieved
    IoU       = I / (Σ_c |c| + |E| − I)              chunks both hold is paid for twice
    with overlap "once":  Σ_c |c| is replaced by |union(C)| (the retrieved text as a set)

Counted in the units of :class:`evalops.chunking.spans.SpanUnits` (``chars`` as Chroma's code does, or
``words``). Conventions owned here:

* **Ranking**: the run's chunks are put in evalops' one order (:func:`evalops.metrics.ranking.trec_eval_order`:
  score descending at float32 precision, ties by chunk id descending; a query without scores keeps its order).
* **Cutoff** ``k``: the first ``k`` chunks. **Budget** ``b`` (units): chunks in rank order until ``b`` units
  are taken; the chunk that crosses the budget is cut to its first units (what a prompt of ``b`` units
  would hold). Exactly one of the two is given.
* Chroma's own runs cut each query at the number of chunks that hold a highlight; here the cutoff is the
  caller's, the same for every query (a cut that depends on the judgments is not a property of the run).
* A query with no relevant excerpt has no recall or IoU: it is left out (``no_answer: exclude``) and
  listed. A gold query the run did not answer scores 0 (no chunks: I = 0; precision 0).
* A retrieved chunk the manifest does not list is an error: the run was not made on this chunking.
* Grades do not weigh units (Chroma's excerpts are binary); use the derived chunk qrels
  (:func:`evalops.chunking.aggregate.chunk_qrels`) for graded measures.

Per-query vectors come back aligned with the sorted judged query ids, never averaged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalops.chunking.judgments import AnchoredJudgments
from evalops.chunking.manifest import ChunkManifest
from evalops.chunking.sources import SourceTexts
from evalops.chunking.spans import Interval, SpanUnits, intersection_length, merged
from evalops.data import Run
from evalops.errors import InputError
from evalops.metrics.ranking import trec_eval_order

__all__ = ["OVERLAP_COUNTING", "SpanPolicy", "SpanScores", "ranked_chunks", "span_scores"]

OVERLAP_COUNTING: tuple[str, ...] = ("repeat", "once")


@dataclass(frozen=True)
class SpanPolicy:
    """How span measures count: ``units`` (tokenizer policy) and ``overlap`` (``repeat`` as Chroma, or
    ``once``). Recorded in the fingerprint's policies (:meth:`to_dict`)."""

    units: str = "chars"
    overlap: str = "repeat"

    def __post_init__(self) -> None:
        SpanUnits(self.units)
        if self.overlap not in OVERLAP_COUNTING:
            raise InputError(f"overlap counting {self.overlap!r} is not known; use one of {list(OVERLAP_COUNTING)}")

    def to_dict(self) -> dict[str, Any]:
        return {"units": self.units, "overlap": self.overlap, "no_answer": "exclude", "ranking": "trec_eval"}


@dataclass(frozen=True)
class SpanScores:
    """Per-query span measures at one cut (``label``: ``@10`` or ``@budget=512``), aligned with ``query_ids``."""

    label: str
    query_ids: np.ndarray
    recall: np.ndarray
    precision: np.ndarray
    iou: np.ndarray
    excluded: tuple[str, ...]
    policy: SpanPolicy

    def measures(self) -> dict[str, np.ndarray]:
        """``{"TokenRecall@10": values, ...}``: the per-query vectors under their measure names."""
        return {f"TokenRecall{self.label}": self.recall, f"TokenPrecision{self.label}": self.precision,
                f"TokenIoU{self.label}": self.iou}

    def means(self) -> dict[str, float]:
        return {name: float(v.mean()) if len(v) else float("nan") for name, v in self.measures().items()}


def ranked_chunks(run: Any) -> dict[str, list[str]]:
    """Query id -> chunk ids in evalops' rank order (module docstring)."""

    if not isinstance(run, Run):
        run = Run.from_dict(run) if isinstance(run, dict) else Run.from_frame(run)
    order = trec_eval_order(run.scores, run.doc_ids, run.query_ids)
    out: dict[str, list[str]] = {}
    for q, d in zip(run.query_ids[order], run.doc_ids[order], strict=False):
        out.setdefault(str(q), []).append(str(d))
    return out


def span_scores(judgments: AnchoredJudgments, manifest: ChunkManifest, run: Any, sources: SourceTexts, *,
                k: int | None = None, budget: int | None = None, policy: SpanPolicy | None = None) -> SpanScores:
    """Token recall, precision and IoU per judged query (module docstring) at cutoff ``k`` or ``budget``."""
    policy = policy or SpanPolicy()
    if (k is None) == (budget is None):
        raise InputError("give exactly one of k (a cutoff in chunks) and budget (a number of units)")
    if k is not None and k < 1 or budget is not None and budget < 1:
        raise InputError("k and budget must be positive integers")
    units = SpanUnits(policy.units)
    starts: dict[str, list[int] | None] = {}

    def unit_span(doc_id: str, interval: Interval) -> Interval:
        if doc_id not in starts:
            starts[doc_id] = units.starts(sources.text(doc_id))
        return units.convert(interval, starts[doc_id])

    ranked = ranked_chunks(run)
    qids, recall, precision, iou, excluded = [], [], [], [], []
    for qid, rows in sorted(judgments.by_query().items()):
        relevant: dict[str, list[Interval]] = {}
        for j in rows:
            if j.grade > 0:
                relevant.setdefault(j.doc_id, []).append(unit_span(j.doc_id, (j.start, j.end)))
        relevant = {d: merged(spans) for d, spans in relevant.items()}
        size = sum(e - s for spans in relevant.values() for s, e in spans)
        if size == 0:
            excluded.append(qid)
            continue
        taken = _cut(ranked.get(qid, []), manifest, unit_span, k, budget, qid, run)
        by_doc: dict[str, list[Interval]] = {}
        for doc_id, span in taken:
            by_doc.setdefault(doc_id, []).append(span)
        hit = sum(intersection_length(merged(spans), relevant.get(d, [])) for d, spans in by_doc.items())
        paid = (sum(e - s for _, (s, e) in taken) if policy.overlap == "repeat"
                else sum(e - s for spans in by_doc.values() for s, e in merged(spans)))
        qids.append(qid)
        recall.append(hit / size)
        precision.append(hit / paid if paid else 0.0)
        iou.append(hit / (paid + size - hit))
    label = f"@{k}" if k is not None else f"@budget={budget}"
    return SpanScores(label, np.array(qids, dtype=object), np.array(recall), np.array(precision), np.array(iou),
                      tuple(excluded), policy)


def _cut(chunk_ids: Sequence[str], manifest: ChunkManifest, unit_span: Any, k: int | None, budget: int | None,
         qid: str, run: Any) -> list[tuple[str, Interval]]:
    """The retrieved spans in units, cut at ``k`` chunks or ``budget`` units."""
    out: list[tuple[str, Interval]] = []
    used = 0
    for rank, cid in enumerate(chunk_ids):
        if k is not None and rank >= k:
            break
        chunk = manifest.get(cid)
        if chunk is None:
            name = getattr(run, "source", None) or getattr(run, "name", "run")
            raise InputError(f"{name}: query {qid!r} retrieves chunk {cid!r}, which chunking {manifest.name!r} "
                             f"({manifest.chunking_id}) does not list; score a run against the manifest of the "
                             "chunking it retrieved from")
        s, e = unit_span(chunk.doc_id, (chunk.start, chunk.end))
        if budget is not None:
            if used >= budget:
                break
            e = min(e, s + budget - used)
            used += e - s
        out.append((chunk.doc_id, (s, e)))
    return out
