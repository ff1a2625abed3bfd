"""Plan a run: which versions to score on which query sets, and what each one is compared against.

Rules owned here:

* **Gold set.** Every deployed version is scored. A retriever's baseline is looked up under today's
  fingerprint. When it is **stale** (the gold set, the knowledge base, the measures or a policy changed),
  its version is re-scored in this run (even when it is no longer deployed) and the candidates are
  compared with that fresh run; the stored baseline is never compared across fingerprints. When the
  retriever has **no** baseline, nothing is compared and the report says to promote one.
* **Production queries.** Sampled log queries with implicit-feedback labels are a separate query set with
  its own fingerprint (the sample's version replaces the gold-set version). Every day's sample differs, so
  a candidate is compared with the baseline version scored on the same sample in the same run.
* Each (version, query set) is one warehouse run, created here as ``running`` under the run key, so a
  re-run of the DAG run writes the same rows. A re-run of a run that already finished leaves it as it is
  (status, scores, and any baseline naming it) and only opens an attempt beside it, with the lease: the
  final write in ``comparing`` replaces the result (``evalops.warehouse.record_run``). Killed before that,
  the day reads as before, and the attempt is dropped when its lease expires.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalops.config import DEFAULT_GOLD_SET, PRODUCTION
from evalops.conversations.pipeline import fingerprint_policy
from evalops.errors import ConfigError
from evalops.pipeline.adhoc import record_candidate
from evalops.pipeline.chunkings import chunking_record
from evalops.pipeline.context import RunContext
from evalops.pipeline.inputs import load_contracts
from evalops.pipeline.queries import gold_queries, production_queries
from evalops.pipeline.registry import fingerprint_for, load_registry_for
from evalops.pipeline.specs import ShardSpec, VersionSpec
from evalops.pipeline.store import engine_for
from evalops.util import utc
from evalops.warehouse import RunKey, abandon_expired_runs, find_baseline, record_gold_set_version, record_run

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config

log = logging.getLogger(__name__)

__all__ = ["plan_run", "shard_specs", "shard_bounds", "GOLD", "PRODUCTION"]

GOLD = DEFAULT_GOLD_SET


def plan_run(
    cfg: Config, run: RunContext, snapshot_id: str, gold_set_versions: dict[str, str] | str,
    log_sample: dict[str, Any], candidate: dict[str, Any] | None = None,
) -> list[VersionSpec]:
    """The version specs of this run (see the module docstring; :meth:`VersionSpec.to_xcom` for XCom).

    ``gold_set_versions`` maps each gold set's name to its version (``validate_inputs``); each gold set is
    its own query set (warehouse ``dataset``), with its own fingerprint, baselines and alerts. With a
    ``candidate`` (a registry entry, see :mod:`evalops.pipeline.adhoc`) only that version is scored,
    against its retriever's current baseline.
    """
    cfg.stats_policy(run.seed)  # a bad regression policy stops the run here, before anything is scored
    if isinstance(gold_set_versions, str):
        gold_set_versions = {DEFAULT_GOLD_SET: gold_set_versions}
    engine = engine_for(cfg)
    abandoned = abandon_expired_runs(engine)
    if abandoned:
        log.warning("marked %d run(s) whose lease expired as abandoned: %s", len(abandoned), abandoned)
    adhoc = None
    if candidate:
        adhoc = record_candidate(cfg, run, candidate)
    registry = load_registry_for(cfg, run)
    deployed = _deployed(cfg, registry, adhoc)
    prod_fp, n_prod = _production_fingerprint(cfg, run, engine, snapshot_id, log_sample)

    started = utc.now()
    contracts = {"rules": cfg.contract_rules(), "outcomes": load_contracts(cfg, run),
                 "trigger": run.trigger_record(), "adhoc_candidate": adhoc.key if adhoc is not None else None}
    plan = _RunPlan(cfg, run, engine, registry, snapshot_id, contracts, started)

    specs: list[VersionSpec] = []
    for retriever in sorted({e.name for e in deployed}):
        deployed_versions = [e.version for e in deployed if e.name == retriever]
        production_baseline: str | None = None
        production_versions: list[str] = list(deployed_versions)
        for dataset, gold_version in gold_set_versions.items():
            gold_specs, baseline_version, versions = plan.gold_specs(
                retriever, deployed_versions, dataset, gold_version, several=len(gold_set_versions) > 1)
            specs.extend(gold_specs)
            if production_baseline is None:
                production_baseline = baseline_version
                production_versions = list(versions)

        if prod_fp is not None:
            specs.extend(plan.production_specs(retriever, production_versions, production_baseline, prod_fp, n_prod,
                                               log_sample))
    return specs


def _deployed(cfg: Config, registry: Any, adhoc: Any) -> list[Any]:
    """The registry entries this run scores: the ad-hoc candidate alone, or every deployed version; each
    one's files checked against the memory budget. None deployed is a :class:`ConfigError`."""
    deployed = [registry.get(adhoc.name, adhoc.version)] if adhoc is not None else registry.deployed()
    if not deployed:
        files = ", ".join(str(p) for p in cfg.registry_files())
        raise ConfigError(f"{files}: no retriever version is deployed (set `deployed: true` on at least one)")
    for entry in deployed:
        entry.check_files(cfg.memory_budget_bytes)
    return deployed


