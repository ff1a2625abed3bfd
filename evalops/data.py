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

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from itertools import chain
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeAlias, TypeVar, cast

import numpy as np

from evalops.errors import DuplicateDocumentError, FormatError, InputError
from evalops.util.arrow import doc_strings

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Qrels", "QrelsLike", "Run", "RunLike", "RunTable"]

_T = TypeVar("_T")


def _as_str_array(values: Iterable[Any]) -> np.ndarray:
    """A 1-d object array of ``str``. Already-string arrays pass through without a per-element loop."""
    import pandas as pd

    arr = values if isinstance(values, np.ndarray) else np.asarray(list(values), dtype=object)
    if arr.ndim != 1:
        arr = arr.reshape(-1)
    if arr.dtype != object:
        arr = arr.astype(object) if arr.dtype.kind in "UT" else np.array([str(v) for v in arr.tolist()], dtype=object)
    if arr.size and pd.api.types.infer_dtype(arr, skipna=False) != "string":
        arr = np.array([str(v) for v in arr], dtype=object)
    return arr


def _first_duplicate(query_codes: np.ndarray, query_ids: np.ndarray, doc_ids: np.ndarray) -> tuple[str, str] | None:
    """Return one (query, doc) pair that occurs twice, or None (doc ids hashed to 64 bits with the query
    codes; see :func:`first_repeated_row`). Cost is about one hash pass over the doc ids, not a string sort."""
    if len(query_ids) < 2:
        return None
    import pandas as pd

    d_hash = pd.util.hash_array(doc_ids, categorize=False)
    keys = d_hash ^ (query_codes.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    row = first_repeated_row(keys, lambda rows: zip(query_ids[rows].tolist(), doc_ids[rows].tolist()))
    return None if row is None else (str(query_ids[row]), str(doc_ids[row]))


def first_repeated_row(
    keys: np.ndarray, identity: Callable[[np.ndarray], Iterable[Any]], order: np.ndarray | None = None
) -> int | None:
    """The first row, in input order, whose (query, doc) pair occurred in an earlier row; None if none.

    The one duplicate-pair check of evalops (in-memory runs and qrels, run frames, files). ``keys`` are
    64-bit keys of the pairs (hashes, or exact codes): equal pairs have equal keys. Only rows whose keys
    repeat are looked at, and ``identity(rows)`` gives their exact pairs (hashable), so a hash collision is
    never reported as a duplicate. ``order``, the argsort of ``keys``, if the caller already has it.
    """
    if len(keys) < 2:
        return None
    if order is None:
        ordered = np.sort(keys)
        same = ordered[1:] == ordered[:-1]
        if not same.any():
            return None
        rows = np.flatnonzero(np.isin(keys, np.unique(ordered[1:][same])))
    else:
        same_at = np.flatnonzero(keys[order[1:]] == keys[order[:-1]])
        if same_at.size == 0:
            return None
        rows = np.unique(np.concatenate([order[same_at], order[same_at + 1]]))
    seen: set[Any] = set()
    for row, pair in zip(rows.tolist(), identity(rows)):  # only rows with repeated keys: a handful
        if pair in seen:
            return row
        seen.add(pair)
    return None  # only hash collisions


def _factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, uniques): codes number the distinct values in order of first appearance."""
    import pandas as pd

    codes, uniques = pd.factorize(values)
    return codes.astype(np.int64, copy=False), np.asarray(uniques, dtype=object)


def _unchecked(cls: type[_T], values: Mapping[str, Any]) -> _T:
    """An instance of the dataclass ``cls`` with its fields set from ``values`` (defaults for the rest),
    neither validated nor normalised."""
    obj = cls.__new__(cls)
    for f in fields(cls):  # type: ignore[arg-type]
        object.__setattr__(obj, f.name, values.get(f.name, f.default))
    return obj


class _Coded:
    """Mixin of the (query, doc, value) tables: integer query codes, computed once and cached (the metric
    kernels and checks share them), and the views. ``_VALUE`` names the value column (``grade`` of the
    ``grades``, ``score`` of the ``scores``)."""

    query_ids: np.ndarray
    doc_ids: np.ndarray
    _VALUE: ClassVar[str]

    def __len__(self) -> int:
        return len(self.query_ids)

    @property
    def queries(self) -> np.ndarray:
        """Sorted unique query ids: of judgments every judged query (those with no relevant document too),
        of a run every query with a retrieved document."""
        return _sorted_unique(self.query_ids, self.__dict__.get("_codes"))

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """``{query id: {doc id: value}}``."""
        out: dict[str, dict[str, Any]] = {}
        for q, d, v in zip(self.query_ids, self.doc_ids, getattr(self, f"{self._VALUE}s").tolist()):
            out.setdefault(q, {})[d] = v
        return out

    def to_frame(self) -> pd.DataFrame:
        """Columns ``query_id``, ``doc_id`` and the value (``grade`` or ``score``)."""
        import pandas as pd

        return pd.DataFrame({"query_id": self.query_ids, "doc_id": self.doc_ids,
                             self._VALUE: getattr(self, f"{self._VALUE}s")})

    def _query_codes(self) -> tuple[np.ndarray, np.ndarray]:
        """(codes, unique query ids in first-appearance order); ``query_ids == uniques[codes]``."""
        cached = self.__dict__.get("_codes")
        if cached is None:
            cached = _factorize(self.query_ids)
            object.__setattr__(self, "_codes", cached)
        return cached

    @classmethod
    def _trusted(cls, codes: tuple[np.ndarray, np.ndarray], **values: Any) -> Self:
        """From a reader that has already checked everything (str ids, int64 grades or finite scores, unique
        pairs); ``values`` by field name, ``codes`` the query codes of :meth:`_query_codes`."""
        obj = _unchecked(cls, values)
        object.__setattr__(obj, "_codes", codes)
        return obj


def check_scoring(query_codes: np.ndarray, query_ids: np.ndarray, scores: np.ndarray, where: str) -> None:
    """Raise ``InputError`` if a query mixes scored and unscored (NaN) documents (no ranking rule fits), or
    if a score lies beyond the float32 range scores are ranked at (it would become an infinity).

    ``query_ids[query_codes]`` are the rows' query ids; ``where`` names the source in the message.
    """
    limit = float(np.finfo(np.float32).max)  # scores are ranked at float32 precision (trec_eval)
    with np.errstate(invalid="ignore"):
        beyond = np.flatnonzero(np.abs(scores) > limit)
    if beyond.size:
        raise InputError(
            f"{where}: query {query_ids[query_codes[beyond[0]]]!r} has the score {float(scores[beyond[0]])!r}, "
            f"beyond the float32 range scores are ranked at (|score| <= {limit:.4g}); rescale the scores"
        )
    unscored = np.isnan(scores)
    if not unscored.any() or unscored.all():
        return
    n_unscored = np.bincount(query_codes, weights=unscored, minlength=len(query_ids))
    n_rows = np.bincount(query_codes, minlength=len(query_ids))
    mixed = np.flatnonzero((n_unscored > 0) & (n_unscored < n_rows))
    if mixed.size:
        raise InputError(
            f"{where}: query {query_ids[mixed[0]]!r} mixes scored and unscored documents; "
            "give every document a score, or none (to keep the retriever's order)"
        )


def _sorted_unique(values: np.ndarray, codes: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    if codes is not None:  # the unique ids are already known
        return np.array(sorted(codes[1].tolist()), dtype=object)
    import pandas as pd

    return np.array(sorted(pd.unique(values)), dtype=object)


def _member_mask(values: np.ndarray, wanted: Iterable[str]) -> np.ndarray:
    import pandas as pd

    wanted_ids = pd.unique(np.array([str(w) for w in wanted], dtype=object))
    return pd.Index(wanted_ids).get_indexer(values) >= 0


def _flatten_nested(
    nested: Mapping[Any, Mapping[Any, Any]],
) -> tuple[np.ndarray, np.ndarray, list[Any], tuple[np.ndarray, np.ndarray] | None]:
    """``{qid: {docid: value}}`` -> (query ids, doc ids, values, query codes or None).

    No Python loop per element. When every id is already a string, (query, doc) pairs are unique by
    construction (dict keys), so the query codes are returned and the duplicate check can be skipped;
    otherwise str() could make two keys equal (1 and "1") and codes are None.
    """
    keys = list(nested.keys())
    inner = list(nested.values())
    lengths = np.fromiter(map(len, inner), dtype=np.int64, count=len(inner))
    total = int(lengths.sum())
    all_str = not (set(map(type, keys)) - {str}) and not (set(map(type, chain.from_iterable(inner))) - {str})
    unique_keys = np.array(keys if all_str else [str(q) for q in keys], dtype=object)
    queries = np.repeat(unique_keys, lengths)
    docs = np.fromiter(chain.from_iterable(inner), dtype=object, count=total)
    values = list(chain.from_iterable(d.values() for d in inner))
    codes = None
    if all_str:
        present = lengths > 0  # a query with no documents has no rows, so no code
        renumber = np.cumsum(present) - 1
        codes = (np.repeat(renumber, lengths), unique_keys[present])
    return queries, docs, values, codes


def _build(cls: type[_T], codes: tuple[np.ndarray, np.ndarray] | None, **values: Any) -> _T:
    """Construct ``cls`` from dict input; known query codes skip the (impossible) duplicate check."""
    if codes is None:
        return cls(**values)
    obj = _unchecked(cls, values)
    obj._normalise(codes)  # type: ignore[attr-defined]
    return obj


@dataclass(frozen=True, eq=False)
class Qrels(_Coded):
    """Relevance judgments: parallel arrays of query id, doc id and integer grade.

    ``source`` names where the judgments came from (a path), for error messages and reports.
    """

    _VALUE: ClassVar[str] = "grade"
    query_ids: np.ndarray
    doc_ids: np.ndarray
    grades: np.ndarray
    source: str | None = None
    _query_order: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._normalise(None)

    def _normalise(self, codes: tuple[np.ndarray, np.ndarray] | None) -> None:
        """Validate and normalise the arrays. ``codes`` given: pairs are known unique (dict input)."""
        q = _as_str_array(self.query_ids)
        d = _as_str_array(self.doc_ids)
        g = np.asarray(self.grades)
        if not (len(q) == len(d) == len(g)):
            raise InputError("query_ids, doc_ids and grades must have the same length")
        if g.size and not np.issubdtype(g.dtype, np.integer):
            try:
                gf = np.asarray(g, dtype=float)
            except (TypeError, ValueError):
                gf = np.array([np.nan])
            if not np.all(np.isfinite(gf)) or not np.all(gf == np.round(gf)):
                raise InputError(f"{self.source or 'qrels'}: relevance grades must be integers")
            g = gf.astype(np.int64)
        object.__setattr__(self, "query_ids", q)
        object.__setattr__(self, "doc_ids", d)
        object.__setattr__(self, "grades", g.astype(np.int64, copy=False))
        if codes is not None:
            object.__setattr__(self, "_codes", codes)
            return
        dup = _first_duplicate(self._query_codes()[0], q, d)
        if dup is not None:
            raise FormatError(
                f"query {dup[0]!r} judges document {dup[1]!r} more than once; keep one judgment per pair",
                path=self.source,
            )

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, qrels: Mapping[str, Mapping[str, int]], source: str | None = None) -> Qrels:
        """From ``{qid: {docid: grade}}`` (the pytrec_eval / ranx shape)."""
        qs, ds, gs, codes = _flatten_nested(qrels)
        try:
            # no dtype: 1.5 must reach the integer check instead of being truncated to 1
            grades = np.array(gs) if gs else np.zeros(0, dtype=np.int64)
        except (TypeError, ValueError, OverflowError):
            grades = np.array(gs, dtype=object)  # let the constructor name the problem
        return _build(cls, codes, query_ids=qs, doc_ids=ds, grades=grades, source=source)

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        query_col: str = "query_id",
        doc_col: str = "doc_id",
        grade_col: str = "grade",
        source: str | None = None,
    ) -> Qrels:
        """From a DataFrame with one row per judgment. The grade column may also be called ``relevance``
        (the ir_measures name) when there is no ``grade`` column."""
        if grade_col == "grade" and "grade" not in frame.columns and "relevance" in frame.columns:
            grade_col = "relevance"
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

    # -- views (len, queries, to_dict, to_frame: _Coded) -------------------------------------------
    def restrict(self, query_ids: Iterable[str]) -> Qrels:
        keep = _member_mask(self.query_ids, query_ids)
        return Qrels(self.query_ids[keep], self.doc_ids[keep], self.grades[keep], self.source)


@dataclass(frozen=True, eq=False)
class Run(_Coded):
    """A ranked run: parallel arrays of query id, doc id and score (``NaN`` = no score).

    The arrays are kept in input order. Ranking happens in the metric layer (score descending, ties by
    doc id descending, as trec_eval does; the input order when a query has no scores).
    ``name`` is the run tag or retriever version.
    """

    _VALUE: ClassVar[str] = "score"
    query_ids: np.ndarray
    doc_ids: np.ndarray
    scores: np.ndarray
    name: str = "run"
    source: str | None = None

    def __post_init__(self) -> None:
        self._normalise(None)

    def _normalise(self, codes: tuple[np.ndarray, np.ndarray] | None) -> None:
        """Validate and normalise the arrays. ``codes`` given: pairs are known unique (dict input)."""
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
        if codes is not None:
            object.__setattr__(self, "_codes", codes)
        else:
            dup = _first_duplicate(self._query_codes()[0], q, d)
            if dup is not None:
                raise DuplicateDocumentError(dup[0], dup[1], self.source or self.name)
        if s.size:
            self._check_score_mix(s)

    def _check_score_mix(self, s: np.ndarray) -> None:
        codes, uniques = self._query_codes()
        check_scoring(codes, uniques, s, self.source or self.name)

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, run: Mapping[str, Mapping[str, float]] | Mapping[str, Sequence[str]], name: str = "run",
                  source: str | None = None) -> Run:
        """From ``{qid: {docid: score}}`` (the pytrec_eval / ranx shape). A ``None`` score means unscored.

        ``{qid: [docid, ...]}`` (plain ranked lists, the shape of RAGAS's retrieved context ids) is read by
        :meth:`from_lists`."""
        if not all(isinstance(v, Mapping) for v in run.values()):
            return cls.from_lists(cast("Mapping[str, Sequence[str]]", run), name, source)
        qs, ds, values, codes = _flatten_nested(cast("Mapping[str, Mapping[str, float]]", run))
        try:
            scores = np.array(values, dtype=np.float64)
        except (TypeError, ValueError):
            scores = np.array(values, dtype=object)  # None -> NaN; the constructor names anything else
        return _build(cls, codes, query_ids=qs, doc_ids=ds, scores=scores, name=name, source=source)

    @classmethod
    def from_lists(cls, ranked: Mapping[Any, Sequence[Any]], name: str = "run", source: str | None = None) -> Run:
        """From plain ranked lists ``{qid: [docid, ...]}``: rank order is list order, and each query's
        documents get synthetic descending scores n, n-1, ..., 1 (n = the list's length), so the ranking
        survives any writer or reader of scores. A document listed twice for one query is an error."""
        qs: list[Any] = []
        ds: list[Any] = []
        ss: list[float] = []
        for qid, docs in ranked.items():
            if isinstance(docs, (str, bytes)) or not isinstance(docs, (Sequence, np.ndarray)):
                raise InputError(
                    f"{source or 'run'}: query {str(qid)!r} holds {type(docs).__name__}; give either "
                    "{qid: {docid: score}} or {qid: [docid, ...]} (ranked lists) for every query"
                )
            for i, doc in enumerate(docs):
                if isinstance(doc, (Mapping, list, tuple)):
                    raise InputError(
                        f"{source or 'run'}: query {str(qid)!r}, position {i + 1} holds {type(doc).__name__}; "
                        "a ranked list holds doc ids only (give {qid: {docid: score}} for scored documents)"
                    )
            n = len(docs)
            qs += [str(qid)] * n
            ds += [str(d) for d in docs]
            ss += [float(n - i) for i in range(n)]
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

    # -- views (len, queries, to_dict, to_frame: _Coded) -------------------------------------------
    def restrict(self, query_ids: Iterable[str]) -> Run:
        keep = _member_mask(self.query_ids, query_ids)
        return Run(self.query_ids[keep], self.doc_ids[keep], self.scores[keep], self.name, self.source)


@dataclass(frozen=True, eq=False)
class RunTable:
    """A run as a file reader delivers it: integer codes, no Python string per row.

    ``query_ids[query_codes]`` are the rows' query ids (codes number queries in order of first
    appearance); ``doc_dictionary[doc_codes]`` their doc ids (``doc_dictionary`` is a pyarrow string
    array, or a numpy object array for small files; one doc id may have several codes, but two rows of one query name the same document exactly
    when their codes are equal). ``scores`` are finite (float32 when read at trec_eval's precision).
    Pairs are unique. The metric layer ranks it directly; :meth:`to_run` gives a :class:`Run`.
    """

    query_codes: np.ndarray
    query_ids: np.ndarray
    doc_codes: np.ndarray
    doc_dictionary: Any
    scores: np.ndarray
    name: str = "run"
    source: str | None = None

    def __len__(self) -> int:
        return len(self.query_codes)

    def doc_ids(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Doc ids of ``rows`` (every row when None) as an object array of str."""
        return doc_strings(self.doc_dictionary, self.doc_codes if rows is None else self.doc_codes[rows])

    def to_run(self) -> Run:
        codes = (self.query_codes.astype(np.int64), self.query_ids)
        return Run._trusted(
            codes,
            query_ids=self.query_ids[self.query_codes] if len(self) else np.zeros(0, dtype=object),
            doc_ids=self.doc_ids(),
            scores=self.scores.astype(np.float64),
            name=self.name,
            source=self.source,
        )


# What the evaluation entry points accept (:func:`evalops.metrics.evaluate`): the typed records, plain dicts, or
# a DataFrame with the documented columns (query_id, doc_id, grade | score).
QrelsLike: TypeAlias = "Qrels | Mapping[str, Mapping[str, int]] | pd.DataFrame"
RunLike: TypeAlias = (
    "Run | RunTable | Mapping[str, Mapping[str, float]] | Mapping[str, Sequence[str]] | pd.DataFrame"
)
