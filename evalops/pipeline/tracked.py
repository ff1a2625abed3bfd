"""The run's MLflow logging (``mlflow`` in the settings; :mod:`evalops.tracking`): after the report, each gold
version's means and every decided comparison go to one MLflow run named after the evaluation run.

Off while ``mlflow.tracking_uri`` and ``mlflow.airflow_conn_id`` are both unset. A failure is the policy
``mlflow.required`` says: a failed report step (the report is already written), or a warning in the log.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalops.config import PRODUCTION
from evalops.errors import ConfigError
from evalops.pipeline.context import RunContext
from evalops.pipeline.deciding import load_decisions
from evalops.tracking import MlflowTracker, TrackingError, log_to_mlflow, resolve_token
from evalops.warehouse import load_aggregates

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

    from evalops.config import MlflowSettings
    from evalops.pipeline.specs import VersionSpec

__all__ = ["log_run_to_mlflow", "mlflow_enabled"]

log = logging.getLogger(__name__)


def mlflow_enabled(settings: MlflowSettings) -> bool:
    """Whether the ``mlflow`` settings name a server (a tracking URI or an Airflow connection)."""
    return bool(settings.tracking_uri or settings.airflow_conn_id)


def log_run_to_mlflow(settings: MlflowSettings, engine: Engine, measures: Sequence[str], run: RunContext,
                      versions: Sequence[VersionSpec], *, transport: Any = None) -> str | None:
    """Log the run (module docstring): each gold version's means on ``measures`` (the configured ones) and
    the decisions the warehouse at ``engine`` holds; its MLflow run id, or None when the hook is off or a
    failure was only warned about. Raises :class:`~evalops.tracking.TrackingError` when ``mlflow.required``
    and it failed."""
    if not mlflow_enabled(settings):
        return None
    try:
        token, uri = resolve_token(settings)
        if not uri:
            raise ConfigError(f"mlflow.airflow_conn_id: connection {settings.airflow_conn_id!r} has no host and "
                              "mlflow.tracking_uri is empty; set one of them to the tracking server")
        wanted = list(measures)
        means: dict[str, dict[str, float]] = {}
        for spec in versions:
            if spec.dataset == PRODUCTION:
                continue
            frame = load_aggregates(engine, spec.run_id)
            found = dict(zip(frame["measure"].astype(str), frame["mean"].astype(float), strict=False))
            means[spec.label] = {m: found[m] for m in wanted if m in found}
        comparisons = [d.comparison for d in load_decisions(engine, versions)
                       if d.dataset != PRODUCTION]
        tags = {"evalops.dag_id": run.dag_id, "evalops.run_id": run.run_id, "evalops.day": run.day}
        with MlflowTracker(uri, token=token, timeout=settings.timeout, transport=transport) as tracker:
            return log_to_mlflow(tracker, settings.experiment, f"{run.dag_id} {run.run_id}", measures=means,
                                 comparisons=comparisons, tags=tags)
    except (TrackingError, ConfigError) as exc:
        if settings.required:
            raise
        log.warning("MLflow logging skipped (mlflow.required is false): %s", exc)
        return None
