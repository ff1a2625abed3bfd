"""Normalise, scrub and de-duplicate logged queries into sampling units.

* **Display text** = the query scrubbed of personal data (``evalops.querylog.scrub``) in the normal form
  the scrubber reads (``evalops.querylog.textform.fold``: NFKC, ASCII digits, one space per whitespace
  run), stripped and on one line. The scrubber sees this form, not the logged bytes, so a full-width or
  NBSP-spaced value cannot pass it; ``scrub(display_text(x))`` and ``display_text(scrub(x))`` agree. This
  is the only form of the text that leaves this module.
* **Key** = the display text case-folded, without trailing ``? ! . 。 ？ ！`` and spaces. Two log rows with
  the same key are the same query.
* **Query id** = ``log-`` + the first 12 hex digits of SHA-1 of the key: the same query gets the same id
  in every stratum and on every day, so versions can be compared on it and an annotator's judgment
  can be matched later. The ``log-`` prefix keeps these ids apart from gold-set ids.
* **Segment** = the log's segment value in the same scrubbed display form (it is free text from the log
  and is shown in the sample, annotation queue, report, dashboard and warehouse); two values that differ
  only in what was scrubbed are one segment.
* **Unit** = one (retriever version, segment, key): the thing that is sampled. A unit records how many
  rows it stands for (``occurrences``) and when it was first seen.

Scrubbing runs once per distinct raw text (and segment value), not once per row.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalops.querylog.scrub import scrub
from evalops.querylog.textform import fold

__all__ = ["SamplingUnits", "build_units", "display_text", "query_key", "log_query_id"]

_TRAILING = "?!.。？！ \t"


def display_text(scrubbed: str) -> str:
    return " ".join(fold(scrubbed).split())


def query_key(display: str) -> str:
    return display.casefold().rstrip(_TRAILING)


def log_query_id(key: str) -> str:
    return "log-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class SamplingUnits:
    """``table``: one row per unit (``unit``, ``query_id``, ``text``, ``retriever_version``, the segment
    column, ``occurrences``, ``first_seen``). ``row_unit[i]`` is the unit of the i-th input row.
    ``pii_found`` counts scrubbed items by kind over distinct raw texts."""

    table: pd.DataFrame
    row_unit: np.ndarray
    pii_found: Counter[str]


def _scrub_values(values: pd.Series, keep: frozenset[str], found: Counter[str]) -> pd.Series:
    """Each distinct text of ``values`` not in ``keep`` scrubbed to its display form (other values as they are)."""
    codes, uniques = pd.factorize(values, sort=False)
    out = []
    for value in uniques:
        if isinstance(value, str) and value not in keep:
            result = scrub(value)
            found.update(result.found)
            value = display_text(result.text)
        out.append(value)
    mapped = np.asarray(out, dtype=object)[codes] if len(out) else np.asarray([None] * len(values), dtype=object)
    mapped[codes < 0] = None  # a missing value stays missing (the contract counts it)
    return pd.Series(mapped, index=values.index, dtype=object)


def scrub_labels(frame: pd.DataFrame, segment_column: str, known_versions: Iterable[str]
                 ) -> tuple[pd.DataFrame, Counter[str]]:
    """``frame`` with the free text of its labels scrubbed before anything reads it: every segment value,
    and every retriever version the registry does not know (a known one is the registry's own text and
    must still match it; an unknown one makes the row malformed, and the malformed-row reasons and the
    validation's failing examples quote it). Returns the frame and what was found, by kind."""
    found: Counter[str] = Counter()
    out = frame.copy(deep=False)
    if segment_column in out.columns:
        out[segment_column] = _scrub_values(out[segment_column], frozenset(), found)
    if "retriever_version" in out.columns:
        out["retriever_version"] = _scrub_values(out["retriever_version"], frozenset(known_versions), found)
    return out, found


def build_units(frame: pd.DataFrame, segment_column: str) -> SamplingUnits:
    """Group usable rows (timestamp, query, retriever_version, segment all valid) into units."""
    codes, raw_uniques = pd.factorize(frame["query"].astype(str), sort=False)
    found: Counter[str] = Counter()
    displays: list[str] = []
    for raw in raw_uniques:
        result = scrub(raw)
        found.update(result.found)
        displays.append(display_text(result.text))
    # The segment is free text from the log too (a client may log anything there) and reaches the sample,
    # the annotation queue, the report, the dashboard and the warehouse: scrubbed like the query, per value.
    segment_codes, segment_uniques = pd.factorize(frame[segment_column].astype(str), sort=False)
    segments: list[str] = []
    for raw in segment_uniques:
        result = scrub(raw)
        found.update(result.found)
        segments.append(display_text(result.text))
    keys = [query_key(d) for d in displays]
    key_codes, key_uniques = pd.factorize(pd.Series(keys, dtype=object), sort=True)
    row_key = key_codes[codes]
    grouped = pd.DataFrame(
        {
            "retriever_version": frame["retriever_version"].astype(str).to_numpy(),
            "segment": (np.asarray(segments, dtype=object)[segment_codes] if len(frame)
                        else np.asarray([], dtype=object)),
            "key": row_key,
            "timestamp": frame["timestamp"].dt.tz_convert(None).to_numpy(),  # naive UTC sorts fast
            "raw": codes,
        }
    )
    # Units numbered in sorted (version, segment, key) order, so the numbering ignores row order.
    unit_codes = grouped.groupby(["retriever_version", "segment", "key"], sort=True).ngroup().to_numpy()
    grouped["unit"] = unit_codes
    # The unit's text is the display form of its earliest row.
    first = grouped.sort_values(["unit", "timestamp"], kind="stable").drop_duplicates("unit")
    counts = np.bincount(unit_codes)
    display_of_raw = np.asarray(displays, dtype=object)
    key_text = np.asarray(key_uniques, dtype=object)
    table = pd.DataFrame(
        {
            "unit": first["unit"].to_numpy(),
            "query_id": [log_query_id(key_text[k]) for k in first["key"].to_numpy()],
            "text": display_of_raw[first["raw"].to_numpy()],
            "retriever_version": first["retriever_version"].to_numpy(),
            segment_column: first["segment"].to_numpy(),
            "occurrences": counts[first["unit"].to_numpy()],
            "first_seen": first["timestamp"].to_numpy(),
        }
    ).reset_index(drop=True)
    table["first_seen"] = pd.to_datetime(table["first_seen"], utc=True)
    return SamplingUnits(table, unit_codes.astype(np.int64), found)
