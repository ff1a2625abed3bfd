"""The failure alert's first line counts tries honestly and its reason says where the cause is: a DAG-level
callback's task instance carries max_tries 0 whatever the retries, which read "try 3 of 1"."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from evalops.airflow.notifier import alert_from_context

RUN = SimpleNamespace(dag_id="retrieval_eval", run_id="scheduled__2024-06-02", logical_date=dt.datetime(2024, 6, 2))


@pytest.mark.parametrize(("ti", "task", "reads"), [
    ({"try_number": 3, "max_tries": 0}, {"retries": 2}, "(try 3 of 3)"),  # the callback's stale max_tries
    ({"try_number": 3, "max_tries": 0}, None, "(try 3 of 3)"),  # never fewer than the try it is at
    ({"try_number": 1, "max_tries": 2}, None, "(try 1 of 3)"),
    ({"try_number": 2}, None, "(try 2)"),
])
def test_the_try_count_is_never_below_the_try(ti, task, reads):
    instance = SimpleNamespace(task_id="migrate_warehouse", map_index=-1, log_url=None, **ti)
    context = {"dag_run": RUN, "ti": instance, "reason": "task_failure"}
    if task is not None:
        context["task"] = SimpleNamespace(**task)
    first, *rest = alert_from_context(context).message.splitlines()
    assert first.endswith(f"task migrate_warehouse failed {reads}"), first
    assert rest[0] == "reason: task_failure (the task raised an error or was killed; the task log below has the error)"


def test_an_exception_in_the_context_is_the_cause():
    instance = SimpleNamespace(task_id="score", map_index=-1, log_url=None, try_number=1, max_tries=0)
    message = alert_from_context({"dag_run": RUN, "ti": instance, "reason": "task_failure",
                                  "exception": RuntimeError("disk full")}).message
    assert "reason: task_failure\nerror: RuntimeError: disk full" in message
