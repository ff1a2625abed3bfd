"""Decide every comparison of a run together, and store the A/B results.

The family is the comparisons that can alert. A run's comparisons form three families, each corrected on
its own (``policy.correction``; Bonferroni intervals for Holm, the false-coverage level for BH; see
``evalops.stats.rule``):

* ``gold``: the alert measures (``Config.alert_measures``) x the candidate versions, on the gold set. The
  baseline version is never a member (it is not compared with itself), so the family size is the number
  of real comparisons and does not change with a stale re-score;
* ``gold-descriptive``: the other measures on the gold set, reported and never alerted on;
* ``production``: the production-sample comparisons (labelled by clicks: a hint, not a judgment),
  descriptive. They are new data every day, so each one also spends its error over the days it has been
  looked at against the same baseline version (look k at alpha * 6 / (pi^2 k^2),
  ``evalops.stats.spending_tail``; the count restarts when the baseline or the candidate changes): watching
  every day does not raise the false-alarm rate above alpha.

The decided results are upserted into ``ab_tests`` (one row per candidate run, baseline run and measure,
with the family and the judged coverage) and written to ``decisions.json`` for the alert and report steps.
The unjudged documents of the versions compared (those with a decided comparison) then go to the
annotation queue (``pipeline.holes``).
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

from evalops.pipeline.context import RunContext
from evalops.pipeline.holes import queue_holes
from evalops.pipeline.store import engine_for
from evalops.pipeline.workdir import comparison_file, run_folder

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config
    from evalops.stats import Comparison

__all__ = ["decide_run", "load_decisions", "decisions_file"]


def decisions_file(cfg: Config, run: RunContext):
    return run_folder(cfg, run) / "decisions.json"


def decide_run(cfg: Config, run: RunContext, versions: list[dict[str, Any]]) -> dict[str, Any]:
    """Correct, decide and store every comparison of the run. Returns the decision counts per family."""
    from evalops.stats import Comparison, adjust_and_decide
    from evalops.warehouse import ab_test_result, record_ab_tests

    from evalops.pipeline.comparing import data_seed
    from evalops.pipeline.registry import alerting_measures
    from evalops.warehouse import comparison_look

    engine = engine_for(cfg)
    alerting = set(alerting_measures(cfg))
    families: dict[str, list[tuple[dict[str, Any], Comparison, int]]] = {}
    segments: dict[tuple[int, str], list[dict[str, Any]]] = {}  # (candidate run, measure) -> per-segment rows
    for spec in versions:
        path = comparison_file(cfg, run, spec["run_id"])
        if not path.exists():
            continue  # the version was not compared (its compare task wrote nothing)
        stored = json.loads(path.read_text())
        for row in stored.get("segments", []):
            segments.setdefault((spec["run_id"], row["measure"]), []).append(row)
        for item in stored["comparisons"]:
            comp = Comparison.from_record(item)
            family = spec["dataset"]
            if family == "gold" and comp.measure not in alerting:
                family = "gold-descriptive"
            families.setdefault(family, []).append((spec, comp, stored["baseline_run_id"]))
    records, counts = [], {}
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
                by_run.setdefault(spec["run_id"], []).append(i)
            out: dict[int, Comparison] = {}
            for run_id, idx in by_run.items():
                look = comparison_look(engine, run_id, members[idx[0]][2])  # restarts with a new baseline
                for i, comp in zip(idx, adjust_and_decide([members[i][1] for i in idx], look=look)):
                    out[i] = comp
            decided = [out[i] for i in range(len(members))]
        else:
            decided = adjust_and_decide([c for _, c, _ in members])
        if family != "gold":
            decided = [dataclasses.replace(c, alert=False) for c in decided]  # descriptive: never alerts
        stored = record_ab_tests(engine, [ab_test_result(c, baseline_run_id=b, candidate_run_id=s["run_id"], family=family,
                                                         segments=segments.get((s["run_id"], c.measure), []))
                                          for (s, _, b), c in zip(members, decided)])
        dataset = members[0][0]["dataset"]
        counts.setdefault(dataset, {})
        for (spec, _, base_id), comp, row in zip(members, decided, stored):
            counts[dataset][comp.decision] = counts[dataset].get(comp.decision, 0) + 1
            records.append({
                "dataset": dataset, "family": family, "retriever": spec["retriever"], "version": spec["version"],
                "baseline_version": spec["baseline_version"], "candidate_run_id": spec["run_id"],
                "baseline_run_id": base_id, "ab_test_id": row.id, "fingerprint": spec["fingerprint"],
                "comparison": comp.to_record(),
                "segments": segments.get((spec["run_id"], comp.measure), []),
            })
    path = decisions_file(cfg, run)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records))
    # the unjudged documents the decided comparisons depend on, as annotation work
    queue_holes(cfg, run, versions, {r["candidate_run_id"] for r in records})
    return counts


def load_decisions(cfg: Config, run: RunContext) -> list[dict[str, Any]]:
    path = decisions_file(cfg, run)
    return json.loads(path.read_text()) if path.exists() else []
