"""Publish the run report (markdown + HTML) from what the warehouse and the decisions say.

After writing the report the step fails the run when a version could not be scored on the gold set:
the report and the alert exist, and the DAG run is red, so nobody mistakes it for a clean day.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.config import PRODUCTION
from evalops.errors import ConfigError
from evalops.floors import floor_checks
from evalops.judged.holes import HOLE_BOUND, beside_judged
from evalops.knowledge import KnowledgeBaseSnapshot
from evalops.pipeline.chunkings import chunking_notes
from evalops.pipeline.context import RunContext
from evalops.pipeline.deciding import load_decisions
from evalops.pipeline.errors import IncompleteRunError
from evalops.pipeline.holes import load_holes
from evalops.pipeline.inputs import load_contracts
from evalops.pipeline.prepared import discard_prepared
from evalops.pipeline.queries import production_queries
from evalops.pipeline.sources import report_sources, source_policies
from evalops.pipeline.tracked import log_run_to_mlflow
from evalops.pipeline.workdir import comparison_file, local_copy, manifest_file
from evalops.querylog import scrub
from evalops.reports import ABResult, ReportData, VersionScores, write_report
from evalops.segments import tuning_warnings
from evalops.stats import Comparison, Coverage
from evalops.stats.margins import DEFAULT_MARGINS
from evalops.tracking import TrackingError
from evalops.util import utc
from evalops.util.safetext import plain  # a retriever's error is untrusted text
from evalops.warehouse import get_fingerprint, get_run, load_aggregates, prune_query_scores

if TYPE_CHECKING:  # pragma: no cover
    from evalops.pipeline.env import RunEnv
    from evalops.pipeline.specs import VersionSpec

log = logging.getLogger(__name__)

__all__ = ["IncompleteRunError", "build_report_data", "publish_report"]


def _num(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _aggregates(engine: Any, run_id: int, measures: list[str]) -> dict[str, dict[str, Any]]:
    """The run's aggregates in the configured measure order."""
    found = {
        str(r.measure): {"mean": _num(r.mean), "ci_low": _num(r.ci_low), "ci_high": _num(r.ci_high), "n": int(r.n)}
        for r in load_aggregates(engine, run_id).itertuples(index=False)
    }
    return {m: found[m] for m in measures if m in found}


def _coverage_words(coverage: dict[str, Any] | None) -> str | None:
    if not coverage:
        return None

    return Coverage(**coverage).describe()


def _worst_with_text(comparison: Comparison, texts: dict[str, str], limit: int = 5) -> list[dict[str, Any]]:

    rows = []
    for q in comparison.worst_queries[:limit]:
        text = texts.get(q.query_id)
        rows.append({**dataclasses.asdict(q), "text": scrub(text).text if text else None})
    return rows


def contract_policies(contracts: dict[str, Any]) -> dict[str, str]:
    """The rules in force of each data contract, one report row each (``contracts.json`` of the run)."""
    out = {}
    for key, outcome in sorted(contracts.items()):
        rules = {k: v for k, v in (outcome.get("rules") or {}).items() if k != "snapshot_id" and v is not None}
        out[f"contract {key.replace(':', ' ')}"] = "; ".join(f"{k} {_show(v)}" for k, v in rules.items())
    return out


def contract_notes(contracts: dict[str, Any]) -> list[str]:
    """Expectations that did not apply to the data, contract warnings, and outcomes reused from an earlier
    validation of the same content (:mod:`evalops.pipeline.validated`), in words."""
    out = []
    for key, outcome in sorted(contracts.items()):
        name = key.replace(":", " ")
        out += [f"{name} contract: not applicable: {n['rule']} ({n['reason']})" for n in outcome.get("not_applicable", [])]
        out += [f"{name} contract: warning: {w}" for w in outcome.get("warnings", [])]
        if outcome.get("reused_from"):
            was = outcome["reused_from"]
            out.append(f"{name} contract: passed on the same content, rules and checks in {was['run']} at {was['at']}; "
                       "not validated again")
    return out


