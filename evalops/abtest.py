"""Paired comparison of evaluated runs: the step between ``evalops.metrics.evaluate`` and the decisions.

``compare_runs`` is the one path from judgments and runs to decided comparisons for ``evalops compare``,
``evalops.testing.assert_no_regression`` and any caller of the Python API: it scores every run, measures the
judged coverage and the bounds of the unjudged documents (``evalops.judged.bounds.run_judged``,
``evalops.judged.bounds``)
and decides. ``compare_evaluations`` is its last step: it pairs each candidate's per-query values with the
baseline's, measure by measure, tests them (``evalops.stats.compare``) and corrects and decides all of them as
one family (``evalops.stats.adjust_and_decide``). What fails is then :mod:`evalops.failing`'s policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalops.notebook import Comparisons

__all__ = ["compare_evaluations", "compare_runs"]


def compare_evaluations(base: Any, candidates: Sequence[Any], policy: Any, *, baseline_name: str = "baseline",
                        candidate_names: Sequence[str] | None = None,
                        coverages: Sequence[Any] | None = None,
                        judged: Sequence[Any] | None = None) -> list[Any]:
    """Decided ``Comparison`` records of every measure of every candidate against ``base``: a list
    (:class:`evalops.notebook.Comparisons`) that a notebook shows as a table.

    ``base`` and ``candidates`` are ``EvaluationResult`` objects of the same qrels. A NaN value marks a
    query the no-answer policy left out of a measure (the same queries on both sides, since they share the
    qrels); the remaining values pair up by query id. ``judged`` gives, per candidate, ``{measure:
    JudgedShift}`` (``evalops.judged.bounds.run_judged``): the judged coverage each comparison carries, which
    withholds a regression on a candidate less judged than the policy allows.
    """
    import numpy as np

    from evalops.stats import adjust_and_decide, align
    from evalops.stats import compare as compare_pair

    names = list(candidate_names or [f"candidate {i + 1}" if len(candidates) > 1 else "candidate"
                                     for i in range(len(candidates))])
    covered = list(coverages) if coverages is not None else [None] * len(candidates)
    shifts = list(judged) if judged is not None else [{}] * len(candidates)
    comparisons = []
    for result, name, coverage, shift in zip(candidates, names, covered, shifts):
        for measure in base.per_query:
            b, c = base.per_query[measure], result.per_query[measure]
            b_keep, c_keep = ~np.isnan(b), ~np.isnan(c)
            paired = align((base.query_ids[b_keep], b[b_keep]), (result.query_ids[c_keep], c[c_keep]),
                           baseline_name=baseline_name, candidate_name=name)
            comparisons.append(compare_pair(paired, measure=measure, policy=policy, baseline_name=baseline_name,
                                            candidate_name=name, coverage=coverage, judged=shift.get(measure)))
    return Comparisons(adjust_and_decide(comparisons, policy))


def compare_runs(qrels: Any, baseline: Any, candidates: Sequence[Any], measures: Sequence[Any], policy: Any = None,
                 *, metrics_policy: Any = None, baseline_name: str = "baseline",
                 candidate_names: Sequence[str] | None = None, coverages: Sequence[Any] | None = None,
                 depth: int = 100, progress: Any = None,
                 treatment: str = "a judged query a run did not answer scores 0 (trec_eval -c)") -> list[Any]:
    """Decided ``Comparison`` records of every measure of every candidate run against ``baseline``, with
    the judged coverage and the bounds of the unjudged documents each one carries: what ``evalops compare``
    prints for the same inputs.

    ``qrels`` and the runs: anything ``evalops.metrics.evaluate`` reads (a ``RunTable`` is fastest);
    ``policy``: the ``evalops.stats.Policy`` (default: its defaults); ``metrics_policy``: the
    ``evalops.metrics.Policy`` (no-answer queries); ``depth``: how deep the bounds read each ranking (the
    cutoff of a measure over the whole ranking); ``coverages``: per candidate, how many judged queries each
    side answered (default: the judged queries each run has, under ``treatment``; a run under
    ``policy.min_coverage`` of them is ``partial_run``, as in ``evalops compare``); ``progress(i, run)``: a
    context manager factory per run scored, returning a callback ``(finished, total)``, for a progress bar."""
    from evalops.judged.bounds import run_judged
    from evalops.metrics import evaluate, parse_measures
    from evalops.metrics.gold import as_gold
    from evalops.stats import Policy

    policy = policy or Policy()
    parsed = parse_measures(list(measures))
    gold = as_gold(qrels)
    scored = []
    for i, run in enumerate((baseline, *candidates)):
        if progress is None:
            scored.append(evaluate(gold, run, parsed, metrics_policy))
        else:
            with progress(i, run) as report:
                scored.append(evaluate(gold, run, parsed, metrics_policy, progress=report))
    judged = [run_judged(gold, baseline, run, scored[0].per_query, default_k=depth, policy=metrics_policy)
              for run in candidates]
    if coverages is None:
        from evalops.stats import Coverage

        ids = set(gold.query_ids.tolist())
        answered = [len(ids & _query_ids(run)) for run in (baseline, *candidates)]
        coverages = [Coverage(len(ids), answered[0], n, treatment) for n in answered[1:]]
    return compare_evaluations(scored[0], scored[1:], policy, baseline_name=baseline_name,
                               candidate_names=candidate_names, coverages=coverages, judged=judged)


def _query_ids(run: Any) -> set[str]:
    """The queries a run answered (any answer, even an empty one, is one)."""
    from collections.abc import Mapping

    if isinstance(run, Mapping):
        return {str(q) for q in run}
    ids = getattr(run, "query_ids", None)
    if ids is None:
        from evalops.metrics.gold import as_run

        ids = as_run(run).query_ids
    return {str(q) for q in (ids.tolist() if hasattr(ids, "tolist") else ids)}
