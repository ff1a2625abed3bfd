"""Judged coverage of a candidate against a baseline: is the candidate's score trustworthy?

A candidate that retrieves documents the annotators never saw is scored as if they were non-relevant, so
its measures are biased low exactly when it differs most from the baseline. ``judged_coverage`` says how
much less of its top k is judged than the baseline's, and which documents would need judging.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evalops.data import QrelsLike, RunLike
from evalops.metrics.evaluation import evaluate
from evalops.metrics.gold import Gold, as_gold
from evalops.metrics.measures import Judged
from evalops.metrics.topk import top_k

__all__ = ["JudgedCoverage", "judged_coverage"]


@dataclass(frozen=True, eq=False)
class JudgedCoverage:
    """Judged@k of both runs and the candidate's unjudged top-k documents.

    ``baseline`` / ``candidate``: per-query Judged@k, aligned with ``query_ids`` (every gold query, sorted);
    ``difference`` = mean candidate - mean baseline (negative: the candidate's top k is less judged);
    ``unjudged``: the (query id, doc id) pairs in the candidate's top k that have no judgment, by query,
    then rank; ``unjudged_documents`` is their number.
    """

    cutoff: int
    query_ids: np.ndarray
    baseline: np.ndarray
    candidate: np.ndarray
    unjudged: tuple[tuple[str, str], ...]

    @property
    def measure(self) -> str:
        return str(Judged(self.cutoff))

    @property
    def difference(self) -> float:
        if len(self.query_ids) == 0:
            return 0.0
        return float(self.candidate.mean() - self.baseline.mean())

    @property
    def unjudged_documents(self) -> int:
        return len(self.unjudged)

    def to_dict(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "baseline": float(self.baseline.mean()) if len(self.baseline) else 0.0,
            "candidate": float(self.candidate.mean()) if len(self.candidate) else 0.0,
            "difference": self.difference,
            "unjudged_documents": self.unjudged_documents,
        }


def judged_coverage(qrels: QrelsLike | Gold, baseline: RunLike, candidate: RunLike, k: int) -> JudgedCoverage:
    """Judged@k of ``candidate`` and ``baseline`` against ``qrels``, and the candidate's unjudged top k.

    Inputs as for :func:`evalops.metrics.evaluate`. Only gold queries count (a run query without
    judgments has no judged coverage to compare); a gold query a run did not answer has Judged@k 0.
    The ranking is the evaluation's (score descending, ties by doc id descending).
    """
    measure = Judged(k)
    base = evaluate(qrels, baseline, [measure])
    cand = evaluate(qrels, candidate, [measure])
    gold = as_gold(qrels)
    judged = set(zip(gold.query_ids[gold.qidx].tolist(), gold.doc_ids.tolist()))
    gold_queries = set(gold.query_ids.tolist())
    top = top_k(candidate, k)
    unjudged = tuple(
        (q, d) for q in sorted(top) if q in gold_queries for d in top[q] if (q, d) not in judged
    )
    return JudgedCoverage(k, cand.query_ids, base.per_query[str(measure)], cand.per_query[str(measure)], unjudged)
