"""evalops inside Airflow: the provider (``provider.get_provider_info``, read through the
``apache_airflow_provider`` entry point), the hooks of its connection types (``hooks``), and the evaluation as
tasks of any DAG (``tasks.evaluation_task_group``).

``provider`` imports nothing from Airflow; ``hooks`` and ``tasks`` import ``airflow.sdk`` (install
``evalops-rag[airflow]``). The names below are imported on first use.
"""

from __future__ import annotations

from evalops._lazy import lazy_getattr

__all__ = ["evaluation_task_group", "get_provider_info"]

__getattr__ = lazy_getattr(__name__, {"evaluation_task_group": "tasks", "get_provider_info": "provider"})
