"""The bootstrap of a comparison is seeded by its data, not by the run's day: the same two versions on the
same gold set give the same intervals on two days (under ``interval: bootstrap``, where the decision
interval is a bootstrap one too)."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from evalops.cli import main
from evalops.pipeline.comparing import data_seed
from evalops.warehouse import create_warehouse_engine, load_ab_tests, measure_history
from evalops.warehouse.abtests import judge_ab_tests
from evalops.warehouse.judgments import load_judge_runs
from tests.dags.conftest import INCLUDE


def test_the_seed_is_a_function_of_the_data_alone():
    ids, b, c = ["q1", "q2", "q3"], np.array([0.5, 1.0, 0.0]), np.array([0.25, 1.0, 1.0])
    assert data_seed(ids, b, c) == data_seed(list(ids), b.tolist(), c.copy())
    assert 0 <= data_seed(ids, b, c) < 2**63
    assert data_seed(ids, b, c) != data_seed(ids, b, c + np.array([0, 0, -0.5]))  # one value differs
    assert data_seed(ids, b, c) != data_seed(["q1", "q2", "q4"], b, c)  # one query differs
    assert data_seed(ids, b, c) != data_seed(ids, c, b)  # sides swapped


def _registry(path, deployed):
    entries = [e for e in yaml.safe_load((INCLUDE / "retrievers.yaml").read_text())["retrievers"]
               if e["name"] == "handbook-search"]
    for entry in entries:
        entry["deployed"] = entry["version"] in deployed
    path.write_text(yaml.safe_dump({"retrievers": entries}))
    return str(path)


@pytest.mark.slow
def test_identical_data_on_two_days_gives_identical_bootstrap_bounds(tmp_path):
    env = {
        "EVALOPS_HOME": str(tmp_path),
        "EVALOPS_WAREHOUSE_URL": f"sqlite:///{tmp_path / 'warehouse.db'}",
        "EVALOPS_GOLD_SET": str(INCLUDE / "goldset"),
        "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"),
        "EVALOPS_REGISTRY": _registry(tmp_path / "day1.yaml", {"1.0"}),
        "EVALOPS_LOG_SAMPLE_SIZE": "0",
        "EVALOPS_REGRESSION__INTERVAL": "bootstrap",
        "EVALOPS_JUDGE__KIND": "lexical",  # the judge-label comparisons are seeded by their data too
        "EVALOPS_RETRIEVERS_OVERLAY": None, "EVALOPS_CONFIG": None, "EVALOPS_WEBHOOK_URL": None,
        "EVALOPS_ALERTING__EMAIL_TO": None, "EVALOPS_MEASURES": None, "EVALOPS_ALERT_MEASURES": None,
    }
    runner = CliRunner()
    assert runner.invoke(main, ["run", "--date", "2024-06-01", "-q"], env=env).exit_code == 0
    promoted = runner.invoke(main, ["promote", "handbook-search", "1.0", "--reason", "day 1"], env=env)
    assert promoted.exit_code == 0, promoted.output
    env["EVALOPS_REGISTRY"] = _registry(tmp_path / "day2.yaml", {"1.0", "2.0-hybrid"})
    for day in ("2024-06-02", "2024-06-05"):
        result = runner.invoke(main, ["run", "--date", day, "-q"], env=env)
        assert result.exit_code == 0, result.output

    engine = create_warehouse_engine(env["EVALOPS_WAREHOUSE_URL"])
    try:
        days = measure_history(engine, "handbook-search", "nDCG@10", versions=["2.0-hybrid"])
        assert len(days) == 2
        frames = [load_ab_tests(engine, candidate_run_id=int(run_id)).set_index("measure").sort_index()
                  for run_id in days["run_id"]]
        stored = judge_ab_tests(engine, load_judge_runs(engine)["id"].astype(int))
        judged = [[{**r.comparison.to_dict(), "family": r.family} for r in rows] for _, rows in sorted(stored.items())
                  if rows]
    finally:
        engine.dispose()
    first, second = frames
    bounds = ["delta", "delta_ci_low", "delta_ci_high", "interval_low", "interval_high"]
    assert first[bounds].notna().all().all()
    assert first[bounds].equals(second[bounds])  # same data, same bounds, on another day
    assert (first["policy"].map(lambda p: p["seed"]) == second["policy"].map(lambda p: p["seed"])).all()
    # the judge-label comparisons of the two days (the offline judge labels the same top k both days)
    assert len(judged) == 2 and judged[0], judged
    keys = ("measure", "candidate", "delta", "delta_ci_low", "delta_ci_high", "interval_low", "interval_high")
    assert [{k: c.get(k) for k in keys} for c in judged[0]] == [{k: c.get(k) for k in keys} for c in judged[1]]
    assert all(c.get("delta_ci_low") is not None for c in judged[0]), judged[0]
