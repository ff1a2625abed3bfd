"""The result of an evaluation: aligned per-query vectors, aggregates, and the policies that produced them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from evalops.metrics.measures import Measure
from evalops.metrics.policy import Policy
from evalops.notebook import html_table
from evalops.util.numfmt import number
from evalops.util.student_t import t_quantile

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Aggregate", "EvaluationResult", "summarize", "fallback_names"]


def fallback_names(measures: Any) -> dict[str, str]:
    """``{measure: "ir_measures <version>"}`` for the measures the fallback computed (none: empty)."""
    borrowed = [str(m) for m in measures if getattr(m, "ir_measure", None) is not None]
    if not borrowed:
        return {}
    from importlib.metadata import version

    return {name: f"ir_measures {version('ir_measures')} (fallback: no native evalops kernel)" for name in borrowed}


@dataclass(frozen=True)
class Aggregate:
    """Summary of one measure over the evaluated queries.

    ``std`` uses ddof=1; the interval is the 95% Student-t interval of the mean,
    mean +/- t(0.975, n-1) * std / sqrt(n). With n < 2 std and the interval are NaN; with n = 0 all are.
    """

    n: int
    mean: float
    std: float
    min: float
    max: float
    ci_low: float
    ci_high: float

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def summarize(values: np.ndarray, confidence: float = 0.95) -> Aggregate:
    """Aggregate a per-query vector, skipping NaN (queries excluded by the no-answer policy)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    n = int(v.size)
    if n == 0:
        nan = float("nan")
        return Aggregate(0, nan, nan, nan, nan, nan, nan)
    mean = float(v.mean())
    if n < 2:
        nan = float("nan")
        return Aggregate(n, mean, nan, float(v.min()), float(v.max()), nan, nan)
    std = float(v.std(ddof=1))
    half = t_quantile(float(n - 1), 0.5 + confidence / 2.0) * std / float(np.sqrt(n))
    return Aggregate(n, mean, std, float(v.min()), float(v.max()), mean - half, mean + half)


@dataclass(frozen=True, eq=False)
class EvaluationResult:
    """Per-query values and aggregates of each measure, keyed by canonical measure string.

    ``query_ids`` (sorted) are the evaluated gold queries; every ``per_query`` vector is aligned with them.
    Under the ``exclude`` no-answer policy a query with no relevant document for any requested measure is
    not in ``query_ids``; when measures use different ``rel`` thresholds, a query that is no-answer for only
    some of them holds NaN for those (and the aggregate's ``n`` leaves it out).

    * ``no_answer_ids``: per measure, gold queries with no judged document at its relevance threshold
      (excluded under ``exclude``, scored 0 under ``zero``);
    * ``missing_from_run_ids``: gold queries the run did not answer (scored 0);
    * ``ignored_run_query_ids``: run queries with no judgments (not evaluated).
    """

    measures: tuple[Measure, ...]
    query_ids: np.ndarray
    per_query: Mapping[str, np.ndarray]
    aggregates: Mapping[str, Aggregate]
    policy: Policy
    no_answer_ids: Mapping[str, tuple[str, ...]]
    missing_from_run_ids: tuple[str, ...]
    ignored_run_query_ids: tuple[str, ...]
    run_name: str | None = None
    # every gold query, kept or not: the n trec_eval and ir_measures average over (their no-answer convention)
    gold_query_count: int | None = None

    def mean(self, measure: str | Measure) -> float:
        return self.aggregates[str(measure)].mean

    def to_frame(self) -> pd.DataFrame:
        """Long format: one row per (query_id, measure, value); excluded (NaN) values are left out."""
        import pandas as pd

        frames = []
        for name, values in self.per_query.items():
            keep = ~np.isnan(values)
            frames.append(pd.DataFrame({"query_id": self.query_ids[keep], "measure": name, "value": values[keep]}))
        if not frames:
            return pd.DataFrame({"query_id": [], "measure": [], "value": []})
        return pd.concat(frames, ignore_index=True)

    def policies(self) -> dict[str, Any]:
        """The policies in force and what they were applied to (the ``policies`` block of ``to_json``)."""
        out: dict[str, Any] = {
            **self.policy.to_dict(),
            "no_answer_queries": {m: list(ids) for m, ids in self.no_answer_ids.items()},
            "missing_from_run_queries": list(self.missing_from_run_ids),
            "ignored_run_queries": len(self.ignored_run_query_ids),
            "unjudged_documents": {str(m): m.unjudged_rule for m in self.measures},
        }
        differs = self.trec_eval_counts()
        if differs:
            out["queries_under_trec_eval"] = differs
        borrowed = fallback_names(self.measures)
        if borrowed:
            out["computed_by_fallback"] = borrowed
        return out

    def trec_eval_counts(self) -> dict[str, int]:
        """Per measure whose mean is over fewer queries than trec_eval's (-c) and ir_measures' (every gold
        query, no-answer ones scored 0): that count. Empty under ``no_answer="zero"``."""
        total = self.gold_query_count
        if total is None:
            return {}
        return {name: total for name, agg in self.aggregates.items() if agg.n != total}

    def _repr_html_(self) -> str:
        """A small table for notebooks: each measure's mean, 95% CI and n (``119 of 323`` where the mean is
        over fewer queries than trec_eval's), and the policies that change the numbers. Every text escaped
        (:func:`evalops.notebook.html_table`)."""
        totals = self.trec_eval_counts()
        rows = []
        for name, agg in self.aggregates.items():
            ci = "-" if agg.ci_low != agg.ci_low else f"[{number(agg.ci_low)}, {number(agg.ci_high)}]"
            n = f"{agg.n} of {totals[name]}" if name in totals else str(agg.n)
            rows.append((name, number(agg.mean), ci, n))
        notes = [f"no-answer queries: {self.policy.no_answer}"]
        notes += [f"{name}: {total} queries under trec_eval's convention" for name, total in totals.items()]
        notes += [f"{name}: computed by {how}" for name, how in fallback_names(self.measures).items()]
        if self.missing_from_run_ids:
            notes.append(f"missing from the run (scored 0): {len(self.missing_from_run_ids)} queries")
        return html_table(self.run_name or "evaluation", ("measure", "mean", "95% CI", "n"), rows, notes)

    def to_json(self, per_query: bool = False) -> dict[str, Any]:
        """A JSON-ready dict: ``{"measures": {m: aggregate}, "per_query": {qid: {m: value}}, "policies": ...}``.

        ``per_query`` is present only when asked for; excluded (NaN) values are left out of it. Values are
        plain floats, unrounded; NaN aggregates (n < 2) stay NaN for the caller to encode (strict JSON: null).
        """
        out: dict[str, Any] = {"measures": {m: a.to_dict() for m, a in self.aggregates.items()}}
        if per_query:
            query_ids = self.query_ids.tolist()
            table: dict[str, dict[str, float]] = {qid: {} for qid in query_ids}
            for name, values in self.per_query.items():
                for qid, value in zip(query_ids, values.tolist()):
                    if value == value:
                        table[qid][name] = value
            out["per_query"] = table
        out["policies"] = self.policies()
        return out
