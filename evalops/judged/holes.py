"""Holes in the judgments: judged coverage in comparisons, and the unjudged documents as work.

An unjudged document counts as non-relevant, so a version that retrieves documents the annotators never
saw is scored low exactly when it differs most from the baseline. Two pure pieces live here:

* **Judged coverage of a comparison** (:func:`judged_shift`): Judged@k (the share of the top k that has a
  judgment, ``evalops.metrics.measures.Judged``) of both sides at the measure's cutoff, over the queries
  the comparison pairs, and the number of the candidate's unjudged top-k documents. The regression rule
  withholds a regression when the candidate is less judged than ``max_judged_coverage_drop`` allows
  (``evalops.stats.decision``).
* **The holes** (:func:`prioritise_holes`): the unjudged top-k documents of every compared version, pooled
  and de-duplicated per (query, document), prioritised by how much judging them could change the
  comparisons. For one comparison, a document at 0-based rank r of a version's top k carries the
  rank-discounted weight ``w(r) = 1 / log2(r + 2)`` (DCG's discount; 0 outside the top k); if it turned
  out relevant, the comparison's DCG difference would move by its gain times ``|w_candidate - w_baseline|``.
  A document's priority is that difference summed over the comparisons it appears in; a document both
  versions rank alike changes nothing (priority 0, listed last). Ties: query id, then doc id.

The holes go to the annotation queue (``evalops.judges.generate``, ``source = "hole"``) in priority order.

**The bounds of a comparison** live in :mod:`evalops.judged.bounds`: each unjudged (query, document) gets one grade
in both versions, so a document only the candidate retrieved can favour it, one only the baseline retrieved
favours the baseline, and one both rank alike cancels (:data:`HOLE_BOUND`, printed in every report).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["HOLE_BOUND", "HOLE_POLICY", "Hole", "beside_judged", "cutoff_of", "hole_rows", "judged_measure",
           "judged_measures", "judged_shift", "judged_top", "prioritise_holes", "rank_weight",
           "unjudged_top"]

HOLE_POLICY = {
    "pool": "unjudged documents in the top k of every compared version, one per (query, document)",
    "priority": "sum over comparisons of |w(rank in candidate) - w(rank in baseline)|, w(r) = 1/log2(r + 2) "
                "inside the alert measure's cutoff k, else 0",
    "order": "priority descending, then query id, then document id",
}

HOLE_BOUND = {
    "lower": "the pessimistic bound: each unjudged document in either version's top k (the measure's cutoff) one "
             "grade in both versions, relevant (at the gold set's highest grade) where that favours the baseline",
    "upper": "the optimistic bound: the same, relevant where that favours the candidate (evalops.judged.bounds)",
    "condensed": "both versions with their unjudged documents removed, scored on the same judgments (Sakai 2007)",
    "rule": "a regression on a candidate less judged than max_judged_coverage_drop allows stands when the "
            "optimistic bound or the condensed lists show it too, read with the decision's own interval and "
            "level; else inconclusive (unjudged_documents), which alerts and fails the gate as 'unjudged'",
}


def cutoff_of(measure: str, default_k: int) -> int:
    """The cutoff of ``measure`` (``nDCG@10`` -> 10, ``Tokens@5`` -> 5); a measure over the whole ranking
    uses ``default_k``."""
    from evalops.context import parse_any_measure

    cutoff = getattr(parse_any_measure(measure), "cutoff", None)
    return int(cutoff) if cutoff else int(default_k)


def judged_measure(measure: str, default_k: int) -> str:
    """The Judged@k measure at ``measure``'s cutoff."""
    return f"Judged@{cutoff_of(measure, default_k)}"


def judged_measures(measures: Iterable[str], default_k: int) -> list[str]:
    """The Judged@k measures at the cutoffs of ``measures`` that are not among them, by cutoff."""
    measures = list(measures)
    cutoffs = sorted({cutoff_of(m, default_k) for m in measures})
    return [f"Judged@{k}" for k in cutoffs if f"Judged@{k}" not in measures]


def beside_judged(measures: Iterable[str], default_k: int) -> list[str]:
    """``measures`` with Judged@k at each one's cutoff right after it (once), for tables that show judged
    coverage next to each measure: ``[nDCG@10, RR@10, R@100]`` -> ``[nDCG@10, Judged@10, RR@10, R@100, Judged@100]``."""
    measures = list(measures)
    out: list[str] = []
    for m in measures:
        if m not in out:
            out.append(m)
        j = judged_measure(m, default_k)
        if j not in out:
            out.append(j)
    return out


def unjudged_top(qrels: Any, run: Any, k: int) -> dict[str, list[tuple[str, int]]]:
    """The unjudged documents of ``run``'s top ``k`` for each judged query of ``qrels`` (inputs as for
    ``evalops.metrics.evaluate``): ``{query: [(doc, rank), ...]}``, 0-based ranks of the evaluation's ranking
    (score descending, ties by doc id descending). A document with any judgment, even 0, is judged."""
    return _top_by_judgment(qrels, run, k, judged=False)


def judged_top(qrels: Any, run: Any, k: int) -> dict[str, list[tuple[str, int]]]:
    """The judged documents (any grade) of ``run``'s top ``k``, as :func:`unjudged_top` gives the others."""
    return _top_by_judgment(qrels, run, k, judged=True)


