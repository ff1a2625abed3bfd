"""What one evaluation run concluded, as the extra of the ``retrieval-eval-results`` asset event.

``publish_report`` emits the asset after the report is written, so a downstream DAG (a promotion, a
deployment gate, a notification) can act on the result without reading the warehouse. The extra is plain
JSON, small (one entry per version and per measure decision), and versioned by ``schema``:

``{"schema": 1, "run": {dag_id, run_id, day, trigger, triggered_by: [asset events]}, "versions": [{retriever, version,
dataset, role, run_id, status, baseline_version}], "decisions": [{retriever, version, dataset, measure,
baseline_version, decision}], "alerts": [{kind, title, delivered}], "report": path,
"all_clear": bool}``

``all_clear`` is true when every gold-set decision of every candidate is ``improvement`` or ``no_change``
and no version failed: the condition an automatic promotion waits for (see ``dags/promote_on_results.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalops.config import PRODUCTION
from evalops.pipeline.context import RunContext

if TYPE_CHECKING:  # pragma: no cover
    from evalops.pipeline.env import RunEnv
    from evalops.pipeline.specs import VersionSpec

__all__ = ["RESULTS_ASSET", "SCHEMA", "CLEAR_DECISIONS", "result_event", "is_all_clear", "clear_candidates"]

RESULTS_ASSET = "retrieval-eval-results"
SCHEMA = 1
CLEAR_DECISIONS = frozenset({"improvement", "no_change"})


def result_event(env: RunEnv, run: RunContext, versions: Sequence[VersionSpec], alerts: list[dict[str, Any]],
                 report: str) -> dict[str, Any]:
    """The asset event's extra for this run (see the module docstring)."""
    from evalops.pipeline.deciding import load_decisions
    from evalops.warehouse import get_run

    engine = env.engine()
    shown = []
    for spec in versions:
        shown.append({
            "retriever": spec.retriever, "version": spec.version, "dataset": spec.dataset,
            "role": spec.role, "run_id": spec.run_id, "status": get_run(engine, spec.run_id).status,
            "baseline_version": spec.baseline_version,
        })
    decisions = [
        {"retriever": r.retriever, "version": r.version, "dataset": r.dataset, "measure": r.comparison.measure,
         "baseline_version": r.baseline_version, "decision": r.comparison.decision}
        for r in load_decisions(engine, versions)
    ]
    event = {
        "schema": SCHEMA,
        "run": {"dag_id": run.dag_id, "run_id": run.run_id, "day": run.day, "trigger": run.trigger,
                "triggered_by": run.trigger_record()["asset_events"]},
        "versions": shown,
        "decisions": decisions,
        "alerts": [{"kind": a.get("kind"), "title": a.get("title"), "delivered": a.get("delivered")}
                   for a in alerts],
        "report": report,
    }
    event["all_clear"] = is_all_clear(event)
    return event


def is_all_clear(event: dict[str, Any], retriever: str | None = None, version: str | None = None) -> bool:
    """True when the event's gold-set candidates (optionally one retriever / version) are all
    ``improvement`` or ``no_change``, at least one was decided, and no version failed."""
    def wanted(row: dict[str, Any]) -> bool:
        return (row["dataset"] != PRODUCTION and (retriever is None or row["retriever"] == retriever)
                and (version is None or row["version"] == version))

    if any(v["status"] == "failed" for v in event.get("versions", []) if wanted(v)):
        return False
    decided = [d for d in event.get("decisions", []) if wanted(d) and d["version"] != d.get("baseline_version")]
    return bool(decided) and all(d["decision"] in CLEAR_DECISIONS for d in decided)


def clear_candidates(event: dict[str, Any]) -> list[dict[str, Any]]:
    """The gold-set candidates of a results event that are each all clear (:func:`is_all_clear`)."""
    out = []
    for v in event.get("versions", []):
        if v["role"] == "candidate" and v["dataset"] != PRODUCTION and is_all_clear(event, v["retriever"],
                                                                                     v["version"]):
            out.append({"retriever": v["retriever"], "version": v["version"], "run_id": v["run_id"]})
    return out
