"""Where did the run rank each relevant judged document? (the only place that ranks).

Ranking rule (trec_eval): score descending, compared at float32 precision as trec_eval stores them, ties
by doc id descending (``strcmp`` on the ids; Python's string order is the same as byte order of UTF-8).
A query whose documents have no score keeps the retriever's order.

Instead of sorting and joining every retrieved document, this works from the judged side:

1. lay each run query out as a contiguous segment with scores descending (runs almost always arrive that
   way, which a single vectorised check confirms; otherwise one stable integer argsort puts them so);
2. look up the score of every judged document with a positive grade (a dict lookup for dict input, a
   hash join on (query, doc) confirmed by string comparison for columnar input);
3. its rank is the number of scores in its segment strictly above its own (a vectorised binary search over
   all segments at once) plus the number of equally scored documents with a greater doc id.

The input forms (``RunTable``, dicts, DataFrames) reach these primitives through
:func:`evalops.metrics.hits.locate_hits`. The result, ``Hits``, lists (gold query, 0-based rank, grade) for every retrieved document with grade > 0;
unjudged and non-relevant documents contribute nothing to any measure, so nothing else is needed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np

from evalops.metrics.gold import Gold
from evalops.metrics.strhash import hash_strings, pair_keys

__all__ = ["Hits", "as_trec_eval_scores", "hits_from_columns", "trec_eval_order"]

DocsAt = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True, eq=False)
class Hits:
    """Retrieved documents with a positive grade, and how the run covered the gold queries."""

    qidx: np.ndarray  # gold query index of each hit
    rank: np.ndarray  # 0-based rank within the query
    grade: np.ndarray
    retrieved: np.ndarray  # per gold query: number of documents the run returned
    ignored_query_ids: np.ndarray  # run queries that have no judgments (not evaluated)


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


def ranks_in_segments(
    scores_desc: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    score: np.ndarray,
    docs_of: DocsAt,
    docs_at: DocsAt,
) -> np.ndarray:
    """0-based rank of documents with the given scores in segments [start, end) of ``scores_desc``.

    ``docs_of(i)`` gives the ids of documents ``i`` (asked only for the documents that tie with another,
    so most ids never become Python strings); ``docs_at(p)`` the ids at positions ``p`` of the segments."""
    first_tied = _first_not_above(scores_desc, start, end, score, strict=False)
    rank: np.ndarray = first_tied - start
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
        before = np.asarray(others > np.repeat(docs_of(tied), sizes), dtype=bool)  # doc id descending
        rank[tied] += np.bincount(owner, weights=before, minlength=tied.size).astype(np.int64)
    return rank


def descending_order(
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


def index_of(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """Position of each needle in the unique array ``haystack``, -1 if absent (one dict lookup each)."""
    position = dict(zip(haystack.tolist(), range(len(haystack))))
    return np.fromiter(map(position.get, needles.tolist(), repeat(-1)), dtype=np.int64, count=len(needles))


def starts_mask(start: np.ndarray, n: int) -> np.ndarray:
    """Boolean mask of length n + 1, True at the first row of each segment."""
    mask = np.zeros(n + 1, dtype=bool)
    mask[start] = True
    return mask


def segment_bounds(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ends = np.cumsum(lengths)
    return ends - lengths, ends


def query_segments(codes: np.ndarray, n_queries: int, scores: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
    """Each query's rows by score descending, for :func:`ranks_in_segments`: (rows per query, segment
    start, segment end, the sorting permutation or None when the rows already are in that order, the sorted
    scores). ``codes`` number the rows' queries in order of first appearance."""
    lengths = np.bincount(codes, minlength=n_queries)
    start, end = segment_bounds(lengths)
    grouped = bool(np.all(codes[1:] >= codes[:-1]))  # queries are numbered by first appearance
    starts = starts_mask(start, len(codes)) if grouped else None
    order = descending_order(scores, starts, lambda: codes)
    return lengths, start, end, order, scores if order is None else scores[order]


# -- columnar input (Run, DataFrame) ---------------------------------------------------------------


def hits_from_columns(
    gold: Gold,
    codes: np.ndarray,
    uniques: np.ndarray,
    docs: Any,
    scores: np.ndarray,
    key_index: tuple[np.ndarray, np.ndarray] | None = None,
) -> Hits:
    """The columnar core. ``codes`` number each row's query (``uniques[codes]`` are the ids, numbered in
    order of first appearance), ``docs`` are the doc ids (object ndarray or pyarrow array), ``scores``
    float64 with NaN for unscored queries, ``key_index`` optionally the rows' (query, doc) keys and their
    sort order, if the caller already built them. Duplicates and mixed scoring must be rejected by the
    caller."""
    gold_of_code = index_of(gold.query_ids, uniques)
    scores = as_trec_eval_scores(scores)
    unscored = np.isnan(scores)
    if unscored.any():
        # a query without scores keeps the input order: a descending pseudo-score by position
        scores[unscored] = -np.flatnonzero(unscored).astype(np.float64)
    lengths, start, end, order, scores_desc = query_segments(codes, len(uniques), scores)

    code_of_gold = np.full(len(gold), -1, dtype=np.int64)
    in_gold = gold_of_code >= 0
    code_of_gold[gold_of_code[in_gold]] = np.flatnonzero(in_gold)
    retrieved = np.append(lengths, 0)[code_of_gold]  # -1 (not in the run) picks the appended 0

    pairs = np.flatnonzero((gold.grades > 0) & (code_of_gold[gold.qidx] >= 0))
    row, pair_pos = _join(codes, docs, code_of_gold[gold.qidx[pairs]], gold.doc_ids[pairs], key_index)
    pairs = pairs[pair_pos]
    segment = codes[row]

    def docs_at(positions: np.ndarray) -> np.ndarray:
        return _take(docs, positions if order is None else order[positions])

    rank = ranks_in_segments(scores_desc, start[segment], end[segment], scores[row],
                             lambda at: _take(docs, row[at]), docs_at)
    return Hits(gold.qidx[pairs], rank, gold.grades[pairs], retrieved, uniques[~in_gold])


