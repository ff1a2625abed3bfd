"""Spread beside the mean: how a segment's per-query values vary, and the long-document segment.

A mean hides how a segment's queries spread: on long documents relevance is scattered over many chunks,
and the same mean can hold a few complete failures. Conventions owned here:

* ``var`` and ``std`` are the sample variance and standard deviation of the per-query values
  (``ddof=1``, numpy's ``var(ddof=1)``); undefined (None) for fewer than two values.
* ``p10``, ``median`` and ``p90`` are numpy's default quantiles (linear interpolation between order
  statistics, Hyndman and Fan's type 7); undefined for no value.
* NaN values (a measure undefined for a query by policy) are left out, as the mean leaves them out.

**The long-document segment** (facet ``length``): a judged query is ``long`` when the mean length of its
relevant documents (grade >= 1), in characters of title and text, is above the ``percentile``-th
percentile of the document lengths of the whole knowledge base, and ``other`` otherwise. A query with no
relevant document in the knowledge base has no length segment. The rule and the threshold it gave are
recorded with the run (:class:`LongDocumentRule`).

Pure: arrays and mappings in, plain values out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["LONG", "OTHER", "SPREAD_KEYS", "LongDocumentRule", "long_document_segments", "spread"]

SPREAD_KEYS: tuple[str, ...] = ("std", "var", "p10", "median", "p90")
LONG, OTHER = "long", "other"


def spread(values: Iterable[float]) -> dict[str, float | None]:
    """``{"std", "var", "p10", "median", "p90"}`` of the non-NaN ``values`` (see the module docs)."""
    array = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=float)
    array = array[~np.isnan(array)]
    out: dict[str, float | None] = dict.fromkeys(SPREAD_KEYS)
    if len(array):
        p10, median, p90 = np.quantile(array, [0.1, 0.5, 0.9])
        out.update(p10=float(p10), median=float(median), p90=float(p90))
    if len(array) > 1:
        out.update(var=float(array.var(ddof=1)), std=float(array.std(ddof=1)))
    return out


@dataclass(frozen=True)
class LongDocumentRule:
    """The long-document rule in force: the percentile of the corpus's document lengths (characters of
    title and text) above which a query's relevant documents are long, and the threshold it gave."""

    percentile: float
    threshold: float | None = None

    def describe(self) -> str:
        at = "" if self.threshold is None else f" ({self.threshold:.0f} characters in this knowledge base)"
        return (f"a query is 'long' when the mean length of its relevant documents (characters of title and "
                f"text) is above the {self.percentile:g}th percentile of the knowledge base's documents{at}")

    def to_dict(self) -> dict[str, Any]:
        return {"percentile": self.percentile, "threshold": self.threshold, "unit": "characters"}


def long_document_segments(grades: Mapping[str, Mapping[str, int]], doc_length: Mapping[str, int],
                           percentile: float) -> tuple[dict[str, str], LongDocumentRule]:
    """``{query: "long" | "other"}`` for every query with a relevant document in ``doc_length``, and the rule
    with its threshold (``numpy.percentile`` of all the lengths)."""
    if not doc_length:
        return {}, LongDocumentRule(percentile)
    threshold = float(np.percentile(np.fromiter(doc_length.values(), dtype=float, count=len(doc_length)),
                                    percentile))
    out = {}
    for query, docs in grades.items():
        lengths = [doc_length[d] for d, g in docs.items() if g >= 1 and d in doc_length]
        if lengths:
            out[query] = LONG if float(np.mean(lengths)) > threshold else OTHER
    return out, LongDocumentRule(percentile, threshold)
