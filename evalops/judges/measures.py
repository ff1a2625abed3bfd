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
  reference's statements, of the answer's claims, a 1-5 score): the measures :class:`ContextRecall`,
  :class:`Faithfulness` and :class:`AnswerRelevance`, each an entry of the measure registry
  (:mod:`evalops.metrics.registry`, family ``judge``) naming its prompt, what it reads and its kernel, the
  mean of a query's repeated labels.
* ``judge_qrels`` turns (query, document) labels into qrels, so every IR measure of
  :mod:`evalops.metrics` (nDCG@k with graded labels, P@k, ...) runs over judge labels. Queries with a
  missing label in the judged top k are left out and returned apart.
* ``average_repeats`` averages the repeated samples of a query before any paired test, so the judge's own
  variance is not mistaken for a difference between versions; ``judge_variance`` reports that variance.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from evalops.errors import MeasureError
from evalops.metrics.kernels import context_precision
from evalops.metrics.measures import Measure
from evalops.metrics.registry import MeasureEntry, Need, entries, entry_of, measure_types, register

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "JUDGE",
    "JUDGE_MEASURE_TYPES",
    "AnswerRelevance",
    "ContextRecall",
    "Faithfulness",
    "JudgeEntry",
    "JudgeKernel",
    "average_repeats",
    "judge_entries",
    "judge_kernel",
    "judge_qrels",
    "judge_variance",
    "ragas_context_precision",
]

JUDGE = "judge"  # the judge-label measures' family in evalops.metrics.registry


class ContextRecall(Measure):
    """ContextRecall@k = the judge's share of the reference answer's statements that the top k contexts
    support (``context_recall`` prompt), averaged over repeats. Only a query with a reference answer has one."""

    NAME = "ContextRecall"
    DESCRIPTION = "share of the reference answer's statements the top k contexts support (judge label)"
    CUTOFF = "required"


class Faithfulness(Measure):
    """Faithfulness = the judge's share of the generated answer's claims that the version's own top k
    contexts support (``faithfulness`` prompt), averaged over repeats."""

    NAME = "Faithfulness"
    DESCRIPTION = "share of the answer's claims its contexts support (judge label)"
    CUTOFF = "none"


class AnswerRelevance(Measure):
    """AnswerRelevance = the judge's 1-5 score of the generated answer's relevance to the query
    (``answer_relevance`` prompt; the contexts are not shown), averaged over repeats."""

    NAME = "AnswerRelevance"
    DESCRIPTION = "relevance of the answer to the query, 1-5 (judge label)"
    CUTOFF = "none"
    UNIT_RANGE = False  # a 1-5 score


#: (measure, one query's repeated labels, None where the judge gave none) -> its value; None excludes the query
JudgeKernel = Callable[[Measure, Sequence[float | None]], float | None]


@dataclass(frozen=True)
class JudgeEntry(MeasureEntry):
    """A measure over judge labels, one per query and version: its kernel and the prompt (task) asked."""

    kernel: JudgeKernel
    task: str
    FAMILY: ClassVar[str] = JUDGE

    def _kernel(self) -> object:
        return self.kernel


def _mean_of_repeats(m: Measure, labels: Sequence[float | None]) -> float | None:
    """The mean of the repeats; None (the query is excluded) when one of them is missing."""
    present = [x for x in labels if x is not None]
    return float(np.mean(present)) if len(present) == len(labels) else None


_LABELS, _TEXTS, _ANSWER = Need.JUDGE_LABELS, Need.CONTEXT_TEXT, Need.ANSWER
for _entry in (
    JudgeEntry(ContextRecall, frozenset({_LABELS, _TEXTS, Need.REFERENCE_ANSWER}), _mean_of_repeats, "context_recall"),
    JudgeEntry(Faithfulness, frozenset({_LABELS, _TEXTS, _ANSWER}), _mean_of_repeats, "faithfulness"),
    JudgeEntry(AnswerRelevance, frozenset({_LABELS, _ANSWER}), _mean_of_repeats, "answer_relevance"),
):
    register(_entry)
del _entry

#: ``{name: class}`` of the judge-label measures (the registry's judge family)
JUDGE_MEASURE_TYPES = measure_types(JUDGE)


def judge_entries() -> list[JudgeEntry]:
    """The registry's judge-label entries, in registration order."""
    return [e for e in entries(JUDGE) if isinstance(e, JudgeEntry)]


def judge_kernel(measure: Measure) -> JudgeKernel:
    """The kernel of a judge-label measure; ``MeasureError`` for any other measure."""
    entry = entry_of(measure)
    if not isinstance(entry, JudgeEntry):
        raise MeasureError(f"{measure} is not a judge-label measure; valid: {', '.join(JUDGE_MEASURE_TYPES)}")
    return entry.kernel


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
