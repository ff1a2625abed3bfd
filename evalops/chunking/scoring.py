"""One chunk run scored every way against text-anchored judgments, and chunkings compared on them.

:func:`score_chunk_run` gives per-query vectors, keyed by measure name:

* span measures (:mod:`evalops.chunking.measures`): ``TokenRecall@k``, ``TokenPrecision@k``, ``TokenIoU@k``
  at each cutoff, and ``...@budget=b`` at each budget;
* chunk-level measures, ``chunk/<measure>``: :func:`evalops.metrics.evaluate` of the run against the chunk
  judgments derived by span overlap (:func:`evalops.chunking.aggregate.chunk_qrels`). A query whose
  relevant excerpts no chunk takes over the threshold (the chunking lost the passage) scores 0: it counts,
  as every gold query does, instead of dropping out of one side of a comparison;
* document-level measures, ``document/<measure>``: the MaxP or FirstP document run against the documents'
  judgments.

Each vector is aligned with the sorted ids of the judged queries with a relevant excerpt, so two chunkings
scored on the same judgments pair query by query, and :func:`compare_chunkings` decides them with the
project's paired rule (:func:`evalops.stats.compare`, corrected as one family by
:func:`evalops.stats.adjust_and_decide`). Adding a third chunking changes neither vector of the first two.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalops.chunking.aggregate import (
    DEFAULT_OVERLAP_THRESHOLD,
    chunk_qrels,
    document_run,
)
from evalops.chunking.conditions import chunking_policies
from evalops.chunking.judgments import AnchoredJudgments
from evalops.chunking.manifest import ChunkManifest
from evalops.chunking.measures import SpanPolicy, span_scores
from evalops.chunking.sources import SourceTexts
from evalops.errors import InputError
from evalops.metrics import evaluate, parse_measures
from evalops.stats import Policy, adjust_and_decide, align, compare

__all__ = ["ChunkRunScores", "compare_chunkings", "score_chunk_run"]


@dataclass(frozen=True)
class ChunkRunScores:
    """Per-query values of one chunk run: ``values[measure]`` aligned with ``query_ids``."""

    name: str
    chunking: dict[str, Any]
    query_ids: np.ndarray
    values: dict[str, np.ndarray]
    policies: dict[str, Any]
    notes: tuple[str, ...] = field(default=())

    def means(self) -> dict[str, float]:
        return {m: float(v.mean()) for m, v in self.values.items()}

    def scores(self, measure: str) -> dict[str, float]:
        """``{query_id: value}`` of one measure (the shape :func:`evalops.stats.align` pairs)."""
        return dict(zip(self.query_ids.tolist(), self.values[measure].tolist(), strict=False))


def score_chunk_run(judgments: AnchoredJudgments, manifest: ChunkManifest, run: Any, sources: SourceTexts, *,
                    measures: Sequence[str] = ("nDCG@10", "R@10"), cutoffs: Iterable[int] = (5, 10),
                    budgets: Iterable[int] = (), span: SpanPolicy | None = None, aggregation: str = "maxp",
                    overlap_threshold: float = DEFAULT_OVERLAP_THRESHOLD, name: str | None = None) -> ChunkRunScores:
    """Score ``run`` (chunk ids of ``manifest``) every way (module docstring)."""

    span = span or SpanPolicy()
    relevant = sorted({j.query_id for j in judgments if j.grade > 0})
    query_ids = np.array(relevant, dtype=object)
    values: dict[str, np.ndarray] = {}
    notes: list[str] = []
    for cut in [{"k": int(k)} for k in cutoffs] + [{"budget": int(b)} for b in budgets]:
        scores = span_scores(judgments, manifest, run, sources, policy=span, **cut)
        values.update(scores.measures())
    derived = chunk_qrels(judgments, manifest, overlap_threshold)
    lost = derived.lost_queries
    if lost:
        notes.append(f"{len(lost)} queries have no chunk over the overlap threshold {overlap_threshold} "
                     f"(they score 0 on chunk measures): {lost[:5]}")
    if measures and len(derived.qrels) == 0:  # no chunk takes any excerpt: every query lost, every value 0

        values.update({f"chunk/{m}": np.zeros(len(relevant)) for m in map(str, parse_measures(list(measures)))})
    elif measures:
        chunk_result = evaluate(derived.qrels, run, list(measures))
        values.update({f"chunk/{m}": _aligned(chunk_result, m, relevant) for m in chunk_result.per_query})
    if measures:
        doc_result = evaluate(judgments.document_qrels(), document_run(run, manifest, aggregation), list(measures))
        values.update({f"document/{m}": _aligned(doc_result, m, relevant) for m in doc_result.per_query})
    policies = chunking_policies(span, aggregation, overlap_threshold)
    return ChunkRunScores(name or str(getattr(run, "name", None) or "run"), manifest.describe(), query_ids, values,
                          policies, tuple(notes))


def _aligned(result: Any, measure: str, query_ids: list[str]) -> np.ndarray:
    """The measure's per-query values on ``query_ids``: a query the result does not hold scores 0."""
    at = {q: v for q, v in zip(result.query_ids.tolist(), result.per_query[measure].tolist(), strict=False)}
    return np.array([at.get(q, 0.0) for q in query_ids], dtype=np.float64)


def compare_chunkings(baseline: ChunkRunScores, candidate: ChunkRunScores, measures: Sequence[str], *,
                      policy: Any = None) -> list[Any]:
    """Paired comparisons of two chunkings on the same judgments, one per measure, decided as one family
    (:func:`evalops.stats.adjust_and_decide`). Both must have been scored under the same policies."""

    if baseline.policies != candidate.policies:
        raise InputError(f"{baseline.name} and {candidate.name} were scored under different chunking policies; "
                         "score both under the same ones")
    policy = policy or Policy()
    out = []
    for m in measures:
        paired = align(baseline.scores(m), candidate.scores(m), baseline_name=baseline.name,
                       candidate_name=candidate.name)
        out.append(compare(paired, measure=m, policy=policy, baseline_name=baseline.name,
                           candidate_name=candidate.name))
    return adjust_and_decide(out)
