"""``evalops demo``: two days of the evaluation DAG on the sample data, in-process, on SQLite.

* **Day 1** runs ``retrieval_eval`` with the registry as shipped (the baseline versions deployed), then
  ``promote_baseline`` for each retriever's deployed version.
* **Day 2** deploys every registered candidate (an overlay registry file, ``EVALOPS_RETRIEVERS``, sets
  ``deployed: true`` on all of them) and runs ``retrieval_eval`` again. With the sample registry that is
  a hybrid BM25 + TF-IDF version and a version with a planted regression (a truncated index).

Both days use fixed logical dates, and the demo generates its own query logs for the 30 days before day 2
with ``include/generate_query_logs.py`` (deterministic), so a second demo re-runs the same DAG runs: it
writes the same warehouse rows and re-sends no alert.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config

__all__ = ["DemoPlan", "plan_demo", "run_backfill", "run_demo", "demo_summary", "DAY_ONE", "DAY_TWO",
           "BACKFILL_DAYS"]

# Fixed days, so a second demo re-runs the same DAG runs. Each run's log window is the day before.
DAY_ONE = dt.datetime(2024, 5, 31, tzinfo=dt.timezone.utc)
DAY_TWO = DAY_ONE + dt.timedelta(days=1)
LOG_DAYS = 30
# Days before day 1 that `evalops demo` first scores with `evalops run` (no Airflow), so the dashboard's trend
# has a month to show; each day's log window is the day before, inside the generated LOG_DAYS.
BACKFILL_DAYS = 28


@dataclass(frozen=True)
class DemoPlan:
    home: Path
    dags: Path
    workdir: Path
    overlay: Path
    baselines: list[tuple[str, str]]  # (retriever, version) deployed on day 1
    candidates: list[tuple[str, str]]  # deployed on day 2
    steps: list[dict[str, Any]] = field(default_factory=list)


def plan_demo(
    cfg: Config, day_one: dt.datetime = DAY_ONE, day_two: dt.datetime = DAY_TWO, dags: Path | None = None
) -> DemoPlan:
    """Work out the two days from the registry and write the day-2 overlay registry.

    ``dags`` is the DAG folder (default: ``dags/`` under the configuration's home).
    """
    import yaml

    from evalops.pipeline.registry import load_registry_for

    dags = dags or cfg.home / "dags"
    if not (dags / "retrieval_eval.py").is_file():
        raise ConfigError(f"{dags}: no retrieval_eval.py here; run the demo from the project folder")
    registry = load_registry_for(cfg)
    baselines = [(e.name, e.version) for e in registry.deployed()]
    candidates = [(e.name, e.version) for e in registry if not e.deployed and e.name in {b for b, _ in baselines}]
    if not baselines:
        raise ConfigError(f"{cfg.registry}: no deployed version to use as the day-1 baseline")
    workdir = cfg.home / ".evalops" / "demo"
    workdir.mkdir(parents=True, exist_ok=True)
    overlay = workdir / "retrievers-day2.yaml"
    entries = [e.to_record(masked=False) for e in registry if (e.name, e.version) in candidates]
    for entry in entries:
        entry.pop("source", None)
        entry["deployed"] = True
        entry["params"] = _absolute_paths(entry["params"], registry.get(entry["name"], entry["version"]).base_dir)
    overlay.write_text("# written by `evalops demo`: day 2 deploys the candidates\n"
                       + yaml.safe_dump({"retrievers": entries}, sort_keys=False, allow_unicode=True))
    env = _log_env(cfg, workdir, day_two)
    steps = [{"dag_id": "retrieval_eval", "logical_date": day_one.isoformat(),
              "env": {**env, "EVALOPS_RETRIEVERS": None}}]
    for retriever, version in baselines:
        steps.append({
            "dag_id": "promote_baseline", "logical_date": day_one.isoformat(),
            "env": {**env, "EVALOPS_RETRIEVERS": None},
            "conf": {"retriever": retriever, "run": "latest", "version": version,
                     "reason": f"demo day 1: {version} is the deployed version"},
        })
    steps.append({"dag_id": "retrieval_eval", "logical_date": day_two.isoformat(),
                  "env": {**env, "EVALOPS_RETRIEVERS": str(overlay)}})
    return DemoPlan(cfg.home, dags, workdir, overlay, baselines, candidates, steps)


def _log_env(cfg: Config, workdir: Path, day_two: dt.datetime) -> dict[str, str]:
    """The demo's own query logs: the sample generator's deterministic output for the ``LOG_DAYS`` days
    before day 2, written once under the demo folder (again when the generator changes). The generator
    labels traffic with the registry's keys. Without the generator the demo skips production queries."""
    generator = cfg.home / "include" / "generate_query_logs.py"
    if not generator.is_file():
        return {"EVALOPS_LOG_SAMPLE_SIZE": "0"}
    import hashlib
    import shutil
    import subprocess
    import sys

    out = workdir / "query_logs"
    start = (day_two - dt.timedelta(days=LOG_DAYS)).date().isoformat()
    digest = hashlib.sha256(generator.read_bytes()).hexdigest()[:12]
    stamp = out / f".generated-{start}-{LOG_DAYS}-{digest}"
    if not stamp.exists():
        shutil.rmtree(out, ignore_errors=True)
        done = subprocess.run([sys.executable, str(generator), "--out", str(out), "--start", start,
                               "--days", str(LOG_DAYS)], capture_output=True, text=True)
        if done.returncode != 0:
            raise ConfigError(f"{generator} could not write the demo's query logs: {done.stderr.strip()[-500:]}")
        stamp.write_text("")
    return {"EVALOPS_QUERY_LOGS": str(out)}


def _absolute_paths(params: Any, base: Path) -> Any:
    """Registry params are relative to their file; the overlay lives elsewhere, so make paths absolute."""
    if isinstance(params, dict):
        return {k: (str((base / v).resolve()) if k == "path" and isinstance(v, str) else _absolute_paths(v, base))
                for k, v in params.items()}
    if isinstance(params, list):
        return [_absolute_paths(v, base) for v in params]
    return params


def run_backfill(cfg: Config, plan: DemoPlan, days: int = BACKFILL_DAYS,
                 progress: Any = None) -> list[str]:
    """Score the ``days`` days before day 1 in this process (what ``evalops run --date`` does), with the
    registry as shipped and the demo's query logs; the first day's deployed versions are promoted, so every
    later day is compared with a baseline. Re-running writes the same rows. Returns the days scored."""
    import os

    from evalops.config import load_config
    from evalops.pipeline.context import RunContext
    from evalops.pipeline.local import run_local
    from evalops.pipeline.promotion import promote

    env = {k: v for k, v in plan.steps[0]["env"].items() if v is not None}
    # the overlay of a later day is not the first day's (the plan sets it for the days that deploy it)
    base = {**os.environ, **{k: "" for k, v in plan.steps[0]["env"].items() if v is None}}
    day_cfg = load_config(cfg.home, environ={**base, **env, "EVALOPS_HOME": str(cfg.home)})
    day_one = dt.date.fromisoformat(plan.steps[0]["logical_date"][:10])
    done = []
    for offset in range(days, 0, -1):
        day = day_one - dt.timedelta(days=offset)
        if progress is not None:
            progress(day.isoformat())
        run_local(day_cfg, RunContext.for_day(day))
        if offset == days:
            for retriever, version in plan.baselines:
                promote(day_cfg, retriever=retriever, version=version, promoted_by="evalops demo",
                        reason=f"demo backfill: {version} is the deployed version on {day.isoformat()}")
        done.append(day.isoformat())
    return done


def run_demo(cfg: Config, plan: DemoPlan) -> list[dict[str, Any]]:
    """Run the plan's DAG steps in a child process (its Airflow output goes to ``airflow.log``)."""
    from evalops.pipeline.airflow_runner import run_steps_in_subprocess

    env = {"EVALOPS_HOME": str(cfg.home), "EVALOPS_RETRY_DELAY_SECONDS": "2"}
    return run_steps_in_subprocess(plan.dags, plan.steps, workdir=plan.workdir,
                                   log_path=plan.workdir / "airflow.log", env=env)


def demo_summary(cfg: Config, plan: DemoPlan, results: list[dict[str, Any]]) -> dict[str, Any]:
    """What the demo found on day 2: per version the primary measure and decision, and the alerts."""
    from evalops.pipeline.alerts import report_location
    from evalops.pipeline.context import RunContext
    from evalops.pipeline.registry import canonical_measures
    from evalops.pipeline.store import engine_for, warehouse_counts
    from evalops.warehouse import list_alerts

    engine = engine_for(cfg)
    measure = canonical_measures(cfg)[0]
    day_two = [r for r in results if r["dag_id"] == "retrieval_eval"][-1]
    anchor = dt.datetime.fromisoformat(day_two["logical_date"])
    run = RunContext("retrieval_eval", day_two["run_id"], anchor, anchor - dt.timedelta(days=1), anchor)
    rows = []
    for retriever, version in plan.baselines + plan.candidates:
        rows.append(_version_row(engine, run, retriever, version, measure))
    alerts = list_alerts(engine, since=dt.date.fromisoformat(run.day))
    return {
        "measure": measure,
        "states": [(r["dag_id"], r["logical_date"][:10], r["state"]) for r in results],
        "versions": rows,
        "alerts": [{"kind": a.kind, "version": a.version, "measure": a.measure, "message": a.message,
                    "delivery_status": a.delivery_status} for a in alerts.itertuples(index=False)],
        "report": report_location(cfg, run),
        "counts": warehouse_counts(cfg),
    }


def _version_row(engine: Any, run: Any, retriever: str, version: str, measure: str) -> dict[str, Any]:
    from evalops.warehouse import RunKey, find_run, load_ab_tests, load_aggregates

    stored = find_run(engine, RunKey(run.dag_id, run.run_id, retriever, version, "gold"))
    row: dict[str, Any] = {"retriever": retriever, "version": version, "status": None, "mean": None,
                           "delta": None, "decision": None, "p_adjusted": None}
    if stored is None:
        return row
    row["status"] = stored.status
    agg = load_aggregates(engine, stored.id)
    hit = agg[agg["measure"] == measure]
    if len(hit):
        row["mean"] = float(hit["mean"].iloc[0])
    ab = load_ab_tests(engine, candidate_run_id=stored.id)
    hit = ab[ab["measure"] == measure]
    if len(hit):
        row.update(delta=float(hit["delta"].iloc[0]), decision=str(hit["decision"].iloc[0]),
                   p_adjusted=float(hit["p_adjusted"].iloc[0]))
    return row
