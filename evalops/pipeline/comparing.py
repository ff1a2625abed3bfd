"""Finish one version's run and compare it with its baseline.

``compare_version`` (mapped over the versions):

1. gathers the version's shard files and applies the failure policy to the whole version: any shard
   ``error`` or a failed share above ``Config.failure_budget`` makes the run ``failed`` (no scores kept);
   other failures make it ``partial`` (failed queries excluded, never scored as 0); else ``succeeded``;
2. stores the run with all its per-query scores and the per-measure aggregates (mean and 95% Student-t
   interval, ``evalops.metrics.summarize``) in one transaction, replacing what a previous attempt wrote (a
   re-run of a finished run replaces the finished result only here: until then it stays as it was);
3. promotes it when it is the re-score of a stale baseline (and it succeeded);
4. runs the paired comparison of every measure against the baseline run (``evalops.stats.compare``) and
   writes the records to the work folder. Before any number, the notes say how many of the judged queries
   each side answered (a failed query is unanswered, an empty answer is answered) and how the rest were
   treated: queries are paired by id, and only the queries both answered are compared. A side under
   ``regression.min_coverage`` (default 90%) of the judged queries makes every comparison ``inconclusive``
   (``partial_run``). The baseline version itself is never compared with its own earlier run.

Each comparison carries the judged coverage of both sides at the measure's cutoff (``evalops.judged.holes``) and
the bounds of the unjudged documents (``evalops.judged.bounds``: each unjudged (query, document) one grade in both
versions, and the condensed lists). They need both versions' rankings: each version's shards keep its
judged documents and its unjudged top-k ones, stored with the run (``run_rankings``), so a baseline scored
on another day is read from the warehouse. A baseline stored before rankings were kept has none: its
comparisons carry no bounds, and a regression the rule would re-read is withheld (and fails closed).
Gold queries with ``split: dev`` are left out of these comparisons (the pipeline alerts on ``test`` only);
their mean deltas are kept beside the test ones for the tuning warning. The comparisons are also read per
query type, language, split and log segment (``evalops.segments``; descriptive, one family per facet).

The bootstrap and the randomization test of a comparison are seeded by its data (:func:`data_seed` of the
paired query ids and values), not by the run's day: identical data gives identical intervals on any day.

The comparisons are decided in ``deciding``, which corrects the p-values across every measure and version
of the run together, as a family; a per-version task cannot see the family.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from evalops.context import parse_any_measure
from evalops.conversations.pipeline import by_conversation_inputs, drift_note, unit_note
from evalops.judged.bounds import pair_bounds, ranking_from_docs
from evalops.judged.holes import cutoff_of, judged_measure, judged_shift
from evalops.judged.unjudged import UnjudgedDocs, docs_from_bytes, docs_to_bytes, read_unjudged
from evalops.metrics import summarize
from evalops.pipeline.context import RunContext
from evalops.pipeline.facts import record_run_facts
from evalops.pipeline.registry import metric_policy
from evalops.pipeline.sources import long_document_attributes, share_rows, version_sources
from evalops.pipeline.specs import VersionSpec
from evalops.pipeline.workdir import WorkFolder, comparison_file, judged_file, read_frame, shard_file, unjudged_file
from evalops.segments import AGGREGATE_FACETS, segment_aggregates, segment_comparisons, split_queries
from evalops.stats import Coverage, align, compare
from evalops.util import utc
from evalops.warehouse import (
    RunRanking,
    get_fingerprint,
    get_run,
    load_ranking,
    load_scores,
    promote_baseline,
    record_breakdowns,
    record_run,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalops.pipeline.env import Measures, RunEnv
    from evalops.pipeline.queries import QuerySet
    from evalops.stats import Comparison

__all__ = ["VersionCompared", "VersionOutcome", "collect_version", "compare_version", "CI_LEVEL", "CI_METHOD"]

log = logging.getLogger(__name__)

CI_LEVEL = 0.95
CI_METHOD = "student-t"


@dataclass(frozen=True, eq=False)
class VersionOutcome:
    """A version's scores gathered from its shards, and the status the failure policy gives it."""

    frame: pd.DataFrame
    n_queries: int
    failed: dict[str, str]
    errors: list[str]
    status: str
    error: str | None
    retries: int = 0
    unjudged: Mapping[str, list[tuple[str, int]]] = field(default_factory=dict)
    n_empty: int = 0  # answered queries whose answer held no document (scored 0)
    judged: Mapping[str, list[tuple[str, int]]] = field(default_factory=dict)  # judged documents and ranks

    def ranked(self) -> UnjudgedDocs:
        """The version's ranked documents as far as the bounds need them (``evalops.judged.bounds``): the judged ones
        at every rank and the unjudged ones in the top k, with their ranks."""
        return UnjudgedDocs.merge([self.judged, self.unjudged])


