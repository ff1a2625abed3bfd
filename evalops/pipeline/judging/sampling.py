"""Which queries are judged: every gold query, and a seeded sample of the day's production queries (the
run's seed, so a re-run judges the same ones), which also feed the annotation queue."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from evalops.config import PRODUCTION
from evalops.judges.generate import default_queue, sampled_query_rows, write_queue
from evalops.pipeline.context import RunContext
from evalops.pipeline.queries import query_set_for

if TYPE_CHECKING:  # pragma: no cover
    from evalops.pipeline.specs import VersionSpec
    from evalops.config import Config


def _query_texts(cfg: Config, run: RunContext, spec: VersionSpec, n_production: int) -> tuple[dict[str, str], Any]:
    queries = query_set_for(cfg, spec.dataset, spec.sample_folder)
    ids = queries.query_ids
    if spec.dataset == PRODUCTION and len(ids) > n_production:
        rng = np.random.default_rng(run.seed)
        ids = sorted(rng.choice(np.array(ids, dtype=object), size=n_production, replace=False).tolist())
    return {q: queries.texts[q] for q in ids}, queries

def _queue_sampled_queries(cfg: Config, run: RunContext, texts: dict[str, str], fingerprint: Any) -> dict[str, Any]:
    """Append the judged production queries to the annotation queue as ``sampled_query`` rows (see
    :mod:`evalops.judges.generate`); returns where, how many were offered and how many were new."""
    path = default_queue(cfg.home)
    origin = f"production sample {run.day} (seed {run.seed}), judged by {fingerprint.describe()}"
    rows = sampled_query_rows(texts, origin=origin)
    added = write_queue(path, rows, gold_paths=[spec.path for spec in cfg.require_gold_sets().values()])
    return {"path": str(path), "source": "sampled_query", "offered": len(rows), "added": added}

def _gold_fields(cfg: Config, dataset: str) -> tuple[dict[str, str], dict[str, str]]:
    """(query id -> language (BCP-47), query id -> reference answer) of a gold set's queries; both empty for
    the production sample (its queries have neither)."""
    if dataset == PRODUCTION:
        return {}, {}
    from evalops.pipeline.inputs import gold_set_for_run

    queries = gold_set_for_run(cfg, dataset).queries
    ids = queries["query_id"].astype(str).tolist()
    references = {q: r for q, r in zip(ids, queries["reference_answer"].astype(str).tolist()) if r}
    return dict(zip(ids, queries["language"].astype(str).tolist())), references
