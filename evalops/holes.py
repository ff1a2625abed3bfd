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

**The holes-relevant bound** (:func:`holes_relevant_frame`, policy :data:`HOLE_BOUND`). Today's score counts
every unjudged document non-relevant: the lowest the candidate can score. The other bound scores the same
run again, with the same ``evaluate``, against the gold set plus every unjudged document of the candidate's
top k (k: each measure's cutoff) at the highest grade of the gold set (1 for binary judgments, where it is
also the lowest positive grade; with graded judgments a hole may be as good as the best judged document, so
a lower grade would not bound the candidate's score). The baseline keeps its own
score (its unjudged documents non-relevant), so the pair of bounds favours the candidate as much as the
judgments can: a regression that holds under both is the candidate's, not the holes'. For gain-normalised
measures (nDCG, AP) a relevant hole also raises the ideal ranking, so the bound is the "all holes relevant"
judgment rather than a per-query maximum; docs/judgment-holes.md says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["HOLE_BOUND", "HOLE_POLICY", "HOLES_RELEVANT", "Hole", "bound_measure", "holes_relevant_frame",
           "split_bound", "beside_judged", "cutoff_of", "hole_rows", "judged_measure", "judged_measures",
           "judged_shift", "run_judged",
           "prioritise_holes", "rank_weight", "unjudged_top"]

HOLE_POLICY = {
    "pool": "unjudged documents in the top k of every compared version, one per (query, document)",
    "priority": "sum over comparisons of |w(rank in candidate) - w(rank in baseline)|, w(r) = 1/log2(r + 2) "
                "inside the alert measure's cutoff k, else 0",
    "order": "priority descending, then query id, then document id",
}

HOLES_RELEVANT = "+holes"
"""The suffix of a measure scored under the holes-relevant bound (``nDCG@10+holes``), in the shard frames only."""

HOLE_BOUND = {
    "lower": "every unjudged document non-relevant (the score as judged)",
    "upper": "every unjudged document in the candidate's top k (the measure's cutoff) relevant at the highest "
             "grade of the gold set; the baseline as judged",
    "rule": "a regression stands when it holds under both bounds; inconclusive (unjudged_documents) when the "
            "bounds disagree",
}


def bound_measure(measure: str) -> str:
    """The name of ``measure`` scored under the holes-relevant bound."""
    return f"{measure}{HOLES_RELEVANT}"


def split_bound(frame: Any) -> tuple[Any, Any]:
    """A long score frame split into the scores as judged and the holes-relevant ones (their measure names
    without the suffix)."""
    bound = frame["measure"].astype(str).str.endswith(HOLES_RELEVANT)
    upper = frame[bound].copy()
    upper["measure"] = upper["measure"].str.slice(stop=-len(HOLES_RELEVANT))
    return frame[~bound], upper


def holes_relevant_frame(qrels: Any, run: Any, measures: Iterable[str], default_k: int, policy: Any = None,
                         unjudged: Mapping[str, Sequence[tuple[str, int]]] | None = None, located: Any = None) -> Any:
    """The long frame (``query_id, measure, value``) of ``run`` scored with every unjudged document of its
    top k counted relevant at the gold set's highest grade (module docstring), one ``evaluate`` per
    cutoff; measure names carry :data:`HOLES_RELEVANT`. Queries without holes score as judged.
    ``unjudged``: the run's :func:`unjudged_top` at the largest cutoff, when the caller has it already (a
    plain mapping or the columnar ``evalops.unjudged.UnjudgedDocs``). Its documents are unjudged
    by definition and their ranks known, so they are added to the gold set's arrays and to the run's
    located hits as columns (:func:`_bound_at`), never through per-query dicts. ``located``: the run's
    relevant judged documents against ``qrels`` (``evalops.metrics.evaluation.evaluate_located``), when the
    caller has them already."""
    import pandas as pd

    frames = []
    for result in holes_relevant_results(qrels, run, measures, default_k, policy, unjudged, located):
        frame = result.to_frame()
        frame["measure"] = frame["measure"].astype(str) + HOLES_RELEVANT
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["query_id", "measure", "value"])


