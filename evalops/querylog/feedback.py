"""Implicit feedback as weak judgments, and the annotation queue.

**Weak judgments** come from the doc ids users clicked and the doc ids an answer cited. Policy (explicit,
recorded in the sample's manifest): a cited doc gets ``cited_grade`` (2), a clicked doc ``clicked_grade``
(1); a doc both clicked and cited gets the larger. They are grouped by query id over every sampled unit
of that query. They are a separate ``Qrels`` whose ``source`` says ``implicit-feedback``: they are never
merged into a gold set and never change its version.

**Annotation queue**: sampled queries that have no weak judgment, for annotators to judge and grow the
gold set. One row per query id.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalops.data import Qrels
from evalops.errors import ConfigError, InputError
from evalops.formats import write_jsonl
from evalops.querylog.read import FEEDBACK_COLUMNS
from evalops.util.safetext import csv_text

__all__ = ["FeedbackPolicy", "weak_judgments", "annotation_queue", "write_annotation_queue"]


@dataclass(frozen=True)
class FeedbackPolicy:
    clicked_grade: int = 1
    cited_grade: int = 2

    def __post_init__(self) -> None:
        if self.clicked_grade < 1 or self.cited_grade < 1:
            raise ConfigError("implicit-feedback grades must be at least 1 (they mark a document relevant)")

    def grade_of(self, column: str) -> int:
        return {"clicked_doc_ids": self.clicked_grade, "cited_doc_ids": self.cited_grade}[column]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def weak_judgments(
    rows: pd.DataFrame,
    row_unit: np.ndarray,
    sample: pd.DataFrame,
    policy: FeedbackPolicy,
    source: str,
) -> Qrels:
    """Weak judgments for the sampled units. ``rows`` are the usable log rows, ``row_unit`` their unit
    numbers, ``sample`` the sampled units (``unit``, ``query_id``)."""
    query_of_unit = pd.Series(sample["query_id"].to_numpy(), index=sample["unit"].to_numpy())
    in_sample = np.isin(row_unit, sample["unit"].to_numpy())
    parts = []
    for col in FEEDBACK_COLUMNS:
        if col not in rows.columns:
            continue
        values = rows[col].to_numpy(dtype=object)[in_sample]
        units = row_unit[in_sample]
        has = np.array([isinstance(v, list) and len(v) > 0 for v in values], dtype=bool)
        if not has.any():
            continue
        lengths = np.array([len(v) for v in values[has]], dtype=np.int64)
        docs = np.concatenate([np.asarray(v, dtype=object) for v in values[has]])
        parts.append(
            pd.DataFrame(
                {
                    "query_id": query_of_unit.loc[np.repeat(units[has], lengths)].to_numpy(),
                    "doc_id": docs,
                    "grade": policy.grade_of(col),
                }
            )
        )
    if not parts:
        return Qrels(np.array([], dtype=object), np.array([], dtype=object), np.array([], dtype=np.int64), source)
    pairs = pd.concat(parts, ignore_index=True).groupby(["query_id", "doc_id"], sort=True)["grade"].max().reset_index()
    return Qrels.from_frame(pairs, source=source)


def annotation_queue(sample: pd.DataFrame, weak: Qrels, segment_column: str = "segment") -> pd.DataFrame:
    """Sampled queries without any weak judgment, one row per query id (see module docs)."""
    judged = set(weak.query_ids.tolist())
    pending = sample[~sample["query_id"].isin(judged)]
    if pending.empty:
        return pd.DataFrame(columns=["query_id", "text", "retriever_versions", segment_column, "occurrences", "first_seen"])
    grouped = pending.sort_values(["query_id", "first_seen"], kind="stable").groupby("query_id", sort=True)
    return pd.DataFrame(
        {
            "query_id": grouped["query_id"].first(),
            "text": grouped["text"].first(),
            "retriever_versions": grouped["retriever_version"].agg(lambda v: "|".join(sorted(set(v)))),
            segment_column: grouped[segment_column].agg(lambda v: "|".join(sorted(set(v)))),
            "occurrences": grouped["occurrences"].sum(),
            "first_seen": grouped["first_seen"].min(),
        }
    ).reset_index(drop=True)


def write_annotation_queue(queue: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write the queue as ``.csv`` or ``.jsonl`` (by the file's suffix). In the CSV, text cells that a
    spreadsheet would run as a formula get a leading ``'`` (:func:`evalops.util.safetext.csv_text`)."""
    p = Path(path)
    out = queue.copy()
    if "first_seen" in out.columns:
        out["first_seen"] = [t.isoformat() if pd.notna(t) else None for t in out["first_seen"]]
    suffix = p.suffix.lower()
    if suffix == ".csv":  # for annotators' spreadsheets: query text from the logs must not run as a formula
        values = out.astype(object).where(out.notna(), None)
        p.write_text(csv_text([str(c) for c in out.columns], values.itertuples(index=False, name=None)),
                     encoding="utf-8")
    elif suffix == ".jsonl":
        write_jsonl((dict(zip(out.columns, (v.item() if hasattr(v, "item") else v for v in row))) for row in out.itertuples(index=False)), p)
    else:
        raise InputError(f"{p}: write the annotation queue as .csv or .jsonl")
    return p
