"""
### promote_baseline: make a scored run the baseline of its retriever

Manual only. Trigger it with the params below (the UI shows a form). The promotion is recorded in the
warehouse with who asked, when and why, and it replaces the retriever's current baseline under the run's
eval fingerprint. Roll back by promoting the previous run again.

* `retriever`: the retriever name in the registry.
* `run`: a warehouse run id, or `latest` for the latest succeeded gold-set run of `version`
  (or of the retriever's most recently scored version when `version` is empty) up to this DAG run's
  logical date.
* `version`: optional, narrows `latest` to one version.
* `reason`: why (kept in the promotion history).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from airflow.sdk import Param, dag, task

from evalops.airflow.dags._parse import for_project, retry_delay

__all__ = ["promote_baseline"]


def promote_baseline(dag_file: str, dag_id: str = "promote_baseline"):
    """The ``promote_baseline`` DAG of the project ``dag_file`` (a file in its ``dags/`` folder) belongs to."""
    return for_project(dag_file, _build, dag_id)


def _build(project: Path, dag_id: str):
    @dag(
        dag_id=dag_id,
        schedule=None,
        start_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
        catchup=False,
        tags=["evalops", "baseline"],
        default_args={"owner": "evalops", "retries": 1, "retry_delay": retry_delay(project=project)},
        params={
            "retriever": Param(type="string", minLength=1, description="Retriever name in the registry"),
            "run": Param("latest", type="string", description="Warehouse run id, or 'latest'"),
            "version": Param("", type="string", description="Optional version for 'latest'"),
            "reason": Param(type="string", minLength=3, description="Why this run becomes the baseline"),
        },
        doc_md=__doc__,
    )
    def promote_baseline_dag():
        @task
        def promote(params: dict | None = None, dag_run=None) -> dict:
            from evalops import pipeline
            from evalops.config import load_config

            who = getattr(dag_run, "triggering_user_name", None) or "airflow"
            as_of = getattr(dag_run, "logical_date", None) or getattr(dag_run, "run_after", None)
            return pipeline.promote(
                load_config(home=project),
                retriever=params["retriever"],
                run=params["run"],
                version=params["version"] or None,
                reason=params["reason"],
                promoted_by=who,
                as_of=as_of,
            )

        promote()

    return promote_baseline_dag()
