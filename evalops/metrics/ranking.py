"""Where did the run rank each relevant judged document? (the only place that ranks).

Ranking rule (trec_eval): score descending, ties by doc id descending (``strcmp`` on the ids; Python's
string order is the same as byte order of UTF-8). A query whose documents have no score keeps the
retriever's order.

Instead of sorting and joining every retrieved document, this works from the judged side:

1. lay each run query out as a contiguous segment with scores descending (runs almost always arrive that
   way, which a single vectorised check confirms; otherwise one stable integer argsort puts them so);
2. look up the score of every judged document with a positive grade (a dict lookup for dict input, an
   Arrow hash join for columnar input);
3. its rank is the number of scores in its segment strictly above its own (a vectorised binary search over
   all segments at once) plus the number of equally scored documents with a greater doc id.

The result, ``Hits``, lists (gold query, 0-based rank, grade) for every retrieved document with grade > 0;
unjudged and non-relevant documents contribute nothing to any measure, so nothing else is needed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import chain, repeat
from typing import Any

import numpy as np

from evalops.data import Run
from evalops.metrics.gold import Gold, as_run

__all__ = ["Hits", "locate_hits"]

DocsAt = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True, eq=False)
class Hits:
    """Retrieved documents with a positive grade, and how the run covered the gold queries."""

    qidx: np.ndarray  # gold query index of each hit
    rank: np.ndarray  # 0-based rank within the query
    grade: np.ndarray
    retrieved: np.ndarray  # per gold query: number of documents the run returned
    ignored_query_ids: np.ndarray  # run queries that have no judgments (not evaluated)


def locate_hits(gold: Gold, run: Any) -> Hits:
    """Rank the run's judged documents. ``run``: ``Run``, ``{qid: {docid: score}}`` or a DataFrame."""
    if isinstance(run, Mapping):
        hits = _hits_from_dicts(gold, run)
        if hits is not None:
            return hits
    return _hits_from_run(gold, as_run(run))


# -- shared machinery ------------------------------------------------------------------------------


def _first_not_above(values: np.ndarray, lo: np.ndarray, hi: np.ndarray, target: np.ndarray, strict: bool) -> np.ndarray:
    """Binary search in many descending segments at once.

    For each i, the first index p in [lo[i], hi[i]) with values[p] <= target[i] (``strict``: < target[i]),
    or hi[i] if there is none. Iterates log2(longest segment) times, never once per segment.
    """
    lo = lo.copy()
    hi = hi.copy()
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi) >> 1
        probe = values[np.where(active, mid, 0)]
        above = probe >= target if strict else probe > target
        lo = np.where(active & above, mid + 1, lo)
        hi = np.where(active & ~above, mid, hi)


def _ranks(
    scores_desc: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    score: np.ndarray,
    doc: np.ndarray,
    docs_at: DocsAt,
) -> np.ndarray:
    """0-based rank of documents with the given score/doc in segments [start, end) of ``scores_desc``."""
    first_tied = _first_not_above(scores_desc, start, end, score, strict=False)
    rank = first_tied - start
    tie_size = np.ones_like(rank)
    following = first_tied + 1
    maybe = np.flatnonzero(following < end)
    maybe = maybe[scores_desc[following[maybe]] == score[maybe]]  # only these share their score
    if maybe.size:
        after = _first_not_above(scores_desc, first_tied[maybe], end[maybe], score[maybe], strict=True)
        tie_size[maybe] = after - first_tied[maybe]
    tied = np.flatnonzero(tie_size > 1)
    if tied.size:
        sizes = tie_size[tied]
        owner = np.repeat(np.arange(tied.size), sizes)
        offsets = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        others = docs_at(np.repeat(first_tied[tied], sizes) + offsets)
        before = np.asarray(others > np.repeat(doc[tied], sizes), dtype=bool)  # doc id descending
        rank[tied] += np.bincount(owner, weights=before, minlength=tied.size).astype(np.int64)
    return rank


