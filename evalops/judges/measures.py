"""Measures from judge labels: RAGAS context precision, judge labels as qrels, repeats averaged per query.

* ``ragas_context_precision(labels, k)`` is the RAGAS formula over one query's labels in rank order:
  sum_{i<=K} (precision@i x v_i) / (number of relevant items in the top K), v_i = 1 when the i-th context
  is relevant (label >= ``rel``), 0 when none is relevant. K = min(k, contexts). It is computed by the
  kernel of :class:`evalops.metrics.ContextPrecision` (:func:`evalops.metrics.kernels.context_precision`),
  the one copy of the formula; "without a reference" labels come from the
  ``context_relevance`` prompt (context vs question), "with a reference" from
  ``context_relevance_reference`` (context vs the reference answer). A missing label in the top K makes
  the query's value NaN: the query is excluded and counted, never scored as if the context were
  irrelevant.
* Context recall, faithfulness and answer relevance are one judge label per query (a share of the
  reference's statements, of the answer's claims, a 1-5 score); they need no formula here.
* ``judge_qrels`` turns (query, document) labels into qrels, so every IR measure of
  :mod:`evalops.metrics` (nDCG@k with graded labels, P@k, ...) runs over judge labels. Queries with a
  missing label in the judged top k are left out and returned apart.
* ``average_repeats`` averages the repeated samples of a query before any paired test, so the judge's own
  variance is not mistaken for a difference between versions; ``judge_variance`` reports that variance.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from evalops.metrics.kernels import context_precision

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["average_repeats", "judge_qrels", "judge_variance", "ragas_context_precision"]


def ragas_context_precision(labels: Sequence[float | None], k: int | None = None, rel: float = 1.0) -> float:
    values = np.array([np.nan if v is None else v for v in labels], dtype=float)[: (k or len(labels))]
    if np.isnan(values).any():
        return float("nan")
    return float(context_precision(values.reshape(1, -1), len(values), rel)[0]) if len(values) else 0.0


def judge_qrels(labels: Iterable[tuple[str, str, float | None]], run: Mapping[str, Sequence[str]] | None = None,
                k: int | None = None) -> tuple[dict[str, dict[str, int]], list[str]]:
    """(qrels, excluded query ids) from ``(query_id, doc_id, label or None)`` triples.

    With ``run`` and ``k``, a query is excluded when any of its run's top k documents has a missing (None)
    or absent label; otherwise when any of its labels is missing. Labels are rounded to integer grades.
    """
    by_query: dict[str, dict[str, float | None]] = {}
    for qid, doc, label in labels:
        by_query.setdefault(str(qid), {})[str(doc)] = label
    qrels: dict[str, dict[str, int]] = {}
    excluded: list[str] = []
    for qid, docs in by_query.items():
        needed = list(run.get(qid, ()))[:k] if run is not None else list(docs)
        if any(docs.get(d) is None or (isinstance(docs.get(d), float) and np.isnan(docs[d])) for d in needed):
            excluded.append(qid)
            continue
        qrels[qid] = {d: int(round(v)) for d, v in docs.items() if v is not None and not np.isnan(v)}
    return qrels, sorted(excluded)


def average_repeats(frame: pd.DataFrame, value: str = "value", by: Sequence[str] = ("query_id",)) -> pd.DataFrame:
    """The mean of ``value`` over the repeated samples of each query (NaN repeats skipped)."""
    return frame.groupby(list(by), sort=True)[value].mean().reset_index()


def judge_variance(frame: pd.DataFrame, value: str = "value", by: Sequence[str] = ("query_id",)) -> dict[str, Any]:
    """The variance the judge adds: the mean over queries of the variance across samples, and its share."""
    import pandas as pd

    per_query = frame.groupby(list(by))[value].var(ddof=1).dropna()
    between = average_repeats(frame, value, by)[value].var(ddof=1)
    within = float(per_query.mean()) if len(per_query) else 0.0
    return {"within_query_variance": within, "between_query_variance": float(between) if pd.notna(between) else None,
            "queries": int(len(per_query))}