def trigger_notes(env: RunEnv, run: RunContext) -> list[str]:
    """How the run was started: the triggering asset events with their extra, and an ad-hoc candidate."""
    out = [f"triggered by the asset event {e['asset']}"
           + (f" of {e['source_dag_id']}/{e['source_run_id']}" if e.get("source_dag_id") else "")
           + f" with extra {json.dumps(e['extra'], ensure_ascii=False, sort_keys=True)}"
           for e in run.trigger_events]
    candidate = env.inputs.candidate(run)
    if candidate is not None:
        out.append(f"ad-hoc run: only the candidate {candidate.key} from the run's params was scored, against "
                   "its retriever's current baseline; no baseline was changed")
    return out


def _segment_aggregates(env: RunEnv, run: RunContext, run_id: int) -> list[dict[str, Any]]:
    """A version's means per segment, as its compare step wrote them (``evalops.segments``)."""
    import json

    path = comparison_file(env, run, run_id)
    return list(json.loads(path.read_text()).get("segment_aggregates") or []) if path.exists() else []


def _tuning_warnings(env: RunEnv, run: RunContext, versions: Sequence[VersionSpec]) -> list[str]:
    """The report's warning for tuning on the test set (``evalops.segments.tuning_warnings``)."""
    import json

    registry = env.inputs.registry(run)
    policy = env.policy(run.seed)
    wanted = env.measures.alerting
    out: list[str] = []
    for spec in versions:
        path = comparison_file(env, run, spec.run_id)
        splits = json.loads(path.read_text()).get("splits") if path.exists() else None
        if not splits or not spec.baseline_version:
            continue
        try:
            changed = (registry.get(spec.retriever, spec.version).params
                       != registry.get(spec.retriever, spec.baseline_version).params)
        except ConfigError:  # a baseline version no longer in the registry: its parameters are unknown
            changed = True
        dev = {m: v for m, v in splits["dev"].items() if m in wanted}
        out += tuning_warnings(dev, splits["test"], {m: policy.margin(m) for m in wanted}, params_changed=changed,
                               label=f"{spec.retriever} {spec.version} ({spec.dataset})")
    return out


def build_report_data(
    env: RunEnv, run: RunContext, versions: Sequence[VersionSpec], alerts: list[dict[str, Any]]
) -> ReportData:
    """The report's content for one run: each version's scores and floor checks, the A/B decisions the
    warehouse holds, the fingerprint and the policies in force, then the run's warnings, notes and failed
    steps."""
    engine = env.engine()
    rows = _version_rows(env, run, engine, versions)
    floors = _floor_rows(env, engine, versions)
    ab, notes = _ab_results(env, run, versions)
    gold_specs = [s for s in versions if s.dataset != PRODUCTION]
    fp = get_fingerprint(engine, gold_specs[0].fingerprint) if gold_specs else None
    components = _fingerprint_components(fp.to_dict() if fp is not None else {}, versions)
    policies = _report_policies(env, run, versions)
    notes = (trigger_notes(env, run) + contract_notes(load_contracts(env, run))
             + chunking_notes(env.inputs.registry(run), versions) + notes)
    # Judge-label results (evalops.pipeline.judging): their own rows, policies and notes; none when off.
    judge_rows, judge_policies, judge_notes = env.judging.report(run)
    warnings = _tuning_warnings(env, run, versions)
    ab, policies, notes = ab + judge_rows, {**policies, **judge_policies}, notes + judge_notes
    return ReportData(
        run_key=run.label,
        day=run.day,
        generated_at=utc.now().isoformat(timespec="seconds"),
        fingerprint=fp.hash if fp is not None else "-",
        fingerprint_components=components,
        policies=policies,
        versions=rows,
        ab_results=ab,
        changes=_changes(env, engine, versions),
        no_baseline=sorted({s.baseline_note for s in gold_specs if s.baseline_version is None}),
        stale_baselines=sorted({s.rescore_reason for s in versions if s.rescore_reason}),
        alerts=list(alerts),
        holes=load_holes(env, run),
        floors=floors,
        warnings=warnings,
        notes=notes,
        failed_steps=env.judging.failures(run),
        sources=report_sources(env, run, versions),
    )


