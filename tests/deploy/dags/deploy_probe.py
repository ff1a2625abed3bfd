"""Fixture DAG for the deployment harness.

Scheduled exactly like ``retrieval_eval`` (daily cron OR the ``knowledge-base`` asset), but its only task
writes one row per run to the warehouse named by ``EVALOPS_WAREHOUSE_URL``: the run id, the run type and
the ``extra`` of the asset events that triggered it. The scheduler test uses it to prove the harness
(standalone on PostgreSQL, REST asset event, clean shutdown) independently of the evaluation pipeline.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import Asset, AssetOrTimeSchedule, CronTriggerTimetable, dag, task

KNOWLEDGE_BASE = Asset("knowledge-base")


@dag(
    dag_id="evalops_deploy_probe",
    schedule=AssetOrTimeSchedule(
        timetable=CronTriggerTimetable("0 3 * * *", timezone="UTC"),
        assets=KNOWLEDGE_BASE,
    ),
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    # As in retrieval_eval: unpausing starts today's daily run too, and two runs creating the table at
    # once would race (CREATE TABLE IF NOT EXISTS is not atomic in PostgreSQL).
    max_active_runs=1,
    default_args={"retries": 1, "retry_delay": pendulum.duration(seconds=5)},
    tags=["evalops", "test"],
    doc_md=__doc__,
)
def evalops_deploy_probe():
    @task
    def record_run(dag_run=None, triggering_asset_events=None) -> str:
        import json
        import os

        import sqlalchemy as sa

        extras = [event.extra for events in triggering_asset_events.values() for event in events]
        engine = sa.create_engine(os.environ["EVALOPS_WAREHOUSE_URL"])
        try:
            with engine.begin() as conn:
                conn.execute(
                    sa.text(
                        "CREATE TABLE IF NOT EXISTS deploy_probe_runs "
                        "(run_id TEXT PRIMARY KEY, run_type TEXT NOT NULL, event_extras TEXT NOT NULL)"
                    )
                )
                # Upsert keyed by the run: a retried task rewrites its own row instead of adding one.
                conn.execute(
                    sa.text(
                        "INSERT INTO deploy_probe_runs (run_id, run_type, event_extras) "
                        "VALUES (:run_id, :run_type, :extras) "
                        "ON CONFLICT (run_id) DO UPDATE SET event_extras = EXCLUDED.event_extras"
                    ),
                    {"run_id": dag_run.run_id, "run_type": dag_run.run_type.value, "extras": json.dumps(extras)},
                )
        finally:
            engine.dispose()
        return dag_run.run_id

    record_run()


evalops_deploy_probe()
