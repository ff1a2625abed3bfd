"""What the pipeline records for the dashboard (query texts, timings) and the run report's version table."""

from __future__ import annotations

import pytest

from tests.dashboard.warehouse_builder import DAY_TWO, GOLD_PAYLOAD_ID, PAYLOAD

pytestmark = pytest.mark.slow


def test_every_run_records_its_timings_and_its_query_texts(filled):
    from sqlalchemy import text

    engine = filled["engine"]
    with engine.connect() as conn:
        runs = conn.execute(text("SELECT r.id, r.n_failed, t.wall_seconds, t.n_failed FROM eval_runs r "
                                 "LEFT JOIN run_timings t ON t.run_id = r.id")).all()
        gold_version = conn.execute(text("SELECT f.gold_set_version FROM eval_runs r JOIN eval_fingerprints f "
                                         "ON f.hash = r.fingerprint_hash WHERE r.dataset = 'gold'")).scalars().first()
        planted = conn.execute(text("SELECT text FROM query_texts WHERE query_set_version = :v AND query_id = :q"),
                               {"v": gold_version, "q": GOLD_PAYLOAD_ID}).scalar_one()
        n_gold_texts = conn.execute(text("SELECT count(*) FROM query_texts WHERE query_set_version = :v"),
                                    {"v": gold_version}).scalar_one()
    assert len(runs) == 2 + 6 * 2  # day 1: the baseline; day 2: six versions; each on gold and production
    for run_id, n_failed, wall, timing_failed in runs:
        assert wall is not None and wall > 0 and timing_failed == n_failed, run_id
    assert planted.endswith(PAYLOAD)
    assert n_gold_texts == max(r.n_queries for r in _gold_specs(filled))


def _gold_specs(filled):
    from evalops.warehouse import get_run

    return [get_run(filled["engine"], s["run_id"]) for s in filled["result"]["versions"] if s["dataset"] == "gold"]


def test_http_latencies_pool_over_shards_into_percentiles(tmp_path):
    """p50/p95 come from every answered query's latency across shards, not an average of shard medians."""
    import json

    import numpy as np

    from evalops.pipeline.context import RunContext
    from evalops.pipeline.facts import shard_latencies
    from evalops.pipeline.workdir import shard_file

    class Cfg:
        work_dir = tmp_path

    run = RunContext.for_day(DAY_TWO)
    per_shard = [{"a": 0.010, "b": 0.020}, {"c": 0.030, "d": 0.400, "e": 0.050}]
    for shard, latencies in enumerate(per_shard):
        path = shard_file(Cfg, run, 7, shard)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.with_suffix(".json").write_text(json.dumps({"latencies": latencies, "timings": {"wall_seconds": 1.0}}))
    pooled, wall = shard_latencies(Cfg, run, 7, 2)
    assert sorted(pooled) == [0.010, 0.020, 0.030, 0.050, 0.400] and wall == 2.0
    assert np.percentile(np.asarray(pooled) * 1000, 50) == pytest.approx(30.0)


def test_the_run_report_lists_each_version_once_with_the_n_used(filled):
    report = (filled["cfg"].report_dir / f"cli_cli__{DAY_TWO}" / "report.md").read_text(encoding="utf-8")
    gold = report.split("## Production queries", 1)[0]
    rows = [line for line in gold.splitlines() if line.startswith("| handbook-search |")]
    versions = [line.split("|")[2].strip() for line in rows]
    assert sorted(versions) == ["1.0", "2.0-hybrid", "2.0-truncated", "3.0-hybrid", "3.0-rerank", "3.0-vector"]
    baseline = next(line for line in rows if line.split("|")[2].strip() == "1.0")
    assert "baseline (comparisons use stored run" in baseline
    n_used = {s.n_queries for s in _gold_specs(filled)}
    assert all(f" of {n} |" in line for line in rows for n in n_used)
    html = (filled["cfg"].report_dir / f"cli_cli__{DAY_TWO}" / "report.html").read_text(encoding="utf-8")
    assert "max-width:72rem" not in html and "Noto Sans CJK SC" in html