def _version_rows(env: RunEnv, run: RunContext, engine: Any, versions: Sequence[VersionSpec]) -> list[VersionScores]:
    """One row per version scored today, judged coverage next to each measure, then the context measures;
    the stored baselines the comparisons used are labelled as such."""
    measures = beside_judged(env.measures.canonical, env.k) + env.measures.text
    rows: list[VersionScores] = []
    stored_baselines: set[int] = set()
    for spec in versions:
        stored = get_run(engine, spec.run_id)
        rows.append(VersionScores(
            spec.retriever, spec.version, spec.role, spec.dataset,
            _aggregates(engine, spec.run_id, measures),
            status=stored.status, n_queries=stored.n_queries, n_failed=stored.n_failed, run_key=str(spec.run_id),
            n_retries=stored.n_retries, segments=_segment_aggregates(env, run, spec.run_id),
        ))
        base = spec.baseline_run_id
        if base is not None and not spec.baseline_today and base not in stored_baselines:
            stored_baselines.add(base)
    return _with_stored_baselines(engine, rows, stored_baselines, measures)


def _with_stored_baselines(engine: Any, rows: list[VersionScores], stored_baselines: set[int],
                           measures: list[str]) -> list[VersionScores]:
    """One row per version: a stored baseline whose version was also scored today labels today's row; one
    not scored today gets its own row."""
    for base in sorted(stored_baselines):
        b = get_run(engine, base)
        label = f"baseline (comparisons use stored run {base}, {b.logical_date:%Y-%m-%d})"
        today = [i for i, r in enumerate(rows) if (r.retriever, r.version, r.query_set) == (
            b.key.retriever, b.key.version, b.key.dataset)]
        for i in today:
            rows[i] = dataclasses.replace(rows[i], role=label, stored_baseline=True)
        if not today:
            rows.append(VersionScores(
                b.key.retriever, b.key.version, label, b.key.dataset,
                _aggregates(engine, base, measures), status=b.status, n_queries=b.n_queries, n_failed=b.n_failed,
                run_key=str(base), n_retries=b.n_retries, stored_baseline=True,
            ))
    return rows


def _floor_rows(env: RunEnv, engine: Any, versions: Sequence[VersionSpec]) -> list[dict[str, Any]]:
    """The floor checks (``evalops.floors``) of each gold-set version that was scored, one row each."""
    return [{**check.to_dict(), "retriever": spec.retriever, "version": spec.version,
             "dataset": spec.dataset}
            for spec in versions if spec.dataset != PRODUCTION
            and get_run(engine, spec.run_id).status != "failed"
            for check in floor_checks(env.floors, spec.dataset, spec.run_id, load_aggregates(engine, spec.run_id))]


def _ab_results(env: RunEnv, run: RunContext, versions: Sequence[VersionSpec]) -> tuple[list[ABResult], list[str]]:
    """The A/B results of the run's decisions, their worst queries with their text, and the comparisons'
    notes in words."""
    texts: dict[str, dict[str, str]] = {}
    ab: list[ABResult] = []
    notes: list[str] = []
    for record in load_decisions(env.engine(), versions):  # from the warehouse: a lost work folder loses no row
        c = record.comparison
        if record.dataset not in texts:
            sample = next((s.sample_folder for s in versions if s.dataset == record.dataset), None)
            texts[record.dataset] = (env.inputs.query_set(record.dataset, None) if record.dataset != PRODUCTION
                                     else production_queries(sample)).texts
        ab.append(ABResult(
            comparison=c, retriever=record.retriever, baseline_version=record.baseline_version or "?",
            candidate_version=record.version, query_set=record.dataset,
            worst_queries=_worst_with_text(c, texts[record.dataset]),
            family=record.family, coverage=_coverage_words(c.coverage), segments=list(record.segments),
        ))
        notes += [f"{record.retriever} {record.version} {c.measure} ({record.dataset}): {n}"
                  for n in c.notes]
    return ab, notes


