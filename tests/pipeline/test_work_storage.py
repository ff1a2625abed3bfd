"""The work folder as an fsspec URL: a run on fsspec's in-memory filesystem gives exactly the scores,
decisions and report of the same run on a local folder, and writes nothing to the local work folder."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.dags.conftest import DAGS, make_home

pytestmark = pytest.mark.slow


def _specs(result):
    """The typed version specs of a run's result (``run_local`` returns their JSON form)."""
    from evalops.pipeline.specs import VersionSpec

    return [VersionSpec.from_xcom(v) for v in result["versions"]]

def _run(tmp_path, env, name: str, work_dir: str | None):
    from evalops.config import load_config
    from evalops.pipeline import RunContext, run_local
    from evalops.pipeline.deciding import load_decisions
    from evalops.pipeline.demo import plan_demo
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import load_scores

    home = tmp_path / name
    env = {**env, "EVALOPS_HOME": str(home), "EVALOPS_SHARD_SIZE": "9"}
    if work_dir:
        env["EVALOPS_WORK_DIR"] = work_dir
    overlay = plan_demo(load_config(home, environ=env), dags=DAGS).overlay
    cfg = load_config(home, environ={**env, "EVALOPS_RETRIEVERS_OVERLAY": str(overlay)})
    run = RunContext.for_day("2024-05-31")
    result = run_local(cfg, run)
    engine = engine_for(cfg)
    scores = {(s["retriever"], s["version"], s["dataset"]):
              load_scores(engine, s["run_id"]).sort_values(["measure", "query_id"], ignore_index=True)
              for s in result["versions"]}
    decisions = sorted((d.version, d.dataset, d.comparison.measure, d.comparison.decision)
                       for d in load_decisions(engine_for(cfg), _specs(result)))
    return cfg, scores, decisions


def test_a_run_on_memory_storage_equals_the_local_run(tmp_path):
    import fsspec

    from evalops.pipeline.workdir import work_root

    env = make_home(tmp_path / "data", log_start="2024-05-30", log_days=1)
    local_cfg, local_scores, local_decisions = _run(tmp_path, env, "local", None)
    url = f"memory://evalops-test-{tmp_path.name}/work"
    memory_cfg, memory_scores, memory_decisions = _run(tmp_path, env, "memory", url)
    try:
        assert memory_cfg.work_dir == url and str(work_root(memory_cfg)) == url
        assert local_scores.keys() == memory_scores.keys() and {k[2] for k in local_scores} == {"gold", "production"}
        for key, frame in local_scores.items():
            assert len(frame) > 0, key
            pd.testing.assert_frame_equal(frame, memory_scores[key], check_exact=True, obj=str(key))
        assert local_decisions == memory_decisions
        memory = fsspec.filesystem("memory")
        written = memory.find(url.removeprefix("memory://"))
        assert any(p.endswith(".parquet") for p in written) and any("log_sample" in p for p in written)
        assert any("/snapshots/" in p for p in written)
        assert not (tmp_path / "memory" / ".evalops" / "work").exists()  # nothing went to the local default
    finally:
        fsspec.filesystem("memory").rm(url.removeprefix("memory://"), recursive=True)
