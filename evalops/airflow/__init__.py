"""Everything that hosts evalops in Airflow, and the only package that imports Airflow:

* ``dags``: the DAG factories a project's thin DAG files call (``evalops init`` writes those files);
* ``tasks``: the evaluation as tasks of any DAG (``evaluation_task_group``);
* ``operators``: the evaluation as one task and the gate on it (``EvaluateOperator``, ``GateOperator``);
* ``assets``: a project's DAG ids and asset names (prefixed by its ``project_name``);
* ``notifier``: evalops' alert delivery as an Airflow notifier (``EvalopsNotifier``);
* ``plugin``: the dashboard under the api-server at ``/evalops``;
* ``provider`` and ``hooks``: the provider's entry point and its connection types;
* ``connections``: Airflow's side of evalops' one secret reader (:mod:`evalops.util.secrets`);
* ``compat``: every Airflow name whose import path depends on Airflow's version;
* ``runner``: DAGs run in-process with ``dag.test()`` (the demo and the end-to-end tests).

``provider`` and ``dags`` (the package) import nothing from Airflow; the others import ``airflow.sdk``
(install ``evalops-rag[airflow]``). The names below are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalops.util.lazy import lazy_getattr

if TYPE_CHECKING:  # what a type checker sees; at run time each name is imported on first use
    from evalops.airflow.provider import get_provider_info as get_provider_info
    from evalops.airflow.tasks import evaluation_task_group as evaluation_task_group

__all__ = ["evaluation_task_group", "get_provider_info"]

__getattr__ = lazy_getattr(__name__, {"evaluation_task_group": "tasks", "get_provider_info": "provider"})
