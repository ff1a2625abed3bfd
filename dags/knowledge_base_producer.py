"""The knowledge_base_producer airflow DAG of this evalops project (the logic lives in evalops.airflow.dags.knowledge_base_producer)."""

from evalops.airflow.dags.knowledge_base_producer import knowledge_base_producer

dag = knowledge_base_producer(__file__)
