"""Fail closed: the settings and secrets that must never fall back silently.

A CI job gets its warehouse URL, its judge and its notifiers from secrets. A pull request from a fork
cannot read them, and the variable arrives *set but empty* (``EVALOPS_WAREHOUSE_URL=""``). Read as unset,
that empty value made a fresh local SQLite warehouse: no baseline, so the gate passed with "no baseline
yet". So here:

* a **warehouse, judge or notifier setting** (``warehouse_url``, ``judge.*``, ``alerting.*``) that is
  present but empty (an environment variable, a ``.env`` line, a file of the secrets directory, or an
  empty string in ``evalops.yaml`` where the default is not one) is a :class:`~evalops.errors.ConfigError`
  naming where it was set. An empty ``warehouse_url`` is accepted only when the caller says so
  (``evalops run --allow-local``, ``evalops gate --allow-local``): the run then uses the project's local
  warehouse, by name;
* a **secret the settings reference** and the process lacks, checked before a run does any work
  (:func:`check_secrets`): the judge's key when the judge is an OpenAI-compatible endpoint (its variable set
  but empty, or named explicitly and absent), and the webhook's variable when ``alerting.webhook_env`` names
  one explicitly (absent or empty), and likewise PagerDuty's (``alerting.pagerduty_key_env``). The default
  ``EVALOPS_WEBHOOK_URL`` may stay empty: no webhook (the docker-compose file passes it so); so may
  ``EVALOPS_PAGERDUTY_ROUTING_KEY``: no PagerDuty.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalops.config.env import _LOCATION_VARS, ENV_PREFIX
from evalops.errors import ConfigError
from evalops.util.secrets import SecretError, env_secret

__all__ = ["ALLOW_LOCAL_HINT", "FAIL_CLOSED", "EmptySetting", "check_secrets", "empty_settings", "refuse_empty"]

#: the top-level keys whose empty value stops the command (the warehouse, the judge, the notifiers)
FAIL_CLOSED = ("warehouse_url", "judge", "alerting")
ALLOW_LOCAL_HINT = "--allow-local"

EmptySetting = tuple[str, str]
"""``(key, where)``: the setting's dotted key and where it was set empty (the variable, the file and line)."""


def _key_of_variable(name: str) -> str | None:
    upper = name.upper()
    if not upper.startswith(ENV_PREFIX) or upper in _LOCATION_VARS:
        return None
    parts = upper.removeprefix(ENV_PREFIX).lower().split("__")
    return ".".join(parts) if parts[0] in FAIL_CLOSED else None


def _empty(value: Any) -> bool:
    return isinstance(value, str) and not value.strip()


def empty_settings(*, environ: Mapping[str, str], dotenv: Mapping[str, str], dotenv_path: Path,
                   secrets_dir: Path | None, yaml_values: Mapping[str, Any], lines: Mapping[tuple[str, ...], int],
                   file_path: Path | None, defaults: Mapping[str, Any]) -> list[EmptySetting]:
    """Every fail-closed setting that a source sets to an empty value. ``defaults`` maps a dotted key to its
    default, so that ``judge.base_url: ""`` in ``evalops.yaml`` (its default, as ``evalops init`` writes it
    commented out) is not counted."""
    found: list[EmptySetting] = []
    for mapping, label in ((environ, "environment variable"), (dotenv, f"{dotenv_path}: variable")):
        for name, value in mapping.items():
            key = _key_of_variable(name)
            if key is not None and _empty(value):
                found.append((key, f"{label} {name.upper()}"))
    if secrets_dir is not None:
        for key in FAIL_CLOSED:
            var = ENV_PREFIX + key.upper()
            for candidate in (secrets_dir / var, secrets_dir / var.lower()):
                if candidate.is_file() and not candidate.read_text(encoding="utf-8", errors="replace").strip():
                    found.append((key, f"secrets file {candidate}"))
                    break

    def walk(value: Any, path: tuple[str, ...]) -> None:
        if isinstance(value, Mapping):
            for sub, inner in value.items():
                walk(inner, (*path, str(sub)))
        elif _empty(value) and defaults.get(".".join(path)) != "":
            where = f"{file_path}:{lines[path]}" if path in lines else str(file_path)
            found.append((".".join(path), where))

    for key in FAIL_CLOSED:
        if key in yaml_values:
            walk(yaml_values[key], (key,))
    return found


def refuse_empty(found: list[EmptySetting], *, allow_local: bool = False) -> bool:
    """Raise a :class:`ConfigError` naming every empty setting of ``found``; with ``allow_local`` an empty
    ``warehouse_url`` is let through. Returns whether the local warehouse is to be used in its place."""
    local = allow_local and any(key == "warehouse_url" for key, _ in found)
    refused = [(key, where) for key, where in found if not (allow_local and key == "warehouse_url")]
    if not refused:
        return local
    problems = []
    for key, where in refused:
        if key == "warehouse_url":
            problems.append(f"{where}: warehouse_url is set but empty (a CI secret a fork's pull request cannot "
                            "read arrives empty); set it to the warehouse's URL, unset it, or pass "
                            f"{ALLOW_LOCAL_HINT} to use the project's local SQLite warehouse knowingly (no "
                            "baselines there: nothing is compared)")
        else:
            problems.append(f"{where}: {key} is set but empty; set it, or unset it for its default")
    raise ConfigError("; ".join(problems))


def check_secrets(cfg: Any, environ: Mapping[str, str]) -> None:
    """The secrets ``cfg`` references, present and not empty (see the module docstring); a
    :class:`~evalops.util.secrets.SecretError` (a ``ConfigError``) naming the variable and the setting otherwise."""
    judge = cfg.judge
    if judge.kind == "openai" and not judge.airflow_conn_id:
        var = judge.api_key_env
        if var in environ or "api_key_env" in judge.model_fields_set:
            try:
                env_secret(var, what=f"judge.api_key_env ({cfg.source})", environ=environ)
            except SecretError as exc:
                raise SecretError(f"{exc}: the judge's API key; set it, or set judge.airflow_conn_id") from None
    alerting = cfg.alerting
    if "webhook_env" in alerting.model_fields_set:
        try:
            env_secret(alerting.webhook_env, what=f"alerting.webhook_env ({cfg.source})", environ=environ)
        except SecretError as exc:
            raise SecretError(f"{exc}: the alert webhook's URL; set it, or remove alerting.webhook_env") from None
    if "pagerduty_key_env" in alerting.model_fields_set:
        try:
            env_secret(alerting.pagerduty_key_env, what=f"alerting.pagerduty_key_env ({cfg.source})", environ=environ)
        except SecretError as exc:
            raise SecretError(f"{exc}: the PagerDuty routing key; set it, or remove alerting.pagerduty_key_env") from None
