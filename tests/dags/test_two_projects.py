"""Two evalops projects in one Airflow, each with its own ``project_name``: a knowledge-base update of one
starts only its own evaluation (``dag.test()`` in-process; the queue an asset event fills is what the
scheduler would start)."""

from __future__ import annotations

import datetime as dt

import pytest

from evalops.airflow.dags import DAG_FILES, dag_file_text
from tests.dags.conftest import INCLUDE

pytestmark = [pytest.mark.airflow]

DAY = dt.datetime(2024, 6, 1, tzinfo=dt.timezone.utc)


def _project(root, name: str):
    home = root / name
    (home / "dags").mkdir(parents=True)
    (home / "evalops.yaml").write_text(
        f"project_name: {name}\n"
        f"gold_set: {{path: {INCLUDE / 'goldset'}}}\n"
        f"knowledge_base: {{path: {INCLUDE / 'knowledge_base'}}}\n"
        f"registry: {INCLUDE / 'retrievers.yaml'}\n", encoding="utf-8")
    for file in DAG_FILES:
        (home / "dags" / file).write_text(dag_file_text(file), encoding="utf-8")
    return home


@pytest.fixture(scope="module")
def two_projects(tmp_path_factory):
    from evalops.airflow.runner import run_steps_in_subprocess

    root = tmp_path_factory.mktemp("two-projects")
    projects = root / "projects"  # the Airflow DAGs folder holds both projects' dags/ folders
    _project(projects, "support")
    _project(projects, "search")
    steps = [{"dag_id": "support.knowledge_base_producer", "logical_date": DAY.isoformat()}]
    return run_steps_in_subprocess(projects, steps, workdir=root / "airflow", log_path=root / "airflow.log",
                                   env={"AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False"},
                                   inherit_evalops_env=False, counts=False)


def test_a_knowledge_base_update_starts_only_its_own_projects_evaluation(two_projects):
    (step,) = two_projects
    assert step["state"] == "success"
    assert [e["asset"] for e in step["asset_events"]] == ["support.knowledge-base"]
    assert step["asset_events"][0]["extra"]["snapshot_id"]
    assert step["queued"] == ["support.retrieval_eval"]


def test_each_projects_results_start_only_its_own_consumer(tmp_path):
    from tests.dags.test_dag_integrity import _run

    _project(tmp_path / "projects", "support")
    _project(tmp_path / "projects", "search")
    code = """
import json
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder=%r)
assert not bag.import_errors, bag.import_errors
found = {}
for name in ("support", "search"):
    evaluation = bag.dags[name + ".retrieval_eval"]
    found[name] = {
        "kb": sorted(a.name for a in evaluation.timetable.asset_condition.objects),
        "outlets": [a.name for a in evaluation.task_dict["publish_report"].outlets],
        "consumer": sorted(a.name for a in bag.dags[name + ".promote_on_results"].timetable.asset_condition.objects),
        "producer": [a.name for a in bag.dags[name + ".knowledge_base_producer"].task_dict["publish_snapshot"].outlets],
    }
print(json.dumps(found))
""" % str(tmp_path / "projects")
    found = _run(code, tmp_path)
    for name in ("support", "search"):
        assert found[name] == {"kb": [f"{name}.knowledge-base"], "outlets": [f"{name}.retrieval-eval-results"],
                               "consumer": [f"{name}.retrieval-eval-results"], "producer": [f"{name}.knowledge-base"]}
