"""Why a query-log row is unusable, row by row (vectorised pandas; no Great Expectations).

The validation suite counts these rows and refuses a window where their share exceeds
``QueryLogRules.max_malformed_share``; the sampler drops them. A row's reason is the first that applies:

1. the reader's own finding (``malformed`` column: invalid JSON, not an object, bad feedback list);
2. missing or unparseable timestamp; timestamp outside ``[start, end)``;
3. query missing or not a string; query blank;
4. retriever version missing, not a string, or unknown;
5. segment missing or not a string.

When the frame has ``file`` and ``line`` columns the reason ends with ``(partition/file:line)``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalops.contracts.rules import QueryLogRules

__all__ = ["row_problems", "is_text"]


def is_text(series: pd.Series) -> np.ndarray:
    """True where the value is a Python/pandas string (null is not)."""
    if pd.api.types.is_string_dtype(series.dtype) and series.dtype != object:
        return series.notna().to_numpy()
    return series.map(lambda v: isinstance(v, str), na_action=None).to_numpy(dtype=bool)


def row_problems(frame: pd.DataFrame, rules: QueryLogRules) -> pd.Series:
    """A reason per row (object dtype), or None for a usable row. Missing columns make every row bad."""
    n = len(frame)
    conditions: list[np.ndarray] = []
    reasons: list[np.ndarray | str] = []

    def add(mask: np.ndarray, reason: np.ndarray | str) -> None:
        conditions.append(np.asarray(mask, dtype=bool))
        reasons.append(reason)

    if "malformed" in frame.columns:
        add(frame["malformed"].notna().to_numpy(), frame["malformed"].astype(object).to_numpy())
    for col in rules.required_columns:
        if col not in frame.columns:
            add(np.ones(n, dtype=bool), f"column {col!r} missing")
    if "timestamp" in frame.columns:
        ts = frame["timestamp"]
        if isinstance(ts.dtype, pd.DatetimeTZDtype):
            add(ts.isna().to_numpy(), "missing or unparseable timestamp")
            add(((ts < rules.start) | (ts >= rules.end)).to_numpy(), "timestamp outside the data interval")
        else:
            add(np.ones(n, dtype=bool), "timestamp column is not timezone-aware")
    if "query" in frame.columns:
        query = frame["query"]
        text = is_text(query)
        add(~text, "query missing or not text")
        blank = np.zeros(n, dtype=bool)
        if text.any():
            blank[text] = ~query[text].astype(str).str.contains(r"\S", regex=True).to_numpy(dtype=bool)
        add(blank, "blank query")
    if "retriever_version" in frame.columns:
        version = frame["retriever_version"]
        add(~is_text(version), "retriever version missing or not text")
        unknown = ~version.isin(list(rules.known_versions)).to_numpy()
        message = np.full(n, None, dtype=object)
        if unknown.any():
            message[unknown] = ("unknown retriever version " + version[unknown].astype(str)).to_numpy(dtype=object)
        add(unknown, message)
    seg = rules.segment_column
    if seg in frame.columns:
        add(~is_text(frame[seg]), f"{seg} missing or not text")
    if not conditions:
        return pd.Series([None] * n, index=frame.index, dtype=object)
    reason = np.select(conditions, [np.broadcast_to(np.asarray(r, dtype=object), (n,)) for r in reasons], default=None)
    out = pd.Series(reason, index=frame.index, dtype=object)
    if "file" in frame.columns and "line" in frame.columns:
        bad = out.notna()
        if bad.any():
            # The partition folder and file name are enough to find the row (full paths crowd the summary).
            files = frame.loc[bad, "file"].astype(str).map(lambda f: "/".join(f.replace("\\", "/").split("/")[-2:]))
            out[bad] = out[bad].astype(str) + " (" + files + ":" + frame.loc[bad, "line"].astype(str) + ")"
    return out