def _fingerprint_components(components: dict[str, Any], versions: Sequence[VersionSpec]) -> dict[str, Any]:
    """What the gold-set fingerprint hashes, and the production sample's version and fingerprint."""
    prod = next((s for s in versions if s.dataset == PRODUCTION), None)
    if prod is not None:
        components["production_sample_version"] = prod.query_set_version
        components["production_fingerprint"] = prod.fingerprint
    return components


def _report_policies(env: RunEnv, run: RunContext, versions: Sequence[VersionSpec]) -> dict[str, Any]:
    """Every policy in force, one report row each: the regression rule, budgets, floors, contracts and
    sources."""
    return {
        **{f"regression.{k}": v for k, v in env.alert_policy.items()},
        # with no single margin, the per-measure table decides: printed, as every policy is
        **({"regression.default_margins": ", ".join(f"{m} {v:g}" for m, v in DEFAULT_MARGINS.items())
            + " (evalops.stats.margins; a margins entry, then min_delta, overrides it)"}
           if env.alert_policy["min_delta"] is None else {}),
        "failure_budget": env.failure_budget,
        "shard_size": env.shard_size or "one shard per version",
        "aggregate CI": "95% Student-t interval of the mean",
        **{f"holes.{k}": v for k, v in HOLE_BOUND.items()},
        "alerting.fail_on": ", ".join(env.alerting.fail_on)
        + " (what alerts and fails `evalops gate`; evalops.failing)",
        **{f"floors.{name}": ", ".join(f"{m} >= {v:g}" for m, v in rule.floors.items())
           + f" (on the {rule.on.replace('_', ' ')}, {rule.severity})"
           for name, rule in env.floors.items()},
        **contract_policies(load_contracts(env, run)),
        # sources of the retrieved contexts and spread per segment (evalops.sources, evalops.spread)
        **source_policies(env.sources, env.long_document_percentile, _long_document_rule(env, run, versions)),
    }


def _long_document_rule(env: RunEnv, run: RunContext, versions: Sequence[VersionSpec]) -> dict[str, Any] | None:
    """The long-document rule a compare step recorded (its threshold in this knowledge base)."""
    import json

    for spec in versions:
        path = comparison_file(env, run, spec.run_id)
        rule = json.loads(path.read_text()).get("long_documents") if path.exists() else None
        if rule:
            return rule
    return None


def _changes(env: RunEnv, engine: Any, versions: Sequence[VersionSpec]) -> list[str]:
    """What differs from each retriever's stored baseline run: the knowledge base (documents added,
    removed, changed), the gold set, and the candidate versions' registry parameters."""

    out: list[str] = []
    registry = env.inputs.registry()  # the registry's entries: an ad-hoc candidate is not a change
    seen: set[tuple[str, ...]] = set()
    for spec in versions:
        # the stored baseline (current or stale), not today's re-score of it
        if spec.dataset == PRODUCTION or spec.stored_baseline_run_id is None:
            continue
        base = get_run(engine, spec.stored_baseline_run_id)
        key = (spec.retriever, str(base.id))
        if key not in seen:
            seen.add(key)
            bfp = base.fingerprint
            if bfp.kb_snapshot_id != spec.snapshot_id:
                old, new = manifest_file(env, bfp.kb_snapshot_id), manifest_file(env, spec.snapshot_id)
                if old.exists() and new.exists():
                    diff = KnowledgeBaseSnapshot.from_manifest(local_copy(old)).diff(
                        KnowledgeBaseSnapshot.from_manifest(local_copy(new)))
                    out.append(f"knowledge base {diff.summary()}")
                else:
                    out.append(f"knowledge base snapshot {bfp.kb_snapshot_id} → {spec.snapshot_id}")
            if bfp.gold_set_version != spec.query_set_version:
                out.append(f"gold set version {bfp.gold_set_version} → {spec.query_set_version}")
        if spec.role == "candidate" and spec.baseline_version:
            try:
                cand = registry.get(spec.retriever, spec.version).to_record()["params"]
                prev = registry.get(spec.retriever, spec.baseline_version).to_record()["params"]
            except ConfigError:  # an entry left the registry; the version names still say what changed
                cand = prev = None
            what = f"{spec.retriever} {spec.baseline_version} → {spec.version}"
            if cand is not None and cand != prev:
                keys = sorted(k for k in set(cand) | set(prev) if cand.get(k) != prev.get(k))
                what += ": " + ", ".join(f"{k} {_show(prev.get(k))} → {_show(cand.get(k))}" for k in keys)
            what += _chunking_change(registry, spec, env.home)
            out.append(what)
    return out


