"""Score one shard of one version: retrieve, evaluate per query, write the shard's file.

The failure policy is applied to the whole version, not per shard, so sharding never changes the result:

* a shard retrieves with no failure budget of its own and records every failed query (excluded from its
  scores, never scored as 0);
* ``comparing.collect_version`` then applies ``failure_budget`` to the version's total.

A retriever that cannot be built or called at all (a missing credential, a service down for every query)
makes the shard's ``error``; the version then fails. A version that fails to *load* fails the same way,
whatever the exception (a broken entry point; a run file changed after planning, which checked it):
loading is deterministic, so retrying the task would fail again, and the other versions are scored and
stored regardless. Only unexpected exceptions during scoring escape, so Airflow retries the task for those.

The unjudged documents of the top k (judged coverage, the holes queue) go to the shard's
``.unjudged.parquet`` as columns (:mod:`evalops.judged.unjudged`). A run file read in memory is scored in
columns, as ``evalops evaluate`` scores it: cut at k, validated and ranked once for the shard's queries,
no Python object per row (:func:`evalops.retrievers.scoring.retrieve_table`).

A dense retriever's document vectors are computed once per knowledge-base snapshot and encoder and kept in
the work storage (:func:`evalops.pipeline.workdir.embedding_cache_for`); the shard's ``.json`` counts the
documents it embedded and those it read from there (``embeddings``), which the run's facts add up.

The shard's ``.json`` also keeps what the judge step reuses instead of asking the retriever again: the
generated ``answers`` of a RAG endpoint (query id -> answer; production answers PII-scrubbed like the
sampled queries) and, when the judge is on, the first ``judge.top_k`` documents of every answered query
(``contexts``).
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any

from evalops.config import PRODUCTION
from evalops.context import context_values, parse_context_measures
from evalops.data import RunTable
from evalops.errors import EvalopsError
from evalops.judged.holes import cutoff_of, judged_top, unjudged_top
from evalops.judged.unjudged import judged_of_table, unjudged_of_table, write_unjudged
from evalops.metrics import evaluate
from evalops.metrics.gold import as_gold
from evalops.metrics.topk import top_k
from evalops.pipeline.chunkings import chunk_corpus, documents_of_chunks
from evalops.pipeline.context import RunContext
from evalops.pipeline.planning import shard_bounds
from evalops.pipeline.queries import QuerySet
from evalops.pipeline.registry import metric_policy
from evalops.pipeline.spans import span_frame
from evalops.pipeline.specs import ShardSpec
from evalops.pipeline.store import run_lease
from evalops.pipeline.streamed import score_streamed, streamed_run_file
from evalops.pipeline.workdir import embedding_cache_for, judged_file, shard_file, unjudged_file, write_frame
from evalops.querylog.scrub import scrub
from evalops.transport import CircuitBreaker

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalops.pipeline.env import RunEnv

__all__ = ["score_shard", "score_queries"]

log = logging.getLogger(__name__)


def score_queries(env: RunEnv, spec: dict[str, Any], queries: QuerySet, run: RunContext | None = None
                  ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Retrieve and evaluate ``queries`` with the version in ``spec`` (from the registry of ``run``, which
    holds the run's ad-hoc candidate if it has one).

    Returns the long score frame (``query_id, measure, value``) and the outcome: the queries asked, the
    failed ones with their reasons, an ``error`` when the retriever could not run at all, and timings.
    """
    import pandas as pd

    empty = pd.DataFrame({"query_id": pd.Series([], dtype=str), "measure": pd.Series([], dtype=str),
                          "value": pd.Series([], dtype=float)})
    outcome: dict[str, Any] = {"query_ids": queries.query_ids, "failed": {}, "error": None, "timings": {},
                               "retries": 0}
    if not queries.query_ids:
        return empty, outcome
    snapshot = env.inputs.snapshot(spec["snapshot_id"])
    embeddings = embedding_cache_for(env, spec["snapshot_id"])
    outcome["embeddings"] = embeddings.counts  # documents a dense encoder embedded / read from the cache
    streamed = _streamed_file(env, spec, run)
    if streamed is not None:  # a large run file: by query blocks, never read whole (evalops.pipeline.streamed)
        return _score_by_blocks(env, queries, outcome, empty, *streamed)
    try:
        entry, result, own_run = _retrieve(env, spec, queries, run, snapshot, embeddings)
    except EvalopsError as exc:
        outcome["error"] = f"{type(exc).__name__}: {exc}"
        outcome["failed"] = {q: "retriever error" for q in queries.query_ids}
        return empty, outcome
    outcome["failed"] = dict(result.failed)
    outcome["n_empty"] = len(result.empty_ids)  # answered with no document: said beside the coverage
    outcome["retries"] = result.retries
    outcome["timings"] = result.timings()
    outcome["latencies"] = dict(result.latencies)  # pooled over shards by pipeline.facts
    outcome["answers"] = _answers(result.answers, spec)
    if env.judge.kind != "off":
        outcome["contexts"] = result.top_documents(env.judge.top_k)
    if len(result.failed) == len(queries.query_ids):
        return empty, outcome
    qrels = result.exclude_failed(queries.qrels)
    gold = as_gold(qrels)  # one Gold: the run's documents are looked up in it once (metrics.table_input)
    context, spans = list(env.measures.context), list(env.measures.anchored)
    measures = [m for m in env.measures.scored if m not in context and m not in spans]
    evaluation = evaluate(gold, result.run, measures, metric_policy())
    # the unjudged documents of the top k (judged coverage, the holes queue) and the judged ones of the whole
    # ranking: together what the bounds of a comparison read (evalops.judged.bounds), kept with the run
    cutoff = max(cutoff_of(m, env.k) for m in measures)
    if isinstance(result.run, RunTable):
        outcome["unjudged"] = unjudged_of_table(gold, result.run, cutoff)
        outcome["judged"] = judged_of_table(gold, result.run, max(cutoff, env.k))
    else:
        outcome["unjudged"] = unjudged_top(gold, result.run, cutoff)
        outcome["judged"] = judged_top(gold, result.run, max(cutoff, env.k))
    frame = evaluation.to_frame()
    if context:
        frame = pd.concat([frame, _context_frame(env, spec, queries, qrels, result, context)], ignore_index=True)
    if spans:
        answered = [q for q in queries.query_ids if q not in result.failed]
        judgments = env.inputs.anchored_judgments(spec["dataset"], snapshot)
        frame = pd.concat([frame, span_frame(judgments, entry, snapshot, own_run, answered, spans, metric_policy())],
                          ignore_index=True)
    return frame, outcome