def _production_fingerprint(cfg: Config, run: RunContext, engine: Any, snapshot_id: str,
                            log_sample: dict[str, Any]) -> tuple[Any, int]:
    """The production sample's fingerprint (None without a judged, versioned sample) and its judged queries;
    the sample is recorded in the warehouse as a query-set version."""
    prod_fp = None
    n_prod = int(log_sample.get("judged") or 0)
    if n_prod and log_sample.get("version"):
        prod_fp = fingerprint_for(cfg, log_sample["version"], snapshot_id, labels="implicit-feedback")
        record_gold_set_version(
            engine, log_sample["version"], name=f"production-sample {run.day}", n_queries=n_prod,
            n_judgments=len(production_queries(log_sample["folder"]).qrels), source=log_sample["folder"],
            meta={"kind": "production log sample", "window": log_sample.get("window")},
        )
    return prod_fp, n_prod


@dataclass(frozen=True)
class _RunPlan:
    """What every warehouse run of this DAG run shares: its key's DAG run, the registry and KB snapshot, the
    contracts it is made under and its start."""

    cfg: Config
    run: RunContext
    engine: Any
    registry: Any
    snapshot_id: str
    contracts: dict[str, Any]
    started: Any

    def open_run(self, retriever: str, version: str, dataset: str, fp: Any, n: int) -> int:
        """Create (or re-open as an attempt) the ``running`` warehouse run of one (version, query set)."""
        run, registry, contracts = self.run, self.registry, self.contracts
        key = RunKey(run.dag_id, run.run_id, retriever, version, dataset)
        chunking = (chunking_record(registry.get(retriever, version), self.snapshot_id)
                    if _registered(registry, retriever, version) else None)
        row = record_run(self.engine, key, fingerprint=fp, logical_date=run.anchor, status="running",
                         started_at=self.started, n_queries=n,
                         contracts=contracts if chunking is None else {**contracts, "chunking": chunking},
                         lease_seconds=self.cfg.lease_seconds)
        return row.id

    def gold_specs(self, retriever: str, deployed_versions: list[str], dataset: str, gold_version: str, *,
                   several: bool) -> tuple[list[VersionSpec], str | None, list[str]]:
        """One retriever's specs on one gold set: its baseline looked up under today's fingerprint, a stale
        one re-scored when still registered. Returns the specs, the baseline version (None: none to compare
        with) and the versions scored."""
        cfg, registry = self.cfg, self.registry
        gold_fp = fingerprint_for(cfg, gold_version, self.snapshot_id, extra=fingerprint_policy(cfg, dataset))
        n_gold = len(gold_queries(cfg, dataset).query_ids)
        lookup = find_baseline(self.engine, retriever, gold_fp)
        versions = list(deployed_versions)
        baseline_version = lookup.baseline.version if lookup.baseline is not None else None
        note, rescore_reason = _baseline_note(lookup, retriever, baseline_version)
        if lookup.is_stale and baseline_version not in versions:
            if _registered(registry, retriever, baseline_version):
                versions.append(baseline_version)
            else:
                note += f"; version {baseline_version} is no longer in the registry, so it cannot be re-scored"
                rescore_reason = None
                baseline_version = None
        if several:
            note = f"gold set {dataset}: {note}"

        gold_runs = {v: self.open_run(retriever, v, dataset, gold_fp, n_gold) for v in versions}
        if lookup.is_current:
            baseline_run_id, today = lookup.baseline.run_id, False
        elif rescore_reason is not None:
            baseline_run_id, today = gold_runs[baseline_version], True
        else:
            baseline_run_id, today = None, False
        specs = [_spec(
            cfg, retriever=retriever, version=v, dataset=dataset, run_id=gold_runs[v],
            fingerprint=gold_fp.hash, snapshot_id=self.snapshot_id, query_set_version=gold_version,
            n_queries=n_gold, baseline_version=baseline_version, baseline_run_id=baseline_run_id,
            baseline_today=today, baseline_note=note,
            rescore_reason=rescore_reason if (v == baseline_version and rescore_reason) else None,
            stored_baseline_run_id=lookup.baseline.run_id if lookup.baseline is not None else None,
        ) for v in versions]
        return specs, baseline_version, versions

    def production_specs(self, retriever: str, production_versions: list[str], production_baseline: str | None,
                         prod_fp: Any, n_prod: int, log_sample: dict[str, Any]) -> list[VersionSpec]:
        """One retriever's specs on the production sample: its versions of the first gold set, the baseline
        version scored beside them on the same sample (compared in this run)."""
        prod_versions = list(production_versions)
        if production_baseline and production_baseline not in prod_versions:
            prod_versions.append(production_baseline)
        prod_runs = {v: self.open_run(retriever, v, PRODUCTION, prod_fp, n_prod) for v in prod_versions}
        base_prod = prod_runs.get(production_baseline) if production_baseline else None
        return [_spec(
            self.cfg, retriever=retriever, version=v, dataset=PRODUCTION, run_id=prod_runs[v],
            fingerprint=prod_fp.hash, snapshot_id=self.snapshot_id, query_set_version=log_sample["version"],
            n_queries=n_prod, baseline_version=production_baseline, baseline_run_id=base_prod,
            baseline_today=True, baseline_note="compared with the baseline version on the same log sample",
            rescore_reason=None, sample_folder=log_sample["folder"],
        ) for v in prod_versions]


