"""The settings module's import-light part: the names of its variables and the values read where the
settings object is not loaded.

A DAG file is parsed often, by the scheduler and the dag-processor; loading the settings object there
would import pydantic-settings (about half a second). So the values a DAG's shape depends on
(:func:`parse_time_settings`) and the project's location (:func:`project_from_environment`) are read
here, with the same names, precedence and validation as :class:`evalops.config.Config`, whose fields
declare their defaults from the constants below. Together with :mod:`evalops.config.settings` this is the
only code that reads ``EVALOPS_*`` variables.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalops.errors import ConfigError

# the project's own SQLite warehouse, relative to the project folder (warehouse_url unset, or --allow-local)
DEFAULT_SQLITE_PATH = Path(".evalops") / "warehouse.db"

__all__ = [
    "CONFIG_VAR", "DEFAULT_APPROVAL_HOURS", "DEFAULT_RETRY_DELAY_SECONDS", "DEFAULT_TASK_TIMEOUT", "ENV_PREFIX",
    "DASHBOARD_PASSWORD_VAR", "DASHBOARD_TOKEN_VAR", "DASHBOARD_USER_VAR", "HOME_VAR", "PROJECT_FILE",
    "ParseSettingError", "SECRETS_DIR_VAR", "check_project_name", "check_url_scheme", "dashboard_credentials", "find_project",
    "parse_time_settings", "process_number", "project_from_environment", "secret_file",
    "without_settings_variables",
]

PROJECT_FILE = "evalops.yaml"
ENV_PREFIX = "EVALOPS_"
HOME_VAR, CONFIG_VAR, SECRETS_DIR_VAR = "EVALOPS_HOME", "EVALOPS_CONFIG", "EVALOPS_SECRETS_DIR"
# Two hours: far above a daily run on a large gold set, far below "forever".
DEFAULT_TASK_TIMEOUT = 7200.0
DEFAULT_RETRY_DELAY_SECONDS = 60.0
DEFAULT_APPROVAL_HOURS = 24.0
# The settings (all positive numbers) read without the settings object: at a DAG file's parse, and where an
# engine is made (the warehouse timeouts: ``evalops history`` need not import pydantic to connect).
_DEFAULTS = {"task_timeout": DEFAULT_TASK_TIMEOUT, "retry_delay_seconds": DEFAULT_RETRY_DELAY_SECONDS,
             "approval_hours": DEFAULT_APPROVAL_HOURS, "warehouse_connect_timeout": 10.0,
             "warehouse_statement_timeout": 600.0, "warehouse_idle_timeout": 600.0, "warehouse_busy_timeout": 60.0}
# Variables that say where the settings are, not what they are (read by load_config itself).
_LOCATION_VARS = {HOME_VAR: "the project folder (default: the nearest folder above the current one holding "
                            "evalops.yaml)",
                  CONFIG_VAR: "a settings file to read instead of the project's evalops.yaml",
                  SECRETS_DIR_VAR: "a folder of secret files named like their variables (e.g. "
                                   "EVALOPS_WAREHOUSE_URL), read below the environment"}


_URL_SCHEMES = ("http", "https")


def check_url_scheme(url: str) -> None:
    """Refuse a URL that is not http(s) with a host (``file:``, ``ftp:``, a bare host name): a ``ValueError``
    saying so. The judge's ``base_url`` and an http retriever's ``url`` are checked with it when loaded."""
    from urllib.parse import urlsplit

    from evalops.util.secrets import mask_url

    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise ValueError(f"{mask_url(url)!r} is not a URL ({exc})") from None
    if parts.scheme.lower() not in _URL_SCHEMES or not parts.netloc:
        raise ValueError(f"{mask_url(url)!r} is not an http:// or https:// URL with a host")


class ParseSettingError(ConfigError):
    """A setting read without the settings object is malformed (a DAG file then fails to import, naming the
    variable or the file and key)."""


def _positive(value: Any, where: str, unit: str = "seconds") -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ParseSettingError(f"{where}: expected a number of {unit}, got {value!r}") from None
    if not number > 0 or number != number or number == float("inf"):
        raise ParseSettingError(f"{where}: expected a positive number of {unit}, got {value!r}")
    return number


# A project's name in a shared Airflow prefixes DAG ids and asset names (evalops.airflow.assets): the
# characters a DAG id allows, starting with a letter or digit.
_PROJECT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


def check_project_name(value: Any, where: str | None = None) -> str | None:
    """``project_name`` as given (None when unset or empty), or a :class:`ParseSettingError` naming ``where``
    when it is not 1-64 letters, digits, ``-`` and ``_`` starting with a letter or digit."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip()
    if not _PROJECT_NAME.fullmatch(text):
        raise ParseSettingError(f"{where + ': ' if where else ''}{text!r} is not a project name (1-64 letters, "
                                f"digits, '-' or '_', starting with a letter or digit)")
    return text


