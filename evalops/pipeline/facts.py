"""Facts about a finished version run that the dashboard shows beside its scores.

* the text of every query of the run's query set, once per query set version (production text is the
  log sample's, already PII-scrubbed), so the A/B page can show the worst queries;
* the run's retrieval latency (p50, p95, max over every answered query of every shard, in milliseconds)
  and its failed-query count. Percentiles are taken over the pooled per-query latencies, not averaged
  over shards, so sharding does not change them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from evalops.pipeline.context import RunContext
from evalops.pipeline.store import engine_for
from evalops.pipeline.workdir import shard_file

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config

__all__ = ["record_run_facts", "shard_latencies"]


def shard_latencies(cfg: Config, run: RunContext, run_id: int, n_shards: int) -> tuple[list[float], float]:
    """Every answered query's latency (seconds) over the run's shards, and the summed wall time."""
    latencies: list[float] = []
    wall = 0.0
    for shard in range(n_shards):
        meta_path = shard_file(cfg, run, run_id, shard).with_suffix(".json")
        if not meta_path.exists():
            continue
        meta = json.loads(meta_path.read_text())
        latencies += [float(v) for v in (meta.get("latencies") or {}).values()]
        wall += float((meta.get("timings") or {}).get("wall_seconds") or 0.0)
    return latencies, wall


def record_run_facts(cfg: Config, run: RunContext, spec: dict[str, Any], n_failed: int) -> None:
    import numpy as np

    from evalops.pipeline.queries import query_set_for
    from evalops.warehouse.dashboard import record_query_texts, record_run_timing

    engine = engine_for(cfg)
    queries = query_set_for(cfg, spec["dataset"], spec.get("sample_folder"))
    record_query_texts(engine, spec["query_set_version"], queries.texts)
    latencies, wall = shard_latencies(cfg, run, spec["run_id"], spec["n_shards"])
    lat = np.asarray(latencies, dtype=float) * 1000.0
    record_run_timing(
        engine, spec["run_id"],
        latency_p50_ms=float(np.percentile(lat, 50)) if lat.size else None,
        latency_p95_ms=float(np.percentile(lat, 95)) if lat.size else None,
        latency_max_ms=float(lat.max()) if lat.size else None,
        wall_seconds=wall or None, n_failed=n_failed,
    )
