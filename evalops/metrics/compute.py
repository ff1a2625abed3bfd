"""Per-query values of each measure: build the queries x depth grade matrix in chunks, run the kernels.

The matrix is only as deep as the measures need: the largest cutoff when every measure has one, else the
deepest rank at which the run placed a document with a positive grade (nothing deeper changes any value).
Queries are processed in chunks of about ``CHUNK_CELLS`` matrix cells, so memory stays bounded however
deep the run is, and a progress callback can report each chunk.

Each measure's kernel and what it needs are its entry in :mod:`evalops.metrics.registry`: the ideal ranking
is built only for a measure that needs it (``Need.IDEAL``), R only at the thresholds of the measures that
count it (``Need.RELEVANT_COUNT``). Measures that need the judged non-relevant documents too (``Need.JUDGED``:
Judged@k, bpref; and the ``judged_only`` variants) are computed by :func:`judged_values` from
:func:`evalops.metrics.judged.locate_judged`'s output; the ``judged_only`` variants run the same kernels on
the condensed list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from evalops.errors import MeasureError
from evalops.metrics.gold import Gold
from evalops.metrics.judged import condensed_hits
from evalops.metrics.measures import Measure
from evalops.metrics.ranking import Hits
from evalops.metrics.registry import JudgedEntry, Need, RankEntry, RankKernel, entry_of, needs

__all__ = ["per_query_values", "judged_values", "needs_judged", "CHUNK_CELLS"]

# 512 K cells: two int64 matrices of 4 MB and the kernels' temporaries. 2 M cells peaked at 72 MB (100,000
# queries, nDCG@10 and AP) against 33 MB, for the same CPU time or less (the matrices stay in cache).
CHUNK_CELLS = 1 << 19

def _rank_kernel(measure: Measure) -> RankKernel:
    entry = entry_of(measure)
    if not isinstance(entry, RankEntry):
        raise MeasureError(f"{measure} has no grade-matrix kernel in evalops.metrics.registry")
    return entry.kernel


def needs_judged(measure: Measure) -> bool:
    """Whether ``measure`` needs every judged document of the run, not only the relevant ones."""
    return Need.JUDGED in needs(measure) or measure.judged_only


def _depths(measures: Sequence[Measure], hits: Hits, ideal_rank: np.ndarray) -> tuple[int, int]:
    deepest_hit = int(hits.rank.max()) + 1 if hits.rank.size else 0
    cutoffs = [m.cutoff for m in measures]
    depth = deepest_hit if None in cutoffs else min(deepest_hit, max(c for c in cutoffs if c is not None))
    ndcg = [m.cutoff for m in measures if Need.IDEAL in needs(m)]
    deepest_ideal = int(ideal_rank.max()) + 1 if ideal_rank.size else 0
    if not ndcg:
        ideal_depth = 0
    elif None in ndcg:
        ideal_depth = deepest_ideal
    else:
        ideal_depth = min(deepest_ideal, max(c for c in ndcg if c is not None))
    return max(depth, 1), max(ideal_depth, 1)


def _narrow(values: np.ndarray) -> np.ndarray:
    """``values`` as int32 when they fit it (the same values), else as they are."""
    if values.dtype.kind not in "iu" or values.dtype.itemsize <= 4 or (values.size and not (-2**31 <= int(values.min()) and int(values.max()) < 2**31)):
        return values
    return values.astype(np.int32)


def _fill(rows: int, depth: int, q: np.ndarray, pos: np.ndarray, grade: np.ndarray) -> np.ndarray:
    matrix = np.zeros((rows, depth), dtype=np.int64)
    keep = pos < depth
    matrix[q[keep], pos[keep]] = grade[keep]
    return matrix


def per_query_values(
    measures: Sequence[Measure],
    gold: Gold,
    hits: Hits,
    progress: Callable[[int, int], None] | None = None,
    chunk_cells: int = CHUNK_CELLS,
) -> dict[Measure, np.ndarray]:
    """One float64 vector per measure, aligned with ``gold.query_ids`` (every gold query, no policy yet)."""
    n = len(gold)
    if any(Need.IDEAL in needs(m) for m in measures):
        ideal_q, ideal_rank, ideal_grade = gold.ideal()
    else:  # only nDCG reads the ideal ranking: the others need no sort of the judgments (millions under holes)
        ideal_q = ideal_rank = ideal_grade = np.zeros(0, dtype=np.int64)
    depth, ideal_depth = _depths(measures, hits, ideal_rank)
    kernel = {m: _rank_kernel(m) for m in measures}
    # R at each threshold a measure counts it at; the others are handed no count (an empty vector)
    counted = {m.relevance_threshold for m in measures if Need.RELEVANT_COUNT in needs(m)}
    n_rel = {t: gold.n_relevant(t) for t in counted}
    no_count = np.zeros(0, dtype=np.int64)
    out = {m: np.zeros(n, dtype=np.float64) for m in measures}

    retrieved = np.asarray(hits.retrieved)
    order = np.argsort(hits.qidx, kind="stable")
    # held while the chunks are scored: 32 bits where they fit (12 bytes a hit instead of 24), not the order
    hit_q, hit_rank, hit_grade = (_narrow(a[order]) for a in (hits.qidx, hits.rank, hits.grade))
    del order
    rows = max(1, chunk_cells // max(depth, ideal_depth))
    edges = np.arange(0, n + rows, rows).clip(max=n)
    hit_edges = np.searchsorted(hit_q, edges)
    ideal_edges = np.searchsorted(ideal_q, edges)
    for c in range(len(edges) - 1):  # a loop over chunks of queries, not over queries
        lo, hi = int(edges[c]), int(edges[c + 1])
        if hi <= lo:
            continue
        h = slice(hit_edges[c], hit_edges[c + 1])
        grades = _fill(hi - lo, depth, hit_q[h] - lo, hit_rank[h], hit_grade[h])
        i = slice(ideal_edges[c], ideal_edges[c + 1])
        ideal = _fill(hi - lo, ideal_depth, ideal_q[i] - lo, ideal_rank[i], ideal_grade[i])
        for m in measures:
            r = n_rel.get(m.relevance_threshold, no_count)[lo:hi]
            out[m][lo:hi] = kernel[m](m, grades, ideal, r, retrieved[lo:hi])
        if progress is not None:
            progress(hi, n)
    return out


def judged_values(measures: Sequence[Measure], gold: Gold, judged: Hits) -> dict[Measure, np.ndarray]:
    """Per-query vectors of the measures for which :func:`needs_judged` holds, aligned with ``gold``.

    ``judged`` comes from :func:`evalops.metrics.judged.locate_judged` (every retrieved judged document,
    sorted by query, then rank).
    """
    out: dict[Measure, np.ndarray] = {}
    for m in measures:
        entry = entry_of(m)
        if isinstance(entry, JudgedEntry):
            out[m] = entry.kernel(m, gold, judged)
    condensed = [m for m in measures if m.judged_only]
    if condensed:
        out.update(per_query_values(condensed, gold, condensed_hits(judged)))
    return out