def as_trec_eval_scores(scores: np.ndarray) -> np.ndarray:
    """Scores as trec_eval compares them: rounded to float32 (its ``TEXT_RESULTS.sim`` is a C ``float``).

    Two scores that differ only beyond float32 precision (about 7 significant digits) therefore tie, and
    the tie goes to the greater doc id, exactly as in trec_eval and pytrec_eval. Returns a new float64
    array (NaN stays NaN), so exact pseudo-scores can still be stored in it.
    """
    return np.asarray(scores, dtype=np.float64).astype(np.float32).astype(np.float64)


def trec_eval_order(scores: Any, doc_ids: Any, query_ids: Any = None) -> np.ndarray:
    """Indices that put rows in trec_eval's order: the one ranking rule of evalops.

    By query id ascending when ``query_ids`` is given, then score descending compared at float32 precision
    (:func:`as_trec_eval_scores`), ties by doc id descending. Rows whose score is NaN (a query without
    scores) keep their input order. The evaluator ranks by this rule (without sorting, in
    :func:`hits_from_columns`); the formats write runs and the retrievers cut at k with this function, so
    a document kept at rank k is the one the evaluator ranks at k.
    """
    raw = np.asarray(scores, dtype=np.float64)
    n = len(raw)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    unscored = np.isnan(raw)
    score_key = np.where(unscored, 0.0, -as_trec_eval_scores(raw)) + 0.0  # -0.0 and 0.0 tie, as in C
    d_codes = _sorted_codes(doc_ids)
    # For unscored rows the score key is constant, the doc key neutral, and the input position decides.
    doc_key = np.where(unscored, 0, -d_codes)
    pos_key = np.where(unscored, np.arange(n), 0)
    keys = [pos_key, doc_key, score_key]
    if query_ids is not None:
        keys.append(_sorted_codes(query_ids))
    return np.lexsort(keys)


_FEW_ROWS = 200_000  # up to this many ids: sorted in Python; more: pandas' factorize (worth its import)


def _sorted_codes(ids: Any) -> np.ndarray:
    """The rank of each id among the distinct ids in sorted order (``pandas.factorize(..., sort=True)``'s
    codes). A few ids are sorted in Python: importing pandas for them would cost more than the ranking."""
    values = np.asarray(ids, dtype=object)
    if len(values) <= _FEW_ROWS:
        items = values.tolist()
        try:
            index = {value: code for code, value in enumerate(sorted(set(items)))}
        except TypeError:  # ids of mixed types: pandas orders them
            pass
        else:
            return np.fromiter(map(index.__getitem__, items), dtype=np.int64, count=len(items))
    import pandas as pd

    return pd.factorize(values, sort=True)[0]


def _take(docs: Any, rows: np.ndarray) -> np.ndarray:
    """Doc ids at ``rows`` as an object array of str, from an ndarray or a pyarrow array."""
    if isinstance(docs, np.ndarray):
        taken: np.ndarray = docs[rows]
        return taken
    return np.asarray(docs.take(rows).to_numpy(zero_copy_only=False), dtype=object)


def _join(
    run_codes: np.ndarray,
    run_docs: Any,
    pair_codes: np.ndarray,
    pair_docs: np.ndarray,
    key_index: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact (query code, doc id) join: (run row, pair index) for every judged pair the run retrieved.

    Keys are 64-bit hashes of (query, doc) (:func:`evalops.metrics.strhash.pair_keys`); the pairs' keys
    are looked up in the sorted run keys (in sorted order, which keeps the binary searches cache-friendly)
    and every proposed match is confirmed by comparing the doc ids themselves.
    """
    if len(run_codes) == 0 or len(pair_codes) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    keys, order = key_index if key_index is not None else _sorted_keys(run_codes, run_docs)
    sorted_keys = keys[order]
    wanted = pair_keys(pair_codes, hash_strings(pair_docs))
    by_key = np.argsort(wanted)
    first = np.empty(len(wanted), dtype=np.int64)
    last = np.empty(len(wanted), dtype=np.int64)
    first[by_key] = np.searchsorted(sorted_keys, wanted[by_key])
    last[by_key] = np.searchsorted(sorted_keys, wanted[by_key], side="right")
    rows: list[np.ndarray] = []
    pairs: list[np.ndarray] = []
    span = 0
    while True:  # one pass per row sharing a key: almost always a single pass
        candidate = np.flatnonzero(first + span < last)
        if candidate.size == 0:
            break
        row = order[first[candidate] + span]
        same = (run_codes[row] == pair_codes[candidate]) & (_take(run_docs, row) == pair_docs[candidate])
        rows.append(row[same])
        pairs.append(candidate[same])
        span += 1
    row = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    pair = np.concatenate(pairs) if pairs else np.zeros(0, dtype=np.int64)
    keep = np.argsort(pair, kind="stable")
    return row[keep].astype(np.int64), pair[keep].astype(np.int64)


def _sorted_keys(codes: np.ndarray, docs: Any) -> tuple[np.ndarray, np.ndarray]:
    keys = pair_keys(codes, hash_strings(docs))
    return keys, np.argsort(keys)
