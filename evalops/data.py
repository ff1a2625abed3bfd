"""The two data types every part of evalops passes around: relevance judgments and ranked runs.

Both are columnar (parallel numpy arrays) so that metric kernels, the warehouse and the statistics can work
on them without a Python loop per query. Both can be built from the shapes people already have:
``{qid: {docid: grade}}`` dicts (pytrec_eval / ranx), pandas DataFrames, or ranked lists.

Conventions owned here:

* Ids are strings. A query id and a doc id are compared as strings everywhere (``"01" != "1"``).
* ``Run.scores`` is float64; ``NaN`` means "the retriever gave no score". A query whose documents all have
  no score keeps the retriever's own order. Mixing scored and unscored documents within one query is an
  error, because no ranking rule fits both.
* A document may appear at most once per query in a run (``DuplicateDocumentError`` names both ids).
* Qrels may hold grade 0 or negative grades (judged non-relevant); the metric layer decides what counts as
  relevant through the measure's ``rel`` threshold.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from evalops.errors import DuplicateDocumentError, FormatError, InputError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Qrels", "Run"]


def _as_str_array(values: Iterable[Any]) -> np.ndarray:
    arr = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=object)
    if arr.ndim != 1:
        arr = arr.reshape(-1)
    return np.array([str(v) for v in arr], dtype=object) if arr.size and not _all_str(arr) else arr


def _all_str(arr: np.ndarray) -> bool:
    return all(type(v) is str for v in arr)


def _first_duplicate(query_ids: np.ndarray, doc_ids: np.ndarray) -> tuple[str, str] | None:
    """Return one (query, doc) pair that occurs twice, or None. Vectorised: sort then compare neighbours."""
    if len(query_ids) < 2:
        return None
    keys = np.char.add(np.char.add(query_ids.astype(str), "\x00"), doc_ids.astype(str))
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    dup = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    if dup.size == 0:
        return None
    i = order[dup[0]]
    return str(query_ids[i]), str(doc_ids[i])


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments: parallel arrays of query id, doc id and integer grade.

    ``source`` names where the judgments came from (a path), for error messages and reports.
    """

    query_ids: np.ndarray
    doc_ids: np.ndarray
    grades: np.ndarray
    source: str | None = None
    _query_order: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        q = _as_str_array(self.query_ids)
        d = _as_str_array(self.doc_ids)
        g = np.asarray(self.grades)
        if not (len(q) == len(d) == len(g)):
            raise InputError("query_ids, doc_ids and grades must have the same length")
        if g.size and not np.issubdtype(g.dtype, np.integer):
            gf = np.asarray(g, dtype=float)
            if not np.all(np.isfinite(gf)) or not np.all(gf == np.round(gf)):
                raise InputError(f"{self.source or 'qrels'}: relevance grades must be integers")
            g = gf.astype(np.int64)
        object.__setattr__(self, "query_ids", q)
        object.__setattr__(self, "doc_ids", d)
        object.__setattr__(self, "grades", g.astype(np.int64, copy=False))
        dup = _first_duplicate(q, d)
        if dup is not None:
            raise FormatError(
                f"query {dup[0]!r} judges document {dup[1]!r} more than once; keep one judgment per pair",
                path=self.source,
            )

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, qrels: Mapping[str, Mapping[str, int]], source: str | None = None) -> Qrels:
        """From ``{qid: {docid: grade}}`` (the pytrec_eval / ranx shape)."""
        qs: list[str] = []
        ds: list[str] = []
        gs: list[int] = []
        for qid, docs in qrels.items():
            for did, grade in docs.items():
                qs.append(str(qid))
                ds.append(str(did))
                gs.append(grade)
        return cls(np.array(qs, dtype=object), np.array(ds, dtype=object), np.array(gs, dtype=np.int64), source)

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        query_col: str = "query_id",
        doc_col: str = "doc_id",
        grade_col: str = "grade",
        source: str | None = None,
    ) -> Qrels:
        """From a DataFrame with one row per judgment."""
        missing = [c for c in (query_col, doc_col, grade_col) if c not in frame.columns]
        if missing:
            raise InputError(
                f"{source or 'qrels frame'}: missing column(s) {missing}; have {list(frame.columns)}"
            )
        return cls(
            frame[query_col].astype(str).to_numpy(dtype=object),
            frame[doc_col].astype(str).to_numpy(dtype=object),
            frame[grade_col].to_numpy(),
            source,
        )

    # -- views --------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.query_ids)

    @property
    def queries(self) -> np.ndarray:
        """Sorted unique query ids (every judged query, including those with no relevant document)."""
        return np.unique(self.query_ids.astype(str)).astype(object)

    def to_dict(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for q, d, g in zip(self.query_ids, self.doc_ids, self.grades.tolist()):
            out.setdefault(q, {})[d] = g
        return out

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame({"query_id": self.query_ids, "doc_id": self.doc_ids, "grade": self.grades})

    def restrict(self, query_ids: Iterable[str]) -> Qrels:
        keep = np.isin(self.query_ids.astype(str), np.asarray(list(query_ids), dtype=str))
        return Qrels(self.query_ids[keep], self.doc_ids[keep], self.grades[keep], self.source)


@dataclass(frozen=True, eq=False)
class Run:
    """A ranked run: parallel arrays of query id, doc id and score (``NaN`` = no score).

    The arrays are kept in input order. Ranking happens in the metric layer (score descending, ties by
    doc id descending, as trec_eval does; the input order when a query has no scores).
    ``name`` is the run tag or retriever version.
    """

    query_ids: np.ndarray
    doc_ids: np.ndarray
    scores: np.ndarray
    name: str = "run"
    source: str | None = None

    def __post_init__(self) -> None:
        q = _as_str_array(self.query_ids)
        d = _as_str_array(self.doc_ids)
        try:
            s = np.asarray(
                [np.nan if v is None else v for v in self.scores]
                if not isinstance(self.scores, np.ndarray) or self.scores.dtype == object
                else self.scores,
                dtype=np.float64,
            )
        except (TypeError, ValueError) as exc:
            raise InputError(f"{self.source or self.name}: scores must be numbers or None ({exc})") from None
        if not (len(q) == len(d) == len(s)):
            raise InputError("query_ids, doc_ids and scores must have the same length")
        object.__setattr__(self, "query_ids", q)
        object.__setattr__(self, "doc_ids", d)
        object.__setattr__(self, "scores", s)
        dup = _first_duplicate(q, d)
        if dup is not None:
            raise DuplicateDocumentError(dup[0], dup[1], self.source or self.name)
        if s.size:
            self._check_score_mix(q, s)

    def _check_score_mix(self, q: np.ndarray, s: np.ndarray) -> None:
        nan = np.isnan(s)
        if not nan.any() or nan.all():
            return
        uq, inv = np.unique(q.astype(str), return_inverse=True)
        n_nan = np.bincount(inv, weights=nan, minlength=len(uq))
        n_all = np.bincount(inv, minlength=len(uq))
        mixed = np.flatnonzero((n_nan > 0) & (n_nan < n_all))
        if mixed.size:
            raise InputError(
                f"{self.source or self.name}: query {uq[mixed[0]]!r} mixes scored and unscored documents; "
                "give every document a score, or none (to keep the retriever's order)"
            )

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, run: Mapping[str, Mapping[str, float]], name: str = "run", source: str | None = None) -> Run:
        """From ``{qid: {docid: score}}`` (the pytrec_eval / ranx shape)."""
        qs: list[str] = []
        ds: list[str] = []
        ss: list[float] = []
        for qid, docs in run.items():
            for did, score in docs.items():
                qs.append(str(qid))
                ds.append(str(did))
                ss.append(np.nan if score is None else float(score))
        return cls(np.array(qs, dtype=object), np.array(ds, dtype=object), np.array(ss, dtype=np.float64), name, source)

    @classmethod
    def from_ranked(
        cls,
        ranked: Mapping[str, Sequence[tuple[str, float | None]] | Sequence[str]],
        name: str = "run",
        source: str | None = None,
    ) -> Run:
        """From ``{qid: [(docid, score or None), ...]}`` or ``{qid: [docid, ...]}`` in rank order."""
        qs: list[str] = []
        ds: list[str] = []
        ss: list[float] = []
        for qid, items in ranked.items():
            for item in items:
                if isinstance(item, str):
                    did, score = item, None
                else:
                    did, score = item
                qs.append(str(qid))
                ds.append(str(did))
                ss.append(np.nan if score is None else float(score))
        return cls(np.array(qs, dtype=object), np.array(ds, dtype=object), np.array(ss, dtype=np.float64), name, source)

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        query_col: str = "query_id",
        doc_col: str = "doc_id",
        score_col: str | None = "score",
        name: str = "run",
        source: str | None = None,
    ) -> Run:
        """From a DataFrame with one row per retrieved document. Without a score column, row order is rank."""
        need = [query_col, doc_col] + ([score_col] if score_col else [])
        missing = [c for c in need if c not in frame.columns]
        if missing:
            raise InputError(f"{source or 'run frame'}: missing column(s) {missing}; have {list(frame.columns)}")
        scores = (
            frame[score_col].to_numpy(dtype=np.float64, na_value=np.nan)
            if score_col
            else np.full(len(frame), np.nan)
        )
        return cls(
            frame[query_col].astype(str).to_numpy(dtype=object),
            frame[doc_col].astype(str).to_numpy(dtype=object),
            scores,
            name,
            source,
        )

    # -- views --------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.query_ids)

    @property
    def queries(self) -> np.ndarray:
        """Sorted unique query ids that have at least one retrieved document."""
        return np.unique(self.query_ids.astype(str)).astype(object)

    def to_dict(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for q, d, s in zip(self.query_ids, self.doc_ids, self.scores.tolist()):
            out.setdefault(q, {})[d] = s
        return out

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame({"query_id": self.query_ids, "doc_id": self.doc_ids, "score": self.scores})

    def restrict(self, query_ids: Iterable[str]) -> Run:
        keep = np.isin(self.query_ids.astype(str), np.asarray(list(query_ids), dtype=str))
        return Run(self.query_ids[keep], self.doc_ids[keep], self.scores[keep], self.name, self.source)