def holes_relevant_results(qrels: Any, run: Any, measures: Iterable[str], default_k: int, policy: Any = None,
                           unjudged: Mapping[str, Sequence[tuple[str, int]]] | None = None,
                           located: Any = None) -> list[Any]:
    """The ``evaluate`` results behind :func:`holes_relevant_frame`, one per cutoff (measure names as
    asked, without the suffix): for callers that read the scores without a DataFrame."""
    from evalops.metrics.gold import as_gold

    gold = as_gold(qrels)
    grade = max(1, int(gold.grades.max()) if len(gold.grades) else 1)
    by_cutoff: dict[int, list[str]] = {}
    for m in measures:
        if str(m).startswith("Judged@"):
            continue  # judged coverage has no bound: it counts the holes
        by_cutoff.setdefault(cutoff_of(m, default_k), []).append(m)
    if by_cutoff and unjudged is None:
        unjudged = unjudged_top(gold, run, max(by_cutoff))
    results = []
    if by_cutoff:
        holes = _hole_rows(gold, unjudged or {})
        for k, names in sorted(by_cutoff.items()):
            result, located = _bound_at(gold, run, names, policy, holes, k, grade, located)
            results.append(result)
    return results


def _bound_at(gold: Any, run: Any, names: list[str], policy: Any, holes: tuple[Any, Any, Any], k: int,
              grade: int, located: Any) -> tuple[Any, Any]:
    """``evaluate`` of ``run`` against ``gold`` plus the holes ranked above ``k`` at ``grade``, and the run's
    located relevant judged documents (reused for the next cutoff).

    A hole is a document of the run at a known rank of the evaluation's ranking, so its hit needs no lookup:
    the hits are the run's relevant judged documents (located once) plus every hole at its rank and
    ``grade``, and the gold arrays (R, the ideal ranking) gain one judgment per hole. The measures that
    look at every judged document (bpref, ``judged_only``) locate them in the augmented gold set instead."""
    import numpy as np

    from evalops.metrics import evaluate
    from evalops.metrics.compute import needs_judged
    from evalops.metrics.evaluation import evaluate_hits
    from evalops.metrics.gold import Gold
    from evalops.metrics.parse import parse_measures
    from evalops.metrics.hits import locate_hits
    from evalops.metrics.ranking import Hits

    qidx, docs, ranks = holes
    top = ranks < k
    every = bool(top.all())  # (the largest cutoff keeps every hole: no copies)
    hole_q, hole_rank = (qidx, ranks) if every else (qidx[top], ranks[top])
    hole_grade = np.full(len(hole_q), grade, dtype=np.int64 if grade >= 2**31 else np.int32)
    if any(needs_judged(m) for m in parse_measures(names)):
        augmented = Gold(gold.query_ids, np.concatenate([gold.qidx, hole_q]).astype(np.int64, copy=False),
                         np.concatenate([gold.doc_ids, docs() if every else docs()[top]]),
                         np.concatenate([gold.grades, hole_grade]))
        return evaluate(augmented, run, names, policy), located
    located = located if located is not None else locate_hits(gold, run)
    # no doc id is needed past the lookup: evaluate_hits reads the gold set's query ids, qidx and grades only,
    # so the augmented set's doc ids are a read-only view of None (copying the gold set's and one None per
    # hole made an object array of millions at k = 100)
    # (the arrays in 32 bits where they fit, as a CompactGold's: evaluate_hits widens what needs 64 bits)
    small = _int32_or_64(len(gold.query_ids), grade, gold.grades, located.grade, located.rank, hole_rank)
    qidx = np.concatenate([gold.qidx, hole_q], dtype=small)
    augmented = Gold(gold.query_ids, qidx, np.broadcast_to(np.array(None, dtype=object), qidx.shape),
                     np.concatenate([gold.grades, hole_grade], dtype=small))
    hits = Hits(np.concatenate([located.qidx, hole_q], dtype=small),
                np.concatenate([located.rank, hole_rank], dtype=small),
                np.concatenate([located.grade, hole_grade], dtype=small),
                located.retrieved, located.ignored_query_ids)
    run_name = getattr(run, "name", None) if not isinstance(run, Mapping) else None
    return evaluate_hits(augmented, hits, names, policy, run_name=run_name), located