@dataclass(frozen=True)
class VersionCompared:
    """What :func:`compare_version` did for one version: its warehouse run, the status it was stored with,
    how many comparisons it wrote, and the documents a dense encoder embedded or read from its cache."""

    run_id: int
    status: str
    comparisons: int
    embeddings: dict[str, int]

    def to_xcom(self) -> dict[str, Any]:
        """Plain JSON (what the DAG's ``compare`` task returns)."""
        return {"run_id": self.run_id, "status": self.status, "comparisons": self.comparisons,
                "embeddings": dict(self.embeddings)}


def collect_version(work: WorkFolder, failure_budget: float, run: RunContext, run_id: int, n_shards: int,
                    n_queries: int) -> VersionOutcome:
    """A version's shards gathered (``work``: the work folder's setting) and the failure policy applied."""
    import pandas as pd

    frames, failed, errors, retries, unjudged_parts, judged_parts, n_empty = [], {}, [], 0, [], [], 0
    for shard in range(n_shards):
        path = shard_file(work, run, run_id, shard)
        meta_path = path.with_suffix(".json")
        if not path.exists() or not meta_path.exists():
            raise FileNotFoundError(
                f"{path}: shard {shard + 1}/{n_shards} of run {run_id} has no scores; its score task did not "
                f"finish (or the work folder {work.work_dir} is not shared between workers)"
            )
        frames.append(read_frame(path))
        meta = json.loads(meta_path.read_text())
        failed.update(meta["failed"])
        retries += int(meta.get("retries") or 0)
        n_empty += int(meta.get("n_empty") or 0)
        if unjudged_file(path).exists():
            unjudged_parts.append(read_unjudged(unjudged_file(path)))
        if judged_file(path).exists():
            judged_parts.append(read_unjudged(judged_file(path)))
        if meta["error"]:
            errors.append(meta["error"])
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["query_id", "measure", "value"])
    unjudged: Mapping[str, list[tuple[str, int]]] = UnjudgedDocs.concat(unjudged_parts)
    judged: Mapping[str, list[tuple[str, int]]] = UnjudgedDocs.concat(judged_parts)
    share = len(failed) / n_queries if n_queries else 0.0
    if errors:
        status, error = "failed", errors[0]
    elif share > failure_budget:
        status = "failed"
        error = (f"{len(failed)} of {n_queries} queries failed ({share:.1%}), above the failure budget of "
                 f"{failure_budget:.1%}; first: " + "; ".join(f"{q}: {failed[q]}" for q in sorted(failed)[:3]))
    elif n_queries == 0:
        status, error = "failed", "there are no judged queries to score"
    else:
        status, error = ("partial" if failed else "succeeded"), None
    if status == "failed":
        frame, unjudged, judged = frame.iloc[0:0], {}, {}
    return VersionOutcome(frame, n_queries, failed, errors, status, error, retries, unjudged, n_empty, judged)


def _aggregates(frame: pd.DataFrame, measures: list[str]) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for measure in measures:
        values = frame.loc[frame["measure"] == measure, "value"].to_numpy(dtype=float)
        agg = summarize(values, confidence=CI_LEVEL)
        rows.append({"measure": measure, "n": agg.n, "mean": agg.mean, "ci_low": agg.ci_low, "ci_high": agg.ci_high})
    return pd.DataFrame(rows)


