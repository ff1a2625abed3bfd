"""The gold set: queries with a type, a language and tags, plus graded judgments.

A gold set is held as two DataFrames so that a broken one can still be represented and validated (duplicate
ids, unknown types, stale doc ids are contract failures that the validation suite reports, not crashes in a
constructor):

* ``queries``: ``query_id`` (str), ``text`` (str), ``type`` (``semantic`` | ``keyword`` | ``no_answer``),
  ``language`` (a BCP-47 tag such as ``en`` or ``zh``; ``und`` when unknown), ``tags`` (tuple of str),
  ``reference_answer`` (str, optional: what a correct answer says; ``""`` when the query has none; the
  judge's context recall is measured against it);
  ``split`` (``dev``: for tuning, never alerted on; ``test``: the evaluation set; absent means ``test``);
* ``judgments``: ``query_id`` (str), ``doc_id`` (str), ``grade`` (int).

Conventions owned here:

* A ``no_answer`` query has no relevant judgment (grade > 0). It may have grade-0 judgments: documents an
  annotator looked at and found not to answer it. Those keep the query visible in ``qrels``.
* ``version`` is a content hash: the first 16 hex digits of SHA-256 over the queries sorted by id and the
  judgments sorted by (query id, doc id), each row serialised as JSON. Row order, file format and file
  path do not change it; any change to an id, text, type, language, tag set, reference answer, split or
  grade does. A query without a reference answer and in the ``test`` split hashes as it did before those
  fields existed, so adding them to the format changed no gold set's version.
* Implicit feedback (clicks, citations) is never part of a gold set; see ``evalops.querylog``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from evalops.data import Qrels
from evalops.errors import InputError
from evalops.fingerprint import content_digest
from evalops.goldset import QUERY_TYPES

__all__ = ["GoldSet", "Query", "QUERY_TYPES", "QUERY_COLUMNS", "QUERY_SPLITS", "DEFAULT_SPLIT", "JUDGMENT_COLUMNS",
           "check_split"]

QUERY_COLUMNS: tuple[str, ...] = ("query_id", "text", "type", "language", "tags", "reference_answer", "split")
QUERY_SPLITS: tuple[str, ...] = ("dev", "test")
DEFAULT_SPLIT = "test"
JUDGMENT_COLUMNS: tuple[str, ...] = ("query_id", "doc_id", "grade")
UNKNOWN_LANGUAGE = "und"


@dataclass(frozen=True)
class Query:
    """One gold query. ``tags`` is a tuple so that a Query is hashable."""

    query_id: str
    text: str
    type: str
    language: str = UNKNOWN_LANGUAGE
    tags: tuple[str, ...] = ()
    reference_answer: str = ""
    split: str = DEFAULT_SPLIT


def check_split(value: Any, where: str) -> str:
    """A query's split: ``dev`` or ``test`` (absent or empty: ``test``); anything else names ``where``."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value == "":
        return DEFAULT_SPLIT
    if isinstance(value, str) and value.strip().lower() in QUERY_SPLITS:
        return value.strip().lower()
    raise InputError(f"{where}: split is {value!r}; a query's split must be 'dev' (tuning) or 'test' (evaluation); "
                     "remove it for 'test'")


def _tags(value: Any) -> tuple[str, ...]:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ()
    if isinstance(value, str):
        return tuple(t.strip() for t in value.split("|") if t.strip())
    return tuple(str(t) for t in value)


def _values(column: Any) -> Any:
    """The column's values as iterating it gives them; a column with no missing value as one list (iterating an
    Arrow-backed column makes a scalar per element: 0.3 s for 100,000 judgments' two id columns)."""
    if isinstance(column, pd.Series) and not column.hasnans:
        return column.tolist()
    return column


def _text(value: Any) -> str:
    # None/NaN become "" so the frame stays a string column; the suite reports it as empty query text.
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return str(value)