def _int32_or_64(n_queries: int, grade: int, *values: Any) -> Any:
    """int32 when the query indexes, the holes' ``grade`` and every one of ``values`` (arrays) fit it, else
    int64."""
    import numpy as np

    limit = 2**31 - 1
    fits = n_queries <= limit and -limit <= grade <= limit and all(
        len(v) == 0 or (-limit <= int(v.min()) and int(v.max()) <= limit) for v in values)
    return np.int32 if fits else np.int64


def _hole_rows(gold: Any, unjudged: Mapping[str, Sequence[tuple[str, int]]]) -> tuple[Any, Any, Any]:
    """The holes of the gold queries as columns: gold query index, a function giving their doc ids (an
    object array, built only when asked) and 0-based rank. Holes of a query the gold set does not judge are
    dropped (it is not scored)."""
    import numpy as np

    from evalops.metrics.ranking import index_of

    columns = [getattr(unjudged, name, None) for name in ("queries", "bounds", "docs", "ranks")]
    if any(c is None for c in columns):  # a plain mapping
        queries = [q for q, holes in unjudged.items() if len(holes)]
        counts = np.array([len(unjudged[q]) for q in queries], dtype=np.int64)
        docs: Any = np.array([str(d) for q in queries for d, _ in unjudged[q]], dtype=object)
        ranks = np.array([int(r) for q in queries for _, r in unjudged[q]], dtype=np.int64)
        queries = np.array(queries, dtype=object)
    else:  # UnjudgedDocs: already columns
        queries, bounds, docs, ranks = columns
        counts = np.diff(np.asarray(bounds, dtype=np.int64))
        ranks = np.asarray(ranks, dtype=np.int64)
    position = index_of(gold.query_ids, np.asarray(queries, dtype=object))
    # 32 bits (the gold queries fit them): millions of holes at the largest cutoff
    qidx = np.repeat(position.astype(np.int32 if len(gold.query_ids) < 2**31 else np.int64), counts)
    keep = None if bool((position >= 0).all()) else np.flatnonzero(qidx >= 0)  # None: every hole is kept

    def doc_ids() -> Any:
        if isinstance(docs, np.ndarray):
            return (docs if keep is None else docs[keep]).astype(object, copy=False)
        kept = docs if keep is None else docs.take(keep)
        return np.asarray(kept.to_numpy(zero_copy_only=False), dtype=object)  # pyarrow strings

    return (qidx, doc_ids, ranks) if keep is None else (qidx[keep], doc_ids, ranks[keep])


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
    from evalops.metrics.gold import as_gold
    from evalops.metrics.topk import top_k

    gold = as_gold(qrels)
    judged = set(zip(gold.query_ids[gold.qidx].tolist(), gold.doc_ids.tolist()))
    top = top_k(run.to_run() if hasattr(run, "to_run") else run, k)  # a RunTable: see unjudged_of_table
    out: dict[str, list[tuple[str, int]]] = {}
    for q in sorted(set(gold.query_ids.tolist())):
        holes = [(d, r) for r, d in enumerate(top.get(q, [])) if (q, d) not in judged]
        if holes:
            out[q] = holes
    return out


