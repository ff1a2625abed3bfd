"""Sharded scoring gives exactly the per-query scores of unsharded scoring (issue 8).

Both runs go through the same pipeline steps the DAG calls (plan, shard, score, compare), in-process, on
their own SQLite warehouse; every deployed version (the candidates too) on the gold set and the log sample.
"""

from __future__ import annotations

import pandas as pd
import pytest

from tests.dags.conftest import DAGS, make_home

pytestmark = pytest.mark.slow


def _run(tmp_path, env, shard_size: int):
    from evalops.config import load_config
    from evalops.pipeline import RunContext, run_local
    from evalops.pipeline.demo import plan_demo
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import load_scores

    home = tmp_path / f"shard{shard_size}"
    env = {**env, "EVALOPS_HOME": str(home), "EVALOPS_SHARD_SIZE": str(shard_size)}
    overlay = plan_demo(load_config(home, environ=env), dags=DAGS).overlay
    cfg = load_config(home, environ={**env, "EVALOPS_RETRIEVERS_OVERLAY": str(overlay)})
    result = run_local(cfg, RunContext.for_day("2024-05-31"))
    engine = engine_for(cfg)
    scores = {}
    for spec in result["versions"]:
        frame = load_scores(engine, spec["run_id"]).sort_values(["measure", "query_id"], ignore_index=True)
        scores[(spec["retriever"], spec["version"], spec["dataset"])] = frame
    return result["versions"], scores


def test_sharded_scores_equal_unsharded_scores(tmp_path):
    env = make_home(tmp_path / "data", log_start="2024-05-30", log_days=1)
    whole_specs, whole = _run(tmp_path, env, 0)
    shard_specs, sharded = _run(tmp_path, env, 7)
    assert all(s["n_shards"] == 1 for s in whole_specs)
    assert all(s["n_shards"] == -(-s["n_queries"] // 7) > 1 for s in shard_specs)
    assert {k[2] for k in whole} == {"gold", "production"} and len(whole) >= 6
    assert whole.keys() == sharded.keys()
    for key, frame in whole.items():
        assert len(frame) > 0, key
        pd.testing.assert_frame_equal(frame, sharded[key], check_exact=True, obj=str(key))
