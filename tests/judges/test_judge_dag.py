"""The judge task in the retrieval_eval DAG (dag.test in a child process), against the fake judge server.

Day 1 (1.0 deployed), promote 1.0, day 2 (the candidates deployed), day 2 again: the warehouse holds the
judgments, their tokens, and the re-run makes no request to the judge.
"""

from __future__ import annotations

import datetime as dt

import pytest

from evalops.judges.fakeserver import FakeChatServer
from tests.dags.conftest import DAGS, make_home
from tests.judges.conftest import judge_comparisons

pytestmark = [pytest.mark.airflow, pytest.mark.slow]

DAY1 = dt.datetime(2024, 5, 31, tzinfo=dt.timezone.utc)
DAY2 = dt.datetime(2024, 6, 1, tzinfo=dt.timezone.utc)


def test_the_dag_judges_two_versions_and_the_rerun_hits_the_cache(tmp_path, monkeypatch):
    from evalops.config import load_config
    from evalops.airflow.runner import run_steps_in_subprocess
    from evalops.pipeline.demo import plan_demo
    from evalops.pipeline.store import engine_for
    from evalops.warehouse.judgments import count_judgments, load_judge_runs

    with FakeChatServer() as server:
        env = make_home(tmp_path / "home")
        env.update({"EVALOPS_JUDGE__KIND": "openai", "EVALOPS_JUDGE__BASE_URL": server.url,
                    "EVALOPS_JUDGE__MODEL": "fake-judge", "EVALOPS_JUDGE__TOP_K": "3",
                    "EVALOPS_JUDGE__PRODUCTION_QUERIES": "10", "EVALOPS_JUDGE__API_KEY_ENV": "FAKE_JUDGE_KEY",
                    "FAKE_JUDGE_KEY": "sk-dag-secret", "EVALOPS_LOG_SAMPLE_SIZE": "30"})
        cfg = load_config(tmp_path / "home", environ=env)
        plan = plan_demo(cfg, DAY1, DAY2, dags=DAGS)
        first = run_steps_in_subprocess(DAGS, plan.steps, workdir=tmp_path / "airflow",
                                        log_path=tmp_path / "airflow.log", env=env, inherit_evalops_env=False)
        after_first = server.judging_requests
        engine = engine_for(load_config(tmp_path / "home", environ=env))
        stored = count_judgments(engine)
        again = run_steps_in_subprocess(DAGS, [plan.steps[-1]], workdir=tmp_path / "airflow",
                                        log_path=tmp_path / "airflow2.log", env=env, inherit_evalops_env=False)
        assert server.judging_requests == after_first, "the re-run of day 2 sent requests to the judge"
    assert after_first > 0 and stored > 0 and count_judgments(engine) == stored
    day2 = next(r["run_id"] for r in first if r["dag_id"] == "retrieval_eval" and r["logical_date"] == DAY2.isoformat())
    assert again[0]["run_id"] == day2
    runs = load_judge_runs(engine, day2)
    gold = runs[runs["scope"] == "gold"].iloc[0]
    assert gold["requests"] == 0 and gold["cache_hits"] == gold["items"]
    candidates = {"2.0-hybrid", "2.0-truncated", "3.0-vector", "3.0-hybrid", "3.0-rerank"}
    assert {"1.0", *candidates} <= set(gold["results"]["versions"])
    compared = {c["candidate"] for c in judge_comparisons(engine, gold["id"])}
    assert compared == {f"handbook-search@{v}" for v in candidates}
    day1_runs = load_judge_runs(engine)
    assert (day1_runs["input_tokens"] > 0).any()
    assert b"sk-dag-secret" not in (tmp_path / "home" / ".evalops" / "warehouse.db").read_bytes()
