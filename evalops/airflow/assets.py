"""The names a project takes in Airflow: its DAG ids and its two assets.

One project per Airflow keeps the plain names: the DAGs ``retrieval_eval``, ``promote_baseline``, ... and the
assets ``knowledge-base`` (updated by a knowledge-base pipeline; ``retrieval_eval`` is scheduled on it) and
``retrieval-eval-results`` (emitted by ``publish_report``; ``promote_on_results`` is scheduled on it). Those
names are global in an Airflow, so two unnamed projects would share them: a knowledge-base update of one
would start the evaluation of both, and each one's results would start the other's promotion.

Several projects in one Airflow each set ``project_name`` (``EVALOPS_PROJECT_NAME``, read when a DAG file
is parsed), which prefixes every name with ``<project_name>.``: the DAG ``support.retrieval_eval`` is
scheduled on the asset ``support.knowledge-base`` and emits ``support.retrieval-eval-results``. A pipeline
outside Airflow announces a knowledge-base update to the asset of that name (docs/deployment.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalops.config.env import parse_time_settings

__all__ = ["KNOWLEDGE_BASE_ASSET", "RESULTS_ASSET", "ProjectAssets", "dag_id_for", "name_for", "project_assets",
           "project_name"]

KNOWLEDGE_BASE_ASSET = "knowledge-base"
RESULTS_ASSET = "retrieval-eval-results"


def name_for(project_name: str | None, name: str) -> str:
    """``name`` (a DAG id or an asset name) of the project called ``project_name``: prefixed with
    ``<project_name>.`` when the project has a name, unchanged otherwise."""
    return f"{project_name}.{name}" if project_name else name


dag_id_for = name_for


def project_name(project: Path) -> str | None:
    """The project's ``project_name`` as a DAG file reads it at parse time (environment, then evalops.yaml)."""
    return parse_time_settings(project, [])["project_name"]


@dataclass(frozen=True)
class ProjectAssets:
    """The project's two Airflow assets (``airflow.sdk.Asset``)."""

    knowledge_base: Any
    results: Any


def project_assets(project: Path | None = None, *, name: str | None = None) -> ProjectAssets:
    """The assets of the project in folder ``project`` (its ``project_name``), or of the name ``name``."""
    from airflow.sdk import Asset

    if project is not None:
        name = project_name(project)
    return ProjectAssets(knowledge_base=Asset(name_for(name, KNOWLEDGE_BASE_ASSET)),
                         results=Asset(name_for(name, RESULTS_ASSET)))
