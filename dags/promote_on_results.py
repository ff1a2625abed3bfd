"""The promote_on_results airflow DAG of this evalops project (the logic lives in evalops.airflow.dags.promote_on_results)."""

from evalops.airflow.dags.promote_on_results import promote_on_results

dag = promote_on_results(__file__)