def _descending_order(
    scores: np.ndarray, segment_start: np.ndarray | None, segment: Callable[[], np.ndarray]
) -> np.ndarray | None:
    """A permutation sorting rows by (segment, score descending), or None if they already are.

    ``segment_start`` marks the first row of each contiguous segment (None: rows of a segment are not
    contiguous); ``segment()`` gives each row's segment number, built only when a sort is needed. Stable,
    so equal scores keep their input order (ties are settled by doc id afterwards).
    """
    if len(scores) < 2:
        return None
    if segment_start is not None:
        rising = np.flatnonzero(scores[1:] > scores[:-1]) + 1
        if segment_start[rising].all():
            return None
    rows_segment = segment()
    by_score = np.argsort(_descending_key(scores), kind="stable")
    return by_score[np.argsort(rows_segment[by_score], kind="stable")]


def _descending_key(scores: np.ndarray) -> np.ndarray:
    """uint64 keys whose ascending order is the scores' descending order (integer sorts are much faster)."""
    bits = (-scores + 0.0).view(np.uint64)  # + 0.0 turns -0.0 into 0.0: they tie, as in C
    negative = (bits >> np.uint64(63)).astype(bool)
    return np.where(negative, ~bits, bits | np.uint64(1 << 63))


def _index_of(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """Position of each needle in the unique array ``haystack``, -1 if absent (one dict lookup each)."""
    position = dict(zip(haystack.tolist(), range(len(haystack))))
    return np.fromiter(map(position.get, needles.tolist(), repeat(-1)), dtype=np.int64, count=len(needles))


def _starts_mask(start: np.ndarray, n: int) -> np.ndarray:
    """Boolean mask of length n + 1, True at the first row of each segment."""
    mask = np.zeros(n + 1, dtype=bool)
    mask[start] = True
    return mask


def _segment_bounds(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ends = np.cumsum(lengths)
    return ends - lengths, ends


# -- dict input: no string hashing beyond the dict lookups Python already paid for -----------------


def _hits_from_dicts(gold: Gold, run: Mapping[Any, Any]) -> Hits | None:
    """Fast path for ``{qid: {docid: score}}`` with string ids and numeric scores; None means "use Run"."""
    keys = list(run.keys())
    inner = list(run.values())
    if set(map(type, keys)) - {str} or set(map(type, inner)) - {dict}:
        return None
    lengths = np.fromiter(map(len, inner), dtype=np.int64, count=len(inner))
    total = int(lengths.sum())
    if total and set(map(type, chain.from_iterable(inner))) - {str}:
        return None  # non-string doc ids: Run.from_dict normalises them
    try:
        scores = np.fromiter(chain.from_iterable(map(dict.values, inner)), dtype=np.float64, count=total)
    except (TypeError, ValueError):
        return None  # None (unscored) or non-numeric scores: Run validates and explains
    if np.isnan(scores).any():
        return None

    gold_of_run = _index_of(gold.query_ids, np.array(keys, dtype=object))
    start, end = _segment_bounds(lengths)
    order = _descending_order(scores, _starts_mask(start, total), lambda: np.repeat(np.arange(len(inner)), lengths))
    scores_desc = scores if order is None else scores[order]

    run_of_gold = np.full(len(gold), -1, dtype=np.int64)
    in_gold = gold_of_run >= 0
    run_of_gold[gold_of_run[in_gold]] = np.flatnonzero(in_gold)
    retrieved = np.append(lengths, 0)[run_of_gold]  # -1 (not in the run) picks the appended 0

    # judged documents with a positive grade, in gold queries the run answered
    pairs = np.flatnonzero((gold.grades > 0) & (run_of_gold[gold.qidx] >= 0))
    segment = run_of_gold[gold.qidx[pairs]]
    doc = gold.doc_ids[pairs]
    dicts = np.empty(len(inner), dtype=object)
    dicts[:] = inner
    pair_scores = np.fromiter(
        map(dict.get, dicts[segment], doc, repeat(np.nan)), dtype=np.float64, count=len(pairs)
    )
    found = ~np.isnan(pair_scores)
    pairs, segment, doc, pair_scores = pairs[found], segment[found], doc[found], pair_scores[found]

    def docs_at(positions: np.ndarray) -> np.ndarray:
        flat = positions if order is None else order[positions]
        seg_of = np.searchsorted(end, flat, side="right")
        needed, local = np.unique(seg_of, return_inverse=True)
        chosen = [inner[i] for i in needed.tolist()]  # only queries with tied relevant documents
        sub_lengths = lengths[needed]
        sub_docs = np.fromiter(chain.from_iterable(chosen), dtype=object, count=int(sub_lengths.sum()))
        sub_start = np.cumsum(sub_lengths) - sub_lengths
        return sub_docs[sub_start[local] + (flat - start[seg_of])]

    rank = _ranks(scores_desc, start[segment], end[segment], pair_scores, doc, docs_at)
    ignored = np.array(keys, dtype=object)[~in_gold] if keys else np.zeros(0, dtype=object)
    return Hits(gold.qidx[pairs], rank, gold.grades[pairs], retrieved, ignored)


# -- columnar input (Run, DataFrame) ---------------------------------------------------------------


def _hits_from_run(gold: Gold, run: Run) -> Hits:
    n = len(run)
    codes, uniques = run._query_codes()
    gold_of_code = _index_of(gold.query_ids, uniques)
    scores = run.scores.copy()
    unscored = np.isnan(scores)
    if unscored.any():
        # a query without scores keeps the input order: a descending pseudo-score by position
        scores[unscored] = -np.flatnonzero(unscored).astype(np.float64)
    lengths = np.bincount(codes, minlength=len(uniques))
    start, end = _segment_bounds(lengths)
    grouped = bool(np.all(codes[1:] >= codes[:-1]))  # factorize numbers queries by first appearance
    starts = _starts_mask(start, n) if grouped else None
    order = _descending_order(scores, starts, lambda: codes)
    scores_desc = scores if order is None else scores[order]

    code_of_gold = np.full(len(gold), -1, dtype=np.int64)
    in_gold = gold_of_code >= 0
    code_of_gold[gold_of_code[in_gold]] = np.flatnonzero(in_gold)
    retrieved = np.append(lengths, 0)[code_of_gold]  # -1 (not in the run) picks the appended 0

    pairs = np.flatnonzero((gold.grades > 0) & (code_of_gold[gold.qidx] >= 0))
    row, pair_pos = _join(codes, run.doc_ids, code_of_gold[gold.qidx[pairs]], gold.doc_ids[pairs])
    pairs = pairs[pair_pos]
    segment = codes[row]

    def docs_at(positions: np.ndarray) -> np.ndarray:
        return run.doc_ids[positions if order is None else order[positions]]

    rank = _ranks(scores_desc, start[segment], end[segment], scores[row], run.doc_ids[row], docs_at)
    return Hits(gold.qidx[pairs], rank, gold.grades[pairs], retrieved, uniques[~in_gold])


def _join(
    run_codes: np.ndarray, run_docs: np.ndarray, pair_codes: np.ndarray, pair_docs: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Exact (query code, doc id) hash join: (run row, pair index) for every judged pair the run retrieved."""
    if len(run_codes) == 0 or len(pair_codes) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    import pyarrow as pa

    left = pa.table(
        {
            "q": pa.array(run_codes, type=pa.int64()),
            "d": pa.array(run_docs, type=pa.string()),
            "row": pa.array(np.arange(len(run_codes), dtype=np.int64)),
        }
    )
    right = pa.table(
        {
            "q": pa.array(pair_codes, type=pa.int64()),
            "d": pa.array(pair_docs, type=pa.string()),
            "pair": pa.array(np.arange(len(pair_codes), dtype=np.int64)),
        }
    )
    joined = left.join(right, keys=["q", "d"], join_type="inner", use_threads=True)
    row = joined.column("row").to_numpy()
    pair = joined.column("pair").to_numpy()
    keep = np.argsort(pair, kind="stable")  # the join's output order is arbitrary; make it deterministic
    return row[keep].astype(np.int64), pair[keep].astype(np.int64)
