"""The run's top k documents per query, in evaluation order (the ranking rule of :mod:`evalops.metrics`)."""

from __future__ import annotations

import numpy as np

from evalops.data import RunLike
from evalops.metrics.gold import as_run
from evalops.metrics.ranking import trec_eval_order

__all__ = ["top_k"]


def top_k(run: RunLike, k: int) -> dict[str, list[str]]:
    """``{query id: [doc id, ...]}``: the first ``k`` documents of each run query, best first.

    Ranked by score descending at float32 precision, ties by doc id descending (trec_eval); a query
    without scores keeps the retriever's order. ``run``: ``Run``, ``{qid: {docid: score}}`` or a DataFrame.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, not {k!r}")
    run = as_run(run)
    order = trec_eval_order(run.scores, run.doc_ids, run.query_ids)
    queries = run.query_ids[order]
    docs = run.doc_ids[order]
    if len(queries) == 0:
        return {}
    starts = np.flatnonzero(np.r_[True, queries[1:] != queries[:-1]])
    ends = np.r_[starts[1:], len(queries)]
    return {
        str(queries[s]): docs[s : min(e, s + k)].tolist() for s, e in zip(starts.tolist(), ends.tolist())
    }