def compare_version(env: RunEnv, run: RunContext, spec: VersionSpec) -> VersionCompared:
    """Steps 1-4 of the module docstring for one version spec."""
    engine = env.engine()
    own = collect_version(env, env.failure_budget, run, spec.run_id, spec.n_shards, spec.n_queries)
    # span and chunk measures exist only on a text-anchored gold set (none on a production sample)
    spans, scored = set(env.measures.anchored), set(own.frame["measure"].unique().tolist())
    measures = [m for m in env.measures.compared if m not in spans or m in scored]
    _store_version(env, run, spec, engine, own)
    queries = env.inputs.query_set(spec.dataset, spec.sample_folder)
    facts = record_run_facts(engine, env, run, spec, queries, n_failed=len(own.failed))
    if spec.rescore_reason and own.status == "succeeded":
        promote_baseline(engine, spec.run_id, by="evalops", reason=spec.rescore_reason)
        log.info("%s: re-scored stale baseline promoted (run %s)", spec.label, spec.run_id)

    attributes = env.inputs.attributes(spec.dataset, spec.sample_folder)
    reading = _read_against_baseline(env, run, spec, engine, own, measures, attributes, queries)
    # sources of the retrieved contexts, and the means with their spread per segment, the long-document
    # segment included (evalops.sources, evalops.spread): in the comparison file and the warehouse
    sources = aggregates = None
    long_rule = None
    if own.status != "failed":
        if env.sources is not None:  # (the ranked documents of a large run are millions: merged only when read)
            sources = version_sources(env, spec, own.ranked(), reading.base_docs, queries)
        with_length, long_rule = long_document_attributes(env, spec, attributes, queries)
        aggregates = segment_aggregates(own.frame, with_length, measures, AGGREGATE_FACETS)
    # replaces what an earlier attempt wrote (a failed version keeps none)
    record_breakdowns(engine, spec.run_id, shares=share_rows(sources), spreads=aggregates or [])
    _write_comparison(env, run, spec, reading, sources=sources, aggregates=aggregates, long_rule=long_rule)
    return VersionCompared(spec.run_id, own.status, len(reading.comparisons), facts["embeddings"])


def _store_version(env: RunEnv, run: RunContext, spec: VersionSpec, engine: Any, own: VersionOutcome) -> None:
    """Step 2: store the version's run, its per-query scores, aggregates and kept ranking in one transaction.

    A re-run of a finished run is an attempt beside it (planning): this write replaces the finished result
    with the attempt's, its start and contracts included."""
    planned = get_run(engine, spec.run_id)
    fingerprint = get_fingerprint(engine, spec.fingerprint)
    record_run(
        engine, planned.key, fingerprint=fingerprint, logical_date=run.anchor, status=own.status,
        started_at=planned.attempt_started_at or planned.started_at, contracts=planned.attempt_contracts,
        finished_at=utc.now(), n_queries=own.n_queries,
        n_failed=len(own.failed), failed_query_ids=sorted(own.failed), error=own.error, scores=own.frame,
        aggregates=None if own.status == "failed" else _aggregates(own.frame, env.measures.scored),
        ci_level=CI_LEVEL, ci_method=CI_METHOD, n_retries=own.retries,
        ranking=None if own.status == "failed" else _kept_ranking(env.measures, env.k, own),
    )


@dataclass
class _BaselineReading:
    """What step 4 made of a version against its baseline: the notes (coverage, or why it was not compared),
    the comparisons of the test queries, the per-segment readings, the dev / test mean deltas (empty without
    dev queries), and the baseline's ranked documents for its source shares (None when not known)."""

    notes: list[str] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    segments: list[dict[str, Any]] = field(default_factory=list)
    dev_summary: dict[str, Any] = field(default_factory=dict)
    test_summary: dict[str, Any] = field(default_factory=dict)
    base_docs: Any = None


