"""DAG integrity: every DAG file imports cleanly, has tags, retries and docs, and is cheap to parse.

Airflow runs in a subprocess with its own temporary AIRFLOW_HOME, so this test never touches ~/airflow
and never depends on whether another test imported Airflow first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DAG_FILES = sorted(p.name for p in (REPO / "dags").glob("*.py"))
# The retry policy imports evalops.errors and evalops.pipeline.errors (both import-free); nothing else of
# evalops, and no heavy library, may load at parse time.
HEAVY = ("pandas", "numpy", "scipy", "great_expectations", "matplotlib", "bm25s", "evalops.config",
         "evalops.pipeline.inputs", "evalops.warehouse")

pytestmark = pytest.mark.airflow


def _airflow_env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "AIRFLOW_HOME": str(tmp_path / "airflow"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }


def _run(code: str, tmp_path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_airflow_env(tmp_path),
                         cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def dagbag(tmp_path_factory) -> dict:
    code = f"""
import json
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder={str(REPO / 'dags')!r})
dags = {{}}
for dag_id, d in bag.dags.items():
    dags[dag_id] = {{
        "file": d.fileloc.rsplit("/", 1)[-1],
        "tags": sorted(d.tags),
        "catchup": d.catchup,
        "doc_md": bool(d.doc_md and d.doc_md.strip()),
        "retries": {{t.task_id: t.retries for t in d.tasks}},
        "timetable": type(d.timetable).__name__,
        "tasks": sorted(t.task_id for t in d.tasks),
    }}
print(json.dumps({{"errors": {{k: str(v)[-500:] for k, v in bag.import_errors.items()}}, "dags": dags}}))
"""
    return _run(code, tmp_path_factory.mktemp("dagbag"))


def test_every_dag_file_imports_without_errors(dagbag):
    assert dagbag["errors"] == {}
    assert {d["file"] for d in dagbag["dags"].values()} == set(DAG_FILES)


def test_tags_retries_docs_and_no_catchup(dagbag):
    for dag_id, d in dagbag["dags"].items():
        assert d["tags"], f"{dag_id} has no tags"
        assert "evalops" in d["tags"]
        assert d["doc_md"], f"{dag_id} has no doc_md"
        assert d["catchup"] is False, dag_id
        for task_id, retries in d["retries"].items():
            assert retries >= 1, f"{dag_id}.{task_id} has no retries"


def test_evaluation_dag_shape(dagbag):
    d = dagbag["dags"]["retrieval_eval"]
    assert d["timetable"] == "AssetOrTimeSchedule"
    assert d["tasks"] == sorted([
        "migrate_warehouse", "snapshot_knowledge_base", "validate_inputs", "sample_query_logs", "plan", "shard",
        "score", "compare", "judge", "decide", "alert", "publish_report",
    ])


@pytest.mark.parametrize("dag_file", DAG_FILES)
def test_dag_file_import_is_cheap(dag_file, tmp_path):
    """Importing a DAG file adds < 0.5 s over `import airflow.sdk` and pulls in no heavy library."""
    code = f"""
import importlib.util, json, sys, time
import airflow.sdk
start = time.perf_counter()
spec = importlib.util.spec_from_file_location("dag_under_test", {str(REPO / 'dags' / dag_file)!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps({{"seconds": time.perf_counter() - start, "heavy": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""
    result = _run(code, tmp_path)
    assert result["heavy"] == []
    assert result["seconds"] < 0.5, f"{dag_file} took {result['seconds']:.2f} s to import"