def _unit(name: str) -> str:
    return "hours" if name.endswith("hours") else "seconds"


def secret_file(var: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The content of the file of the secrets directory (``EVALOPS_SECRETS_DIR``) named like ``var``."""
    env = os.environ if environ is None else environ
    folder = env.get(SECRETS_DIR_VAR)
    if not folder:
        return None
    for candidate in (Path(folder).expanduser() / var, Path(folder).expanduser() / var.lower()):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8").strip()
    return None


def process_number(name: str, environ: Mapping[str, str] | None = None) -> float:
    """The number setting ``name`` (one of ``_DEFAULTS``) from the process alone, as
    :func:`evalops.config.process_setting` reads it (which hands these to this function): ``EVALOPS_<NAME>``,
    else its file in the secrets directory, else its default; a positive number or
    :class:`ParseSettingError` naming the variable."""
    env = os.environ if environ is None else environ
    var = ENV_PREFIX + name.upper()
    raw = env.get(var)
    if raw is None or not raw.strip():
        raw = secret_file(var, env)
    if raw is None or not raw.strip():
        return _DEFAULTS[name]
    return _positive(raw, var, _unit(name))


def find_project(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest folder at or above ``start`` (default: the current folder) holding ``evalops.yaml``."""
    here = Path(start or Path.cwd()).expanduser().resolve()
    for folder in (here, *here.parents):
        if (folder / PROJECT_FILE).is_file():
            return folder
    return None


DASHBOARD_TOKEN_VAR = "EVALOPS_DASHBOARD_TOKEN"
DASHBOARD_USER_VAR, DASHBOARD_PASSWORD_VAR = "EVALOPS_DASHBOARD_USER", "EVALOPS_DASHBOARD_PASSWORD"
# Secrets read from the environment (or the secrets directory) where they are used, never settings.
_SECRET_VARS = {DASHBOARD_TOKEN_VAR: "a secret: the bearer token `evalops dashboard` asks for (required, or "
                                     "basic credentials, to listen beyond loopback)",
                DASHBOARD_USER_VAR: "a secret: the user of the dashboard's basic credentials (with the password)",
                DASHBOARD_PASSWORD_VAR: "a secret: the password of the dashboard's basic credentials"}


def dashboard_credentials(environ: Mapping[str, str] | None = None) -> tuple[str | None, tuple[str, str] | None]:
    """``(bearer token, (user, password))`` the dashboard accepts, each None when unset: secrets, so read from
    the environment (or the secrets directory), never from ``evalops.yaml``. A user without a password (or
    the reverse) is refused."""
    env = os.environ if environ is None else environ

    def read(var: str) -> str | None:
        value = env.get(var)
        if value is None or not value.strip():
            value = secret_file(var, env)
        return value.strip() if value and value.strip() else None

    token, user, password = read(DASHBOARD_TOKEN_VAR), read(DASHBOARD_USER_VAR), read(DASHBOARD_PASSWORD_VAR)
    if (user is None) != (password is None):
        raise ConfigError(f"{DASHBOARD_USER_VAR} and {DASHBOARD_PASSWORD_VAR} go together: set both or neither")
    return token, ((user, password) if user is not None and password is not None else None)


def _project_file(project: Path, environ: Mapping[str, str]) -> dict[str, Any]:
    path = environ.get(CONFIG_VAR)
    file = Path(path).expanduser() if path else project / PROJECT_FILE
    if not file.is_absolute():
        file = project / file
    if not file.is_file():
        return {}
    import yaml

    from evalops.util.yamlfile import load_text, read_settings_text

    try:
        data = load_text(read_settings_text(file), str(file)) or {}
    except (ConfigError, yaml.YAMLError):
        return {}  # the tasks load the settings and report the error with the file and line
    return data if isinstance(data, dict) else {}


def parse_time_settings(project: Path, task_ids: list[str], environ: Mapping[str, str] | None = None
                        ) -> dict[str, Any]:
    """The values a DAG's shape depends on, read when its file is parsed, with the precedence of
    :class:`Config` (an environment variable wins over ``evalops.yaml``; ``.env`` is not read at parse time)
    and validated alike (a positive number): ``retry_delay_seconds``, ``approval_hours`` and
    ``task_timeouts`` (each task id's own override, else ``task_timeout``, else the default), in seconds
    or hours; and ``project_name`` (:func:`check_project_name`; None when unset). A malformed value raises :class:`ParseSettingError` naming the variable or the file and key.
    Loading the whole settings object here would fail the DAG file on any settings error, which the tasks
    report better."""
    env = os.environ if environ is None else environ
    upper = {k.upper(): v for k, v in env.items()}
    data = _project_file(project, env)
    where = project / PROJECT_FILE

    def one(name: str) -> float:
        var = ENV_PREFIX + name.upper()
        if var in upper:
            return _positive(upper[var], var, _unit(name))
        if data.get(name) is not None:
            return _positive(data[name], f"{where}: {name}", _unit(name))
        return _DEFAULTS[name]

    default = one("task_timeout")
    overrides = data.get("task_timeouts") or {}
    if not isinstance(overrides, dict):
        raise ParseSettingError(f"{where}: task_timeouts must map task ids to seconds")
    prefix = f"{ENV_PREFIX}TASK_TIMEOUTS__"
    env_overrides = {k[len(prefix):].lower(): v for k, v in upper.items() if k.startswith(prefix)}
    timeouts: dict[str, float] = {}
    for task_id in task_ids:
        if task_id in env_overrides:
            timeouts[task_id] = _positive(env_overrides[task_id], f"{prefix}{task_id.upper()}")
        elif overrides.get(task_id) is not None:
            timeouts[task_id] = _positive(overrides[task_id], f"{where}: task_timeouts.{task_id}")
        else:
            timeouts[task_id] = default
    var = ENV_PREFIX + "PROJECT_NAME"
    name = (check_project_name(upper[var], var) if var in upper
            else check_project_name(data.get("project_name"), f"{where}: project_name"))
    return {"retry_delay_seconds": one("retry_delay_seconds"), "approval_hours": one("approval_hours"),
            "task_timeouts": timeouts, "project_name": name}


def project_from_environment(environ: Mapping[str, str] | None = None) -> tuple[Path | None, Path | None]:
    """``(EVALOPS_HOME, EVALOPS_CONFIG)`` of the process (each None when unset): the project and the
    settings file a command works on when it is not told."""
    env = os.environ if environ is None else environ
    home, file = env.get(HOME_VAR), env.get(CONFIG_VAR)
    return (Path(home).expanduser().resolve() if home else None), (Path(file).expanduser() if file else None)


def without_settings_variables(environ: Mapping[str, str], *, location_only: bool = False) -> dict[str, str]:
    """``environ`` without its ``EVALOPS_*`` variables (``location_only``: without only the two that say
    where the project is), for a child process or a settings load that must not inherit them."""
    if location_only:
        return {k: v for k, v in environ.items() if k.upper() not in (HOME_VAR, CONFIG_VAR)}
    return {k: v for k, v in environ.items() if not k.upper().startswith(ENV_PREFIX)}