@dataclass(frozen=True, eq=False)
class GoldSet:
    """Queries and judgments. Build with ``from_frames`` / ``from_records``; load with ``evalops.goldset.io``.

    ``source`` names where it came from (a path), for messages and reports; it is not part of ``version``.
    """

    queries: pd.DataFrame
    judgments: pd.DataFrame
    source: str | None = None

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def from_frames(
        cls, queries: pd.DataFrame, judgments: pd.DataFrame, source: str | None = None
    ) -> GoldSet:
        """From a queries frame (``query_id``, ``text``, ``type``; optional ``language``, ``tags``,
        ``reference_answer``) and a
        judgments frame (``query_id``, ``doc_id``, ``grade``). Missing columns raise ``InputError``."""
        where = source or "gold set"
        missing = [c for c in ("query_id", "text", "type") if c not in queries.columns]
        if missing:
            raise InputError(f"{where}: queries lack column(s) {missing}; have {list(queries.columns)}")
        missing = [c for c in JUDGMENT_COLUMNS if c not in judgments.columns]
        if missing:
            raise InputError(f"{where}: judgments lack column(s) {missing}; have {list(judgments.columns)}")
        n = len(queries)
        language = queries["language"] if "language" in queries.columns else [UNKNOWN_LANGUAGE] * n
        tags = queries["tags"] if "tags" in queries.columns else [()] * n
        reference = queries["reference_answer"] if "reference_answer" in queries.columns else [""] * n
        splits = queries["split"] if "split" in queries.columns else [DEFAULT_SPLIT] * n
        splits = [check_split(v, f"{where}: query row {i + 1}") for i, v in enumerate(splits)]
        q = pd.DataFrame(
            {
                "query_id": pd.Series([str(v) for v in _values(queries["query_id"])], dtype=object),
                "text": pd.Series([_text(v) for v in _values(queries["text"])], dtype=object),
                "type": pd.Series([_text(v) for v in queries["type"]], dtype=object),
                "language": pd.Series([_text(v) or UNKNOWN_LANGUAGE for v in language], dtype=object),
                "tags": pd.Series([_tags(v) for v in tags], dtype=object),
                "reference_answer": pd.Series([_text(v) for v in reference], dtype=object),
                "split": pd.Series(splits, dtype=object),
            }
        )
        grades = pd.to_numeric(judgments["grade"], errors="coerce")
        bad = grades.isna() | (grades != grades.round())
        if bool(bad.any()):
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(
                f"{where}: judgment row {row + 1} has grade {judgments['grade'].astype(object).iloc[row]!r}; "
                "grades must be integers"
            )
        j = pd.DataFrame(
            {
                "query_id": pd.Series([str(v) for v in _values(judgments["query_id"])], dtype=object),
                "doc_id": pd.Series([str(v) for v in _values(judgments["doc_id"])], dtype=object),
                "grade": grades.astype(np.int64).to_numpy(),
            }
        )
        return cls(q, j, source)

    @classmethod
    def from_records(
        cls,
        queries: Iterable[Query | Mapping[str, Any]],
        judgments: Iterable[tuple[str, str, int] | Mapping[str, Any]],
        source: str | None = None,
    ) -> GoldSet:
        """From ``Query`` objects (or dicts) and ``(query_id, doc_id, grade)`` tuples (or dicts)."""
        qrows = [q.__dict__ if isinstance(q, Query) else dict(q) for q in queries]
        jrows = [dict(zip(JUDGMENT_COLUMNS, j)) if isinstance(j, Sequence) else dict(j) for j in judgments]
        qframe = pd.DataFrame(qrows, columns=list(QUERY_COLUMNS)) if not qrows else pd.DataFrame(qrows)
        jframe = pd.DataFrame(jrows, columns=list(JUDGMENT_COLUMNS)) if not jrows else pd.DataFrame(jrows)
        return cls.from_frames(qframe, jframe, source)

    # -- views --------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.queries)

    def __repr__(self) -> str:
        return (
            f"GoldSet({len(self.queries)} queries, {len(self.judgments)} judgments, "
            f"version={self.version}, source={self.source!r})"
        )

    @property
    def query_ids(self) -> list[str]:
        """Every gold query id, in file order (including queries without any judgment)."""
        return self.queries["query_id"].tolist()

    @property
    def qrels(self) -> Qrels:
        """The judgments as ``Qrels``. Raises ``FormatError`` on a duplicate (query, doc) pair; validate first."""
        j = self.judgments
        return Qrels(
            j["query_id"].to_numpy(dtype=object),
            j["doc_id"].to_numpy(dtype=object),
            j["grade"].to_numpy(dtype=np.int64),
            source=self.source,
        )

    @cached_property
    def version(self) -> str:
        """Content hash independent of row order (see module docs); computed once (a gold set's frames are
        not to be modified after construction)."""
        q = self.queries
        qrows = sorted(
            [qid, text, qtype, lang, sorted(tags), *([ref] if ref else []),
             *([] if split == DEFAULT_SPLIT else [["split", split]])]  # a list: never equal to a reference text
            for qid, text, qtype, lang, tags, ref, split in zip(*(q[c].tolist() for c in (
                "query_id", "text", "type", "language", "tags", "reference_answer", "split")))
        )
        j = self.judgments
        grades = j["grade"].to_numpy()
        grades = grades.tolist() if grades.dtype.kind in "iu" else [int(g) for g in grades]
        # (tuples: the same JSON arrays, in the same order, as the lists they replace)
        jrows = sorted(zip(j["query_id"].tolist(), j["doc_id"].tolist(), grades))
        return content_digest({"queries": qrows, "judgments": jrows})

    def relevant_counts(self) -> pd.Series:
        """Number of relevant judgments (grade > 0) per query id, 0 for queries with none."""
        rel = self.judgments[self.judgments["grade"] > 0]
        counts = rel.groupby("query_id").size()
        return self.queries["query_id"].map(counts).fillna(0).astype(np.int64).rename("relevant_judgments")

    def split_of(self) -> dict[str, str]:
        """Each query id's split (``dev`` or ``test``)."""
        return dict(zip(self.queries["query_id"].tolist(), self.queries["split"].tolist()))

    def type_counts(self) -> dict[str, int]:
        return {str(k): int(v) for k, v in self.queries["type"].value_counts().sort_index().items()}

    def describe(self) -> dict[str, Any]:
        """A small JSON-able summary: counts by type and language, judgments, version."""
        return {
            "source": self.source,
            "version": self.version,
            "queries": len(self.queries),
            "judgments": len(self.judgments),
            "types": self.type_counts(),
            "languages": {str(k): int(v) for k, v in self.queries["language"].value_counts().sort_index().items()},
        }
