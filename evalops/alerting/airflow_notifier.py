"""The import path of :class:`~evalops.pipeline.airflow_notifier.EvalopsNotifier` of earlier releases,
kept for one release (DAG files import it from here). The notifier lives in ``evalops.pipeline``, whose
delivery it uses; new code imports it from there."""

from __future__ import annotations

from evalops.pipeline.airflow_notifier import (
    AIRFLOW_FAILURE,
    AIRFLOW_SUCCESS,
    EvalopsNotifier,
    WarehouseUnreachable,
    alert_from_context,
)

__all__ = ["EvalopsNotifier", "AIRFLOW_FAILURE", "AIRFLOW_SUCCESS", "WarehouseUnreachable", "alert_from_context"]
