"""
### promote_on_results: promote a candidate when its results are all clear and a human approves

Scheduled on the project's `retrieval-eval-results` asset (`<project_name>.retrieval-eval-results` when the
project has a name), which its `retrieval_eval`'s `publish_report` emits after every successful run. The event's extra says, per version and measure, what the run decided.

1. `pick_candidates`: the gold-set candidates of the triggering run whose every measure is
   `improvement` or `no_change` (and that did not fail). None: the run stops here, skipped.
2. `approve`: Airflow's human-in-the-loop approval (`ApprovalOperator`): the UI shows the candidates and
   the report; *Reject*, or no answer within `approval_hours` hours (`EVALOPS_APPROVAL_HOURS`, default 24), promotes nothing.
3. `promote`: each approved candidate's run becomes its retriever's baseline, recorded with who approved
   and why (the triggering run and its decisions).

An example to adapt: a team that deploys automatically would add its deployment step after `promote`.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from airflow.sdk import dag, task

from evalops.airflow.assets import project_assets
from evalops.airflow.compat import approval_operator
from evalops.airflow.dags._parse import approval_wait, for_project, retry_delay
from evalops.airflow.tasks import RESULTS

__all__ = ["promote_on_results", "RESULTS"]


def promote_on_results(dag_file: str, dag_id: str = "promote_on_results"):
    """The example consumer DAG of the project ``dag_file`` (a file in its ``dags/`` folder) belongs to."""
    return for_project(dag_file, _build, dag_id)


def _build(project: Path, dag_id: str):
    ApprovalOperator = approval_operator()

    @dag(
        dag_id=dag_id,
        schedule=[project_assets(project).results],
        start_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
        catchup=False,
        max_active_runs=1,
        tags=["evalops", "baseline", "example", "consumer"],
        default_args={"owner": "evalops", "retries": 1, "retry_delay": retry_delay(project=project)},
        doc_md=__doc__,
    )
    def promote_on_results_dag():
        @task
        def pick_candidates(triggering_asset_events=None) -> dict:
            from evalops.airflow.compat import AirflowSkipException
            from evalops.pipeline.results import clear_candidates

            events = [e for evs in (triggering_asset_events or {}).values() for e in evs]
            if not events:
                raise AirflowSkipException("no retrieval-eval-results event triggered this run")
            extra = dict(events[-1].extra or {})
            picked = clear_candidates(extra)
            if not picked:
                raise AirflowSkipException(f"no candidate of {extra.get('run', {}).get('run_id')} is all clear")
            return {"run": extra.get("run", {}), "report": extra.get("report"), "candidates": picked}

        picked = pick_candidates()
        approve = ApprovalOperator(
            task_id="approve",
            subject="Promote {{ ti.xcom_pull(task_ids='pick_candidates')['candidates'] | length }} "
                    "retriever version(s) to baseline?",
            body="Every measure is an improvement or no change in run "
                 "{{ ti.xcom_pull(task_ids='pick_candidates')['run']['run_id'] }}:\n\n"
                 "{% for c in ti.xcom_pull(task_ids='pick_candidates')['candidates'] %}"
                 "* {{ c.retriever }} {{ c.version }} (warehouse run {{ c.run_id }})\n{% endfor %}\n"
                 "Report: {{ ti.xcom_pull(task_ids='pick_candidates')['report'] }}",
            response_timeout=approval_wait(project),
        )

        @task
        def promote(picked: dict, approval=None) -> list[dict]:
            from evalops import pipeline
            from evalops.config import load_config

            who = (approval or {}).get("responded_by_user") or {}
            name = who.get("name") or who.get("id") or "approver"
            cfg = load_config(home=project)
            run_id = picked["run"].get("run_id")
            return [
                pipeline.promote(cfg, retriever=c["retriever"], run=c["run_id"],
                                 reason=f"all measures improvement or no_change in {run_id}; approved by {name}",
                                 promoted_by=name)
                for c in picked["candidates"]
            ]

        picked >> approve
        promote(picked, approve.output)

    return promote_on_results_dag()
