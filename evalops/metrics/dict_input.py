"""The fast path for ``{qid: {docid: score}}`` input: no string hashing beyond the dict lookups Python
already paid for when the dicts were built.

Only the judged documents are looked up (``dict.get``); every retrieved document contributes only its
score, read in one C-level pass. Input that does not fit (non-string ids, unscored or non-numeric scores)
returns None and goes through ``Run``, which validates it and explains what is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain, filterfalse, repeat
from typing import Any

import numpy as np

from evalops.metrics.gold import Gold
from evalops.metrics.ranking import (
    Hits,
    as_trec_eval_scores,
    descending_order,
    ranks_in_segments,
    segment_bounds,
    starts_mask,
)

__all__ = ["hits_from_dicts"]


def hits_from_dicts(gold: Gold, run: Mapping[Any, Any]) -> Hits | None:
    """Fast path for ``{qid: {docid: score}}`` with string ids and numeric scores; None means "use Run".

    Only the gold queries' dicts are read: run queries without judgments are ignored unread (``Run``
    would still validate them).
    """
    keys = list(run.keys())
    if set(map(type, keys)) - {str} or set(map(type, run.values())) - {dict}:
        return None
    gold_ids = gold.query_ids.tolist()
    per_gold = list(map(run.get, gold_ids, repeat({})))  # segment g holds gold query g's documents
    lengths = np.fromiter(map(len, per_gold), dtype=np.int64, count=len(per_gold))
    total = int(lengths.sum())
    if total and set(map(type, chain.from_iterable(per_gold))) - {str}:
        return None  # non-string doc ids: Run.from_dict normalises them
    try:
        scores = np.fromiter(chain.from_iterable(map(dict.values, per_gold)), dtype=np.float64, count=total)
    except (TypeError, ValueError):
        return None  # None (unscored) or non-numeric scores: Run validates and explains
    if np.isnan(scores).any():
        return None
    scores = as_trec_eval_scores(scores)

    start, end = segment_bounds(lengths)
    order = descending_order(scores, starts_mask(start, total), lambda: np.repeat(np.arange(len(gold)), lengths))
    scores_desc = scores if order is None else scores[order]

    # judged documents with a positive grade, in gold queries the run answered
    pairs = np.flatnonzero((gold.grades > 0) & (lengths[gold.qidx] > 0))
    segment = gold.qidx[pairs]
    doc = gold.doc_ids[pairs]
    # Python lists iterate much faster than object arrays
    lookups = map(dict.get, map(per_gold.__getitem__, segment.tolist()), doc.tolist(), repeat(np.nan))
    pair_scores = as_trec_eval_scores(np.fromiter(lookups, dtype=np.float64, count=len(pairs)))
    found = ~np.isnan(pair_scores)
    pairs, segment, doc, pair_scores = pairs[found], segment[found], doc[found], pair_scores[found]

    def docs_at(positions: np.ndarray) -> np.ndarray:
        flat = positions if order is None else order[positions]
        seg_of = np.searchsorted(end, flat, side="right")
        needed, local = np.unique(seg_of, return_inverse=True)
        chosen = [per_gold[i] for i in needed.tolist()]  # only queries with tied relevant documents
        sub_lengths = lengths[needed]
        sub_docs = np.fromiter(chain.from_iterable(chosen), dtype=object, count=int(sub_lengths.sum()))
        sub_start = np.cumsum(sub_lengths) - sub_lengths
        picked: np.ndarray = sub_docs[sub_start[local] + (flat - start[seg_of])]
        return picked

    rank = ranks_in_segments(scores_desc, start[segment], end[segment], pair_scores, doc.__getitem__, docs_at)
    known = set(gold_ids)
    ignored = np.array(sorted(filterfalse(known.__contains__, keys)), dtype=object)
    return Hits(gold.qidx[pairs], rank, gold.grades[pairs], lengths, ignored)