@dataclass(frozen=True, eq=False)
class _Baseline:
    """The baseline run as a comparison reads it: scored in this run (``today``) or stored in the warehouse.
    ``empty`` is None for a stored run (not known); ``ranking`` None for one stored before rankings were kept."""

    frame: pd.DataFrame
    failed: bool
    answered: int
    empty: int | None
    docs: Any
    ranking: Any


def _load_baseline(env: RunEnv, run: RunContext, spec: VersionSpec, engine: Any, base_id: int) -> _Baseline:
    """The baseline's scores, coverage and ranking: from its shards when it was scored in this run, else from
    the warehouse."""
    if spec.baseline_today:
        base = collect_version(env, env.failure_budget, run, base_id, spec.n_shards, spec.n_queries)
        docs = base.ranked()
        return _Baseline(base.frame, base.status == "failed", base.n_queries - len(base.failed), base.n_empty,
                         docs, ranking_from_docs(docs))
    base_run = get_run(engine, base_id)
    frame = load_scores(engine, base_id)
    kept = load_ranking(engine, base_id)
    stored_docs = None if kept is None else docs_from_bytes(kept.data)
    return _Baseline(frame, False, base_run.n_queries - base_run.n_failed, None, stored_docs,
                     None if stored_docs is None else ranking_from_docs(stored_docs))


def _read_against_baseline(env: RunEnv, run: RunContext, spec: VersionSpec, engine: Any, own: VersionOutcome,
                           measures: list[str], attributes: dict[str, dict[str, str]], queries: QuerySet
                           ) -> _BaselineReading:
    """Step 4: compare the version with its baseline run, or note why it is not compared (no baseline, the
    version failed, it is the baseline version itself, or the baseline failed in this run)."""
    reading = _BaselineReading()
    base_id = spec.baseline_run_id
    if base_id is None:
        reading.notes.append(spec.baseline_note or "no baseline to compare with")
    elif own.status == "failed":
        reading.notes.append("not compared: the version could not be scored")
    elif spec.version == spec.baseline_version:
        reading.notes.append("the baseline version itself: not compared with its own baseline run")
    else:
        base = _load_baseline(env, run, spec, engine, base_id)
        if base.failed:
            reading.notes.append(
                f"not compared: the baseline {spec.baseline_version} could not be scored in this run")
        else:
            reading.base_docs = base.docs
            _compare_paired(env, run, spec, own, base, base_id, measures, attributes, queries, reading)
    return reading


def _compare_paired(env: RunEnv, run: RunContext, spec: VersionSpec, own: VersionOutcome, base: _Baseline,
                    base_id: int, measures: list[str], attributes: dict[str, dict[str, str]], queries: QuerySet,
                    reading: _BaselineReading) -> None:
    """Step 4 proper, into ``reading``: the coverage note, the dev / test split, the bounds of the unjudged
    documents, the paired comparisons of the test queries and the per-segment readings."""
    notes = reading.notes
    coverage = _coverage(spec.n_queries, base.answered, own.n_queries - len(own.failed),
                         baseline_empty=base.empty, candidate_empty=own.n_empty)
    notes.append(coverage.describe())
    log.info("%s: %s", spec.label, coverage.describe())
    test_ids, dev_ids = split_queries(attributes)
    if dev_ids:
        notes.append(f"alerting on the {len(test_ids)} test queries; the {len(dev_ids)} dev (tuning) queries "
                     "are compared apart and never alerted on")
        reading.dev_summary = _split_summary(base.frame, own.frame, measures, dev_ids)
        reading.test_summary = _split_summary(base.frame, own.frame, measures, test_ids)
    in_test = (lambda f: f[~f["query_id"].isin(dev_ids)]) if dev_ids else (lambda f: f)
    missing = "intersection" if coverage.judged > min(coverage.baseline_answered,
                                                      coverage.candidate_answered) else "error"
    if base.ranking is None:
        notes.append(f"the baseline run {base_id} was stored before rankings were kept: no bounds of the "
                     "unjudged documents (a regression on a less judged candidate is withheld)")
    bounds = (None if base.ranking is None
              else _bounds(env, queries, base.ranking, ranking_from_docs(own.ranked()), measures))
    reading.comparisons = _compare(env, run, spec, in_test(base.frame), in_test(own.frame), measures, coverage,
                                   own.unjudged, missing=missing, bounds=bounds)
    reading.segments = _segments(env, spec, base.frame, own.frame, measures, attributes)


