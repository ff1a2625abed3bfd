"""Bad input stops the DAG at validation: an alert of that kind is stored and no metric row is written.

One child process runs two ``dag.test()``s on one warehouse: day 1 with a corrupted gold set, then day 1
with a malformed log file (and the gold set repaired).
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from tests.dags.conftest import DAGS, INCLUDE, copy_tree, make_home

pytestmark = [pytest.mark.airflow, pytest.mark.slow]

DAY = dt.datetime(2024, 5, 31, tzinfo=dt.timezone.utc)
METRIC_TABLES = ("eval_runs", "query_scores", "run_aggregates", "ab_tests", "baselines")


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    from evalops.airflow.runner import run_steps_in_subprocess

    root = tmp_path_factory.mktemp("bad")
    env = make_home(root, log_start="2024-05-30", log_days=1)
    # a gold set whose queries file was truncated mid-record
    gold = copy_tree(INCLUDE / "goldset", root / "goldset_corrupt")
    queries = (gold / "queries.jsonl").read_text(encoding="utf-8")
    (gold / "queries.jsonl").write_text(queries + '{"_id": "q999", "text": "where is my ref\n', encoding="utf-8")
    # a day of logs where a third of the lines are not JSON
    logs = root / "logs_malformed"
    part = logs / "date=2024-05-30"
    part.mkdir(parents=True)
    good = (root / "logs" / "date=2024-05-30" / "part-000.jsonl").read_text(encoding="utf-8").splitlines()
    mixed = [line if i % 3 else line[: len(line) // 2] for i, line in enumerate(good)]
    (part / "part-000.jsonl").write_text("\n".join(mixed) + "\n", encoding="utf-8")
    assert sum(1 for line in mixed if not _is_json(line)) > len(mixed) // 4

    steps = [
        {"dag_id": "retrieval_eval", "logical_date": DAY.isoformat(), "env": {"EVALOPS_GOLD_SET": str(gold)}},
        {"dag_id": "retrieval_eval", "logical_date": DAY.isoformat(), "env": {"EVALOPS_QUERY_LOGS": str(logs)}},
    ]
    results = run_steps_in_subprocess(DAGS, steps, workdir=root / "airflow", log_path=root / "airflow.log",
                                      env=env, inherit_evalops_env=False)
    from evalops.config import load_config
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import list_alerts

    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("EVALOPS_WAREHOUSE_URL", raising=False)  # the warehouse is the scenario's SQLite file
        alerts = list_alerts(engine_for(load_config(root, environ=env)))
    return {"results": results, "alerts": alerts}


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def test_both_runs_stop(scenario):
    assert [r["state"] for r in scenario["results"]] == ["failed", "failed"]


def test_corrupted_gold_set_stores_its_alert_and_no_metric_rows(scenario):
    counts = scenario["results"][0]["counts"]
    assert all(counts[t] == 0 for t in METRIC_TABLES), counts
    alerts = scenario["alerts"]
    gold = alerts[alerts["kind"] == "validation_failed:gold_set"]
    assert len(gold) == 1
    message = gold["message"].iloc[0]
    assert "queries.jsonl" in message and "no metric rows were written" in message


def test_malformed_log_file_stores_its_alert_and_no_metric_rows(scenario):
    counts = scenario["results"][1]["counts"]
    assert all(counts[t] == 0 for t in METRIC_TABLES), counts
    # each run's contract alert, and the DAG failure callback's alert naming the task that stopped it
    assert counts["alerts"] == 4
    alerts = scenario["alerts"]
    failures = alerts[alerts["kind"] == "airflow_failure"]
    assert sorted(failures["measure"]) == ["sample_query_logs", "validate_inputs"]
    assert all("failed (try 1 of 3)" in m for m in failures["message"])  # bad input is not retried
    logs = alerts[alerts["kind"] == "validation_failed:query_logs"]
    assert len(logs) == 1
    assert "malformed" in logs["message"].iloc[0]
