"""``evalops demo``: two days of the evaluation DAG on the sample data, in-process, on SQLite.

* **Backfill** (``run_backfill``): the ``BACKFILL_DAYS`` days before day 1 are scored with what ``evalops
  run`` does (no Airflow), so the dashboard has a month of history. It resumes: a day already in the
  warehouse under the same fingerprint is skipped, so an interrupted demo continues where it stopped.
* **Day 1** runs ``retrieval_eval`` with the registry as shipped (the baseline versions deployed), then
  ``promote_baseline`` for each retriever's deployed version.
* **Day 2** deploys every registered candidate (an overlay registry file, ``EVALOPS_RETRIEVERS_OVERLAY``, sets
  ``deployed: true`` on all of them) and runs ``retrieval_eval`` again. With the sample registry that is
  a hybrid BM25 + TF-IDF version, a version with a planted regression (a truncated index), and the
  built-in dense encoder's versions: vector, vector + BM25 hybrid, and BM25 reranked by the vectors.
* **Chunkings** (``run_chunkings``): the demo compares two chunkings of the knowledge base on the same
  gold set in runs of their own. Their versions (``handbook-chunks``) are registered in a registry file of
  their own beside the manifests, ``include/chunks/retrievers.yaml`` (the project's registry stays whole
  without the manifests), and are scored with what ``evalops run`` does under that registry alone: day 1
  scores and promotes the deployed chunking, day 2 deploys the other one and decides it against it, each
  as the MaxP document run of its chunks (docs/chunking.md). Runs of their own keep their comparison out
  of the day-2 DAG run's alerting family, so the handbook-search decisions are those of five candidates.

Every day runs the judge step with the project's judge, or the offline lexical judge when the project
has none: it labels each version's top contexts on the gold set (its agreement with the human grades)
and on a sample of the day's production queries.

All days use fixed logical dates, and the demo generates its own query logs for the 30 days before day 2
with ``include/generate_query_logs.py`` (deterministic), so a second demo re-runs the same DAG runs: it
writes no new warehouse row (the baselines it promotes already are) and re-sends no alert.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.config import without_settings_variables
from evalops.config.env import parse_time_settings
from evalops.errors import ConfigError
from evalops.pipeline.chunkings import describe_chunkings
from evalops.pipeline.context import RunContext
from evalops.pipeline.promotion import promote
from evalops.pipeline.registry import canonical_measures, fingerprint_for, load_registry_for
from evalops.pipeline.store import engine_for, migrate_warehouse, warehouse_counts
from evalops.retrievers.registry import Registry, load_registry
from evalops.warehouse import RunKey, find_run, list_alerts, load_ab_tests, load_aggregates
from evalops.warehouse.judgments import load_judge_runs

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config

__all__ = ["BackfillDay", "ChunkingPlan", "DemoPlan", "plan_demo", "backfill_days", "scored_days", "run_backfill",
           "run_chunkings", "chunking_config", "chunking_summary", "demo_summary", "judge_summary", "DAY_ONE",
           "DAY_TWO", "BACKFILL_DAYS", "CHUNKINGS_REGISTRY"]

# Fixed days, so a second demo re-runs the same DAG runs. Each run's log window is the day before.
DAY_ONE = dt.datetime(2024, 5, 31, tzinfo=dt.UTC)
DAY_TWO = DAY_ONE + dt.timedelta(days=1)
LOG_DAYS = 30
# Days before day 1 that `evalops demo` first scores with `evalops run` (no Airflow), so the dashboard's trend
# has a month to show; each day's log window is the day before, inside the generated LOG_DAYS.
BACKFILL_DAYS = 28
# The registry of the demo's chunked versions, under the project's folder (beside their chunk manifests).
CHUNKINGS_REGISTRY = Path("include") / "chunks" / "retrievers.yaml"


@dataclass(frozen=True)
class ChunkingPlan:
    """The demo's comparison of chunkings: its own ``registry`` file, the ``overlay`` that deploys its
    candidates on day 2, and the run ids of its two days (runs of their own, apart from the DAG's)."""

    registry: Path
    overlay: Path
    baselines: list[tuple[str, str]]
    candidates: list[tuple[str, str]]
    run_ids: tuple[str, str]  # day 1's, day 2's


@dataclass(frozen=True)
class DemoPlan:
    home: Path
    dags: Path
    workdir: Path
    overlay: Path
    baselines: list[tuple[str, str]]  # (retriever, version) deployed on day 1
    candidates: list[tuple[str, str]]  # deployed on day 2
    steps: list[dict[str, Any]] = field(default_factory=list)
    judge: str = "off"  # the judge kind every day runs with
    # the evaluation DAG's id: `<project_name>.retrieval_eval` when the project has a name, as its DAG files
    # name it at parse time (evalops.airflow.assets)
    eval_dag_id: str = "retrieval_eval"
    chunkings: ChunkingPlan | None = None  # None when the project has no CHUNKINGS_REGISTRY


def plan_demo(
    cfg: Config, day_one: dt.datetime = DAY_ONE, day_two: dt.datetime = DAY_TWO, dags: Path | None = None
) -> DemoPlan:
    """Work out the two days from the registry and write the day-2 overlay registry.

    ``dags`` is the DAG folder (default: ``dags/`` under the configuration's home).
    """
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
    _write_overlay(overlay, registry, candidates)
    env = _log_env(cfg, workdir, day_two)
    # The judge the project configures, else the offline lexical judge: the demo shows the judge's labels on
    # the sampled production queries and its agreement with the gold set's grades.
    judge = cfg.judge.kind if cfg.judge.kind != "off" else "lexical"
    if cfg.judge.kind == "off":
        env.update({"EVALOPS_JUDGE__KIND": judge})  # a variable the child process reads, written here
    # The DAG ids the child process's DAG files give (EVALOPS_PROJECT_NAME, else evalops.yaml's project_name),
    # the name pinned in the steps' environment so that the parent and the child agree on it.
    # (evalops.airflow.assets.name_for's rule; the pipeline does not import evalops.airflow)
    name = parse_time_settings(cfg.home, [])["project_name"]
    env.update({"EVALOPS_PROJECT_NAME": name or ""})  # a variable the child process reads, written here
    prefix = f"{name}." if name else ""
    eval_dag, promote_dag = f"{prefix}retrieval_eval", f"{prefix}promote_baseline"
    steps = [{"dag_id": eval_dag, "logical_date": day_one.isoformat(),
              "env": {**env, "EVALOPS_RETRIEVERS_OVERLAY": None}}]
    for retriever, version in baselines:
        steps.append({
            "dag_id": promote_dag, "logical_date": day_one.isoformat(),
            "env": {**env, "EVALOPS_RETRIEVERS_OVERLAY": None},
            "conf": {"retriever": retriever, "run": "latest", "version": version,
                     "reason": f"demo day 1: {version} is the deployed version"},
        })
    steps.append({"dag_id": eval_dag, "logical_date": day_two.isoformat(),
                  "env": {**env, "EVALOPS_RETRIEVERS_OVERLAY": str(overlay)}})
    chunkings = _plan_chunkings(cfg, workdir, day_one, day_two)
    return DemoPlan(cfg.home, dags, workdir, overlay, baselines, candidates, steps, judge, eval_dag, chunkings)


def _write_overlay(overlay: Path, registry: Registry, candidates: list[tuple[str, str]]) -> None:
    """A registry file that deploys ``candidates`` (their entries with ``deployed: true`` and every path
    made absolute: the overlay lives elsewhere)."""
    import yaml

    entries = [e.to_record(masked=False) for e in registry if (e.name, e.version) in candidates]
    for entry in entries:
        entry.pop("source", None)
        entry["deployed"] = True
        registered = registry.get(entry["name"], entry["version"])
        entry["params"] = _absolute_paths(entry["params"], registered.base_dir)
        if registered.chunking_path is not None:  # relative to the registry's folder, not the overlay's
            entry["chunking"] = str(registered.chunking_path.absolute())
    overlay.write_text("# written by `evalops demo`: day 2 deploys the candidates\n"
                       + yaml.safe_dump({"retrievers": entries}, sort_keys=False, allow_unicode=True))


def _plan_chunkings(cfg: Config, workdir: Path, day_one: dt.datetime, day_two: dt.datetime) -> ChunkingPlan | None:
    """The chunking comparison's plan, from ``CHUNKINGS_REGISTRY`` (None without it); writes its day-2
    overlay."""
    path = cfg.home / CHUNKINGS_REGISTRY
    if not path.is_file():
        return None
    registry = load_registry(path)
    baselines = [(e.name, e.version) for e in registry.deployed()]
    candidates = [(e.name, e.version) for e in registry if not e.deployed and e.name in {b for b, _ in baselines}]
    if not baselines or not candidates:
        raise ConfigError(f"{path}: the demo's chunkings need a deployed version and a candidate of the same "
                          "retriever (deployed: false)")
    overlay = workdir / "chunkings-day2.yaml"
    _write_overlay(overlay, registry, candidates)
    run_ids = tuple(f"chunkings__{day.date().isoformat()}" for day in (day_one, day_two))
    return ChunkingPlan(path, overlay, baselines, candidates, (run_ids[0], run_ids[1]))


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


@dataclass(frozen=True)
class BackfillDay:
    """One day of the backfill: ``n`` of ``total`` (1 is the earliest), and whether it was ``scored`` now or
    ``skipped`` (already in the warehouse under the same fingerprint, from an earlier demo)."""

    n: int
    total: int
    day: str
    status: str


def backfill_days(plan: DemoPlan, days: int = BACKFILL_DAYS) -> list[dt.date]:
    """The ``days`` days before day 1, earliest first (at most ``BACKFILL_DAYS``: the demo's logs hold no
    earlier window)."""
    if not 0 <= days <= BACKFILL_DAYS:
        raise ConfigError(f"the demo backfills 0 to {BACKFILL_DAYS} days (its query logs cover no more); got {days}")
    day_one = dt.date.fromisoformat(plan.steps[0]["logical_date"][:10])
    return [day_one - dt.timedelta(days=offset) for offset in range(days, 0, -1)]


def backfill_config(cfg: Config, plan: DemoPlan) -> Config:
    """The configuration of the backfill's runs: the project's, with the demo's query logs and judge, and
    the registry as shipped (no day-2 overlay)."""
    import os

    from evalops.config import load_config

    env = {k: v for k, v in plan.steps[0]["env"].items() if v is not None}
    # the overlay of a later day is not the first day's (the plan sets it for the days that deploy it)
    base = {**without_settings_variables(os.environ, location_only=True),
            **{k: "" for k, v in plan.steps[0]["env"].items() if v is None}}
    return load_config(cfg.home, environ={**base, **env, "EVALOPS_HOME": str(cfg.home)})


def scored_days(day_cfg: Config, plan: DemoPlan, days: list[dt.date]) -> set[dt.date]:
    """The days among ``days`` that an earlier backfill finished under today's inputs: every deployed
    version has a succeeded run on every gold set under the fingerprint the inputs give now, and the
    day's report (the run's last step) exists. A day interrupted half-way, or scored under other inputs
    (another gold set, knowledge base, measures or policies), is not among them and is scored again."""
    from evalops.pipeline.inputs import load_gold_set_for, load_knowledge_base
    from evalops.pipeline.workdir import report_location

    if not days:
        return set()
    migrate_warehouse(day_cfg)  # what the first run would do anyway; a new warehouse has no day
    engine = engine_for(day_cfg)
    snapshot_id = load_knowledge_base(day_cfg).snapshot_id
    fingerprints = {name: fingerprint_for(day_cfg, load_gold_set_for(day_cfg, name).version, snapshot_id).hash
                    for name in day_cfg.require_gold_sets()}
    done = set()
    for day in days:
        run = RunContext.for_day(day)
        if not Path(report_location(day_cfg, run)).is_file():
            continue
        stored = [find_run(engine, RunKey(run.dag_id, run.run_id, retriever, version, name))
                  for retriever, version in plan.baselines for name in fingerprints]
        wanted = [fp for _ in plan.baselines for fp in fingerprints.values()]
        if all(s is not None and s.status == "succeeded" and s.fingerprint.hash == fp for s, fp in zip(stored, wanted, strict=False)):
            done.add(day)
    return done


def run_backfill(cfg: Config, plan: DemoPlan, days: int = BACKFILL_DAYS,
                 progress: Callable[[BackfillDay], None] | None = None) -> list[BackfillDay]:
    """Score the ``days`` days before day 1 in this process (what ``evalops run --date`` does), with the
    registry as shipped, the demo's query logs and its judge; the first day's deployed versions become the
    baselines (unless they already are), so every later day is compared with a baseline.

    Resumable: a day an earlier backfill finished under the same inputs (:func:`scored_days`) is skipped,
    so an interrupted demo continues where it stopped, and a second demo writes no row. ``progress`` hears
    of every day, before it is scored (or as it is skipped). Returns every day, scored or skipped.
    """
    from evalops.pipeline.local import run_local

    wanted = backfill_days(plan, days)
    if not wanted:
        return []
    day_cfg = backfill_config(cfg, plan)
    skip = scored_days(day_cfg, plan, wanted)
    out = []
    for n, day in enumerate(wanted, start=1):
        item = BackfillDay(n, len(wanted), day.isoformat(), "skipped" if day in skip else "scored")
        if progress is not None:
            progress(item)
        if day not in skip:
            run_local(day_cfg, RunContext.for_day(day))
        if n == 1:
            for retriever, version in plan.baselines:
                promote(day_cfg, retriever=retriever, version=version, promoted_by="evalops demo",
                        reason=f"demo backfill: {version} is the deployed version on {day.isoformat()}",
                        as_of=RunContext.for_day(day).anchor, keep_current_version=True)
        out.append(item)
    return out


def chunking_config(cfg: Config, plan: DemoPlan, day: int) -> Config:
    """The configuration of the chunking comparison's ``day`` (1 or 2): the backfill's, with the chunkings'
    registry alone (and on day 2 its overlay, which deploys the candidates), on the gold set only (no
    production sample, no judge: the comparison is the gold set's document judgments)."""
    import os

    from evalops.config import load_config

    chunkings = plan.chunkings
    if chunkings is None:
        raise ConfigError(f"{cfg.home / CHUNKINGS_REGISTRY}: no such file; the demo has no chunkings to compare")
    env = {k: v for k, v in plan.steps[0]["env"].items() if v is not None}
    env.update({"EVALOPS_REGISTRY": str(chunkings.registry),
                "EVALOPS_RETRIEVERS_OVERLAY": str(chunkings.overlay) if day == 2 else "",
                "EVALOPS_LOG_SAMPLE_SIZE": "0", "EVALOPS_JUDGE__KIND": "off"})
    base = without_settings_variables(os.environ, location_only=True)
    return load_config(cfg.home, environ={**base, **env, "EVALOPS_HOME": str(cfg.home)})


def run_chunkings(cfg: Config, plan: DemoPlan) -> list[dict[str, Any]]:
    """The chunking comparison (module docstring), in this process (what ``evalops run --date`` does): day 1
    scores the deployed chunking and promotes it (unless it already is the baseline), day 2 scores both
    and decides the candidate against it. A second demo re-runs the same runs and writes no new row.
    Returns each day's ``run_local`` result with its ``run_id`` and ``logical_date``; empty without
    chunkings."""
    from evalops.pipeline.local import run_local

    chunkings = plan.chunkings
    if chunkings is None:
        return []
    out = []
    for n, (logical, run_id) in enumerate(zip((plan.steps[0]["logical_date"], plan.steps[-1]["logical_date"]),
                                              chunkings.run_ids, strict=True), start=1):
        day_cfg = chunking_config(cfg, plan, n)
        run = RunContext.for_day(dt.date.fromisoformat(logical[:10]), run_id=run_id)
        result = run_local(day_cfg, run)
        if n == 1:
            for retriever, version in chunkings.baselines:
                promote(day_cfg, retriever=retriever, version=version, promoted_by="evalops demo",
                        reason=f"demo day 1: {version} is the deployed chunking", as_of=run.anchor,
                        keep_current_version=True)
        out.append({**result, "run_id": run_id, "dag_id": run.dag_id, "logical_date": logical})
    return out


def chunking_summary(cfg: Config, plan: DemoPlan) -> dict[str, Any]:
    """What the chunking comparison's day 2 found: per version its chunking (the manifest's name) and the
    primary measure, delta, adjusted p and decision against the deployed chunking; ``described``, the
    report's line naming each chunking (its ``chunking_id`` and size); ``report``, that run's report.
    Empty without chunkings."""
    from evalops.pipeline.workdir import report_location

    chunkings = plan.chunkings
    if chunkings is None:
        return {}
    day_cfg = chunking_config(cfg, plan, 2)
    registry = load_registry_for(day_cfg)
    anchor = dt.datetime.fromisoformat(plan.steps[-1]["logical_date"])
    run = RunContext.for_day(anchor.date(), run_id=chunkings.run_ids[1])
    measure = canonical_measures(day_cfg)[0]
    engine = engine_for(day_cfg)
    rows = []
    for retriever, version in chunkings.baselines + chunkings.candidates:
        path = registry.get(retriever, version).chunking_path
        row = _version_row(engine, run, retriever, version, measure)
        rows.append({**row, "chunking": None if path is None else path.stem})  # read_chunk_manifest's name
    keys = chunkings.baselines + chunkings.candidates
    return {"measure": measure, "run_id": run.run_id, "versions": rows,
            "described": list(describe_chunkings(registry, keys).values()),
            "report": report_location(day_cfg, run)}


def demo_summary(cfg: Config, plan: DemoPlan, results: list[dict[str, Any]]) -> dict[str, Any]:
    """What the demo found on day 2: per version the primary measure and decision, and the alerts."""
    from evalops.pipeline.workdir import report_location

    engine = engine_for(cfg)
    measure = canonical_measures(cfg)[0]
    day_two = [r for r in results if r["dag_id"] == plan.eval_dag_id][-1]
    anchor = dt.datetime.fromisoformat(day_two["logical_date"])
    run = RunContext(plan.eval_dag_id, day_two["run_id"], anchor, anchor - dt.timedelta(days=1), anchor)
    rows = []
    for retriever, version in plan.baselines + plan.candidates:
        rows.append(_version_row(engine, run, retriever, version, measure))
    alerts = list_alerts(engine, since=dt.date.fromisoformat(run.day))
    return {
        "measure": measure,
        "states": [(r["dag_id"], r["logical_date"][:10], r["state"]) for r in results],
        "versions": rows,
        "alerts": [{"kind": a.kind, "version": a.version, "measure": a.measure, "message": a.message,
                    "delivery_status": a.delivery_status, "created_at": a.created_at}
                   for a in alerts.itertuples(index=False)],
        "judge": judge_summary(cfg, run.run_id),
        "report": report_location(cfg, run),
        "counts": warehouse_counts(cfg),
    }


def judge_summary(cfg: Config, dag_run_id: str) -> dict[str, Any]:
    """What the judge step of one DAG run recorded (``judge_runs``): per query set the judge, the pairs
    labelled, requests and cache hits, and on a gold set the agreement with the human grades (Cohen's
    kappa over the pairs both labelled) and the gate it decides. Empty when the judge was off."""

    frame = load_judge_runs(engine_for(cfg), dag_run_id)
    out: dict[str, Any] = {}
    for row in frame.to_dict("records"):
        agreement = row["agreement"] or {}
        results = row["results"] or {}
        out[row["scope"]] = {
            "judge": row["judge"].get("model"), "offline": bool(row["judge"].get("offline")),
            "labels": int(row["items"]), "requests": int(row["requests"]), "cache_hits": int(row["cache_hits"]),
            "missing": int(row["missing"]), "queries": results.get("queries"),
            "kappa": agreement.get("kappa"), "pairs_with_human_grades": agreement.get("pairs_with_human_grades"),
            "gate": (row["gate"] or {}).get("status"), "threshold": (row["gate"] or {}).get("threshold"),
            "failed": results.get("failed"),
        }
    return out


def _version_row(engine: Any, run: Any, retriever: str, version: str, measure: str) -> dict[str, Any]:

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
