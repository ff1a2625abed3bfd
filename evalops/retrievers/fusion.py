"""Hybrid retrieval: two or more retrievers' lists fused into one, by rank or by normalised score.

* ``rrf`` (reciprocal-rank fusion; Cormack, Clarke & Büttcher, SIGIR 2009): fused(d) = Σ_r w_r / (rrf_k +
  rank_r(d)), over the fused retrievers r that returned d in their top ``depth`` (rank counted from 1).
  rrf_k = 60 as in the paper. Only ranks count, so retrievers on different scales fuse as they are.
* ``linear`` (score-normalised linear combination): fused(d) = Σ_r w_r · (s_r(d) − min_r) / (max_r − min_r),
  min and max over input r's top ``depth`` for that query (all of them count 1 when max = min); a document
  that input r did not return contributes 0 from r, as its worst. Every input must return scores.

Weights ``w_r`` default to 1 each. A query fails if any input failed on it (a half-fused list would look like
a real, worse answer), and, for ``linear``, if an input returned a document without a score.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evalops.errors import ConfigError
from evalops.retrievers.base import Query, QueryResult, Retriever, coerce_results, is_remote, top_k

__all__ = ["FUSION_METHODS", "ReciprocalRankFusion"]

FUSION_METHODS = ("rrf", "linear")


class ReciprocalRankFusion:
    """Fuse two or more retrievers by ``method`` (see the module docstring). Each is asked for
    ``max(k, depth)`` documents."""

    def __init__(self, retrievers: Sequence[Retriever], *, rrf_k: float = 60.0, depth: int = 100,
                 method: str = "rrf", weights: Sequence[float] | None = None):
        if len(retrievers) < 2:
            raise ConfigError("hybrid: fusion needs at least two retrievers")
        if not (np.isfinite(rrf_k) and rrf_k > 0) or depth < 1:  # a NaN rrf_k would fuse into NaN scores
            raise ConfigError(f"hybrid: rrf_k must be > 0 and depth >= 1 (got rrf_k={rrf_k}, depth={depth})")
        if method not in FUSION_METHODS:
            raise ConfigError(f"hybrid: unknown method {method!r}; use {' or '.join(FUSION_METHODS)}")
        w = [1.0] * len(retrievers) if weights is None else [float(x) for x in weights]
        if len(w) != len(retrievers) or not all(np.isfinite(x) and x >= 0 for x in w) or not any(w):
            raise ConfigError(f"hybrid: weights must be {len(retrievers)} finite numbers >= 0, not all 0 "
                              f"(one per retriever), got {list(weights or [])}")
        self.retrievers = list(retrievers)
        self.rrf_k = float(rrf_k)
        self.depth = int(depth)
        self.method = method
        self.weights = w

    def __repr__(self) -> str:
        return (f"ReciprocalRankFusion({self.retrievers!r}, method={self.method}, rrf_k={self.rrf_k}, "
                f"depth={self.depth}, weights={self.weights})")

    def _contributions(self, ranked: Sequence[tuple[str, float | None]], weight: float) -> dict[str, float] | None:
        if self.method == "rrf":
            return {doc_id: weight / (self.rrf_k + rank) for rank, (doc_id, _) in enumerate(ranked, start=1)}
        if any(s is None for _, s in ranked):
            return None
        scores = np.array([s for _, s in ranked], dtype=np.float64)
        if not scores.size:
            return {}
        lo, span = scores.min(), scores.max() - scores.min()
        norm = (scores - lo) / span if span > 0 else np.ones_like(scores)
        return {doc_id: weight * float(v) for (doc_id, _), v in zip(ranked, norm)}

    @property
    def remote(self) -> bool:
        return any(is_remote(r) for r in self.retrievers)

    def retrieve(self, queries: Sequence[Query], k: int) -> list[QueryResult]:
        fetch = max(k, self.depth)
        per_input = [coerce_results(queries, r.retrieve(queries, fetch), fetch) for r in self.retrievers]
        out: list[QueryResult] = []
        for i, q in enumerate(queries):
            parts = [results[i] for results in per_input]
            retries = sum(p.retries for p in parts)
            errors = [p.error for p in parts if not p.ok]
            if errors:
                out.append(QueryResult.failure(q.id, "hybrid input failed: " + "; ".join(errors), retries))  # type: ignore[arg-type]
                continue
            fused: dict[str, float] = {}
            contributions = [self._contributions(p.ranked, w) for p, w in zip(parts, self.weights)]
            if any(c is None for c in contributions):
                out.append(QueryResult.failure(q.id, "hybrid: linear fusion needs scores and an input returned a "  # type: ignore[arg-type]
                                               "document without one", retries))
                continue
            for contribution in contributions:
                for doc_id, v in contribution.items():  # type: ignore[union-attr]
                    fused[doc_id] = fused.get(doc_id, 0.0) + v
            ids = np.array(list(fused), dtype=object)
            scores = np.fromiter(fused.values(), dtype=np.float64, count=len(fused))
            out.append(QueryResult(q.id, top_k(scores, ids, k, keep_zero=self.method == "linear"), None, retries))
        return out
