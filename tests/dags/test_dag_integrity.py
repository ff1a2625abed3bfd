"""DAG integrity: every DAG file imports cleanly, has tags, retries, timeouts and docs, and loads nothing
heavy at parse time (how long the import takes is measured by ``benchmarks/dag_parse.py``, not here).

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
HEAVY = ("pandas", "numpy", "scipy", "great_expectations", "matplotlib", "bm25s", "evalops.config.settings",
         "evalops.pipeline.inputs", "evalops.warehouse")

# What of evalops a DAG file may load when it is parsed.
ALLOWED_EVALOPS = {"evalops", "evalops.util", "evalops.util.lazy", "evalops.config", "evalops.config.env",
                   "evalops.util.yamlfile",
                   "evalops.airflow.dags",
                   "evalops.airflow.dags._parse", "evalops.airflow.dags.retrieval_eval",
                   "evalops.airflow", "evalops.airflow.tasks", "evalops.airflow.compat", "evalops.airflow.assets",
                   "evalops.airflow.dags.promote_baseline", "evalops.airflow.dags.knowledge_base_producer",
                   "evalops.airflow.dags.promote_on_results", "evalops.errors",
                   "evalops.pipeline", "evalops.pipeline.errors"}

pytestmark = pytest.mark.airflow


def _airflow_env(tmp_path: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("EVALOPS_TASK_TIMEOUT")},
        **(extra or {}),
        "AIRFLOW_HOME": str(tmp_path / "airflow"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }


def _run(code: str, tmp_path: Path, env: dict[str, str] | None = None) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=_airflow_env(tmp_path, env), cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


DAGBAG_CODE = f"""
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
        "on_failure": d.has_on_failure_callback,
        "timeouts": {{t.task_id: (t.execution_timeout or getattr(t, "response_timeout", None)).total_seconds()
                     for t in d.tasks}},
        "retry_delays": {{t.task_id: t.retry_delay.total_seconds() for t in d.tasks}},
    }}
print(json.dumps({{"errors": {{k: str(v)[-500:] for k, v in bag.import_errors.items()}}, "dags": dags}}))
"""


@pytest.fixture(scope="module")
def dagbag(tmp_path_factory) -> dict:
    return _run(DAGBAG_CODE, tmp_path_factory.mktemp("dagbag"))


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
    assert d["on_failure"] is True  # any task failure alerts, warehouse or not
    assert d["tasks"] == sorted([
        "migrate_warehouse", "snapshot_knowledge_base", "validate_inputs", "sample_query_logs", "plan", "shard",
        "score", "compare", "judge", "decide", "alert", "publish_report",
    ])


def test_every_task_has_an_execution_timeout(dagbag):
    from evalops.airflow.dags._parse import DEFAULT_TASK_TIMEOUT

    for dag_id, d in dagbag["dags"].items():
        # a human-in-the-loop task waits (deferred) by its own response_timeout instead
        expected = {t: 24 * 3600.0 if t == "approve" else DEFAULT_TASK_TIMEOUT for t in d["tasks"]}
        assert d["timeouts"] == expected, dag_id


def test_every_dag_waits_the_project_s_retry_delay_between_tries(tmp_path):
    found = _run(DAGBAG_CODE, tmp_path, {"EVALOPS_RETRY_DELAY_SECONDS": "7"})
    assert found["errors"] == {} and len(found["dags"]) == len(DAG_FILES)
    for dag_id, d in found["dags"].items():
        assert set(d["retry_delays"].values()) == {7.0}, (dag_id, d["retry_delays"])


def test_task_timeout_and_per_task_overrides_come_from_the_environment(tmp_path):
    found = _run(DAGBAG_CODE, tmp_path, {"EVALOPS_TASK_TIMEOUT": "900", "EVALOPS_TASK_TIMEOUTS__SCORE": "30",
                                         "evalops_task_timeouts__publish_report": "45"})
    assert found["errors"] == {}
    timeouts = found["dags"]["retrieval_eval"]["timeouts"]
    assert timeouts["score"] == 30 and timeouts["publish_report"] == 45
    assert {t: s for t, s in timeouts.items() if t not in ("score", "publish_report")} == {
        t: 900 for t in timeouts if t not in ("score", "publish_report")}
    assert set(found["dags"]["promote_baseline"]["timeouts"].values()) == {900}


def test_a_malformed_timeout_is_an_import_error_naming_the_variable(tmp_path):
    found = _run(DAGBAG_CODE, tmp_path, {"EVALOPS_TASK_TIMEOUTS__SCORE": "soon"})
    assert any("EVALOPS_TASK_TIMEOUTS__SCORE: expected a number of seconds, got 'soon'" in e
               for e in found["errors"].values()), found["errors"]


@pytest.mark.parametrize("dag_file", DAG_FILES)
def test_dag_file_import_loads_no_heavy_library(dag_file, tmp_path):
    """Importing a DAG file pulls in no heavy library and no part of evalops beyond its DAG package and
    the import-free error modules (its cost in seconds is a benchmark: benchmarks/dag_parse.py)."""
    code = f"""
import importlib.util, json, sys
import airflow.sdk
before = set(sys.modules)
spec = importlib.util.spec_from_file_location("dag_under_test", {str(REPO / 'dags' / dag_file)!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
added = sorted(set(sys.modules) - before)
print(json.dumps({{"heavy": [m for m in {HEAVY!r} if m in sys.modules], "added": added}}))
"""
    result = _run(code, tmp_path)
    assert result["heavy"] == []
    evalops_modules = {m for m in result["added"] if m.split(".")[0] == "evalops"}
    assert evalops_modules <= ALLOWED_EVALOPS, sorted(evalops_modules - ALLOWED_EVALOPS)


def test_the_project_dag_files_are_the_generated_ones():
    from evalops.airflow.dags import DAG_FILES as FACTORIES, dag_file_text

    assert set(FACTORIES) == set(DAG_FILES)
    for name in FACTORIES:
        assert (REPO / "dags" / name).read_text(encoding="utf-8") == dag_file_text(name), name


def test_publish_report_emits_the_results_asset_and_the_consumer_is_scheduled_on_it(tmp_path):
    code = """
import json
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder=%r)
producer = bag.dags["retrieval_eval"].task_dict["publish_report"]
consumer = bag.dags["promote_on_results"]
print(json.dumps({"outlets": [a.name for a in producer.outlets],
                  "schedule": sorted(a.name for a in consumer.timetable.asset_condition.objects),
                  "approve": type(consumer.task_dict["approve"]).__name__,
                  "approve_timeout": consumer.task_dict["approve"].execution_timeout is None}))
""" % str(REPO / "dags")
    found = _run(code, tmp_path)
    assert found["outlets"] == ["retrieval-eval-results"]
    assert found["schedule"] == ["retrieval-eval-results"]
    assert found["approve"] == "ApprovalOperator" and found["approve_timeout"]
