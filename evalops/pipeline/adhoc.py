"""An ad-hoc run: one candidate retriever version, given with the run instead of in the registry, scored
against its retriever's current baseline.

The candidate is a registry entry (the same keys as an entry of ``retrievers.yaml``) and is checked by
the registry's own schema (:func:`evalops.retrievers.schema.parse_entry`), so a bad entry stops the run
with the same message a bad registry file gives, naming ``params.candidate``. Relative paths in it start
at the project folder. The checked entry is kept in the run's work folder, so every task of the run (the
mapped ``score`` tasks included) sees the same registry: the project's files, then the candidate.

Only the candidate is scored (plus the baseline version when the stored baseline is stale); the other
deployed versions are not. An ad-hoc run never changes a baseline.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.errors import ConfigError
from evalops.pipeline.context import RunContext
from evalops.pipeline.workdir import run_folder

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config
    from evalops.retrievers import RetrieverEntry

__all__ = ["SOURCE", "parse_candidate", "record_candidate", "recorded_candidate"]

SOURCE = "params.candidate"


def parse_candidate(cfg: Config, candidate: Any) -> RetrieverEntry:
    """The candidate entry, checked by the registry schema; relative paths start at the project folder."""
    from evalops.retrievers.schema import parse_entry

    if not isinstance(candidate, dict):
        raise ConfigError(f"{SOURCE}: expected a registry entry (a mapping with name, version, adapter, deployed, "
                          f"owner, params), got {type(candidate).__name__}")
    entry = parse_entry(candidate, Path(SOURCE), 1)
    return dataclasses.replace(entry, deployed=True, source=SOURCE, base_dir=cfg.home)


def _file(cfg: Config, run: RunContext) -> Path:
    return run_folder(cfg, run) / "adhoc_candidate.json"


def record_candidate(cfg: Config, run: RunContext, candidate: dict[str, Any]) -> RetrieverEntry:
    """Check the candidate and keep it for the run's other tasks; returns the entry."""
    entry = parse_candidate(cfg, candidate)
    path = _file(cfg, run)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(candidate, sort_keys=True), encoding="utf-8")
    return entry


def recorded_candidate(cfg: Config, run: RunContext) -> RetrieverEntry | None:
    """The run's ad-hoc candidate, or None for a regular run."""
    path = _file(cfg, run)
    if not path.exists():
        return None
    return parse_candidate(cfg, json.loads(path.read_text(encoding="utf-8")))
