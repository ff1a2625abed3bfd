"""The evaluation as Airflow tasks: the wiring that the ``retrieval_eval`` DAG is made of, and that
:func:`evaluation_task_group` puts inside a DAG of your own.

migrate -> snapshot -> validate / sample logs -> plan -> score (mapped over versions x query shards) ->
compare (mapped over versions) -> judge -> decide -> alert -> publish_report (emits the project's results asset,
``retrieval-eval-results`` or ``<project_name>.retrieval-eval-results``: :mod:`evalops.airflow.assets`).
Each task body calls one pipeline step (``evalops.pipeline``) with the project's settings and the DAG run's
context; XCom carries ids and small specs, never data. Importing this module imports ``airflow.sdk`` only.

**Pool.** ``score_pool`` puts every mapped ``score`` task instance in that Airflow pool (``score_pool_slots``
slots each), so the pool's size caps how many shards call the retriever services at once, across every DAG
that uses the pool. Create the pool first (``airflow pools set NAME SLOTS DESCRIPTION``).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from airflow.sdk import Asset, ExceptionRetryPolicy, RetryAction, RetryRule, TaskGroup, task

from evalops.airflow.assets import KNOWLEDGE_BASE_ASSET, RESULTS_ASSET, project_assets

__all__ = ["KNOWLEDGE_BASE", "NO_RETRY_ON_BAD_INPUT", "RESULTS", "evaluation_task_group", "evaluation_tasks"]

# The assets of a project without a project_name (each project's own: evalops.airflow.assets.project_assets).
# Emitted by publish_report with what the run concluded (see evalops.pipeline.results).
RESULTS = Asset(RESULTS_ASSET)
# Updated by a knowledge-base pipeline (knowledge_base_producer, or POST /api/v2/assets/events).
KNOWLEDGE_BASE = Asset(KNOWLEDGE_BASE_ASSET)

# Bad input, and a version that already failed its own retries, do not get better on retry.
NO_RETRY_ON_BAD_INPUT = ExceptionRetryPolicy(
    rules=[
        RetryRule(
            exception=[
                "evalops.errors.InputError",
                "evalops.errors.ValidationError",
                "evalops.pipeline.errors.IncompleteRunError",
            ],
            action=RetryAction.FAIL,
            reason="bad input: fix the data; retrying cannot help",
        ),
    ]
)


# The steps after planning that take the run's environment (evalops.pipeline.env.RunEnv), not the settings.
_TAKE_RUN_ENV = frozenset({"score_shard", "compare_version", "decide_run", "raise_alerts", "publish_report",
                           "result_event"})


def _call(project: Path, step: str, *args, **kwargs):
    """Run one pipeline step with the project's settings (or, for the steps in ``_TAKE_RUN_ENV``, the run's
    environment made from them) and this DAG run's context. All imports are here."""
    from airflow.sdk import get_current_context

    from evalops import pipeline
    from evalops.config import load_config
    from evalops.pipeline.env import run_env

    run = pipeline.RunContext.from_airflow(get_current_context())
    cfg = load_config(home=project)
    cfg.apply_process_settings()
    return getattr(pipeline, step)(run_env(cfg) if step in _TAKE_RUN_ENV else cfg, run, *args, **kwargs)


def _specs(versions: list[dict]) -> list[Any]:
    """The version specs of their XCom form (``VersionSpec.from_xcom``, which names what does not fit)."""
    from evalops.pipeline.specs import VersionSpec

    return [VersionSpec.from_xcom(v) for v in versions]