def judged_shift(measure: str, baseline: Mapping[str, float], candidate: Mapping[str, float],
                 unjudged: Mapping[str, Sequence[tuple[str, int]]], k: int, queries: Iterable[str] | None = None,
                 bound: tuple[Mapping[str, float], Mapping[str, float]] | None = None):
    """The judged coverage of one comparison (``evalops.stats.JudgedShift``), or ``None`` when a side has no
    Judged@k values (a run stored before they were scored).

    ``baseline`` / ``candidate``: per-query Judged@k; ``unjudged``: the candidate's unjudged documents with
    their ranks (:func:`unjudged_top`); ``queries``: the compared queries (default: those both sides have).
    ``bound``: the baseline's per-query scores of ``measure`` and the candidate's under the holes-relevant
    bound (module docstring), which give the per-query deltas of that bound over the same queries.
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
    holes = sum(1 for q in keep for _, r in unjudged.get(q, ()) if r < k)
    deltas: tuple[float, ...] = ()
    if bound is not None:
        base, upper = bound
        deltas = tuple(float(upper[q]) - float(base[q]) for q in keep if q in base and q in upper)
    return JudgedShift(judged_measure(measure, k), b, c, holes, deltas)


def run_judged(qrels: Any, baseline: Any, candidate: Any, measures: Iterable[str], default_k: int = 100,
               baseline_scores: Any = None, policy: Any = None) -> dict:
    """The judged coverage of ``candidate`` against ``baseline`` at each measure's cutoff, over every gold
    query (``evalops.metrics.judged_coverage``): ``{measure: JudgedShift}``, for comparisons of run files.

    With ``baseline_scores`` (the baseline's ``evaluate`` result under the metric ``policy``) each shift
    also carries the per-query deltas of the holes-relevant bound (module docstring) over the queries both
    score."""
    import numpy as np

    from evalops.metrics import judged_coverage
    from evalops.stats import JudgedShift

    from evalops.data import RunTable

    measures = [str(m) for m in measures]
    upper: dict[str, dict[str, float]] = {}
    unjudged = None
    cutoffs = {cutoff_of(m, default_k) for m in measures}
    if isinstance(candidate, RunTable) and cutoffs:
        # the candidate's unjudged top k from its codes, once for the largest cutoff (no per-row strings)
        from evalops.unjudged import unjudged_of_table

        unjudged = unjudged_of_table(qrels, candidate, max(cutoffs))
    if baseline_scores is not None:
        for result in holes_relevant_results(qrels, candidate, measures, default_k, policy, unjudged=unjudged):
            ids = [str(q) for q in result.query_ids.tolist()]
            for m, values in result.per_query.items():  # excluded (NaN) values are left out, as in the frame
                upper.setdefault(str(m), {}).update((q, v) for q, v in zip(ids, values.tolist()) if v == v)
    by_cutoff: dict[int, Any] = {}
    out = {}
    for measure in measures:
        k = cutoff_of(measure, default_k)
        if k not in by_cutoff:
            if unjudged is not None:
                by_cutoff[k] = _judged_shift_of_columns(qrels, baseline, candidate, k, unjudged)
            else:
                cov = judged_coverage(qrels, baseline, candidate, k)
                d = cov.to_dict()
                by_cutoff[k] = JudgedShift(cov.measure, float(d["baseline"]), float(d["candidate"]),
                                           cov.unjudged_documents)
        shift = by_cutoff[k]
        if measure in upper and measure in baseline_scores.per_query:
            base = dict(zip(baseline_scores.query_ids.tolist(), baseline_scores.per_query[measure].tolist()))
            bound = upper[measure]
            deltas = tuple(bound[q] - base[q] for q in sorted(set(base) & set(bound))
                           if not (np.isnan(base[q]) or np.isnan(bound[q])))
            shift = JudgedShift(shift.measure, shift.baseline, shift.candidate, shift.unjudged_documents, deltas)
        out[measure] = shift
    return out


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


def _judged_shift_of_columns(qrels: Any, baseline: Any, candidate: Any, k: int, unjudged: Any) -> Any:
    """``judged_coverage``'s shift for run tables: Judged@k of both runs and the number of the candidate's
    unjudged documents ranked within ``k`` (``unjudged``: its columnar unjudged top at a cutoff >= k)."""
    import numpy as np

    from evalops.metrics import evaluate
    from evalops.metrics.measures import Judged
    from evalops.stats import JudgedShift

    measure = Judged(k)
    base = evaluate(qrels, baseline, [measure]).per_query[str(measure)]
    cand = evaluate(qrels, candidate, [measure]).per_query[str(measure)]
    holes = int(np.count_nonzero(np.asarray(unjudged.ranks) < k))
    return JudgedShift(str(measure), float(base.mean()) if len(base) else 0.0,
                       float(cand.mean()) if len(cand) else 0.0, holes)
