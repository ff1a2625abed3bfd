"""The gold side of an evaluation: judged queries, coded for the kernels.

``Gold`` holds the qrels as integer-coded arrays over the *sorted* gold query ids. Everything the
measures need from the qrels comes from here: R (relevant judged documents per query, at a threshold)
and the ideal ranking for nDCG (judged grades sorted descending), never from the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from evalops.data import Qrels, Run
from evalops.errors import InputError

__all__ = ["Gold", "as_gold", "as_qrels", "as_run"]


def as_gold(qrels: Any) -> Gold:
    """Accept ``Qrels``, ``{qid: {docid: grade}}``, a DataFrame (query_id, doc_id, grade) or a ``Gold``
    (as is: its arrays are trusted, as built by ``Gold``'s constructors)."""
    if isinstance(qrels, Gold):
        return qrels
    if isinstance(qrels, Mapping):
        return Gold.from_dict(qrels)
    return Gold.from_qrels(as_qrels(qrels))


def as_qrels(qrels: Any) -> Qrels:
    """Accept ``Qrels``, ``{qid: {docid: grade}}`` or a DataFrame (query_id, doc_id, grade)."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, Mapping):
        return Qrels.from_dict(qrels)
    if hasattr(qrels, "columns"):
        return Qrels.from_frame(qrels)
    raise InputError(
        f"qrels must be Qrels, a {{qid: {{docid: grade}}}} dict or a DataFrame, not {type(qrels).__name__}"
    )


def as_run(run: Any) -> Run:
    """Accept ``Run``, ``{qid: {docid: score}}`` or a DataFrame (query_id, doc_id[, score])."""
    if isinstance(run, Run):
        return run
    if isinstance(run, Mapping):
        return Run.from_dict(run)
    if hasattr(run, "columns"):
        return Run.from_frame(run, score_col="score" if "score" in run.columns else None)
    raise InputError(f"run must be Run, a {{qid: {{docid: score}}}} dict or a DataFrame, not {type(run).__name__}")


@dataclass(frozen=True, eq=False)
class Gold:
    """Judgments coded by gold query: ``qidx[j]`` indexes ``query_ids`` (sorted, unique)."""

    query_ids: np.ndarray
    qidx: np.ndarray
    doc_ids: np.ndarray
    grades: np.ndarray

    @classmethod
    def from_qrels(cls, qrels: Qrels) -> Gold:
        codes, uniques = qrels._query_codes()
        order = np.argsort(uniques, kind="stable")  # Python string order = byte order of UTF-8
        renumber = np.empty_like(order)
        renumber[order] = np.arange(len(order))
        return cls(uniques[order], renumber[codes], qrels.doc_ids, qrels.grades)

    @classmethod
    def from_dict(cls, qrels: Mapping[Any, Any]) -> Gold:
        """From ``{qid: {docid: grade}}``; the same result as ``from_qrels(Qrels.from_dict(qrels))``.

        With string ids and numeric grades (the usual case) this skips building a ``Qrels``: dict keys
        cannot repeat, so there is nothing to check but the grades. Anything else goes through ``Qrels``,
        which converts ids with ``str`` and explains what is wrong.
        """
        keys = list(qrels.keys())
        inner = list(qrels.values())
        if set(map(type, keys)) - {str} or set(map(type, inner)) - {dict}:
            return cls.from_qrels(Qrels.from_dict(qrels))
        import pandas as pd

        lengths = np.fromiter(map(len, inner), dtype=np.int64, count=len(inner))
        total = int(lengths.sum())
        docs = np.fromiter(chain.from_iterable(inner), dtype=object, count=total)
        if total and not pd.api.types.infer_dtype(docs, skipna=False) == "string":
            return cls.from_qrels(Qrels.from_dict(qrels))
        try:
            grades = np.fromiter(chain.from_iterable(map(dict.values, inner)), dtype=np.float64, count=total)
        except (TypeError, ValueError):
            return cls.from_qrels(Qrels.from_dict(qrels))
        if not np.all(np.isfinite(grades) & (grades == np.round(grades))):
            return cls.from_qrels(Qrels.from_dict(qrels))  # raises, naming the problem
        present = np.flatnonzero(lengths > 0)  # a query with no judgments is not a gold query
        ids = np.array(keys, dtype=object)[present]
        order = np.argsort(ids, kind="stable")
        renumber = np.empty_like(order)
        renumber[order] = np.arange(len(order))
        qidx = np.repeat(renumber, lengths[present])
        return cls(ids[order], qidx, docs, grades.astype(np.int64))

    def __len__(self) -> int:
        return len(self.query_ids)

    def n_relevant(self, threshold: int) -> np.ndarray:
        """R per gold query: judged documents with grade >= threshold."""
        return np.bincount(self.qidx[self.grades >= threshold], minlength=len(self.query_ids))

    def ideal(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positive judged grades as (query index, 0-based ideal rank, grade), sorted by query then rank."""
        positive = np.flatnonzero(self.grades > 0)
        q = self.qidx[positive]
        g = self.grades[positive]
        if g.size:
            span = int(g.max()) + 1
            if span * (len(self.query_ids) + 1) < 2**62:  # one integer sort: much faster than lexsort
                order = np.argsort(q * span + (span - 1 - g), kind="stable")
            else:
                order = np.lexsort((-g, q))
            q, g = q[order], g[order]
        return q, _position_in_group(q), g


def _position_in_group(sorted_keys: np.ndarray) -> np.ndarray:
    """0, 1, 2, ... restarting wherever ``sorted_keys`` changes."""
    n = len(sorted_keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    lengths = np.diff(np.r_[starts, n])
    return np.arange(n) - np.repeat(starts, lengths)
