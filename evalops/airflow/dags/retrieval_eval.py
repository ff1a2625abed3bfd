"""
### retrieval_eval: did any deployed retriever version get worse, by how much, on which queries?

Runs every day at 00:00 UTC (its data interval is the previous UTC day, as the query logs are
partitioned) **and** whenever the project's `knowledge-base` asset is updated (by the
`knowledge_base_producer` DAG or `POST /api/v2/assets/events`). A project with a `project_name` has its
own names: this DAG is `<project_name>.retrieval_eval`, scheduled on `<project_name>.knowledge-base`
(`evalops.airflow.assets`), so two projects in one Airflow never trigger each other.

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
    project's `retrieval-eval-results` asset with what the run decided (versions, decisions, alerts, report path),
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
import functools
import os
from pathlib import Path

from airflow.sdk import AssetOrTimeSchedule, CronTriggerTimetable, Param, dag

from evalops.airflow.assets import project_assets
from evalops.airflow.dags._parse import for_project, retry_delay
from evalops.airflow.tasks import KNOWLEDGE_BASE, NO_RETRY_ON_BAD_INPUT, RESULTS, evaluation_tasks

__all__ = ["retrieval_eval", "KNOWLEDGE_BASE", "RESULTS", "NO_RETRY_ON_BAD_INPUT"]


def _failure_callback(project: Path):
    """The DAG-level failure callback: one evalops alert naming the failed task, its try and its log URL,
    delivered even when the warehouse is down (see :class:`evalops.airflow.notifier.EvalopsNotifier`;
    imported when the callback runs, not when the DAG file is parsed)."""

    def on_failure(context):
        from evalops.airflow.notifier import EvalopsNotifier

        EvalopsNotifier(project=project)(context)

    return on_failure


def retrieval_eval(dag_file: str | os.PathLike[str], dag_id: str = "retrieval_eval", *, score_pool: str | None = None,
                   score_pool_slots: int = 1):
    """The ``retrieval_eval`` DAG of the project that ``dag_file`` (a file in its ``dags/`` folder) belongs
    to. Call it from that file: ``dag = retrieval_eval(__file__)``. ``score_pool``: the Airflow pool of the
    mapped ``score`` tasks (see :mod:`evalops.airflow.tasks`)."""
    return for_project(dag_file, functools.partial(_build, score_pool=score_pool, score_pool_slots=score_pool_slots),
                       dag_id)


def _build(project: Path, dag_id: str, score_pool: str | None = None, score_pool_slots: int = 1):
    @dag(
        dag_id=dag_id,
        schedule=AssetOrTimeSchedule(
            timetable=CronTriggerTimetable("0 0 * * *", timezone="UTC", interval=dt.timedelta(days=1)),
            assets=[project_assets(project).knowledge_base],
        ),
        start_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
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
        evaluation_tasks(project, score_pool=score_pool, score_pool_slots=score_pool_slots)

    return retrieval_eval_dag()
