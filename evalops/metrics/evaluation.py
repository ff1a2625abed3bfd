"""``evaluate(qrels, run, measures)``: per-query values and aggregates that match trec_eval."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from evalops.data import QrelsLike, Run, RunLike, RunTable
from evalops.errors import InputError
from evalops.metrics.compute import judged_values, needs_judged, per_query_values
from evalops.metrics.fallback import fallback_values, is_fallback
from evalops.metrics.gold import Gold, as_gold
from evalops.metrics.hits import locate_hits
from evalops.metrics.judged import locate_judged, relevant_hits
from evalops.metrics.measures import Measure
from evalops.metrics.parse import parse_measures
from evalops.metrics.policy import Policy
from evalops.metrics.ranking import Hits
from evalops.metrics.result import EvaluationResult, summarize

__all__ = ["evaluate", "evaluate_hits", "evaluate_located"]


def evaluate(
    qrels: QrelsLike | Gold,
    run: RunLike,
    measures: Iterable[str | Measure] | str | Measure,
    policy: Policy | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> EvaluationResult:
    """Score ``run`` against ``qrels`` with each measure.

    ``qrels``: ``Qrels``, ``{qid: {docid: grade}}`` or a DataFrame (query_id, doc_id, grade).
    ``run``: ``Run``, ``RunTable`` (from :func:`evalops.formats.read_run_table`), ``{qid: {docid: score}}``,
    ``{qid: [docid, ...]}`` (ranked lists: list order) or a DataFrame (query_id, doc_id[, score]).
    ``measures``: names such as ``"nDCG@10"`` (see :mod:`evalops.metrics.measures`) or ``Measure`` objects;
    a name evalops does not compute natively is computed by ir_measures when it is installed
    (:mod:`evalops.metrics.fallback`), and ``result.policies()["computed_by_fallback"]`` names it.
    ``progress(done, total)`` is called after each chunk of gold queries is scored.

    Every gold query counts; one missing from the run scores 0. Run queries without judgments are
    ignored and counted. Gold queries with no relevant document follow ``policy.no_answer`` (except
    for Judged@k, which does not need one). Unjudged documents are non-relevant, unless a measure says
    ``judged_only=True`` (they are then removed from the ranking first); ``result.policies()`` names it. The
    input is never modified; nothing is printed or rounded.
    """
    return evaluate_located(qrels, run, measures, policy, progress)[0]


def evaluate_located(
    qrels: QrelsLike | Gold,
    run: RunLike,
    measures: Iterable[str | Measure] | str | Measure,
    policy: Policy | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[EvaluationResult, Hits]:
    """:func:`evaluate`, and the run's located relevant judged documents (``Hits``), for a caller that
    scores the same run again against more judgments (``evalops.judged.holes.holes_relevant_frame``)."""
    policy = policy or Policy()
    if not isinstance(policy, Policy):
        raise InputError(f"policy must be an evalops.metrics.Policy, not {type(policy).__name__}")
    parsed = parse_measures([measures] if isinstance(measures, (str, Measure)) else measures)
    gold = as_gold(qrels)
    if len(gold) == 0:
        raise InputError("the qrels hold no judgments, so there is nothing to evaluate against")
    if any(needs_judged(m) for m in parsed):  # rank every judged document once; the relevant ones are a subset
        judged = locate_judged(gold, run)
        hits = relevant_hits(judged)
    else:
        judged, hits = None, locate_hits(gold, run)
    fallback = [m for m in parsed if is_fallback(m)]  # after the run was checked (duplicates, scores)
    computed = fallback_values(fallback, gold, run) if fallback else None
    result = evaluate_hits(
        gold, hits, parsed, policy, progress=progress, run_name=run.name if isinstance(run, (Run, RunTable)) else None,
        judged=judged, fallback=computed,
    )
    return result, hits


def evaluate_hits(
    gold: Gold,
    hits: Hits,
    measures: Iterable[str | Measure],
    policy: Policy | None = None,
    progress: Callable[[int, int], None] | None = None,
    run_name: str | None = None,
    judged: Hits | None = None,
    fallback: dict[Measure, np.ndarray] | None = None,
) -> EvaluationResult:
    """The second half of :func:`evaluate`: per-query values, policies and aggregates from located hits.

    ``judged`` (every judged document located, :func:`evalops.metrics.judged.locate_judged`) is needed by
    the measures that look at unjudged documents (Judged@k, bpref, ``judged_only=True``); ``fallback`` (from
    :func:`evalops.metrics.fallback.fallback_values`, which reads the whole run) by those ir_measures computes."""
    policy = policy or Policy()
    parsed = parse_measures(list(measures))
    borrowed = [m for m in parsed if is_fallback(m)]
    special = [m for m in parsed if needs_judged(m) and not is_fallback(m)]
    usual = [m for m in parsed if not needs_judged(m) and not is_fallback(m)]
    values = {}
    if borrowed:
        if fallback is None or any(m not in fallback for m in borrowed):
            raise InputError(
                f"{', '.join(map(str, borrowed))}: computed by ir_measures (the fallback), which needs the whole run in "
                "memory, and this run was read in blocks; give a larger --memory-budget, or leave these measures out"
            )
        values = {m: np.array(fallback[m], dtype=np.float64) for m in borrowed}
    if special:
        if judged is None:
            raise InputError(f"{', '.join(map(str, special))} need every judged document located (pass judged=)")
        values.update(judged_values(special, gold, judged))
    if usual:
        values.update(per_query_values(usual, gold, hits, progress))

    no_relevant = {t: gold.n_relevant(t) == 0 for t in {m.relevance_threshold for m in parsed}}
    never = np.zeros(len(gold), dtype=bool)
    no_answer_mask = {m: no_relevant[m.relevance_threshold] if m.NO_ANSWER_APPLIES else never for m in parsed}
    if policy.no_answer == "exclude":
        keep = ~np.logical_and.reduce([no_answer_mask[m] for m in parsed])
        for m in parsed:
            values[m][no_answer_mask[m]] = np.nan
    else:
        keep = np.ones(len(gold), dtype=bool)

    every = bool(keep.all())
    per_query = {str(m): values[m] if every else values[m][keep] for m in parsed}
    del values  # (the whole vectors are not held beside the kept values and the ids built next)
    return EvaluationResult(
        measures=parsed,
        # (no copy of every id when all are kept; else only the kept ones are built, not every one and a copy)
        query_ids=gold.query_ids if every else gold.query_ids_where(keep),
        per_query=per_query,
        aggregates={name: summarize(v) for name, v in per_query.items()},
        policy=policy,
        no_answer_ids={str(m): tuple(gold.query_ids_where(no_answer_mask[m]).tolist()) for m in parsed},
        missing_from_run_ids=tuple(gold.query_ids_where(hits.retrieved == 0).tolist()),
        ignored_run_query_ids=tuple(sorted(hits.ignored_query_ids.tolist())),
        run_name=run_name,
        gold_query_count=len(gold),
    )