def _write_comparison(env: RunEnv, run: RunContext, spec: VersionSpec, reading: _BaselineReading, *,
                      sources: Any, aggregates: Any, long_rule: Any) -> None:
    """Write the version's comparison file to the work folder (what ``deciding`` and the report read)."""
    path = comparison_file(env, run, spec.run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "candidate_run_id": spec.run_id,
        "baseline_run_id": spec.baseline_run_id,
        "notes": reading.notes,
        "comparisons": [c.to_record() for c in reading.comparisons],
        # per segment (evalops.segments): this version's means, and each comparison read within segments
        "segment_aggregates": aggregates or [],
        "segments": reading.segments,
        "sources": sources,
        "long_documents": None if long_rule is None else long_rule.to_dict(),
        "splits": {"dev": reading.dev_summary, "test": reading.test_summary} if reading.dev_summary else {},
    }))


def _split_summary(base: pd.DataFrame, cand: pd.DataFrame, measures: list[str], queries: set[str]) -> dict[str, Any]:
    """Mean delta per measure over the paired ``queries`` (the dev / test reading of the tuning warning)."""
    out = {}
    for measure in measures:
        b = base[(base["measure"] == measure) & base["query_id"].isin(queries)].set_index("query_id")["value"]
        c = cand[(cand["measure"] == measure) & cand["query_id"].isin(queries)].set_index("query_id")["value"]
        both = (c - b).dropna()
        out[measure] = {"n": int(len(both)), "delta": float(both.mean()) if len(both) else None}
    return out