def _chunking_change(registry: Any, spec: VersionSpec, home: Path | None = None) -> str:
    """``; chunking "a.jsonl" → "b.jsonl"`` when the candidate's chunk manifest is not its baseline's: compared
    as resolved paths, shown relative to ``home`` (the project folder; each registry file's folder when None)
    where they lie inside it, else whole."""
    try:
        entries = [registry.get(spec.retriever, v) for v in (spec.baseline_version, spec.version)]
    except ConfigError:
        return ""
    paths = [e.chunking_path for e in entries]
    if paths[0] == paths[1]:
        return ""

    def shown(entry: Any, path: Path | None) -> str | None:
        if path is None:
            return None
        try:
            return path.resolve().relative_to(Path(home or entry.base_dir).resolve()).as_posix()
        except ValueError:
            return str(path)

    prev, cand = (shown(e, p) for e, p in zip(entries, paths, strict=True))
    return f"; chunking {_show(prev)} → {_show(cand)}"


def _show(value: Any) -> str:
    return "(unset)" if value is None else json.dumps(value, ensure_ascii=False)


def publish_report(
    env: RunEnv, run: RunContext, versions: Sequence[VersionSpec], alerts: list[dict[str, Any]] | None = None
) -> str:
    """Write the report and log the run to MLflow when the project sets ``mlflow``; returns the HTML path.
    Raises :class:`IncompleteRunError` afterwards when a gold version failed to score, the judge step failed,
    or the MLflow logging failed under ``mlflow.required`` (the DAG run fails; ``evalops run`` exits 5 or 8)."""
    paths = write_report(build_report_data(env, run, versions, alerts or []), env.report_dir)
    prune_old_scores(env, run)

    discard_prepared(env)  # the copies of the inputs hold unscrubbed text: they live for one run only
    failed = []
    engine = env.engine()
    for s in versions:
        if s.dataset == PRODUCTION:
            continue
        stored = get_run(engine, s.run_id)
        if stored.status == "failed":
            error = (stored.error or "").strip()
            reason = plain(error.splitlines()[0], 300) if error else ""
            failed.append(f"{s.label} ({reason})" if reason else s.label)
    problems = []
    if failed:
        problems.append(f"{'; '.join(failed)}: could not be scored (see the alert and {paths.html}); the other "
                        "versions' results are stored")

    problems += [f"judge step on {scope} failed: {cause} (see the judge_failed alert and {paths.html})"
                 for scope, cause in env.judging.failed_steps(run)]
    try:
        # raises only under mlflow.required (evalops.pipeline.tracked)
        log_run_to_mlflow(env.mlflow, env.engine(), env.measures.canonical, run, versions)
    except (TrackingError, ConfigError) as exc:
        problems.append(f"MLflow logging failed (mlflow.required): {exc}")
    if problems:
        raise IncompleteRunError("; ".join(problems))
    return str(paths.html)


def prune_old_scores(env: RunEnv, run: RunContext) -> int:
    """Apply ``query_score_retention_days``: delete the per-query scores of runs older than that many days
    before this run's day (see :func:`evalops.warehouse.prune_query_scores` for what is kept)."""
    if env.query_score_retention_days <= 0:
        return 0
    before = run.anchor - dt.timedelta(days=env.query_score_retention_days)
    deleted = prune_query_scores(env.engine(), before)
    log.info("retention: %d per-query scores of runs before %s deleted (query_score_retention_days=%d)",
             deleted, before.date().isoformat(), env.query_score_retention_days)
    return deleted

