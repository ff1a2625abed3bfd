"""The settings table of the documentation (``docs/settings.md``), generated from the settings'
declarations so that the two cannot drift (a test compares them)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalops.config.env import _LOCATION_VARS, _SECRET_VARS
from evalops.config.sections import (
    AlertingSettings,
    GoldSetSettings,
    JudgeSettings,
    MlflowSettings,
    KnowledgeBaseSettings,
    QueryLogSettings,
    QueryLogThresholds,
    RegressionSettings,
    SourceSettings,
)
from evalops.config.settings import Config
from evalops.config.sources import _PATH_KEYS
from evalops.contracts.rules import GoldSetRules, KnowledgeBaseRules

__all__ = ["iter_settings", "settings_table"]

_RULE_DOCS = {
    "min_queries": "fewer gold queries fail the contract",
    "required_types": "query types that must each occur (typed gold sets only)",
    "no_answer_share": "bounds on the share of no_answer queries (typed gold sets only)",
    "allowed_grades": "auto (the data's own integer range, recorded) or a list that is enforced",
    "min_documents": "fewer documents fail the contract",
    "max_empty_share": "share of documents without text tolerated, as a warning naming them",
}


def iter_settings(model: Any = Config, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, str, Any, str]]:
    """``(dotted key, environment variable, default, description)`` of every setting, nested keys
    included: the source of the documentation's settings table."""
    if dataclasses.is_dataclass(model):
        for f in dataclasses.fields(model):
            if f.name in ("start", "end", "known_versions", "required_columns"):
                continue
            default = f.default if f.default is not dataclasses.MISSING else None
            key = prefix + (f.name,)
            yield ".".join(key), "EVALOPS_" + "__".join(key).upper(), default, _RULE_DOCS.get(f.name, "")
        return
    for name, field in model.model_fields.items():
        if name == "home":
            continue
        key = prefix + (name,)
        sub = field.annotation
        nested = next((t for t in (GoldSetSettings, KnowledgeBaseSettings, QueryLogSettings, QueryLogThresholds,
                                   RegressionSettings, AlertingSettings, JudgeSettings, MlflowSettings, GoldSetRules,
                                   KnowledgeBaseRules, SourceSettings)
                       if sub is t or sub == t | None), None)
        if nested is not None and name != "gold_sets":
            yield from iter_settings(nested, key)
            continue
        default = field.get_default(call_default_factory=True)
        yield ".".join(key), "EVALOPS_" + "__".join(key).upper(), default, field.description or ""


def settings_table() -> str:
    """The settings table of the documentation (markdown), generated from :class:`Config`."""
    plain_paths = {f"{key}.path": f"EVALOPS_{key.upper()}" for key in _PATH_KEYS}
    rows = ["| setting (YAML key) | environment variable | default | meaning |", "|---|---|---|---|"]
    rows += [f"| (environment only) | `{var}` | none | {doc} |" for var, doc in _LOCATION_VARS.items()]
    rows += [f"| (environment only) | `{var}` | none | {doc} |" for var, doc in _SECRET_VARS.items()]
    for key, var, default, doc in iter_settings():
        if isinstance(default, Path):
            default = str(default)
        elif isinstance(default, tuple):
            default = ", ".join(map(str, default)) or "none"
        shown = "none" if default in (None, "") else str(default)
        env = f"`{var}`" + (f" (or `{plain_paths[key]}`)" if key in plain_paths else "")
        rows.append(f"| `{key}` | {env} | {shown} | {doc} |")
    return "\n".join(rows)
