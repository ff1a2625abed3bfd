"""The evalops DAGs, built for a project by its own thin DAG files (``evalops init`` writes them).

A project's ``dags/retrieval_eval.py`` holds only::

    from evalops.airflow.dags.retrieval_eval import retrieval_eval

    dag = retrieval_eval(__file__)

The project is the folder above ``dags/``; every task loads that project's settings. Importing a module
here imports ``airflow.sdk`` and nothing heavy (the tasks import the pipeline when they run).
"""

from __future__ import annotations

# The file each DAG needs in a project's dags/ folder: name -> (module, factory). Airflow's DAG discovery
# reads files that mention both "airflow" and "dag", hence the comment line of each file.
DAG_FILES: dict[str, tuple[str, str]] = {
    "retrieval_eval.py": ("evalops.airflow.dags.retrieval_eval", "retrieval_eval"),
    "promote_baseline.py": ("evalops.airflow.dags.promote_baseline", "promote_baseline"),
    "knowledge_base_producer.py": ("evalops.airflow.dags.knowledge_base_producer", "knowledge_base_producer"),
    "promote_on_results.py": ("evalops.airflow.dags.promote_on_results", "promote_on_results"),
}

__all__ = ["DAG_FILES", "dag_file_text"]


def dag_file_text(name: str) -> str:
    """The source of the project DAG file ``name`` (one of :data:`DAG_FILES`)."""
    module, factory = DAG_FILES[name]
    return (
        f'"""The {factory} airflow DAG of this evalops project (the logic lives in {module})."""\n\n'
        f"from {module} import {factory}\n\n"
        f"dag = {factory}(__file__)\n"
    )
