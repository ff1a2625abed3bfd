"""Decide every comparison of a run together, and store the A/B results.

The family is the comparisons that can alert. A run's comparisons form three families, each corrected on
its own (``policy.correction``; Bonferroni intervals for Holm, the false-coverage level for BH; see
``evalops.stats.rule``):

* ``gold``: the alert measures (``Config.alert_measures``) x the candidate versions, on the gold set. The
  baseline version is never a member (it is not compared with itself), so the family size is the number
  of real comparisons and does not change with a stale re-score;
* ``gold-descriptive``: the other measures on the gold set, reported and never alerted on;
* ``production``: the production-sample comparisons (labelled by clicks: a hint, not a judgment),
  descriptive. They are new data every day, so each one is decided by the pooled test over every query
  compared since its last restart, today's included (``evalops.pipeline.pooling``: the restart is a change
  of the baseline or the candidate version, of the fingerprint's conditions or of the policy): watching
  every day does not raise the false-alarm rate above alpha, and a sustained drop shows once enough days
  pool. A comparison the pooled test cannot read (deltas outside [-1, 1]) spends its error over the looks
  instead (look k at alpha * 6 / (pi^2 k^2), ``evalops.stats.spending_tail``).

The decided results are upserted into ``ab_tests`` (one row per candidate run, baseline run and measure,
with the family, the judged coverage and the comparison's whole record, worst queries and notes included):
the one store of the run's decisions. The alert, report, results and gate steps read them back with
:func:`load_decisions`; nothing of a decision is kept in the work folder, so a lost work folder loses none
of it.
The unjudged documents of the versions compared (those with a decided comparison) then go to the
annotation queue (``pipeline.holes``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalops.pipeline.comparing import data_seed
from evalops.pipeline.context import RunContext
from evalops.pipeline.holes import queue_holes
from evalops.pipeline.workdir import comparison_file
from evalops.warehouse import ABTestResult, ab_test_results, record_ab_tests
from evalops.pipeline.pooling import decide_production_run
from evalops.stats import Comparison, adjust_and_decide

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

    from evalops.pipeline.env import RunEnv
    from evalops.pipeline.specs import VersionSpec

__all__ = ["DecidedComparison", "decide_run", "load_decisions"]


@dataclass(frozen=True)
class DecidedComparison:
    """One decided comparison of a run: a candidate version against its baseline on one measure, as the
    warehouse stores it (``ab_tests``), with the version it belongs to.

    ``comparison`` is the comparison itself (:class:`evalops.stats.Comparison`, read back from
    ``ab_tests.record`` without the per-query ``deltas``); the rest is where it belongs (dataset, family,
    versions, runs, the ``ab_tests`` row id, fingerprint) and its per-segment reading.
    """

    dataset: str
    family: str | None
    retriever: str
    version: str
    baseline_version: str | None
    candidate_run_id: int
    baseline_run_id: int
    ab_test_id: int | None
    fingerprint: str | None
    comparison: Comparison
    segments: Sequence[Mapping[str, Any]] = field(default_factory=list)

    def to_record(self) -> dict[str, Any]:
        """Plain JSON (the comparison as stored: its record without the per-query ``deltas``)."""
        record = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        comparison = {k: v for k, v in self.comparison.to_record().items() if k != "deltas"}
        return {**record, "comparison": comparison, "segments": list(self.segments)}


def decide_run(env: RunEnv, run: RunContext, versions: Sequence[VersionSpec]) -> dict[str, Any]:
    """Correct, decide and store every comparison of the run. Returns the decision counts per family."""

    engine = env.engine()
    alerting = set(env.measures.alerting)
    families: dict[str, list[tuple[dict[str, Any], Comparison, int]]] = {}
    segments: dict[tuple[int, str], list[dict[str, Any]]] = {}  # (candidate run, measure) -> per-segment rows
    for spec in versions:
        path = comparison_file(env, run, spec.run_id)
        if not path.exists():
            continue  # the version was not compared (its compare task wrote nothing)
        stored = json.loads(path.read_text())
        for row in stored.get("segments", []):
            segments.setdefault((spec.run_id, row["measure"]), []).append(row)
        for item in stored["comparisons"]:
            comp = Comparison.from_record(item)
            family = spec.dataset
            if family == "gold" and comp.measure not in alerting:
                family = "gold-descriptive"
            families.setdefault(family, []).append((spec, comp, stored["baseline_run_id"]))
    decided_runs: set[int] = set()
    counts: dict[str, dict[str, int]] = {}
    for family, members in sorted(families.items()):
        # the family's bootstrap (a decision interval under interval: bootstrap) is seeded by its members'
        # per-query deltas, not by the day: identical data gives identical bounds
        seed = data_seed(*(part for _, c, _ in members for part in ([c.measure, c.candidate_name], c.deltas)))
        members = [(spec, dataclasses.replace(c, policy=dataclasses.replace(c.policy, seed=seed)), base)
                   for spec, c, base in members]
        if family == "production":
            # one look per candidate run: the days this version was compared on a production sample before
            decided = []
            by_run: dict[int, list[int]] = {}
            for i, (spec, _, _) in enumerate(members):
                by_run.setdefault(spec.run_id, []).append(i)
            out: dict[int, Comparison] = {}
            for run_id, idx in by_run.items():
                pooled = decide_production_run(engine, [members[i][1] for i in idx], candidate_run_id=run_id,
                                               baseline_run_id=members[idx[0]][2])
                for i, comp in zip(idx, pooled):
                    out[i] = comp
            decided = [out[i] for i in range(len(members))]
        else:
            decided = adjust_and_decide([c for _, c, _ in members])
        if family != "gold":
            decided = [dataclasses.replace(c, alert=False) for c in decided]  # descriptive: never alerts
        record_ab_tests(engine, [ABTestResult(c, baseline_run_id=b, candidate_run_id=s.run_id, family=family,
                                              segments=segments.get((s.run_id, c.measure), []))
                                 for (s, _, b), c in zip(members, decided)])
        dataset = members[0][0].dataset
        counts.setdefault(dataset, {})
        for (spec, _, _), comp in zip(members, decided):
            counts[dataset][comp.decision] = counts[dataset].get(comp.decision, 0) + 1
            decided_runs.add(spec.run_id)
    # the unjudged documents the decided comparisons depend on, as annotation work
    queue_holes(env, run, versions, decided_runs)
    return counts


def load_decisions(engine: Engine, versions: Sequence[VersionSpec]) -> list[DecidedComparison]:
    """The decided comparisons of the run's ``versions`` (their specs), read from the warehouse's
    ``ab_tests`` at ``engine``: the one reader of a run's decisions (report, alerts, results event, gate).

    A version with a baseline run whose comparison is not stored has no decision here; the gate names it
    ``missing`` (``evalops.gate``) rather than passing it.
    """
    out: list[DecidedComparison] = []
    for spec in versions:
        if spec.baseline_run_id is None:
            continue
        for row in ab_test_results(engine, candidate_run_id=spec.run_id, baseline_run_id=spec.baseline_run_id):
            out.append(DecidedComparison(
                dataset=spec.dataset, family=row.family, retriever=spec.retriever, version=spec.version,
                baseline_version=spec.baseline_version, candidate_run_id=row.candidate_run_id,
                baseline_run_id=row.baseline_run_id, ab_test_id=row.id, fingerprint=spec.fingerprint,
                comparison=row.comparison, segments=list(row.segments),
            ))
    out.sort(key=lambda d: (d.family or "", d.ab_test_id or 0))  # the decide step's order
    return out
