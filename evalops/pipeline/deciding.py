"""Decide every comparison of a run together, and store the A/B results.

The comparisons of one run form two families: the gold set (every measure x candidate) and the production
sample (weak labels, reported apart and never alerted on). Within a family the p-values are corrected
together (``policy.correction``, Holm by default) and every comparison is decided again on its adjusted
p-value (``evalops.stats.adjust_and_decide``). The decided results are upserted into ``ab_tests`` (one row
per candidate run, baseline run and measure) and written to ``decisions.json`` for the alert and report
steps.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from evalops.pipeline.comparing import comparison_from_dict, comparison_to_dict
from evalops.pipeline.context import RunContext
from evalops.pipeline.store import engine_for
from evalops.pipeline.workdir import comparison_file, run_folder

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config
    from evalops.stats import Comparison

__all__ = ["decide_run", "load_decisions", "decisions_file"]


def decisions_file(cfg: Config, run: RunContext):
    return run_folder(cfg, run) / "decisions.json"


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _ab_result(comp: Comparison, baseline_run_id: int, candidate_run_id: int):
    from evalops.warehouse import ABTestResult

    ci = comp.effect_size_ci or (None, None)
    return ABTestResult(
        measure=comp.measure, baseline_run_id=baseline_run_id, candidate_run_id=candidate_run_id, n=comp.n,
        baseline_mean=_nan(comp.baseline_mean), candidate_mean=_nan(comp.candidate_mean), delta=_nan(comp.delta),
        delta_ci_low=_nan(comp.delta_ci_low), delta_ci_high=_nan(comp.delta_ci_high),
        ci_level=comp.policy.confidence, test=comp.test, p_value=_nan(comp.p_value),
        p_adjusted=_nan(comp.p_adjusted), d_z=_nan(comp.effect_size_dz), d_z_ci_low=_nan(ci[0]),
        d_z_ci_high=_nan(ci[1]), wins=comp.wins, ties=comp.ties, losses=comp.losses, decision=comp.decision,
        reasons=comp.reasons, policy=comp.policy.to_dict(),
    )


def decide_run(cfg: Config, run: RunContext, versions: list[dict[str, Any]]) -> dict[str, Any]:
    """Correct, decide and store every comparison of the run. Returns the decision counts per family."""
    from evalops.stats import adjust_and_decide
    from evalops.warehouse import record_ab_tests

    engine = engine_for(cfg)
    families: dict[str, list[tuple[dict[str, Any], Comparison, int]]] = {}
    for spec in versions:
        path = comparison_file(cfg, run, spec["run_id"])
        if not path.exists():
            continue  # the version was not compared (its compare task wrote nothing)
        stored = json.loads(path.read_text())
        for item in stored["comparisons"]:
            families.setdefault(spec["dataset"], []).append(
                (spec, comparison_from_dict(item), stored["baseline_run_id"])
            )
    records, counts = [], {}
    for dataset, members in sorted(families.items()):
        decided = adjust_and_decide([c for _, c, _ in members])
        stored = record_ab_tests(engine, [_ab_result(c, b, s["run_id"]) for (s, _, b), c in zip(members, decided)])
        counts[dataset] = {}
        for (spec, _, base_id), comp, row in zip(members, decided, stored):
            counts[dataset][comp.decision] = counts[dataset].get(comp.decision, 0) + 1
            records.append({
                "dataset": dataset, "retriever": spec["retriever"], "version": spec["version"],
                "baseline_version": spec["baseline_version"], "candidate_run_id": spec["run_id"],
                "baseline_run_id": base_id, "ab_test_id": row.id, "fingerprint": spec["fingerprint"],
                "comparison": comparison_to_dict(comp),
            })
    path = decisions_file(cfg, run)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records))
    return counts


def load_decisions(cfg: Config, run: RunContext) -> list[dict[str, Any]]:
    path = decisions_file(cfg, run)
    return json.loads(path.read_text()) if path.exists() else []
