"""What the unjudged documents could do to a comparison: bounds that give each (query, document) one grade.

An unjudged document counts as non-relevant in the score as judged. Whether it is relevant is a fact about
the pair (query, document), so a bound on the *difference* of two runs must give the pair the same grade in
both runs. Giving it the highest grade in the candidate and none in the baseline (a per-run bound) makes
every changed candidate look possibly better on sparse judgments, and hides every regression behind
``inconclusive``.

**The consistent bounds** (:func:`pair_bounds`). For one measure with cutoff k and one query, take the
unjudged documents in either run's top k, with DCG's discount ``w(r) = 1 / log2(r + 2)`` of their 0-based
rank in each run (0 outside the top k). A document the candidate ranks above the baseline (``w_c > w_b``:
only the candidate retrieved it, or retrieved it higher) can only favour the candidate if it is relevant;
one the baseline ranks higher favours the baseline; one both rank alike cancels in a sum of gains but
still enters a normalised measure's ideal ranking. Nine assignments of grades to these documents are
scored, each one grade per pair for both runs (relevant documents get the gold set's highest grade, ``G``):

==============  ======================================================================
judged          every unjudged document non-relevant (the score as judged)
candidate-only  the documents only the candidate has in its top k relevant at ``G``
up              the documents the candidate ranks higher relevant
up+tied         those, and the documents both rank alike
candidate-all   every unjudged document of the candidate's top k
baseline-only,  the mirror images, for the baseline
down, ...
==============  ======================================================================

The **optimistic** delta of a query (the candidate's best case) is the largest of judged and the four
candidate-side assignments; the **pessimistic** delta the smallest of judged and the four baseline-side
ones. Queries are independent (relevance is per query), so the per-query extremes form one consistent
assignment over the whole comparison. For P@k and Success@k these are the exact extremes over every
consistent grading (a test enumerates them); for measures whose normaliser grows with the relevant
documents (nDCG, AP, R-Prec, recall) and for RR each bound is the delta of one consistent grading, which
covers the common cases but is not a proof of the extreme.
An empty answer has no unjudged documents, so it bounds to its score as judged.

**Condensed lists** (Sakai 2007): each run with its unjudged documents removed (the judged documents keep
their order and move up), scored against the same judgments. It is not a bound: it is the comparison on the
judged evidence alone, which is much less biased than the score as judged when a run retrieves many
unjudged documents. The regression rule reads it when the bounds disagree (``evalops.stats.decision``).

Only the queries a comparison pairs are read: a query that the no-answer policy leaves out as judged stays
out under every assignment. Pure: runs come in as rankings (``{query: [doc, ...]}``, best first), the
judgments as anything ``evalops.metrics.evaluate`` reads; nothing is read or written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalops.judged.holes import cutoff_of, judged_shift
from evalops.metrics import evaluate
from evalops.metrics.compute import needs_judged
from evalops.metrics.evaluation import evaluate_hits
from evalops.metrics.fallback import is_fallback
from evalops.metrics.gold import Gold, as_gold
from evalops.metrics.hits import locate_hits
from evalops.metrics.parse import parse_measures
from evalops.metrics.ranking import Hits
from evalops.metrics.topk import top_k

__all__ = ["PairBounds", "pair_bounds", "ranking_from_docs", "ranking_of", "run_judged"]

Ranking = Mapping[str, Sequence[str]]


@dataclass(frozen=True)
class PairBounds:
    """Per-query deltas (candidate minus baseline) of one measure over ``query_ids`` (the queries both runs
    are scored on as judged): ``judged``, the ``upper`` (optimistic) and ``lower`` (pessimistic) consistent
    bounds, and the ``condensed``-list deltas; ``holes``: the unjudged (query, document) pairs in either
    run's top k per query (aligned with ``query_ids``), the documents whose judgment would narrow the
    bounds."""

    measure: str
    query_ids: np.ndarray
    judged: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    condensed: np.ndarray
    holes: np.ndarray

    def restricted(self, queries: Iterable[str]) -> PairBounds:
        """The same bounds over ``queries`` (in their order; a query without a value is left out)."""
        position = {q: i for i, q in enumerate(self.query_ids.tolist())}
        keep = np.array([position[q] for q in queries if q in position], dtype=np.int64)
        return PairBounds(self.measure, self.query_ids[keep], self.judged[keep], self.upper[keep],
                          self.lower[keep], self.condensed[keep], self.holes[keep])


def ranking_of(run: Any, depth: int) -> dict[str, list[str]]:
    """``{query: [doc, ...]}``: the first ``depth`` documents of each query of ``run`` in the evaluation's
    order (score descending, ties by doc id descending, as trec_eval; ``evalops.metrics.topk``)."""
    return top_k(run.to_run() if hasattr(run, "to_run") else run, int(depth))


def ranking_from_docs(docs: Any) -> dict[str, list[str]]:
    """A ranking from documents with their 0-based ranks in the evaluation's order (an
    ``evalops.judged.unjudged.UnjudgedDocs``: each query's rows in rank order); ranks may have gaps (documents
    left out), the order is kept."""
    queries, ids, _ = docs.rows()
    out: dict[str, list[str]] = {}
    for q, d in zip(queries.tolist(), ids):
        out.setdefault(str(q), []).append(str(d))
    return out


def pair_bounds(qrels: Any, baseline: Ranking, candidate: Ranking, measures: Iterable[str], default_k: int,
                policy: Any = None) -> dict[str, PairBounds]:
    """The consistent bounds and condensed-list deltas of every measure (module docstring), keyed by the
    measure's name as given. ``baseline`` / ``candidate``: rankings (:func:`ranking_of`); ``default_k``: the
    cutoff of a measure over the whole ranking (AP, R-Prec); ``policy``: the metrics policy
    (``evalops.metrics.Policy``) both runs are scored under.

    Each run's judged documents are located once (``evalops.metrics.hits.locate_hits``); a grading adds its
    documents to the gold set and, at their known ranks, to each run's hits, and is scored from the hits
    (``evaluate_hits``), never by matching the runs again."""
    gold = _plain(as_gold(qrels))
    grade = max(1, int(gold.grades.max()) if len(gold.grades) else 1)
    judged_pairs = set(zip(gold.query_ids[gold.qidx].tolist(), gold.doc_ids.tolist()))
    by_cutoff: dict[int, list[str]] = {}
    for m in measures:
        by_cutoff.setdefault(cutoff_of(str(m), default_k), []).append(str(m))
    rankings = {"b": baseline, "c": candidate}
    located = {side: locate_hits(gold, _as_run(r)) for side, r in rankings.items()}
    lean = {side: locate_hits(gold, _as_run({q: [d for d in docs if (q, d) in judged_pairs]
                                             for q, docs in r.items()})) for side, r in rankings.items()}
    out: dict[str, PairBounds] = {}
    for k, names in sorted(by_cutoff.items()):
        if any(needs_judged(m) for m in parse_measures(names)):  # they read every judged document: no bounds
            continue
        holes = _holes(gold, judged_pairs, baseline, candidate, k)
        as_judged = _deltas(gold, located, names, policy)
        condensed = _deltas(gold, lean, names, policy)
        scenarios = {name: _deltas(*_graded(gold, located, holes, mask, grade), names, policy)
                     for name, mask in _scenarios(holes)}
        for m in names:
            ids, judged = as_judged[m]
            upper, lower = judged.copy(), judged.copy()
            for name, per_query in scenarios.items():
                values = _aligned(per_query[m], ids)
                finite = np.isfinite(values)
                if name.startswith("up"):
                    upper[finite] = np.maximum(upper[finite], values[finite])
                else:
                    lower[finite] = np.minimum(lower[finite], values[finite])
            per_query_holes = np.bincount(holes.qidx, minlength=len(gold.query_ids))
            at = {q: i for i, q in enumerate(gold.query_ids.tolist())}
            counts = np.array([per_query_holes[at[q]] for q in ids.tolist()], dtype=np.int64)
            out[m] = PairBounds(m, ids, judged, upper, lower, _aligned(condensed[m], ids), counts)
    return out


def _plain(gold: Any) -> Any:
    """``gold`` with numpy object doc ids (a compact gold set keeps Arrow strings)."""
    docs = gold.doc_ids
    if isinstance(docs, np.ndarray) and docs.dtype == object:
        return gold
    docs = np.asarray(docs.to_pylist() if hasattr(docs, "to_pylist") else list(docs), dtype=object)
    return Gold(np.asarray(gold.query_ids, dtype=object), np.asarray(gold.qidx, dtype=np.int64), docs,
                np.asarray(gold.grades))


def _as_run(ranking: Ranking) -> dict[str, dict[str, float]]:
    """A run whose scores reproduce ``ranking``'s order (distinct, descending: no tie to break)."""
    return {str(q): {str(d): float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in ranking.items()}


@dataclass(frozen=True)
class _Holes:
    """The unjudged pairs of the gold queries in either top k, as columns: gold query index, doc id, and the
    0-based rank in the candidate's and the baseline's top k (-1: not there)."""

    qidx: np.ndarray
    docs: np.ndarray
    rank_c: np.ndarray
    rank_b: np.ndarray


def _holes(gold: Any, judged: set[tuple[str, str]], baseline: Ranking, candidate: Ranking, k: int) -> _Holes:
    qidx: list[int] = []
    docs: list[str] = []
    rank_c: list[int] = []
    rank_b: list[int] = []
    for i, q in enumerate(gold.query_ids.tolist()):
        c_top, b_top = list(candidate.get(q, ()))[:k], list(baseline.get(q, ()))[:k]
        if not c_top and not b_top:
            continue
        c_rank = {d: r for r, d in enumerate(c_top) if (q, d) not in judged}
        b_rank = {d: r for r, d in enumerate(b_top) if (q, d) not in judged}
        for d in sorted(c_rank.keys() | b_rank.keys()):
            qidx.append(i)
            docs.append(d)
            rank_c.append(c_rank.get(d, -1))
            rank_b.append(b_rank.get(d, -1))
    return _Holes(np.array(qidx, dtype=np.int64), np.array(docs, dtype=object), np.array(rank_c, dtype=np.int64),
                  np.array(rank_b, dtype=np.int64))


def _scenarios(holes: _Holes) -> list[tuple[str, np.ndarray]]:
    """The gradings (module docstring) as masks over the holes: ``up...`` ones favour the candidate,
    ``down...`` the baseline. The weight of a rank is DCG's discount (0 outside the top k)."""
    def weight(rank: np.ndarray) -> np.ndarray:
        return np.where(rank >= 0, 1.0 / np.log2(np.maximum(rank, 0) + 2.0), 0.0)

    wc, wb = weight(holes.rank_c), weight(holes.rank_b)
    up, down, tied = wc > wb, wb > wc, (wc == wb) & (holes.rank_c >= 0)
    in_c, in_b = holes.rank_c >= 0, holes.rank_b >= 0
    return [("up-only", in_c & ~in_b), ("up", up), ("up+tied", up | tied), ("up-all", in_c),
            ("down-only", in_b & ~in_c), ("down", down), ("down+tied", down | tied), ("down-all", in_b)]


def _graded(gold: Any, located: Mapping[str, Any], holes: _Holes, mask: np.ndarray, grade: int
            ) -> tuple[Any, dict[str, Any]]:
    """``gold`` plus the holes of ``mask`` judged at ``grade``, and each run's hits plus those of them it
    ranks in its top k (at their ranks)."""
    qidx, docs = holes.qidx[mask], holes.docs[mask]
    graded = Gold(gold.query_ids, np.concatenate([np.asarray(gold.qidx, dtype=np.int64), qidx]),
                  np.concatenate([gold.doc_ids, docs]),
                  np.concatenate([np.asarray(gold.grades, dtype=np.int64), np.full(len(qidx), grade, np.int64)]))
    hits = {}
    for side, ranks in (("c", holes.rank_c[mask]), ("b", holes.rank_b[mask])):
        there = ranks >= 0
        h = located[side]
        hits[side] = Hits(np.concatenate([np.asarray(h.qidx, dtype=np.int64), qidx[there]]),
                          np.concatenate([np.asarray(h.rank, dtype=np.int64), ranks[there]]),
                          np.concatenate([np.asarray(h.grade, dtype=np.int64), np.full(int(there.sum()), grade,
                                                                                       np.int64)]),
                          h.retrieved, h.ignored_query_ids)
    return graded, hits


def _deltas(gold: Any, hits: Mapping[str, Any], measures: list[str], policy: Any
            ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per measure: the query ids both runs have a (non-NaN) value for, and candidate minus baseline there."""
    base = evaluate_hits(gold, hits["b"], measures, policy)
    cand = evaluate_hits(gold, hits["c"], measures, policy)
    out = {}
    for m in measures:
        b = dict(zip(base.query_ids.tolist(), base.per_query[m].tolist()))
        c = dict(zip(cand.query_ids.tolist(), cand.per_query[m].tolist()))
        ids = [q for q in sorted(b.keys() & c.keys()) if b[q] == b[q] and c[q] == c[q]]
        out[m] = (np.array(ids, dtype=object), np.array([c[q] - b[q] for q in ids], dtype=np.float64))
    return out


def _aligned(found: tuple[np.ndarray, np.ndarray], ids: np.ndarray) -> np.ndarray:
    """``found``'s deltas at ``ids`` (NaN where it has none)."""
    at = dict(zip(found[0].tolist(), found[1].tolist()))
    return np.array([at.get(q, np.nan) for q in ids.tolist()], dtype=np.float64)


def run_judged(qrels: Any, baseline: Any, candidate: Any, measures: Iterable[str], default_k: int = 100,
               baseline_scores: Any = None, policy: Any = None) -> dict:
    """The judged coverage of ``candidate`` against ``baseline`` at each measure's cutoff and the bounds of
    the unjudged documents (``evalops.judged.bounds``), over every gold query both are scored on:
    ``{measure: JudgedShift}``, for comparisons of runs in memory (``evalops compare``, the Python API).
    Both runs are read to ``default_k`` documents (the cutoff of a measure over the whole ranking); the
    bounds are scored under the metrics ``policy``. ``baseline_scores`` is accepted for older callers and
    not needed. A measure ir_measures computes (the fallback) gets no bounds: they re-score the located
    documents, and ir_measures reads only whole runs."""
    del baseline_scores
    gold = as_gold(qrels)
    measures = [str(m) for m in parse_measures(list(measures))
                if not str(m).startswith("Judged@") and not is_fallback(m)]
    if not measures:
        return {}
    cutoffs = sorted({cutoff_of(m, default_k) for m in measures})
    depth = max([default_k, *cutoffs])
    base_rank, cand_rank = ranking_of(baseline, depth), ranking_of(candidate, depth)
    coverage = [f"Judged@{k}" for k in cutoffs]
    base_cov, cand_cov = (evaluate(gold, run, coverage) for run in (baseline, candidate))
    bounds = pair_bounds(gold, base_rank, cand_rank, measures, default_k, policy)
    out = {}
    for measure in measures:
        k = cutoff_of(measure, default_k)
        per = [dict(zip(r.query_ids.tolist(), r.per_query[f"Judged@{k}"].tolist())) for r in (base_cov, cand_cov)]
        shift = judged_shift(measure, per[0], per[1], {}, k, queries=bounds[measure].query_ids.tolist(),
                             bound=bounds[measure])
        if shift is not None:
            out[measure] = shift
    return out
