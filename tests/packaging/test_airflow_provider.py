"""evalops as an Airflow provider, from the installed wheel (``[airflow,...]``): Airflow's provider registry lists it
with its connection types, form fields and notifier, and a DAG of a user's own runs the evaluation as a task
group between its own tasks (``dag.test()``), with the mapped ``score`` tasks in the pool it names."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.airflow]

CONNECTION_TYPES = {"evalops_warehouse", "evalops_webhook", "evalops_judge", "evalops_retriever"}


def _airflow_env(home: Path, dags: Path, **extra: str) -> dict[str, str]:
    return {"AIRFLOW_HOME": str(home), "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}", **extra}


def _json(done) -> list[dict]:
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout[done.stdout.index("["):])


def test_airflow_lists_the_provider_with_its_connection_types(user_venv, tmp_path):
    env = _airflow_env(tmp_path / "home", tmp_path / "dags")
    (tmp_path / "dags").mkdir()
    providers = _json(user_venv.run("airflow", "providers", "list", "-o", "json", cwd=tmp_path, env=env))
    (ours,) = [p for p in providers if p["package_name"] == "evalops-rag"]
    assert ours["version"] == "0.1.0" and "RAG retrievers" in ours["description"]

    hooks = _json(user_venv.run("airflow", "providers", "hooks", "-o", "json", cwd=tmp_path, env=env))
    found = {h["connection_type"]: h for h in hooks if h["package_name"] == "evalops-rag"}
    assert set(found) == CONNECTION_TYPES
    assert found["evalops_warehouse"]["class"] == "evalops.airflow.hooks.WarehouseHook"

    widgets = _json(user_venv.run("airflow", "providers", "widgets", "-o", "json", cwd=tmp_path, env=env))
    fields = {w["connection_parameter_name"] for w in widgets if w["package_name"] == "evalops-rag"}
    assert {"extra__evalops_warehouse__url", "extra__evalops_webhook__url"} <= fields
    notifiers = _json(user_venv.run("airflow", "providers", "notifications", "-o", "json", cwd=tmp_path, env=env))
    assert {"notification_class_name": "evalops.airflow.notifier.EvalopsNotifier"} in notifiers


USER_DAG = '''\
"""A release pipeline of the user's own (an airflow dag): build an index, evaluate it with evalops, ship it."""

import datetime as dt
from pathlib import Path

from airflow.sdk import dag, task

from evalops.airflow import evaluation_task_group

PROJECT = Path(__file__).resolve().parent.parent


@dag(dag_id="rag_release", schedule=None, start_date=dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc),
     catchup=False, tags=["rag"])
def rag_release():
    @task
    def build_index() -> str:
        (PROJECT / "built.txt").write_text("index built")
        return "index-v2"

    @task
    def ship() -> str:
        reports = sorted((PROJECT / ".evalops" / "reports").glob("*/report.md"))
        (PROJECT / "shipped.txt").write_text(str(reports[-1]))
        return "shipped"

    evaluation = evaluation_task_group(PROJECT, score_pool="retriever_service",
                                       retry_delay=dt.timedelta(seconds=1))
    build_index() >> evaluation >> ship()


rag_release()
'''


def test_a_dag_of_your_own_runs_the_evaluation_as_a_task_group(user_venv, scifact_copy, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    done = user_venv.run("evalops", "init", "proj", "--gold-set", scifact_copy,
                         "--knowledge-base", scifact_copy / "corpus.jsonl", cwd=outside)
    assert done.returncode == 0, done.stderr
    project = outside / "proj"
    (project / "retrievers.yaml").write_text(
        "retrievers:\n"
        f"  - {{name: sf, version: run, adapter: run_file, deployed: true, owner: me, "
        f"params: {{path: '{scifact_copy / 'runs' / 'bm25.trec'}', missing: empty}}}}\n"
        f"  - {{name: sf, version: rerank, adapter: run_file, deployed: true, owner: me, "
        f"params: {{path: '{scifact_copy / 'runs' / 'itsumida-te3large-zerank1-top15.trec'}', missing: empty}}}}\n")
    # beside the DAGs `evalops init` wrote (the DAG file finds its project as the folder above dags/)
    (project / "dags" / "rag_release.py").write_text(USER_DAG)
    home = tmp_path / "airflow"
    home.mkdir()
    spec = home / "steps.json"
    spec.write_text(json.dumps({"dags_folder": str(project / "dags"), "counts": True, "steps": [
        {"dag_id": "rag_release", "logical_date": "2024-06-01T00:00:00+00:00"}]}))
    env = _airflow_env(home, project / "dags", EVALOPS_HOME=str(project))
    done = user_venv.run("python", "-m", "evalops.airflow.runner", spec, cwd=outside, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    (result,) = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["state"] == "success", done.stderr[-4000:]
    assert result["counts"]["eval_runs"] == 2 and result["counts"]["query_scores"] > 0
    assert [e["asset"] for e in result["asset_events"]] == ["retrieval-eval-results"]

    with sqlite3.connect(home / "airflow.db") as db:
        rows = db.execute("SELECT task_id, map_index, pool, state FROM task_instance WHERE dag_id = 'rag_release'"
                          ).fetchall()
    states = {(task_id, map_index): (pool, state) for task_id, map_index, pool, state in rows}
    assert states[("build_index", -1)][1] == "success" and states[("ship", -1)][1] == "success"
    scores = [v for (task_id, _), v in states.items() if task_id == "evalops.score"]
    assert scores and all(v == ("retriever_service", "success") for v in scores), states
    assert states[("evalops.compare", 0)] == ("default_pool", "success")
    assert (project / "built.txt").is_file() and "report.md" in (project / "shipped.txt").read_text()
