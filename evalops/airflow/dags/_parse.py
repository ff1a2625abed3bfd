"""Settings a DAG needs when its file is *parsed*: the shape-changing values of
:func:`evalops.config.parse_time_settings` (retry delay, approval wait, task timeouts), as timedeltas.

The values are read by the settings module, from the same places with the same precedence as
:class:`evalops.config.Config` (an environment variable wins over the project's ``evalops.yaml``; the
project's ``.env`` is not read at parse time), and validated by the same rule as the Config field (a
positive number). A malformed value makes the DAG file fail to import, naming the variable or key:

* ``retry_delay_seconds`` / ``EVALOPS_RETRY_DELAY_SECONDS``: the wait between two attempts (default 60 s);
* ``approval_hours`` / ``EVALOPS_APPROVAL_HOURS``: how long a promotion waits for an answer (default 24 h);
* ``task_timeout`` / ``EVALOPS_TASK_TIMEOUT``: every task's ``execution_timeout`` in seconds;
* ``task_timeouts.<task>`` / ``EVALOPS_TASK_TIMEOUTS__<TASK>``: the timeout of the task of that id in
  every evalops DAG that has one (a mapped task's timeout applies to each of its instances).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalops.airflow.assets import dag_id_for, project_name
from evalops.config.env import DEFAULT_TASK_TIMEOUT, ParseSettingError, parse_time_settings

__all__ = ["DEFAULT_TASK_TIMEOUT", "approval_wait", "retry_delay", "task_timeouts", "ParseSettingError"]


def retry_delay(environ: Mapping[str, str] | None = None, project: Path | None = None) -> dt.timedelta:
    found = parse_time_settings(project or Path.cwd(), [], environ)
    return dt.timedelta(seconds=found["retry_delay_seconds"])


def approval_wait(project: Path | None = None, environ: Mapping[str, str] | None = None) -> dt.timedelta:
    found = parse_time_settings(project or Path.cwd(), [], environ)
    return dt.timedelta(hours=found["approval_hours"])


def task_timeouts(project: Path, task_ids: list[str], environ: Mapping[str, str] | None = None
                  ) -> dict[str, dt.timedelta]:
    """Each task's ``execution_timeout``: its own override, else ``task_timeout``, else the default."""
    found = parse_time_settings(project, task_ids, environ)["task_timeouts"]
    return {task_id: dt.timedelta(seconds=seconds) for task_id, seconds in found.items()}


def apply_task_timeouts(built: Any, project: Path, environ: Mapping[str, str] | None = None) -> Any:
    """Give every task of the DAG ``built`` its ``execution_timeout`` (see :func:`task_timeouts`); a task
    added to a DAG later gets the default without further wiring. Returns ``built``."""
    timeouts = task_timeouts(project, list(built.task_dict), environ)
    for task_id, op in built.task_dict.items():
        if hasattr(op, "response_timeout"):
            continue  # a human-in-the-loop task waits by its own response_timeout, deferred
        op.execution_timeout = timeouts[task_id]
    return built


def for_project(dag_file: str | os.PathLike[str], build: Any, dag_id: str) -> Any:
    """The DAG ``build(project, dag_id)`` makes for the project that ``dag_file`` (a file in its ``dags/``
    folder) belongs to, with its task timeouts; ``dag_id`` is prefixed with the project's ``project_name``
    when it has one (:mod:`evalops.airflow.assets`). ``fileloc`` is set to that file, because workers re-parse
    the project's file, not the evalops module that defines the DAG."""
    project = Path(dag_file).resolve().parent.parent
    built = apply_task_timeouts(build(project, dag_id_for(project_name(project), dag_id)), project)
    built.fileloc = str(Path(dag_file).resolve())
    return built
