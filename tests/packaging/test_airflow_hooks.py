"""The hooks of the provider's connection types read their connections as evalops does (in a child process with
the connections in ``AIRFLOW_CONN_*`` variables, Airflow's environment secrets backend)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.airflow

REPO = Path(__file__).resolve().parents[2]

CODE = """
import json
from evalops.airflow.hooks import JudgeHook, RetrieverAuthHook, WarehouseHook, WebhookHook
header, secret = RetrieverAuthHook().get_conn()
print(json.dumps({"warehouse": WarehouseHook().get_url(), "postgres": WarehouseHook("pg").get_url(),
                  "webhook": WebhookHook().get_conn(), "judge": list(JudgeHook().get_conn()),
                  "retriever": [header, secret.reveal(), repr(secret)]}))
"""


def test_each_hook_reads_its_connection(tmp_path):
    conns = {
        "EVALOPS_WAREHOUSE": {"conn_type": "evalops_warehouse", "extra": {"url": f"sqlite:///{tmp_path}/w.db"}},
        "PG": {"conn_type": "evalops_warehouse", "host": "db.internal", "port": 5432, "schema": "evalops",
               "login": "ev", "password": "pw"},
        "EVALOPS_WEBHOOK": {"conn_type": "evalops_webhook", "extra": {"url": "https://hooks.example/T/B/X"}},
        "EVALOPS_JUDGE": {"conn_type": "evalops_judge", "host": "https://llm.example/v1", "password": "sk-1"},
        "EVALOPS_RETRIEVER": {"conn_type": "evalops_retriever", "password": "tok"},
    }
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "AIRFLOW_HOME": str(tmp_path / "home"),
           **{f"AIRFLOW_CONN_{k}": json.dumps(v) for k, v in conns.items()}}
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["warehouse"] == f"sqlite:///{tmp_path}/w.db"
    assert found["postgres"] == "postgresql+psycopg://ev:pw@db.internal:5432/evalops"
    assert found["webhook"] == "https://hooks.example/T/B/X"
    assert found["judge"] == ["sk-1", "https://llm.example/v1"]
    assert found["retriever"] == ["Authorization", "Bearer tok", "Secret('***')"]


POOLS = """
import datetime as dt, json, sys
from airflow.sdk import DAG
from evalops.airflow import evaluation_task_group
from evalops.airflow.dags.retrieval_eval import retrieval_eval

built = retrieval_eval(sys.argv[1], score_pool="retriever_service", score_pool_slots=2)
with DAG("mine", schedule=None, start_date=dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)) as mine:
    evaluation_task_group(sys.argv[2], group_id="eval", score_pool="retriever_service")
print(json.dumps({"dag": {t: [built.task_dict[t].pool, built.task_dict[t].pool_slots] for t in ("score", "compare")},
                  "group": {t: [mine.task_dict[t].pool, mine.task_dict[t].retries] for t in ("eval.score", "eval.plan")}}))
"""


def test_the_score_tasks_run_in_the_pool_given_to_the_dag_or_the_task_group(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "AIRFLOW_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", POOLS, str(REPO / "dags" / "retrieval_eval.py"), str(REPO)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["dag"] == {"score": ["retriever_service", 2], "compare": ["default_pool", 1]}
    assert found["group"] == {"eval.score": ["retriever_service", 2], "eval.plan": ["default_pool", 2]}
