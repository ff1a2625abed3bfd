"""EvaluateOperator and GateOperator, executed as a worker would (``execute(context)``), on the sample data in
include/: day 1 scores the baseline (promoted), day 2 deploys the planted regression (2.0-truncated: BM25 over
half the knowledge base). The gate fails the task naming it under the project's ``fail_on`` and passes under a
policy that only fails on a version that could not be scored, as ``evalops gate`` does."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from tests.cli.test_gate import DAY1, DAY2, _registry, project_env

pytestmark = [pytest.mark.airflow, pytest.mark.slow]


def _context(day: str) -> dict:
    start = dt.datetime.fromisoformat(day).replace(tzinfo=dt.timezone.utc)
    run = SimpleNamespace(dag_id="rag_release", run_id=f"manual__{day}", logical_date=start, run_after=start,
                          run_type="manual")
    return {"dag_run": run, "logical_date": start, "data_interval_start": start - dt.timedelta(days=1),
            "data_interval_end": start}


@pytest.fixture(scope="module")
def day_two(tmp_path_factory):
    from evalops import pipeline
    from evalops.airflow.operators import EvaluateOperator
    from evalops.config import load_config

    home = tmp_path_factory.mktemp("operators")
    env = project_env(home)
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.delenv(key, raising=False) if value is None else mp.setenv(key, value)
        evaluate = EvaluateOperator(task_id="evaluate", project=home)
        evaluate.execute(_context(DAY1))
        pipeline.promote(load_config(home=home), retriever="handbook-search", run="latest", reason="day 1",
                         promoted_by="tests")
        mp.setenv("EVALOPS_REGISTRY", _registry(home / "day2.yaml", {"1.0", "2.0-truncated"}))
        yield home, evaluate.execute(_context(DAY2))


def test_the_evaluation_returns_its_result_for_xcom(day_two):
    home, result = day_two
    assert {(v["version"], v["dataset"]) for v in result["versions"]} >= {("1.0", "gold"), ("2.0-truncated", "gold")}
    assert [a["kind"] for a in result["alerts"]] == ["regression"]
    assert result["report"].endswith("report.html")


def test_the_gate_fails_the_task_on_the_planted_regression(day_two):
    from evalops.airflow.compat import AirflowFailException
    from evalops.airflow.operators import GateOperator

    home, result = day_two
    with pytest.raises(AirflowFailException, match=r"gate FAILED \(exit 4, regression\).*2\.0-truncated.*nDCG@10"):
        GateOperator(task_id="gate", project=home, result=result).execute(_context(DAY2))


def test_the_gate_passes_under_a_policy_the_run_meets(day_two):
    from evalops.airflow.operators import GateOperator

    home, result = day_two
    cases = GateOperator(task_id="gate", project=home, result=result, fail_on=["failed"]).execute(_context(DAY2))
    truncated = [c for c in cases if c["version"] == "2.0-truncated" and c["measure"] == "nDCG@10"]
    assert [(c["outcome"], c["decision"]) for c in truncated] == [("passed", "regression")]


def test_the_gate_refuses_what_is_not_an_evaluation_result(day_two):
    from evalops.airflow.compat import AirflowFailException
    from evalops.airflow.operators import GateOperator

    home, _ = day_two
    with pytest.raises(AirflowFailException, match="needs the result of an EvaluateOperator"):
        GateOperator(task_id="gate", project=home, result="evaluate").execute(_context(DAY2))


def test_an_unknown_fail_on_kind_fails_when_the_dag_is_defined():
    from evalops.airflow.operators import GateOperator
    from evalops.errors import InputError

    with pytest.raises(InputError, match="unknown kind.*regresion"):
        GateOperator(task_id="gate", project=".", result={}, fail_on=["regresion"])