def _top_by_judgment(qrels: Any, run: Any, k: int, judged: bool) -> dict[str, list[tuple[str, int]]]:
    from evalops.metrics.gold import as_gold
    from evalops.metrics.topk import top_k

    gold = as_gold(qrels)
    pairs = set(zip(gold.query_ids[gold.qidx].tolist(), gold.doc_ids.tolist()))
    top = top_k(run.to_run() if hasattr(run, "to_run") else run, k)  # a RunTable: see unjudged_of_table
    out: dict[str, list[tuple[str, int]]] = {}
    for q in sorted(set(gold.query_ids.tolist())):
        found = [(d, r) for r, d in enumerate(top.get(q, [])) if ((q, d) in pairs) == judged]
        if found:
            out[q] = found
    return out


def judged_shift(measure: str, baseline: Mapping[str, float], candidate: Mapping[str, float],
                 unjudged: Mapping[str, Sequence[tuple[str, int]]], k: int, queries: Iterable[str] | None = None,
                 bound: Any = None):
    """The judged coverage of one comparison (``evalops.stats.JudgedShift``), or ``None`` when a side has no
    Judged@k values (a run stored before they were scored).

    ``baseline`` / ``candidate``: per-query Judged@k; ``unjudged``: the candidate's unjudged documents with
    their ranks (:func:`unjudged_top`), counted when there is no ``bound``; ``queries``: the compared queries
    (default: those both sides have). ``bound``: the comparison's :class:`evalops.judged.bounds.PairBounds` of
    ``measure``, whose optimistic, pessimistic and condensed deltas over the same queries the shift carries
    (and whose holes, in either version's top k, it counts).
    """
    from evalops.stats import JudgedShift

    if not baseline or not candidate:
        return None
    keep = sorted(set(queries) if queries is not None else set(baseline) & set(candidate))
    keep = [q for q in keep if q in baseline and q in candidate]
    if not keep:
        return None
    b = math.fsum(float(baseline[q]) for q in keep) / len(keep)
    c = math.fsum(float(candidate[q]) for q in keep) / len(keep)
    if bound is None:
        holes = sum(1 for q in keep for _, r in unjudged.get(q, ()) if r < k)
        return JudgedShift(judged_measure(measure, k), b, c, holes)
    pair = bound.restricted(keep)
    return JudgedShift(judged_measure(measure, k), b, c, int(pair.holes.sum()), _floats(pair.upper),
                       _floats(pair.lower), _floats(pair.condensed))


def _floats(values: Any) -> tuple[float, ...]:
    return tuple(float(x) for x in values.tolist())


def rank_weight(rank: int | None, k: int) -> float:
    """DCG's discount of a 0-based rank inside the top ``k``; 0 outside it (or not retrieved)."""
    if rank is None or rank >= k:
        return 0.0
    return 1.0 / math.log2(rank + 2)


@dataclass(frozen=True)
class Hole:
    """One unjudged (query, document) and how much judging it could change the comparisons."""

    query_id: str
    doc_id: str
    priority: float
    versions: tuple[str, ...]


def prioritise_holes(unjudged: Mapping[str, Mapping[str, Sequence[tuple[str, int]]]],
                     comparisons: Iterable[tuple[str, str]], k: int) -> list[Hole]:
    """Pool, de-duplicate and order the holes (module docstring).

    ``unjudged`` maps each version to its unjudged top documents (:func:`unjudged_top`); ``comparisons`` are
    the (baseline, candidate) version pairs compared; ``k`` the alert measure's cutoff. Only documents inside
    the top ``k`` of some compared version are holes.
    """
    comparisons = [(b, c) for b, c in comparisons]
    compared = {v for pair in comparisons for v in pair}
    ranks: dict[str, dict[tuple[str, str], int]] = {
        v: {(q, d): r for q, docs in unjudged.get(v, {}).items() for d, r in docs if r < k} for v in compared
    }
    pooled: dict[tuple[str, str], set[str]] = {}
    for v in sorted(compared):
        for key in ranks[v]:
            pooled.setdefault(key, set()).add(v)
    holes = []
    for key, versions in pooled.items():
        priority = math.fsum(abs(rank_weight(ranks[c].get(key), k) - rank_weight(ranks[b].get(key), k))
                             for b, c in comparisons)
        holes.append(Hole(key[0], key[1], priority, tuple(sorted(versions))))
    holes.sort(key=lambda h: (-h.priority, h.query_id, h.doc_id))
    return holes


def hole_rows(holes: Sequence[Hole], query_texts: Mapping[str, str], *, origin: str,
              labels: Mapping[tuple[str, str], int] | None = None, judge: str | None = None,
              now: Any = None) -> list[dict[str, Any]]:
    """Annotation-queue rows (``source = "hole"``) for ``holes``, in their order.

    ``origin`` says where they come from (the comparison); with ``labels`` (a judge's grades of some of the
    pairs, a separate label source) a row's ``proposed_grade`` is the judge's and ``origin`` names ``judge``.
    The gold set is never written.
    """
    from evalops.judges.generate import queue_row

    rows = []
    for hole in holes:
        grade = None if labels is None else labels.get((hole.query_id, hole.doc_id))
        who = f"{origin}; priority {hole.priority:.3f}; in {', '.join(hole.versions)}"
        if grade is not None and judge:
            who += f"; proposed by {judge}"
        rows.append(queue_row(source="hole", query=query_texts.get(hole.query_id, ""), query_id=hole.query_id,
                              doc_id=hole.doc_id, proposed_grade=None if grade is None else int(grade),
                              origin=who, now=now))
    return rows