def evaluation_tasks(project: Path, *, score_pool: str | None = None, score_pool_slots: int = 1) -> tuple[Any, Any]:
    """Add the evaluation's tasks to the DAG (or task group) being defined; return its first and last task."""
    if score_pool_slots < 1:
        raise ValueError(f"score_pool_slots must be at least 1, not {score_pool_slots}")
    pool = {"pool": score_pool, "pool_slots": score_pool_slots} if score_pool else {}
    results = project_assets(project).results

    @task
    def migrate_warehouse() -> str:
        return _call(project, "migrate_warehouse")

    @task
    def snapshot_knowledge_base(_migrated: str) -> str:
        return _call(project, "snapshot_knowledge_base")

    @task
    def validate_inputs(snapshot_id: str) -> dict:
        return _call(project, "validate_inputs", snapshot_id)

    @task
    def sample_query_logs(snapshot_id: str) -> dict:
        return _call(project, "sample_query_logs", snapshot_id)

    # XCom carries the specs' JSON form (VersionSpec / ShardSpec .to_xcom); each task rebuilds them
    @task
    def plan(snapshot_id: str, gold_set_versions: dict, log_sample: dict, params=None) -> list[dict]:
        candidate = (params or {}).get("candidate") or None
        specs = _call(project, "plan_run", snapshot_id, gold_set_versions, log_sample, candidate=candidate)
        return [spec.to_xcom() for spec in specs]

    @task
    def shard(versions: list[dict]) -> list[dict]:
        specs = _call(project, "shard_specs", _specs(versions))
        return [spec.to_xcom() for spec in specs]

    @task(map_index_template="{{ task.op_kwargs['spec']['label'] }}", **pool)
    def score(spec: dict) -> dict:
        from evalops.pipeline.specs import ShardSpec

        return _call(project, "score_shard", ShardSpec.from_xcom(spec))

    @task(map_index_template="{{ task.op_kwargs['spec']['label'] }}")
    def compare(spec: dict) -> dict:
        from evalops.pipeline.specs import VersionSpec

        return _call(project, "compare_version", VersionSpec.from_xcom(spec)).to_xcom()

    @task
    def judge(versions: list[dict]) -> dict:  # judge labels for the top contexts (off unless judge.kind is set)
        return _call(project, "judge_versions", _specs(versions))

    @task
    def decide(versions: list[dict], _compared: list[dict]) -> dict:
        return _call(project, "decide_run", _specs(versions))

    @task
    def alert(versions: list[dict], _decided: dict) -> list[dict]:
        return _call(project, "raise_alerts", _specs(versions))

    @task(outlets=[results])
    def publish_report(versions: list[dict], alerts: list[dict], outlet_events=None) -> str:
        report = _call(project, "publish_report", _specs(versions), alerts)
        outlet_events[results].extra = _call(project, "result_event", _specs(versions), alerts, report)
        return report

    migrated = migrate_warehouse()
    snapshot_id = snapshot_knowledge_base(migrated)
    versions = plan(snapshot_id, validate_inputs(snapshot_id), sample_query_logs(snapshot_id))
    scored = score.expand(spec=shard(versions))
    compared = compare.expand(spec=versions)
    scored >> compared
    judged = judge(versions)
    compared >> judged
    alerts = alert(versions, decide(versions, compared))
    judged >> alerts  # judge-label regressions past the agreement gate alert too
    return migrated, publish_report(versions, alerts)


def evaluation_task_group(project: str | Path, *, group_id: str = "evalops", score_pool: str | None = None,
                          score_pool_slots: int = 1, retries: int = 2,
                          retry_delay: dt.timedelta | None = None) -> TaskGroup:
    """The evaluation of the evalops project in folder ``project`` as one task group of the DAG being defined,
    to put between tasks of your own (``extract >> evaluation_task_group("/opt/rag-eval") >> deploy``).

    The tasks run with the DAG run's logical date and data interval (the query-log window), retry ``retries``
    times after ``retry_delay`` (default: the project's ``retry_delay_seconds``) except on bad input, and the
    mapped ``score`` tasks run in ``score_pool`` when one is given (module docstring). The group's last task
    fails the DAG run when a version could not be scored, as in ``retrieval_eval``. For an evalops alert on
    any failed task, give your DAG ``on_failure_callback=EvalopsNotifier(project=...)``
    (:class:`evalops.airflow.notifier.EvalopsNotifier`), as ``retrieval_eval`` does.
    """
    from evalops.config.env import parse_time_settings

    root = Path(project).expanduser().resolve()
    if retry_delay is None:  # the project's setting, read as the DAGs read it at parse time
        retry_delay = dt.timedelta(seconds=parse_time_settings(root, [])["retry_delay_seconds"])
    default_args = {
        "retries": retries,
        "retry_delay": retry_delay,
        "retry_policy": NO_RETRY_ON_BAD_INPUT,
    }
    with TaskGroup(group_id=group_id, default_args=default_args,
                   tooltip=f"evalops evaluation of {root}") as group:
        evaluation_tasks(root, score_pool=score_pool, score_pool_slots=score_pool_slots)
    return group
