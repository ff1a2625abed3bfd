"""The retrieval_eval airflow DAG of this evalops project (the logic lives in evalops.airflow.dags.retrieval_eval)."""

from evalops.airflow.dags.retrieval_eval import retrieval_eval

dag = retrieval_eval(__file__)
