"""Judge-label measures per query and version over the pooled labels, the paired comparisons of each
candidate with its baseline, and their own multiple-comparison family (``judge-<query set>``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from evalops.config import PRODUCTION
from evalops.judges.measures import JUDGE_MEASURE_TYPES, judge_kernel
from evalops.judges.prompts import load_prompt
from evalops.metrics import Policy, evaluate
from evalops.metrics.parse import parse_measure
from evalops.pipeline.context import RunContext
from evalops.pipeline.judging.preflight import build_judge
from evalops.pipeline.pooling import pool_family
from evalops.stats import Comparison, adjust_and_decide, align, compare
from evalops.warehouse.domain import ABTestResult

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config
    from evalops.pipeline.specs import VersionSpec


def _results(cfg: Config, run: RunContext, specs: list[VersionSpec], ranked: dict[str, dict[str, list[str]]],
             labels: dict[tuple[str, str], list[float | None]], k: int, graded: bool,
             query_labels: dict[str, dict[str, dict[str, list[float | None]]]] | None = None
             ) -> tuple[dict[str, Any], list[JudgeComparison]]:
    """(what the judge step measured, for ``judge_runs.results``: each version's means and per-query values,
    the queries excluded, the families; the decided comparisons, for ``ab_tests``)."""
    from evalops.pipeline.comparing import data_seed

    versions = list(ranked)
    common = set.intersection(*(set(r) for r in ranked.values())) if ranked else set()
    excluded = sorted(q for q in common if any(any(v is None for v in labels[(q, d)])
                                               for r in ranked.values() for d in r[q]))
    keep = sorted(common - set(excluded))
    mean = {p: float(np.mean(v)) for p, v in labels.items() if all(x is not None for x in v)}
    qrels = {q: {d: int(round(v)) for (qq, d), v in mean.items() if qq == q} for q in keep}
    qrels = {q: docs for q, docs in qrels.items() if docs}
    measures = [f"ContextPrecision@{k}", f"P@{k}", f"nDCG@{k}"]
    per_version: dict[str, dict[str, dict[str, float]]] = {}
    summary: dict[str, Any] = {}
    for v in versions:
        runs = {q: {d: float(k - i) for i, d in enumerate(ranked[v][q])} for q in keep if q in qrels}
        if not qrels:
            continue
        result = evaluate(qrels, runs, measures, Policy(no_answer="zero"))
        per_version[v] = {m: dict(zip(result.query_ids, map(float, result.per_query[m]))) for m in measures}
        summary[v] = {m: float(np.nanmean(result.per_query[m])) if len(result.query_ids) else None for m in measures}
    # One label per query and version (answers): a query with a missing repeat is excluded from that
    # measure for that version, and counted; the rest are averaged over the repeats.
    excluded_by_measure: dict[str, dict[str, int]] = {}
    for m, by_version in sorted((query_labels or {}).items()):
        measures.append(m)
        measure = parse_measure(m, JUDGE_MEASURE_TYPES)
        kernel = judge_kernel(measure)
        for v, by_query in sorted(by_version.items()):
            scored = ((q, kernel(measure, ls)) for q, ls in sorted(by_query.items()))
            values = {q: value for q, value in scored if value is not None}
            per_version.setdefault(v, {})[m] = values
            summary.setdefault(v, {})[m] = float(np.mean(list(values.values()))) if values else None
            if len(values) < len(by_query):
                excluded_by_measure.setdefault(m, {})[v] = len(by_query) - len(values)
    comparisons: list[tuple[VersionSpec, Comparison, int]] = []
    policy = cfg.stats_policy(run.seed)
    for spec in specs:
        base = spec.baseline_version
        if spec.role != "candidate" or base not in per_version or spec.version not in per_version:
            continue
        # the baseline version's run of this query set (judged in this DAG run with the candidate)
        base_run = next(s.run_id for s in sorted(specs, key=lambda s: s.retriever != spec.retriever)
                        if s.version == base)
        for m in measures:
            if m not in per_version[base] or m not in per_version[spec.version]:
                continue  # e.g. only one of the two versions returns answers
            paired = align(per_version[base][m], per_version[spec.version][m], missing="intersection",
                           baseline_name=base, candidate_name=spec.version)
            if paired.n == 0:
                continue
            comparisons.append((spec, compare(paired, measure=f"judge:{m}", policy=policy,
                                              baseline_name=f"{spec.retriever}@{base}",
                                              candidate_name=f"{spec.retriever}@{spec.version}",
                                              rng=data_seed(paired.query_ids, paired.baseline, paired.candidate)),
                                base_run))
    decided, families = _decide_families(cfg, specs[0].dataset if specs else "", comparisons, policy)
    return ({"versions": summary, "families": families, "excluded_queries": excluded,
             "excluded_by_measure": excluded_by_measure, "queries": len(keep), "graded": graded,
             "per_query": per_version}, decided)


@dataclass(frozen=True)
class JudgeComparison:
    """One decided judge-label comparison before it is stored: the comparison, the candidate version's spec,
    the baseline version's run (a version judged in the same DAG run) and the family it was corrected in.
    :meth:`stored` is its ``ab_tests`` row, naming the judge run whose labels it is on."""

    spec: VersionSpec
    baseline_run_id: int
    comparison: Comparison
    family: str

    def stored(self, judge_run_id: int) -> ABTestResult:
        return ABTestResult(self.comparison, baseline_run_id=self.baseline_run_id, candidate_run_id=self.spec.run_id,
                            family=self.family, judge_run_id=judge_run_id)

def judge_family(dataset: str) -> str:
    """The multiple-comparison family of the judge-label comparisons on ``dataset``: ``judge-<dataset>``."""
    return f"judge-{dataset}"

def _decide_families(cfg: Config, dataset: str, comparisons: list[tuple[VersionSpec, Any, int]], policy: Any
                     ) -> tuple[list[JudgeComparison], dict[str, Any]]:
    """Correct and decide the judge-label comparisons of one query set as their own family (see
    ``deciding``: judge labels are another instrument than the gold grades, so they neither dilute nor
    borrow the gold family's error).

    * A gold set: one family ``judge-<gold set>``, every judge measure x candidate version, corrected
      together (``policy.correction``), like the ``gold`` family.
    * The production sample: ``judge-production``, one family per candidate run, each member decided by
      the pooled test over every query judged since its restart, today's included
      (``evalops.pipeline.pooling``, as the click-label production family is; the earlier days'
      comparisons are read from ``ab_tests`` and their labels from ``judge_runs``, and a change of the
      judge restarts the window too). A member the
      pooled test cannot read (labels not declared within [0, 1]: answer relevance 1-5, every day, whatever
      the day's labels) spends its error over the days
      the version has been compared on production (the look of ``warehouse.comparison_look``: a version
      is judged on at most the days it was compared, so the spending is never too lenient).

    Returns the decided comparisons (each with its family) and the families' description (members, size,
    correction, alpha, the look of each candidate) for the warehouse and the report.
    """
    import dataclasses

    from evalops.pipeline.comparing import data_seed

    family = judge_family(dataset)
    groups: dict[int | None, list[int]] = {}
    for i, (spec, _, _) in enumerate(comparisons):
        groups.setdefault(spec.run_id if dataset == PRODUCTION else None, []).append(i)
    decided: dict[int, JudgeComparison] = {}
    looks: dict[str, int] = {}
    for run_id, idx in groups.items():
        look = None
        if run_id is not None:
            from evalops.pipeline.store import engine_for
            from evalops.warehouse import comparison_look

            look = comparison_look(engine_for(cfg), run_id)
        # the family's bootstrap (a decision interval under interval: bootstrap) is seeded by its members'
        # per-query deltas, not by the day, as the gold family's is (deciding): identical data, identical bounds
        seed = data_seed(*(part for i in idx for c in [comparisons[i][1]]
                           for part in ([c.measure, c.candidate_name], c.deltas)))
        members = [dataclasses.replace(comparisons[i][1], policy=dataclasses.replace(comparisons[i][1].policy, seed=seed))
                   for i in idx]
        spent = adjust_and_decide(members, dataclasses.replace(policy, seed=seed), look=look)
        if run_id is not None:  # the production sample: pooled over every day since the restart
            spent = _pooled(cfg, spent, run_id, comparisons[idx[0]][0])
        for i, comp in zip(idx, spent):
            decided[i] = JudgeComparison(comparisons[i][0], comparisons[i][2], comp, family)
            if look is not None:
                looks[comp.candidate_name] = look
    records = [decided[i] for i in range(len(comparisons))]
    description = {"name": family, "size": len(records), "correction": policy.correction, "alpha": policy.alpha,
                   "members": [f"{r.comparison.measure} {r.comparison.candidate_name}" for r in records],
                   "scope": ("one family per candidate run, each member pooled over the days since its restart"
                             if dataset == PRODUCTION
                             else "every judge measure x candidate version"), "looks": looks}
    return records, {family: description} if records else {}


def _pooled(cfg: Config, comparisons: list[Any], run_id: int, spec: VersionSpec) -> list[Any]:
    """The production judge-label family of one candidate run, pooled over the days since the restart."""
    from evalops.pipeline.store import engine_for
    from evalops.warehouse.looks import earlier_judge_looks_of

    engine = engine_for(cfg)
    # the judge as judge_runs records it: its fingerprint and the context prompt's version (labelling)
    prompt = load_prompt("context_relevance_graded" if cfg.judge.graded else "context_relevance").ref
    judge = {**build_judge(cfg.judge).fingerprint.to_dict(), "prompt": prompt}
    return pool_family(comparisons, lambda comps, policy: earlier_judge_looks_of(
        engine, run_id, spec.baseline_version, [c.measure for c in comps], judge, policy))
