"""Run DAGs in-process with ``dag.test()`` for a list of logical dates: the engine of ``evalops demo`` and
of the end-to-end tests.

It is meant to run in its own process (``python -m evalops.airflow.runner SPEC.json``) because
Airflow reads ``AIRFLOW_HOME`` once, at import: the caller picks a temporary home and a log file, and this
module sets up a fresh SQLite metadata database there. Each step may override environment variables (for
example ``EVALOPS_RETRIEVERS_OVERLAY`` to deploy candidates on day 2); the overrides are undone after the step.

Spec (JSON)::

    {"dags_folder": "/path/to/dags",
     "steps": [{"dag_id": "retrieval_eval", "logical_date": "2024-06-02T03:00:00+00:00",
                "env": {"EVALOPS_RETRIEVERS_OVERLAY": "..."}, "conf": {...}}, ...]}

The result, printed as the last line of stdout, is a JSON list with each step's ``run_id``, ``state``,
the warehouse's row count per table after the step (``counts``), which is how the demo and the tests
show that a re-run writes nothing new, the asset events the run emitted (``asset_events``), and the DAGs
that asset events have queued for a run so far (``queued``: whom an asset update would start).
The run id is stable per (DAG, logical date) because ``run_after`` is set to the logical date, so running
the same step again is a re-run of the same DAG run (Airflow clears and re-executes its tasks).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from evalops.config import without_settings_variables

__all__ = ["airflow_environment", "run_demo", "run_steps", "run_steps_in_subprocess"]


def airflow_environment(airflow_home: str | os.PathLike[str], dags_folder: str | os.PathLike[str]) -> dict[str, str]:
    """The variables an in-process Airflow needs: its own home and SQLite database, no examples."""
    home = Path(airflow_home).resolve()
    return {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(Path(dags_folder).resolve()),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO",
    }


@contextlib.contextmanager
def _env(overrides: Mapping[str, str | None]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in overrides}
    try:
        for key, value in overrides.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = str(value)
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_steps(dags_folder: str | os.PathLike[str], steps: list[Mapping[str, Any]], *, counts: bool = True
              ) -> list[dict[str, Any]]:
    """Create the metadata database, load the DAGs and run each step with ``dag.test()``.

    Must be called in a process whose ``AIRFLOW_HOME`` (and the rest of :func:`airflow_environment`) was
    set before Airflow was first imported.
    """
    from airflow.utils import db

    from evalops.airflow.compat import dag_bag

    db.initdb()
    bag = dag_bag()(dag_folder=str(dags_folder))
    if bag.import_errors:
        raise RuntimeError(f"DAG import errors: {bag.import_errors}")
    results = []
    for step in steps:
        dag = bag.get_dag(step["dag_id"])
        if dag is None:
            raise RuntimeError(f"no DAG {step['dag_id']!r} in {dags_folder}")
        logical_date = dt.datetime.fromisoformat(step["logical_date"])
        with _env(step.get("env") or {}):
            dag_run = dag.test(logical_date=logical_date, run_after=logical_date, run_conf=step.get("conf"))
            found = _warehouse_counts() if counts else {}
        state = getattr(dag_run.state, "value", dag_run.state)
        results.append({"dag_id": step["dag_id"], "logical_date": step["logical_date"], "run_id": dag_run.run_id,
                        "state": str(state), "counts": found,
                        "asset_events": _asset_events(step["dag_id"], dag_run.run_id),
                        "queued": _queued_dag_ids()})
    return results


def _queued_dag_ids() -> list[str]:
    """The DAGs an asset event queued for a run so far (the scheduler would start them; nothing here does)."""
    from sqlalchemy import select

    from airflow.models.asset import AssetDagRunQueue
    from airflow.utils.session import create_session

    with create_session() as session:
        return sorted(set(session.scalars(select(AssetDagRunQueue.target_dag_id))))


def _asset_events(dag_id: str, run_id: str) -> list[dict[str, Any]]:
    """The asset events the DAG run emitted: ``[{"asset": name, "extra": {...}}]``."""
    from sqlalchemy import select

    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session

    with create_session() as session:
        rows = session.execute(
            select(AssetModel.name, AssetEvent.extra).join(AssetModel, AssetModel.id == AssetEvent.asset_id)
            .where(AssetEvent.source_dag_id == dag_id, AssetEvent.source_run_id == run_id)
            .order_by(AssetEvent.id)
        ).all()
    return [{"asset": name, "extra": dict(extra or {})} for name, extra in rows]


def _warehouse_counts() -> dict[str, int]:
    from evalops.config import load_config
    from evalops.pipeline.store import warehouse_counts

    return warehouse_counts(load_config())


def run_steps_in_subprocess(
    dags_folder: str | os.PathLike[str],
    steps: list[Mapping[str, Any]],
    *,
    workdir: str | os.PathLike[str],
    log_path: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    inherit_evalops_env: bool = True,
    timeout: float = 900,
    counts: bool = True,
) -> list[dict[str, Any]]:
    """Run :func:`run_steps` in a child Python with a fresh Airflow home under ``workdir``.

    The child sees this process's environment plus ``env`` (without this process's ``EVALOPS_*``
    variables when ``inherit_evalops_env`` is false, as tests want). Airflow's (long) output goes to
    ``log_path``. A child that fails raises ``RuntimeError`` quoting the end of the log. ``counts=False``
    skips the warehouse row counts after each step (for a run whose warehouse is meant to be unreachable).
    """
    import subprocess
    import tempfile

    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    airflow_home = Path(tempfile.mkdtemp(prefix="airflow-", dir=workdir))
    spec = airflow_home / "steps.json"
    spec.write_text(json.dumps({"dags_folder": str(dags_folder), "steps": list(steps), "counts": counts}))

    inherited = dict(os.environ) if inherit_evalops_env else without_settings_variables(os.environ)
    child_env = {**inherited, **(env or {}), **airflow_environment(airflow_home, dags_folder)}
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        proc = subprocess.run(
            [sys.executable, "-m", "evalops.airflow.runner", str(spec)],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=child_env,
            timeout=timeout,
        )
        log.write(proc.stdout)
    if proc.returncode != 0:
        tail = log_path.read_text()[-3000:]
        raise RuntimeError(f"the in-process Airflow run failed (exit {proc.returncode}); log {log_path}:\n{tail}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    spec = json.loads(Path(args[0]).read_text())
    results = run_steps(spec["dags_folder"], spec["steps"], counts=spec.get("counts", True))
    sys.stdout.write("\n" + json.dumps(results) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def run_demo(cfg: Any, plan: Any) -> list[dict[str, Any]]:
    """Run the demo plan's (:func:`evalops.pipeline.demo.plan_demo`) DAG steps in a child process (its Airflow
    output goes to ``airflow.log`` in the plan's work folder): the demo's Airflow part."""
    env = {"EVALOPS_HOME": str(cfg.home), "EVALOPS_RETRY_DELAY_SECONDS": "2"}
    return run_steps_in_subprocess(plan.dags, plan.steps, workdir=plan.workdir,
                                   log_path=plan.workdir / "airflow.log", env=env)
