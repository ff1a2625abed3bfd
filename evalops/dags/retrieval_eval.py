"""
### retrieval_eval: did any deployed retriever version get worse, by how much, on which queries?

Runs every day at 00:00 UTC (its data interval is the previous UTC day, as the query logs are
partitioned) **and** whenever the `knowledge-base` asset is updated (by the
`knowledge_base_producer` DAG or `POST /api/v2/assets/events`).

1. `migrate_warehouse`: bring the metrics warehouse to the current schema.
2. `snapshot_knowledge_base`: content-hash the knowledge base; record the snapshot.
3. `validate_inputs`: Great Expectations on the gold set and the snapshot. A failure stores an alert and
   stops the run before anything is scored (no retry: bad data does not fix itself).
4. `sample_query_logs`: seeded sample of the run's log window, validated and PII-scrubbed.
5. `plan`: the eval fingerprint, the deployed versions from the registry, each retriever's baseline. A
   stale baseline (knowledge base or gold set changed) is re-scored in this run.
6. `score`: mapped over versions x query shards; per-query metrics go to the warehouse.
7. `compare`: mapped over versions; stores each version's run and aggregates, then runs the paired
   tests against the baseline.
7b. `judge`: judge labels for every version's top contexts (`evalops.pipeline.judging`; off unless
   `judge.kind` is set), recorded in `judge_runs` with tokens, cost, agreement and the agreement gate.
8. `decide`: corrects the p-values across every measure x version (Holm) and stores the A/B results.
9. `alert`: regressions and failed/partial versions (stored first, then sent; a dead webhook leaves the
   alert undelivered).
10. `publish_report`: markdown + HTML report; fails the run if a version could not be scored. Emits the
    `retrieval-eval-results` asset with what the run decided (versions, decisions, alerts, report path),
    which `promote_on_results` consumes.

**Ad-hoc run.** Trigger with the param `candidate` set to a registry entry (the keys of an entry of
`retrievers.yaml`, checked by the same schema): only that version is scored, against its retriever's
current baseline, and no baseline changes. The triggering asset event's extra (which snapshot, which
source) is recorded with each warehouse run (`eval_runs.contracts["trigger"]`) and shown in the report.

Settings come from the project's `evalops.yaml` and `EVALOPS_*` environment variables (see
`evalops/config`). XCom carries ids and small specs, never data.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from airflow.sdk import (
    Asset,
    AssetOrTimeSchedule,
    CronTriggerTimetable,
    ExceptionRetryPolicy,
    Param,
    RetryAction,
    RetryRule,
    dag,
    task,
)

from evalops.dags._parse import for_project, retry_delay

__all__ = ["retrieval_eval", "KNOWLEDGE_BASE", "RESULTS", "NO_RETRY_ON_BAD_INPUT"]

KNOWLEDGE_BASE = Asset("knowledge-base")
# Emitted by publish_report with what the run concluded (see evalops.pipeline.results).
RESULTS = Asset("retrieval-eval-results")

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


def _call(project: Path, step: str, *args, **kwargs):
    """Run one pipeline step with the project's settings and this DAG run's context. All imports are here."""
    from airflow.sdk import get_current_context

    from evalops import pipeline
    from evalops.config import load_config

    run = pipeline.RunContext.from_airflow(get_current_context())
    cfg = load_config(home=project)
    cfg.apply_process_settings()
    return getattr(pipeline, step)(cfg, run, *args, **kwargs)


def _failure_callback(project: Path):
    """The DAG-level failure callback: one evalops alert naming the failed task, its try and its log URL,
    delivered even when the warehouse is down (see :class:`evalops.pipeline.airflow_notifier.EvalopsNotifier`;
    imported when the callback runs, not when the DAG file is parsed)."""

    def on_failure(context):
        from evalops.pipeline.airflow_notifier import EvalopsNotifier

        EvalopsNotifier(project=project)(context)

    return on_failure


def retrieval_eval(dag_file: str | os.PathLike[str], dag_id: str = "retrieval_eval"):
    """The ``retrieval_eval`` DAG of the project that ``dag_file`` (a file in its ``dags/`` folder) belongs
    to. Call it from that file: ``dag = retrieval_eval(__file__)``."""
    return for_project(dag_file, _build, dag_id)


def _build(project: Path, dag_id: str):
    @dag(
        dag_id=dag_id,
        schedule=AssetOrTimeSchedule(
            timetable=CronTriggerTimetable("0 0 * * *", timezone="UTC", interval=dt.timedelta(days=1)),
            assets=[KNOWLEDGE_BASE],
        ),
        start_date=dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc),
        catchup=False,
        max_active_runs=1,
        tags=["evalops", "retrieval", "evaluation"],
        default_args={
            "owner": "evalops",
            "retries": 2,
            "retry_delay": retry_delay(project=project),  # tests and the demo shorten it
            "retry_policy": NO_RETRY_ON_BAD_INPUT,
        },
        params={
            "candidate": Param(
                None, type=["null", "object"],
                description="Ad-hoc run: one registry entry (name, version, adapter, deployed, owner, params, as "
                            "in retrievers.yaml) scored against its retriever's current baseline instead of the "
                            "deployed versions. Empty: a regular run.",
            ),
        },
        on_failure_callback=_failure_callback(project),
        doc_md=__doc__,
    )
    def retrieval_eval_dag():
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
            from evalops.pipeline.specs import VersionSpec

            specs = _call(project, "shard_specs", [VersionSpec.from_xcom(v) for v in versions])
            return [spec.to_xcom() for spec in specs]

        @task(map_index_template="{{ task.op_kwargs['spec']['label'] }}")
        def score(spec: dict) -> dict:
            from evalops.pipeline.specs import ShardSpec

            return _call(project, "score_shard", ShardSpec.from_xcom(spec))

        @task(map_index_template="{{ task.op_kwargs['spec']['label'] }}")
        def compare(spec: dict) -> dict:
            from evalops.pipeline.specs import VersionSpec

            return _call(project, "compare_version", VersionSpec.from_xcom(spec).to_xcom())


        @task
        def judge(versions: list[dict]) -> dict:  # judge labels for the top contexts (off unless judge.kind is set)
            return _call(project, "judge_versions", versions)

        @task
        def decide(versions: list[dict], _compared: list[dict]) -> dict:
            return _call(project, "decide_run", versions)

        @task
        def alert(versions: list[dict], _decided: dict) -> list[dict]:
            return _call(project, "raise_alerts", versions)

        @task(outlets=[RESULTS])
        def publish_report(versions: list[dict], alerts: list[dict], outlet_events=None) -> str:
            report = _call(project, "publish_report", versions, alerts)
            outlet_events[RESULTS].extra = _call(project, "result_event", versions, alerts, report)
            return report

        snapshot_id = snapshot_knowledge_base(migrate_warehouse())
        versions = plan(snapshot_id, validate_inputs(snapshot_id), sample_query_logs(snapshot_id))
        scored = score.expand(spec=shard(versions))
        compared = compare.expand(spec=versions)
        scored >> compared
        judged = judge(versions)
        compared >> judged
        alerts = alert(versions, decide(versions, compared))
        judged >> alerts  # judge-label regressions past the agreement gate alert too
        publish_report(versions, alerts)

    return retrieval_eval_dag()