def _native_measures(env: RunEnv) -> list[str]:
    context, spans = list(env.measures.context), list(env.measures.anchored)
    return [m for m in env.measures.scored if m not in context and m not in spans]


def _streamed_file(env: RunEnv, spec: dict[str, Any], run: RunContext | None) -> tuple[Any, Any] | None:
    """(registry entry, run file) of a version scored by streamed query blocks, or None: a large run file, in a
    run with no judge and no context or span measure (:func:`evalops.pipeline.streamed.streamed_run_file`)."""
    if env.judge.kind != "off" or env.measures.context or env.measures.anchored:
        return None
    entry = env.inputs.registry(run).get(spec["retriever"], spec["version"])
    path = streamed_run_file(entry, _native_measures(env), env.memory_budget_bytes)
    return None if path is None else (entry, path)


def _score_by_blocks(env: RunEnv, queries: QuerySet, outcome: dict[str, Any], empty: pd.DataFrame, entry: Any,
                     path: Any) -> tuple[pd.DataFrame, dict[str, Any]]:
    """:func:`score_queries` of a run file scored by blocks: the same frame and outcome as the columnar path."""
    measures = _native_measures(env)
    cutoff = max(cutoff_of(m, env.k) for m in measures)
    try:
        scored = score_streamed(entry, path, list(queries.query_ids), queries.qrels, measures, metric_policy(), k=env.k,
                                cutoff=cutoff, judged_k=max(cutoff, env.k), memory_budget=env.memory_budget_bytes)
    except (EvalopsError, OSError) as exc:  # as a run file that cannot be read in memory: a failed version
        error = exc if isinstance(exc, EvalopsError) else EvalopsError(
            f"{entry.source}: version {entry.version} could not be loaded: {type(exc).__name__}: {exc}")
        outcome["error"] = f"{type(error).__name__}: {error}"
        outcome["failed"] = {q: "retriever error" for q in queries.query_ids}
        return empty, outcome
    n, seconds = len(queries.query_ids), scored.seconds
    log.info("%s@%s: %s scored by query blocks in %.1f s (its in-memory reading exceeds a quarter of the memory "
             "budget)", entry.name, entry.version, path, seconds)
    outcome.update(failed=scored.failed, n_empty=scored.n_empty, retries=0, latencies={}, answers={}, timings={
        "wall_seconds": seconds, "queries_per_second": n / seconds if seconds > 0 else None,
        "latency_p50": None, "latency_p95": None, "latency_max": None})
    if len(scored.failed) == n:
        return empty, outcome
    outcome["unjudged"], outcome["judged"] = scored.unjudged, scored.judged
    return scored.frame, outcome


