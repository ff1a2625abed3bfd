"""Settings a DAG needs when its file is *parsed*, read without loading :mod:`evalops.config`.

The scheduler and the dag-processor parse DAG files often; loading the full settings object there would
import pydantic-settings and evalops' contract modules into every parse. The few values the DAG's shape
depends on are read here, from the same places with the same precedence as :class:`evalops.config.Config`
(an environment variable wins over the project's ``evalops.yaml``; the project's ``.env`` is not read at
parse time). The values are validated by the same rule as the Config field (a positive number of seconds).

* ``EVALOPS_RETRY_DELAY_SECONDS``: the wait between two attempts of a task (default 60 s).
* ``task_timeout`` / ``EVALOPS_TASK_TIMEOUT``: every task's ``execution_timeout`` in seconds.
* ``task_timeouts.<task>`` / ``EVALOPS_TASK_TIMEOUTS__<TASK>``: the timeout of the task of that id in
  every evalops DAG that has one (a mapped task's timeout applies to each of its instances).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_TASK_TIMEOUT", "retry_delay", "task_timeouts", "ParseSettingError"]

# Two hours: far above a daily run on a large gold set, far below "forever". Declared once; the Config
# field's default reads it from here.
DEFAULT_TASK_TIMEOUT = 7200.0


class ParseSettingError(ValueError):
    """A parse-time setting is malformed (the DAG file then fails to import, naming the variable)."""


def _seconds(value: Any, where: str) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ParseSettingError(f"{where}: expected a number of seconds, got {value!r}") from None
    if not seconds > 0 or seconds != seconds or seconds == float("inf"):
        raise ParseSettingError(f"{where}: expected a positive number of seconds, got {value!r}")
    return seconds


def _project_file(project: Path, environ: Mapping[str, str]) -> dict[str, Any]:
    path = environ.get("EVALOPS_CONFIG")
    file = Path(path).expanduser() if path else project / "evalops.yaml"
    if not file.is_absolute():
        file = project / file
    if not file.is_file():
        return {}
    import yaml  # already loaded by airflow.sdk

    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return {}  # the tasks load the settings and report the error with the file and line
    return data if isinstance(data, dict) else {}


def retry_delay(environ: Mapping[str, str] | None = None) -> dt.timedelta:
    env = os.environ if environ is None else environ
    return dt.timedelta(seconds=_seconds(env.get("EVALOPS_RETRY_DELAY_SECONDS", "60"), "EVALOPS_RETRY_DELAY_SECONDS"))


def task_timeouts(project: Path, task_ids: list[str], environ: Mapping[str, str] | None = None
                  ) -> dict[str, dt.timedelta]:
    """Each task's ``execution_timeout``: its own override, else ``task_timeout``, else the default."""
    env = os.environ if environ is None else environ
    upper = {k.upper(): v for k, v in env.items()}
    data = _project_file(project, env)
    default = DEFAULT_TASK_TIMEOUT
    if "EVALOPS_TASK_TIMEOUT" in upper:
        default = _seconds(upper["EVALOPS_TASK_TIMEOUT"], "EVALOPS_TASK_TIMEOUT")
    elif data.get("task_timeout") is not None:
        default = _seconds(data["task_timeout"], f"{project / 'evalops.yaml'}: task_timeout")
    overrides = data.get("task_timeouts") or {}
    if not isinstance(overrides, dict):
        raise ParseSettingError(f"{project / 'evalops.yaml'}: task_timeouts must map task ids to seconds")
    prefix = "EVALOPS_TASK_TIMEOUTS__"
    env_overrides = {k[len(prefix):].lower(): v for k, v in upper.items() if k.startswith(prefix)}
    out: dict[str, dt.timedelta] = {}
    for task_id in task_ids:
        if task_id in env_overrides:
            seconds = _seconds(env_overrides[task_id], f"{prefix}{task_id.upper()}")
        elif overrides.get(task_id) is not None:
            seconds = _seconds(overrides[task_id], f"{project / 'evalops.yaml'}: task_timeouts.{task_id}")
        else:
            seconds = default
        out[task_id] = dt.timedelta(seconds=seconds)
    return out


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
    folder) belongs to, with its task timeouts. ``fileloc`` is set to that file, because workers re-parse
    the project's file, not the evalops module that defines the DAG."""
    project = Path(dag_file).resolve().parent.parent
    built = apply_task_timeouts(build(project, dag_id), project)
    built.fileloc = str(Path(dag_file).resolve())
    return built
