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
8. `decide`: corrects the p-values across every measure x version (Holm) and stores the A/B results.
9. `alert`: regressions and failed/partial versions (stored first, then sent; a dead webhook leaves the
   alert undelivered).
10. `publish_report`: markdown + HTML report; fails the run if a version could not be scored.

Settings come from `EVALOPS_*` environment variables or `evalops.yaml` (see `evalops/config.py`).
XCom carries ids and small specs, never data.
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
    RetryAction,
    RetryRule,
    dag,
    task,
)

# The project folder (dags/..) is where include/ lives by default; EVALOPS_HOME overrides it.
PROJECT = Path(__file__).resolve().parent.parent
KNOWLEDGE_BASE = Asset("knowledge-base")

# Tests and the demo shorten the wait between attempts; production keeps a minute.
RETRY_DELAY = dt.timedelta(seconds=float(os.environ.get("EVALOPS_RETRY_DELAY_SECONDS", "60")))

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


def _call(step: str, *args):
    """Run one pipeline step with the configuration and this DAG run's context. All imports are here."""
    from airflow.sdk import get_current_context

    from evalops import pipeline
    from evalops.config import load_config

    run = pipeline.RunContext.from_airflow(get_current_context())
    return getattr(pipeline, step)(load_config(home=PROJECT), run, *args)


@dag(
    dag_id="retrieval_eval",
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
        "retry_delay": RETRY_DELAY,
        "retry_policy": NO_RETRY_ON_BAD_INPUT,
    },
    doc_md=__doc__,
)
def retrieval_eval():
    @task
    def migrate_warehouse() -> str:
        return _call("migrate_warehouse")

    @task
    def snapshot_knowledge_base(_migrated: str) -> str:
        return _call("snapshot_knowledge_base")

    @task
    def validate_inputs(snapshot_id: str) -> str:
        return _call("validate_inputs", snapshot_id)

    @task
    def sample_query_logs(snapshot_id: str) -> dict:
        return _call("sample_query_logs", snapshot_id)

    @task
    def plan(snapshot_id: str, gold_set_version: str, log_sample: dict) -> list[dict]:
        return _call("plan_run", snapshot_id, gold_set_version, log_sample)

    @task
    def shard(versions: list[dict]) -> list[dict]:
        return _call("shard_specs", versions)

    @task(map_index_template="{{ task.op_kwargs['spec']['label'] }}")
    def score(spec: dict) -> dict:
        return _call("score_shard", spec)

    @task(map_index_template="{{ task.op_kwargs['spec']['label'] }}")
    def compare(spec: dict) -> dict:
        return _call("compare_version", spec)

    @task
    def decide(versions: list[dict], _compared: list[dict]) -> dict:
        return _call("decide_run", versions)

    @task
    def alert(versions: list[dict], _decided: dict) -> list[dict]:
        return _call("raise_alerts", versions)

    @task
    def publish_report(versions: list[dict], alerts: list[dict]) -> str:
        return _call("publish_report", versions, alerts)

    snapshot_id = snapshot_knowledge_base(migrate_warehouse())
    versions = plan(snapshot_id, validate_inputs(snapshot_id), sample_query_logs(snapshot_id))
    scored = score.expand(spec=shard(versions))
    compared = compare.expand(spec=versions)
    scored >> compared
    publish_report(versions, alert(versions, decide(versions, compared)))


retrieval_eval()
