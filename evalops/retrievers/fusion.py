"""Hybrid retrieval by reciprocal-rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009).

fused(d) = Σ_r 1 / (rrf_k + rank_r(d)), over the fused retrievers r that returned d in their top ``depth``
(rank counted from 1). rrf_k = 60 as in the paper. Scores of the inputs are ignored, only their ranks
count, so retrievers on different scales fuse without normalisation. A query fails if any input failed on
it (a half-fused list would look like a real, worse answer).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evalops.errors import ConfigError
from evalops.retrievers.base import Query, QueryResult, Retriever, coerce_results, is_remote, top_k

__all__ = ["ReciprocalRankFusion"]


class ReciprocalRankFusion:
    """Fuse two or more retrievers by RRF. Each is asked for ``max(k, depth)`` documents."""

    def __init__(self, retrievers: Sequence[Retriever], *, rrf_k: float = 60.0, depth: int = 100):
        if len(retrievers) < 2:
            raise ConfigError("hybrid: reciprocal-rank fusion needs at least two retrievers")
        if rrf_k <= 0 or depth < 1:
            raise ConfigError(f"hybrid: rrf_k must be > 0 and depth >= 1 (got rrf_k={rrf_k}, depth={depth})")
        self.retrievers = list(retrievers)
        self.rrf_k = float(rrf_k)
        self.depth = int(depth)

    def __repr__(self) -> str:
        return f"ReciprocalRankFusion({self.retrievers!r}, rrf_k={self.rrf_k}, depth={self.depth})"

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
            for p in parts:
                for rank, (doc_id, _) in enumerate(p.ranked, start=1):
                    fused[doc_id] = fused.get(doc_id, 0.0) + 1.0 / (self.rrf_k + rank)
            ids = np.array(list(fused), dtype=object)
            scores = np.fromiter(fused.values(), dtype=np.float64, count=len(fused))
            out.append(QueryResult(q.id, top_k(scores, ids, k), None, retries))
        return out
