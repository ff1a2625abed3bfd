"""The promote_baseline airflow DAG of this evalops project (the logic lives in evalops.airflow.dags.promote_baseline)."""

from evalops.airflow.dags.promote_baseline import promote_baseline

dag = promote_baseline(__file__)
