"""Facts about a finished version run that the dashboard shows beside its scores.

* the text of every query of the run's query set, once per query set version (production text is the
  log sample's, already PII-scrubbed), so the A/B page can show the worst queries;
* the run's retrieval latency (p50, p95, max over every answered query of every shard, in milliseconds)
  and its failed-query count. Percentiles are taken over the pooled per-query latencies, not averaged
  over shards, so sharding does not change them;
* the dense document vectors its shards embedded and read from the embedding cache (``embeddings``:
  ``{"embedded": n, "cached": m}``, summed over the shards, each of which looks the corpus up once), returned
  to the compare step's result and logged: a second run on an unchanged knowledge base embeds 0.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from evalops.pipeline.context import RunContext
from evalops.pipeline.workdir import WorkFolder, shard_file
from evalops.warehouse.dashboard import record_query_texts, record_run_timing, stored_query_text_ids

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

    from evalops.pipeline.queries import QuerySet
    from evalops.pipeline.specs import VersionSpec

__all__ = ["record_run_facts", "shard_embeddings", "shard_latencies"]

log = logging.getLogger(__name__)


def shard_latencies(work: WorkFolder, run: RunContext, run_id: int, n_shards: int) -> tuple[list[float], float]:
    """Every answered query's latency (seconds) over the run's shards, and the summed wall time."""
    latencies: list[float] = []
    wall = 0.0
    for shard in range(n_shards):
        meta_path = shard_file(work, run, run_id, shard).with_suffix(".json")
        if not meta_path.exists():
            continue
        meta = json.loads(meta_path.read_text())
        latencies += [float(v) for v in (meta.get("latencies") or {}).values()]
        wall += float((meta.get("timings") or {}).get("wall_seconds") or 0.0)
    return latencies, wall


def shard_embeddings(work: WorkFolder, run: RunContext, run_id: int, n_shards: int) -> dict[str, int]:
    """Documents embedded and read from the embedding cache, summed over the run's shards."""
    total = {"embedded": 0, "cached": 0}
    for shard in range(n_shards):
        meta_path = shard_file(work, run, run_id, shard).with_suffix(".json")
        if meta_path.exists():
            counts = json.loads(meta_path.read_text()).get("embeddings") or {}
            for key in total:
                total[key] += int(counts.get(key) or 0)
    return total


def record_run_facts(engine: Engine, work: WorkFolder, run: RunContext, spec: VersionSpec, queries: QuerySet, *,
                     n_failed: int) -> dict[str, Any]:
    """Record the run's facts (see the module docstring) in the warehouse at ``engine``, read from the shards in
    the work folder (``work``) and the version's query set; returns those not stored in the warehouse."""
    import numpy as np

    from evalops.querylog import scrub

    # Gold text is scrubbed too: nothing evalops writes may hold personal data or a secret. A text is stored
    # once per query set version (the first version of the run stores them; the others find them there),
    # so only the texts not stored yet are scrubbed and written.
    stored = stored_query_text_ids(engine, spec.query_set_version)
    record_query_texts(engine, spec.query_set_version,
                       {q: scrub(t).text for q, t in queries.texts.items() if q not in stored})
    latencies, wall = shard_latencies(work, run, spec.run_id, spec.n_shards)
    lat = np.asarray(latencies, dtype=float) * 1000.0
    record_run_timing(
        engine, spec.run_id,
        latency_p50_ms=float(np.percentile(lat, 50)) if lat.size else None,
        latency_p95_ms=float(np.percentile(lat, 95)) if lat.size else None,
        latency_max_ms=float(lat.max()) if lat.size else None,
        wall_seconds=wall or None, n_failed=n_failed,
    )
    embeddings = shard_embeddings(work, run, spec.run_id, spec.n_shards)
    if any(embeddings.values()):
        log.info("%s: embedded %d documents, %d read from the embedding cache", spec.label,
                 embeddings["embedded"], embeddings["cached"])
    return {"embeddings": embeddings}