def _segments(env: RunEnv, spec: VersionSpec, base: pd.DataFrame, cand: pd.DataFrame,
              measures: list[str], attributes: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    """The comparison within each segment (``evalops.segments``), judged coverage beside each measure."""
    judged = {}
    context = set(env.measures.text)
    for measure in measures:
        if measure in context:
            continue  # a context measure reads texts, not judgments
        jm = judged_measure(measure, env.k)
        jb, jc = base[base["measure"] == jm], cand[cand["measure"] == jm]
        judged[measure] = (dict(zip(jb["query_id"], jb["value"])), dict(zip(jc["query_id"], jc["value"])))
    # seeded by the two versions' scores (the segment families are one version pair's): same data, same bounds
    b, c = (f.sort_values(["measure", "query_id"], kind="stable") for f in (base, cand))
    seed = data_seed(b["query_id"], b["measure"], b["value"], c["query_id"], c["measure"], c["value"])
    return segment_comparisons(base, cand, attributes, measures, env.policy(seed),
                               baseline_name=f"{spec.retriever}@{spec.baseline_version}",
                               candidate_name=f"{spec.retriever}@{spec.version}", judged=judged)


def _coverage(judged: int, baseline_answered: int, candidate_answered: int, *,
              baseline_empty: int | None = 0, candidate_empty: int = 0):
    """How many judged queries each side answered (a failed query is unanswered; an empty answer is answered,
    scored 0, and said: a run file's absent queries under ``missing: empty`` are answers, not coverage).
    ``baseline_empty`` None: not known (a stored baseline run)."""

    both = min(baseline_answered, candidate_answered)
    treatment = ("every judged query was answered by both" if both == judged else
                 "a query a side did not answer is left out of the comparison (never scored as 0); the "
                 "comparison covers the queries both answered")
    empties = [f"the {side}'s answers to {n} of them held no document (scored 0 on every measure: a run "
               "file's absent queries under `missing: empty`, or a retriever that found nothing)"
               for side, n in (("baseline", baseline_empty), ("candidate", candidate_empty)) if n]
    return Coverage(judged, baseline_answered, candidate_answered, "; ".join([treatment, *empties]))


def data_seed(*parts: Any) -> int:
    """A seed derived from data: the SHA-256 of ``parts`` (arrays or sequences of query ids and values, in
    order; values as float64), its first 8 bytes as a non-negative integer. Identical data gives the same
    seed on any day and machine; different data almost surely another one."""
    import hashlib

    import numpy as np

    digest = hashlib.sha256()
    for part in parts:
        array = np.asarray(part)
        if array.dtype.kind in "biuf":
            digest.update(b"n" + np.ascontiguousarray(array, dtype="<f8").tobytes())
        else:
            digest.update(b"s" + "\x1f".join(str(x) for x in array.reshape(-1).tolist()).encode("utf-8"))
        digest.update(b"\x1e")
    return int.from_bytes(digest.digest()[:8], "big") >> 1


def _kept_ranking(measures: Measures, k: int, outcome: VersionOutcome) -> RunRanking:
    """What the warehouse keeps of a version's ranking for later comparisons' bounds (``run_rankings``)."""
    docs = outcome.ranked()
    depth = max((cutoff_of(m, k) for m in measures.compared if m not in measures.text), default=k)
    return RunRanking(depth, docs.n_documents(), docs_to_bytes(docs))


def _bounds(env: RunEnv, queries: QuerySet, baseline: Any, candidate: Any, measures: list[str]) -> dict[str, Any]:
    """The bounds of the unjudged documents of every judged measure (``evalops.judged.bounds``), against the gold
    set's judgments the versions were scored on."""
    ir = [m for m in measures if m not in set(env.measures.text)]
    if not ir:
        return {}
    return pair_bounds(queries.qrels, baseline, candidate, ir, env.k, metric_policy())


def _compare(env: RunEnv, run: RunContext, spec: VersionSpec, base: pd.DataFrame, cand: pd.DataFrame,
             measures: list[str], coverage: Any, unjudged: dict[str, list[tuple[str, int]]], missing: str,
             bounds: Mapping[str, Any] | None = None) -> list[Comparison]:

    context = set(env.measures.text)

    policy = env.policy(run.seed)
    turns = env.inputs.conversations(spec.dataset)  # a conversational gold set is decided by conversation
    b_name = f"{spec.retriever}@{spec.baseline_version}"
    c_name = f"{spec.retriever}@{spec.version}"
    out = []
    for measure in measures:
        b = base[base["measure"] == measure]
        c = cand[cand["measure"] == measure]
        paired = align((b["query_id"].tolist(), b["value"].tolist()), (c["query_id"].tolist(), c["value"].tolist()),
                       missing=missing, baseline_name=b_name, candidate_name=c_name)
        # judged coverage at the measure's cutoff over the compared queries (none for a baseline stored
        # before Judged@k was scored, and none for a context measure, which reads texts, not judgments)
        direction = parse_any_measure(measure).higher_is_better
        judged = None
        if measure not in context:
            jm = judged_measure(measure, env.k)
            jb, jc = base[base["measure"] == jm], cand[cand["measure"] == jm]
            judged = judged_shift(measure, dict(zip(jb["query_id"], jb["value"])),
                                  dict(zip(jc["query_id"], jc["value"])), unjudged, cutoff_of(measure, env.k),
                                  queries=paired.query_ids.tolist(), bound=(bounds or {}).get(measure))
        extra: tuple[str, ...] = ()
        if turns is not None:
            turns_n, drift = paired.n, drift_note(paired, turns)
            paired, judged = by_conversation_inputs(paired, judged, turns)
            extra = (unit_note(paired.n, turns_n), drift)
        comp = compare(paired, measure=measure, policy=policy, baseline_name=b_name, candidate_name=c_name,
                       coverage=coverage, judged=judged, higher_is_better=direction,
                       rng=data_seed(paired.query_ids, paired.baseline, paired.candidate))
        out.append(replace(comp, notes=(*comp.notes, *extra)) if extra else comp)
    return out
