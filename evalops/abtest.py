"""Paired comparison of evaluated runs: the step between ``evalops.metrics.evaluate`` and the decisions.

``compare_evaluations`` pairs each candidate's per-query values with the baseline's, measure by measure,
tests them (``evalops.stats.compare``) and corrects and decides all of them as one family
(``evalops.stats.adjust_and_decide``). ``evalops compare`` and ``evalops.testing`` both use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["compare_evaluations"]


def compare_evaluations(base: Any, candidates: Sequence[Any], policy: Any, *, baseline_name: str = "baseline",
                        candidate_names: Sequence[str] | None = None,
                        coverages: Sequence[Any] | None = None,
                        judged: Sequence[Any] | None = None) -> list[Any]:
    """Decided ``Comparison`` records of every measure of every candidate against ``base``.

    ``base`` and ``candidates`` are ``EvaluationResult`` objects of the same qrels. A NaN value marks a
    query the no-answer policy left out of a measure (the same queries on both sides, since they share the
    qrels); the remaining values pair up by query id. ``judged`` gives, per candidate, ``{measure:
    JudgedShift}`` (``evalops.holes.run_judged``): the judged coverage each comparison carries, which
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
    return adjust_and_decide(comparisons, policy)