def _retrieve(env: RunEnv, spec: dict[str, Any], queries: QuerySet, run: RunContext | None, snapshot: Any,
              embeddings: Any) -> tuple[Any, Any, Any]:
    """``(entry, result, own run)``: the version's registry entry, its retrieval of ``queries`` (documents,
    for a chunked version too) and the run it returned itself (chunk ids for a chunked version: what the
    span measures read). An ``EvalopsError`` when the version cannot run at all."""
    from evalops.retrievers import build_retriever, retrieve_run
    from evalops.retrievers.scoring import retrieve_table

    registry = env.inputs.registry(run)
    entry = registry.get(spec["retriever"], spec["version"])
    chunked = entry.chunking_path is not None  # retrieves chunk ids: indexes chunks, scored as documents
    try:
        retriever = build_retriever(entry, corpus=chunk_corpus(entry, snapshot) if chunked else snapshot.corpus,
                                    registry=registry, memory_budget=env.memory_budget_bytes,
                                    embedding_cache=None if chunked else embeddings)
    except EvalopsError:
        raise
    except Exception as exc:  # see the module docstring: a version that cannot load is a failed version
        raise EvalopsError(f"{entry.source}: version {spec['version']} could not be loaded: "
                           f"{type(exc).__name__}: {exc}") from exc
    # The breaker is sized for the whole version: once this shard alone has lost more queries than the
    # version's budget allows, the version fails whatever the other shards do, so stop calling. It guards
    # remote retrievers only (retrieve_run decides; a run file is read for every query).
    name = f"{spec['retriever']}@{spec['version']}"
    if getattr(retriever, "columnar", False):  # a run file in memory: columns, as `evalops evaluate` reads
        result = retrieve_table(retriever, queries.query_ids, k=env.k, name=name)
    else:
        breaker = CircuitBreaker(int(spec.get("n_queries") or len(queries.query_ids)), env.failure_budget)
        result = retrieve_run(retriever, queries.queries() if queries.history else queries.texts, k=env.k,
                              name=name, failure_budget=1.0, breaker=breaker)
    own_run = result.run  # chunk ids for a chunked version: what the span measures read
    if chunked:
        result = documents_of_chunks(entry, result, snapshot)
    return entry, result, own_run


def _context_frame(env: RunEnv, spec: dict[str, Any], queries: QuerySet, qrels: Any, result: Any,
                   measures: list[str]) -> pd.DataFrame:
    """The context measures of the answered queries, from the knowledge-base snapshot's text of their top k."""
    import pandas as pd

    depth = max(m.cutoff for m in parse_context_measures(measures))
    ranked = top_k(result.run.to_run() if isinstance(result.run, RunTable) else result.run, depth)
    answered = {q: t for q, t in queries.texts.items() if q not in result.failed}
    texts = env.inputs.document_texts(spec["snapshot_id"])
    values = context_values(measures, answered, ranked, texts, qrels=qrels.to_dict())
    ids = values.query_ids.tolist()
    return pd.DataFrame({"query_id": [q for _ in measures for q in ids],
                         "measure": [m for m in measures for _ in ids],
                         "value": [float(v) for m in measures for v in values.per_query[m]]})


def _answers(answers: dict[str, str], spec: dict[str, Any]) -> dict[str, str]:
    """The generated answers as kept in the work folder: production answers scrubbed like their queries
    (an answer may echo the personal data of the query it answers)."""
    if spec["dataset"] != PRODUCTION:
        return dict(answers)

    return {q: scrub(a).text for q, a in answers.items()}


def score_shard(env: RunEnv, run: RunContext, spec: ShardSpec | dict[str, Any]) -> dict[str, Any]:
    """Score shard ``spec.shard`` of ``spec.n_shards`` and write ``shard-NNNNN.parquet`` + ``.json``
    (``spec``: a :class:`ShardSpec` or its XCom form).

    Returns ``{"run_id", "shard", "queries", "failed", "error"}`` (counts and a flag, never data).
    """
    started = time.perf_counter()
    spec = ShardSpec.from_xcom(spec)
    queries = env.inputs.query_set(spec.dataset, spec.sample_folder)
    if len(queries.query_ids) != spec.n_queries:
        raise EvalopsError(
            f"{queries.source}: {len(queries.query_ids)} judged queries now, {spec.n_queries} when the run was "
            "planned; the query set changed during the run"
        )
    start, stop = shard_bounds(spec.n_queries, spec.n_shards, spec.shard)
    # a single shard scores the whole set (slicing it would copy its texts and restrict its judgments)
    shard = queries if (start, stop) == (0, len(queries.query_ids)) else queries.slice(start, stop)
    with run_lease(env.engine(), env.lease_seconds, [spec.run_id]):  # the heartbeat: a killed task stops renewing it
        frame, outcome = score_queries(env, spec.to_xcom(), shard, run)
    outcome.update(shard=spec.shard, n_shards=spec.n_shards, seconds=time.perf_counter() - started)
    path = shard_file(env, run, spec.run_id, spec.shard)
    write_frame(path, frame)
    unjudged = outcome.pop("unjudged", None)
    if unjudged is not None:
        write_unjudged(unjudged_file(path), unjudged)
    judged = outcome.pop("judged", None)
    if judged is not None:
        write_unjudged(judged_file(path), judged)
    path.with_suffix(".json").write_text(json.dumps(outcome, default=str))
    log.info("%s: %d queries, %d failed%s", spec.label, len(outcome["query_ids"]), len(outcome["failed"]),
             f", error: {outcome['error']}" if outcome["error"] else "")
    return {"run_id": spec.run_id, "shard": spec.shard, "queries": len(outcome["query_ids"]),
            "failed": len(outcome["failed"]), "error": bool(outcome["error"])}