def _registered(registry: Any, retriever: str, version: str | None) -> bool:
    return version is not None and any(e.name == retriever and e.version == version for e in registry)


def _baseline_note(lookup: Any, retriever: str, baseline_version: str | None) -> tuple[str, str | None]:
    """Words for the report, and the promotion reason when the stale baseline is re-scored."""
    if lookup.is_current:
        b = lookup.baseline
        when = f"{b.promoted_at:%Y-%m-%d}"
        return f"baseline {retriever} {b.version} (run {b.run_id}, promoted {when} by {b.promoted_by})", None
    if lookup.is_stale:
        why = "; ".join(lookup.explanation) or ", ".join(lookup.changed)
        reason = f"stored baseline {retriever} {baseline_version} (run {lookup.baseline.run_id}) is stale ({why})"
        return reason + f"; re-scored {baseline_version} in this run", reason + "; re-scored under the new fingerprint"
    return (f"{retriever} has no baseline yet, so nothing is compared; promote a run with the promote_baseline "
            "DAG or 'evalops promote'"), None


def _spec(cfg: Config, *, retriever: str, version: str, dataset: str, run_id: int, fingerprint: str,
          snapshot_id: str, query_set_version: str, n_queries: int, baseline_version: str | None,
          baseline_run_id: int | None, baseline_today: bool, baseline_note: str, rescore_reason: str | None,
          sample_folder: str | None = None, stored_baseline_run_id: int | None = None) -> VersionSpec:
    role = "baseline" if version == baseline_version else "candidate" if baseline_version else "deployed"
    return VersionSpec(
        label=f"{retriever}@{version} {dataset}", retriever=retriever, version=version, dataset=dataset,
        role=role, run_id=run_id, fingerprint=fingerprint, snapshot_id=snapshot_id,
        query_set_version=query_set_version, n_queries=n_queries, n_shards=_n_shards(n_queries, cfg.shard_size),
        baseline_version=baseline_version, baseline_run_id=None if baseline_run_id == run_id else baseline_run_id,
        baseline_today=baseline_today, stored_baseline_run_id=stored_baseline_run_id, baseline_note=baseline_note,
        rescore_reason=rescore_reason, sample_folder=sample_folder,
    )


def _n_shards(n_queries: int, shard_size: int) -> int:
    return 1 if shard_size <= 0 or n_queries <= shard_size else math.ceil(n_queries / shard_size)


def shard_bounds(n_queries: int, n_shards: int, shard: int) -> tuple[int, int]:
    """``[start, stop)`` of shard ``shard`` over the sorted query ids: equal sizes, the remainder spread
    over the first shards, so every query is in exactly one shard."""
    base, extra = divmod(n_queries, n_shards)
    start = shard * base + min(shard, extra)
    return start, start + base + (1 if shard < extra else 0)


def shard_specs(cfg: Config, run: RunContext, versions: list[VersionSpec]) -> list[ShardSpec]:
    """One spec per (version, query set, shard): what the mapped ``score`` task receives."""
    return [shard for spec in versions for shard in VersionSpec.from_xcom(spec).shards()]
