"""Retention of per-query scores: rows of runs older than the cut-off are deleted; aggregates, every run
a baseline names, and newer runs keep theirs."""

from __future__ import annotations

import datetime as dt

import pandas as pd
from warehouse_helpers import T0

from evalops.warehouse import load_aggregates, load_scores, promote_baseline, prune_query_scores


def scores(n: int = 3) -> pd.DataFrame:
    return pd.DataFrame({"query_id": [f"q{i}" for i in range(n)] * 2, "measure": ["P@5"] * n + ["nDCG@10"] * n,
                         "value": [0.5] * (2 * n)})


def test_old_per_query_scores_are_pruned_except_a_baselines(engine, seed):
    aggregates = pd.DataFrame({"measure": ["P@5", "nDCG@10"], "n": [3, 3], "mean": [0.5, 0.5],
                               "ci_low": [0.4, 0.4], "ci_high": [0.6, 0.6]})
    day = dt.timedelta(days=1)
    aggregates = {"aggregates": aggregates, "ci_level": 0.95, "ci_method": "t"}
    old_baseline = seed.run("v1", dag_run_id="d1", logical_date=T0, scores=scores(), **aggregates)
    old = seed.run("v2", dag_run_id="d1", logical_date=T0, scores=scores(), **aggregates)
    recent = seed.run("v2", dag_run_id="d40", logical_date=T0 + 40 * day, scores=scores(), **aggregates)
    promote_baseline(engine, old_baseline.id, by="test", reason="the deployed version")

    assert prune_query_scores(engine, T0 + 10 * day) == 6
    assert load_scores(engine, old.id).empty
    assert len(load_scores(engine, old_baseline.id)) == 6
    assert len(load_scores(engine, recent.id)) == 6
    assert len(load_aggregates(engine, old.id)) == 2  # aggregates are kept forever
    assert prune_query_scores(engine, T0 + 10 * day) == 0


def test_the_run_applies_the_retention_setting_counted_back_from_its_day(monkeypatch):
    from types import SimpleNamespace

    import evalops.pipeline.publishing as publishing
    from evalops.pipeline import RunContext

    cuts = []
    monkeypatch.setattr(publishing, "prune_query_scores", lambda engine, before: cuts.append((engine, before)) or 7)
    run = RunContext.for_day("2024-06-30")

    def env(days):  # what the step reads of the run's environment (evalops.pipeline.env.RunEnv)
        return SimpleNamespace(query_score_retention_days=days, engine=lambda: "engine")

    assert publishing.prune_old_scores(env(0), run) == 0  # 0 = forever
    assert cuts == []
    assert publishing.prune_old_scores(env(30), run) == 7
    assert cuts == [("engine", dt.datetime(2024, 5, 31, tzinfo=dt.UTC))]
