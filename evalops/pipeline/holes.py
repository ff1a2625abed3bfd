"""The holes of a run's comparisons go to the annotation queue (``source = "hole"``).

After the comparisons are decided (``deciding.decide_run``), for every gold query set and retriever: the
unjudged top-k documents that each scored version recorded while it was scored (``scoring``) are pooled
over the versions of the pairs that were compared (a decided comparison; a candidate that failed, or whose
baseline failed, was not compared and adds nothing), de-duplicated and ordered by how much judging them
could change the comparisons (:mod:`evalops.judged.holes`; k is the cutoff of the first alert measure). They are
appended to the annotation queue (``<project>/.evalops/annotation/queue.jsonl``; rows already there are
not added twice) and written to ``holes.json`` in the run's work folder for the report.

When a judge is configured (``judge.kind``), the holes are judged too (binary ``context_relevance``,
through the warehouse cache) and each row's ``proposed_grade`` is the judge's label, ``origin`` naming the
judge: a separate label source for annotators to review. Nothing here writes the gold set.
Production query sets have no judgments to fill, so they have no holes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalops.config import PRODUCTION
from evalops.judged.holes import HOLE_POLICY, cutoff_of, hole_rows, prioritise_holes
from evalops.pipeline.context import RunContext
from evalops.pipeline.workdir import WorkFolder, run_folder

if TYPE_CHECKING:  # pragma: no cover
    from evalops.pipeline.env import RunEnv
    from evalops.pipeline.specs import VersionSpec

__all__ = ["holes_file", "queue_holes", "load_holes"]

log = logging.getLogger(__name__)


def holes_file(work: WorkFolder, run: RunContext):
    return run_folder(work, run) / "holes.json"


def _unjudged(env: RunEnv, run: RunContext, spec: VersionSpec) -> dict[str, list[tuple[str, int]]]:
    from evalops.pipeline.comparing import collect_version

    try:
        return collect_version(env, env.failure_budget, run, spec.run_id, spec.n_shards, spec.n_queries).unjudged
    except FileNotFoundError:
        return {}


def queue_holes(env: RunEnv, run: RunContext, versions: Sequence[VersionSpec], compared: set[int]
                ) -> dict[str, Any]:
    """Queue the holes of the run's gold comparisons (module docstring): ``compared`` holds the candidate
    run ids that have a decided comparison. Returns counts per query set."""
    from evalops.judges.generate import write_queue
    from evalops.querylog.scrub import scrub

    k = cutoff_of(env.measures.alerting[0], env.k)
    specs = [s for s in versions if s.dataset != PRODUCTION]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for spec in specs:
        groups.setdefault((spec.dataset, spec.retriever), []).append(spec)
    summary: dict[str, Any] = {"policy": {**HOLE_POLICY, "cutoff": k}, "query_sets": {}}
    rows: list[dict[str, Any]] = []
    for (dataset, retriever), members in sorted(groups.items()):
        pairs = [(s.baseline_version, s.version) for s in members if s.run_id in compared]
        if not pairs:
            continue
        unjudged = {s.version: _unjudged(env, run, s) for s in members}
        holes = prioritise_holes(unjudged, pairs, k)
        if not holes:
            continue
        queries = env.inputs.query_set(dataset, None)  # a gold set
        labels, judge_name = _judge_holes(env, members[0].snapshot_id, holes, queries.texts)
        origin = f"{dataset}: {retriever} " + ", ".join(f"{c} vs {b}" for b, c in pairs) + f", top {k}"
        # the queue is a file evalops writes: gold query texts go in scrubbed, as in every other output
        texts = {h.query_id: scrub(queries.texts[h.query_id]).text for h in holes if h.query_id in queries.texts}
        found = hole_rows(holes, texts, origin=origin, labels=labels, judge=judge_name)
        rows += found
        entry = summary["query_sets"].setdefault(dataset, {})
        entry[retriever] = {
            "comparisons": [{"baseline": b, "candidate": c} for b, c in pairs],
            "holes": len(holes), "judged_by": judge_name,
            "top": [{"query_id": h.query_id, "doc_id": h.doc_id, "priority": h.priority, "versions": list(h.versions),
                     "proposed_grade": None if labels is None else labels.get((h.query_id, h.doc_id))}
                    for h in holes[:50]],
        }
    path = env.annotation_queue
    added = write_queue(path, rows, gold_paths=list(env.gold_paths)) if rows else 0
    summary.update(queue=str(path), rows=len(rows), added=added)
    out = holes_file(env, run)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary))
    if rows:
        log.info("%d unjudged documents of the compared versions in the annotation queue (%d new): %s",
                 len(rows), added, path)
    return summary


def _judge_holes(env: RunEnv, snapshot_id: str, holes: list[Any], texts: dict[str, str]
                 ) -> tuple[dict[tuple[str, str], int] | None, str | None]:
    """The configured judge's labels of the holes (the judge step's prompt, through the warehouse cache);
    ``(None, None)`` without a judge. A missing label stays missing (no proposed grade)."""
    if env.judge.kind == "off":
        return None, None
    from evalops.judges.base import JudgeItem
    from evalops.judges.cache import CachedJudge
    from evalops.pipeline.judging import build_judge
    from evalops.pipeline.judging.items import document_texts
    from evalops.warehouse.judgments import WarehouseJudgmentStore

    docs = document_texts(env.inputs.snapshot(snapshot_id))
    inner = build_judge(env.judge)
    judge = CachedJudge(inner, WarehouseJudgmentStore(env.engine()))
    task = "context_relevance_graded" if env.judge.graded else "context_relevance"
    try:
        pairs = [(h.query_id, h.doc_id) for h in holes if h.doc_id in docs]
        answers = judge.judge([JudgeItem(task, texts.get(q, ""), context=docs[d]) for q, d in pairs])
        labels = {pair: int(round(a.label)) for pair, a in zip(pairs, answers) if a.label is not None}
        return labels, inner.fingerprint.describe()
    finally:
        close = getattr(inner, "close", None)
        if close is not None:
            close()


def load_holes(work: WorkFolder, run: RunContext) -> dict[str, Any]:
    path = holes_file(work, run)
    return json.loads(path.read_text()) if path.exists() else {}
