"""
### knowledge_base_producer: an example knowledge-base pipeline that announces a new snapshot

Whatever rebuilds your knowledge base (re-chunking, re-embedding, a nightly sync) ends by emitting the
project's `knowledge-base` asset (`<project_name>.knowledge-base` when the project has a name, see
`evalops.airflow.assets`); its `retrieval_eval` is scheduled on it and starts within seconds. This example only
fingerprints the knowledge base folder and attaches the snapshot id to the event.

A pipeline outside Airflow makes the same announcement over the REST API (see docs/deployment.md,
"How a knowledge-base pipeline triggers a run"):
`POST /api/v2/assets/events` with `{"asset_id": <id>, "extra": {...}}` and a bearer token from
`POST /auth/token`.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from airflow.sdk import Metadata, dag, task

from evalops.airflow.assets import project_assets
from evalops.airflow.dags._parse import for_project, retry_delay

__all__ = ["knowledge_base_producer"]


def knowledge_base_producer(dag_file: str, dag_id: str = "knowledge_base_producer"):
    """The example producer DAG of the project ``dag_file`` (a file in its ``dags/`` folder) belongs to."""
    return for_project(dag_file, _build, dag_id)


def _build(project: Path, dag_id: str):
    knowledge_base = project_assets(project).knowledge_base

    @dag(
        dag_id=dag_id,
        schedule=None,
        start_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
        catchup=False,
        tags=["evalops", "example", "producer"],
        default_args={"owner": "evalops", "retries": 1, "retry_delay": retry_delay(project=project)},
        doc_md=__doc__,
    )
    def producer_dag():
        @task(outlets=[knowledge_base])
        def publish_snapshot():
            from evalops import pipeline
            from evalops.config import load_config

            snapshot = pipeline.describe_knowledge_base(load_config(home=project))
            yield Metadata(knowledge_base, snapshot)

        publish_snapshot()

    return producer_dag()
