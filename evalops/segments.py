"""Results per segment: per query type, language, split and production log segment, and the tuning warning.

An average can hide an easy evaluation set: a retriever may gain on keyword queries and lose on semantic
ones. Every comparison is therefore also read per segment of each **facet**:

==============  =====================================================================================
facet           values
==============  =====================================================================================
``type``        the gold query's type (``semantic``, ``keyword``, ``no_answer``; ``untyped``)
``language``    the gold query's language (``en``, ``zh``, ...; ``und`` when unknown)
``split``       ``dev`` (tuning) or ``test`` (evaluation); only when the gold set has ``dev`` queries
``segment``     the production log's segment column (``web``, ``mobile``, ``agent-assist``, ...)
``length``      ``long`` or ``other``: the length of the query's relevant documents (``evalops.spread``);
                in the per-version aggregates only (:data:`AGGREGATE_FACETS`)
==============  =====================================================================================

The per-segment comparisons of one facet are one **family** (its segments x the compared measures of one
candidate), corrected and decided together with the run's regression policy
(``evalops.stats.adjust_and_decide``). They are descriptive: they never alert; the alert stays on the
whole query set's comparison. Each record names its family and its size. A facet with a single segment
says nothing the whole set does not and is skipped.

**Tuning on the test set.** Gold queries with ``split: dev`` are for tuning. Only ``test`` queries are
compared for alerts. :func:`tuning_warnings` flags a candidate whose registry parameters differ from its
baseline's and whose dev result improved by more than its test result plus the margin: the change fits
the tuning queries and does not carry over.

Everything here is a pure function over per-query frames (``query_id, measure, value``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["AGGREGATE_FACETS", "FACETS", "segment_aggregates", "segment_comparisons", "split_queries", "tuning_warnings"]

FACETS: tuple[str, ...] = ("type", "language", "split", "segment")
AGGREGATE_FACETS: tuple[str, ...] = FACETS + ("length",)  # the means and spread per segment of one version


def _segments(attributes: Mapping[str, Mapping[str, str]], facet: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for q, attrs in attributes.items():
        value = attrs.get(facet)
        if value not in (None, ""):
            out.setdefault(str(value), []).append(q)
    return {k: sorted(v) for k, v in sorted(out.items())}


def split_queries(attributes: Mapping[str, Mapping[str, str]]) -> tuple[set[str], set[str]]:
    """(test, dev) query ids; a query without a split is ``test``."""
    dev = {q for q, a in attributes.items() if a.get("split") == "dev"}
    return {q for q in attributes if q not in dev}, dev


def segment_aggregates(frame: Any, attributes: Mapping[str, Mapping[str, str]], measures: Sequence[str],
                       facets: Iterable[str] = FACETS) -> list[dict[str, Any]]:
    """Mean (and n) of each measure per segment of each facet for one version's scores, with its spread
    (:func:`evalops.spread.spread`).

    Rows: ``{"facet", "segment", "measure", "n", "mean", "std", "var", "p10", "median", "p90"}``; a facet
    with one segment is skipped.
    """
    import numpy as np

    from evalops.spread import spread

    rows = []
    for facet in facets:
        segments = _segments(attributes, facet)
        if len(segments) < 2:
            continue
        for measure in measures:
            values = frame[frame["measure"] == measure]
            by_query = dict(zip(values["query_id"].astype(str), values["value"].astype(float), strict=False))
            for segment, queries in segments.items():
                vals = np.array([by_query[q] for q in queries if q in by_query], dtype=float)
                vals = vals[~np.isnan(vals)]
                rows.append({"facet": facet, "segment": segment, "measure": measure, "n": int(len(vals)),
                             "mean": float(vals.mean()) if len(vals) else None, **spread(vals)})
    return rows


def segment_comparisons(base: Any, cand: Any, attributes: Mapping[str, Mapping[str, str]], measures: Sequence[str],
                        policy: Any, *, baseline_name: str = "baseline", candidate_name: str = "candidate",
                        judged: Mapping[str, tuple[Mapping[str, float], Mapping[str, float]]] | None = None,
                        facets: Iterable[str] = FACETS) -> list[dict[str, Any]]:
    """The paired comparison of each measure within each segment of each facet, one family per facet.

    ``base`` / ``cand``: per-query score frames; ``judged`` maps a measure to the per-query Judged@k of
    both sides at its cutoff (for the judged coverage shown next to each segment's measure). Rows:
    ``{"facet", "segment", "measure", "n", "baseline_mean", "candidate_mean", "delta", "delta_ci_low",
    "delta_ci_high", "p_adjusted", "decision", "reason_code", "family", "family_size", "judged_baseline",
    "judged_candidate"}``.
    """
    import math

    from evalops.context import parse_any_measure
    from evalops.stats import adjust_and_decide, align, compare

    rows: list[dict[str, Any]] = []
    for facet in facets:
        segments = _segments(attributes, facet)
        if len(segments) < 2:
            continue
        members, keys = [], []
        for measure in measures:
            b = base[base["measure"] == measure]
            c = cand[cand["measure"] == measure]
            bmap = dict(zip(b["query_id"].astype(str), b["value"].astype(float), strict=False))
            cmap = dict(zip(c["query_id"].astype(str), c["value"].astype(float), strict=False))
            for segment, queries in segments.items():
                both = [q for q in queries if q in bmap and q in cmap
                        and not (math.isnan(bmap[q]) or math.isnan(cmap[q]))]
                paired = align({q: bmap[q] for q in both}, {q: cmap[q] for q in both},
                               baseline_name=baseline_name, candidate_name=candidate_name)
                members.append(compare(paired, measure=measure, policy=policy, baseline_name=baseline_name,
                                       candidate_name=candidate_name,
                                       higher_is_better=parse_any_measure(measure).higher_is_better))
                keys.append((segment, measure, both))
        decided = adjust_and_decide(members, policy)
        family = f"{facet} segments of {candidate_name}: {len(decided)} comparisons ({policy.correction})"
        for (segment, measure, both), comp in zip(keys, decided, strict=False):
            jb = jc = None
            if judged and measure in judged and both:
                b_j, c_j = judged[measure]
                have = [q for q in both if q in b_j and q in c_j]
                if have:
                    jb = math.fsum(b_j[q] for q in have) / len(have)
                    jc = math.fsum(c_j[q] for q in have) / len(have)
            rows.append({
                "facet": facet, "segment": segment, "measure": measure, "n": comp.n,
                "baseline_mean": comp.baseline_mean, "candidate_mean": comp.candidate_mean, "delta": comp.delta,
                "delta_ci_low": comp.delta_ci_low, "delta_ci_high": comp.delta_ci_high,
                "p_adjusted": comp.p_adjusted, "decision": comp.decision, "reason_code": comp.reason_code,
                "family": family, "family_size": comp.family_size,
                "judged_baseline": jb, "judged_candidate": jc,
            })
    return rows


def tuning_warnings(dev: Mapping[str, Mapping[str, Any]], test: Mapping[str, Mapping[str, Any]],
                    margins: Mapping[str, float], *, params_changed: bool, label: str) -> list[str]:
    """Warnings for a candidate whose parameters changed and whose dev result improved while its test
    result did not, by more than the margin: ``dev delta - max(test delta, 0) > margin``.

    ``dev`` / ``test`` map a measure to ``{"delta", "n"}`` (candidate minus baseline, higher is better).
    """
    if not params_changed:
        return []
    out = []
    for measure, d in dev.items():
        t = test.get(measure)
        if t is None or d.get("delta") is None or t.get("delta") is None:
            continue
        margin = float(margins.get(measure, 0.0))
        gain, carried = float(d["delta"]), float(t["delta"])
        if gain > margin and gain - max(carried, 0.0) > margin:
            out.append(f"{label}: its parameters differ from the baseline's and {measure} improved by {gain:+.4f} on "
                       f"the {d.get('n')} dev (tuning) queries but by {carried:+.4f} on the {t.get('n')} test queries "
                       f"(margin {margin:g}): the change may fit the tuning queries only")
    return out
