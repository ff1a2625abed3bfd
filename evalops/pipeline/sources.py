"""Sources and spread in the run: the per-version source shares written by the compare step, their alerts,
and the long-document segment (``evalops.sources``, ``evalops.spread``).

The compare step has both versions' rankings (the judged documents at every rank, the unjudged ones in the
measures' deepest cutoff): :func:`version_sources` counts each version's sources in them with today's
source labels, so the baseline's shares are counted under the same labels and k as the candidate's. The
record goes to the version's comparison file (``sources``) and to the warehouse (``source_shares``);
:func:`source_alerts_for` raises a ``source_share`` alert for every source whose shift breaches the bound,
through the run's one alert path (stored, then sent). A source-share alert is a warning: the bound is the
project's, the figures are counts, not a test.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.alerting import Alert
from evalops.alerting.model import AlertKind, Severity
from evalops.config import PRODUCTION
from evalops.errors import InputError
from evalops.judged.holes import cutoff_of
from evalops.sources import SourcePolicy, SourceShare, share_shifts, source_shares
from evalops.util.safetext import plain

if TYPE_CHECKING:  # pragma: no cover
    from evalops.alerting import Alert
    from evalops.config import Config
    from evalops.pipeline.context import RunContext
    from evalops.pipeline.env import Measures, RunEnv
    from evalops.pipeline.queries import QuerySet
    from evalops.pipeline.specs import VersionSpec
    from evalops.pipeline.workdir import WorkFolder
    from evalops.spread import LongDocumentRule

__all__ = ["long_document_attributes", "source_alerts_for", "source_policies", "source_policy", "version_sources"]

log = logging.getLogger(__name__)


def source_policy(cfg: Config) -> SourcePolicy | None:
    """The project's source policy, or None when no source field is declared."""
    s = cfg.knowledge_base.sources
    if not s.field:
        return None
    return SourcePolicy(field=s.field, k=s.k, max_shift=s.max_share_shift, unlabelled=s.unlabelled)


def source_policies(policy: SourcePolicy | None, percentile: float | None,
                    rule: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The report's policy lines of sources and spread: the source ``policy`` (:func:`source_policy`), the
    long-document ``percentile`` of the settings, and the ``rule`` a compare step recorded, if any."""
    from evalops.spread import LongDocumentRule

    out: dict[str, Any] = {
        "sources": "no source field declared (knowledge_base.sources.field)" if policy is None else policy.describe(),
        "segments.spread": "sample variance and standard deviation (ddof=1) and the 10th, 50th and 90th "
                           "percentiles (numpy's linear interpolation) of the per-query values",
    }
    if rule:
        out["segments.long_documents"] = LongDocumentRule(float(rule["percentile"]), rule.get("threshold")).describe()
    elif percentile is not None:
        out["segments.long_documents"] = LongDocumentRule(percentile).describe()
    else:
        out["segments.long_documents"] = "off (knowledge_base.long_document_percentile is not set)"
    return out


@lru_cache(maxsize=4)
def _labels(path: str, field: str, stamp: tuple[int, int]) -> dict[str, str]:
    from evalops.knowledge.labels import document_sources

    return document_sources(path, field)


def source_labels(path: Path, field: str) -> dict[str, str]:
    """Each document's source label in ``field`` of the knowledge base at ``path``, read again when its corpus
    file changed."""
    corpus = path / "corpus.jsonl" if path.is_dir() else path
    try:
        stat = os.stat(corpus)
        stamp = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        stamp = (0, 0)  # the reader names the problem
    return _labels(str(path), field, stamp)


def _depth(measures: Measures, k: int) -> int:
    """How deep a kept ranking holds every document (the unjudged ones to the measures' deepest cutoff)."""

    context = set(measures.text)
    return max((cutoff_of(m, k) for m in measures.scored if m not in context), default=k)


def version_sources(env: RunEnv, spec: VersionSpec, ranked: Mapping[str, Any],
                    baseline_ranked: Mapping[str, Any] | None, queries: QuerySet) -> dict[str, Any] | None:
    """The sources record of one version (None when no source field is declared): its shares with
    precision, the baseline's shares and the shifts when ``baseline_ranked`` is given, and the policy;
    ``queries``: the version's query set (its judgments)."""
    policy = env.sources
    if policy is None:
        return None
    notes = []
    depth = _depth(env.measures, env.k)
    if policy.k > depth:
        notes.append(f"knowledge_base.sources.k is {policy.k} but the rankings are kept to rank {depth} (the "
                     f"measures' deepest cutoff): the shares count the top {depth}")
        policy = SourcePolicy(policy.field, depth, policy.max_shift, policy.unlabelled, policy.relevance_level)
    labels = env.inputs.document_sources(policy.field)
    grades = queries.qrels.to_dict()
    shares = source_shares(ranked, labels, policy, grades)
    record: dict[str, Any] = {"policy": policy.to_dict(), "shares": [s.to_dict() for s in shares],
                              "baseline": None, "shifts": [], "notes": notes,
                              "retriever": spec.retriever, "version": spec.version,
                              "baseline_version": spec.baseline_version, "dataset": spec.dataset}
    if baseline_ranked is not None:
        base = source_shares(baseline_ranked, labels, policy, grades)
        record["baseline"] = [s.to_dict() for s in base]
        record["shifts"] = [s.to_dict() for s in share_shifts(base, shares, policy.max_shift)]
    return record


def share_rows(record: Mapping[str, Any] | None) -> list[dict[str, Any]] | None:
    """The warehouse rows (``source_shares``) of a sources record."""
    if record is None:
        return None
    policy = record["policy"]
    shifts = {s["source"]: s for s in record.get("shifts") or []}
    rows = []
    for share in record["shares"]:
        shift = shifts.get(share["source"])
        rows.append({**share, "field": policy["field"], "k": policy["k"], "bound": policy["max_shift"],
                     "baseline_share": None if shift is None else shift["baseline"],
                     "shift": None if shift is None else shift["shift"]})
    for source, shift in shifts.items():  # a source the candidate no longer retrieves: share 0, the shift kept
        if not any(r["source"] == source for r in rows):
            rows.append({"source": source, "field": policy["field"], "k": policy["k"], "slots": 0,
                         "total": sum(s["slots"] for s in record["shares"]), "share": 0.0, "judged": 0,
                         "relevant": 0, "precision": None, "bound": policy["max_shift"],
                         "baseline_share": shift["baseline"], "shift": shift["shift"]})
    return sorted(rows, key=lambda r: r["source"])


def long_document_attributes(env: RunEnv, spec: VersionSpec, attributes: Mapping[str, Mapping[str, str]],
                             queries: QuerySet) -> tuple[dict[str, dict[str, str]], LongDocumentRule | None]:
    """``attributes`` with each judged query's ``length`` segment (``evalops.spread``), and the rule with its
    threshold; unchanged (and no rule) for a knowledge base without text."""
    from evalops.knowledge.labels import document_lengths
    from evalops.spread import long_document_segments

    percentile = env.long_document_percentile
    if percentile is None:  # off: the segment needs every document's text, which a known knowledge base skips
        return {q: dict(a) for q, a in attributes.items()}, None
    try:
        snapshot = env.inputs.snapshot(spec.snapshot_id)
    except InputError as exc:  # the knowledge base changed since planning: the segment is left out, said
        log.warning("%s: no long-document segment: %s", spec.label, exc)
        return {q: dict(a) for q, a in attributes.items()}, None
    if not snapshot.has_text:
        return {q: dict(a) for q, a in attributes.items()}, None
    segments, rule = long_document_segments(queries.qrels.to_dict(), document_lengths(snapshot.docs), percentile)
    out = {q: dict(a) for q, a in attributes.items()}
    for query, segment in segments.items():
        out.setdefault(query, {})["length"] = segment
    return out, rule


def _share_text(value: float) -> str:
    return f"{100 * value:.1f}%"


def shift_alert(record: Mapping[str, Any], shift: Mapping[str, Any], *, fingerprint: str | None, day: str,
                report_location: str | None, run_id: int) -> Alert:
    """The ``source_share`` alert of one breached shift (pure): names the source, both shares, the bound."""
    import hashlib


    policy = record["policy"]
    source = plain(shift["source"], 100)
    title = (f"Source share moved: {record['retriever']} {record['version']}: {source} "
             f"{_share_text(shift['baseline'])} -> {_share_text(shift['candidate'])} of the top {policy['k']}")
    lines = [title,
             (f"The share of the top-{policy['k']} slots filled by documents of source {source!r} moved by "
              f"{100 * shift['shift']:+.1f} points against the baseline {record['baseline_version']}, beyond the "
              f"bound of {100 * policy['max_shift']:.1f} points (knowledge_base.sources.max_share_shift)."), "",
             "Shares (baseline -> candidate), precision of the candidate's judged documents:"]
    precision = {s["source"]: s for s in record["shares"]}
    for s in record["shifts"]:
        p = precision.get(s["source"], {}).get("precision")
        lines.append(f"  {plain(s['source'], 100)}: {_share_text(s['baseline'])} -> {_share_text(s['candidate'])}"
                     + ("" if p is None else f", precision {p:.2f}") + (" (beyond the bound)" if s["breached"] else ""))
    key = shift["source"]
    if len(key) > 150:  # the alert's measure column holds 200 characters: a long name keeps a digest
        key = key[:120] + "#" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    return Alert(kind=AlertKind.SOURCE_SHARE, severity=Severity.WARNING, day=day, title=title,
                 message="\n".join(lines), retriever=record["retriever"], version=record["version"],
                 measure=f"source-share@{policy['k']}:{key}", fingerprint=fingerprint,
                 report_location=report_location,
                 details={"run_id": run_id, "dataset": record["dataset"], "source": shift["source"],
                          "baseline_share": shift["baseline"], "candidate_share": shift["candidate"],
                          "shift": shift["shift"], "bound": policy["max_shift"], "k": policy["k"]})


def read_sources(work: WorkFolder, run: RunContext, run_id: int) -> dict[str, Any] | None:
    """The sources record a version's compare step wrote, or None."""
    from evalops.pipeline.workdir import comparison_file

    path = comparison_file(work, run, run_id)
    return json.loads(path.read_text()).get("sources") if path.exists() else None


def source_alerts_for(env: RunEnv, run: RunContext, versions: Sequence[VersionSpec]) -> list[Alert]:
    """A ``source_share`` alert for every gold-set version's source whose share moved beyond the bound."""
    from evalops.pipeline.workdir import report_file

    policy = env.sources
    if policy is None or policy.max_shift is None:
        return []
    alerts = []
    for spec in versions:
        if spec.dataset == PRODUCTION:
            continue
        record = read_sources(env, run, spec.run_id)
        if record is None:
            continue
        for shift in record.get("shifts") or []:
            if shift["breached"]:
                alerts.append(shift_alert(record, shift, fingerprint=spec.fingerprint, day=run.day,
                                          report_location=report_file(env.report_dir, run), run_id=spec.run_id))
    return alerts


def report_sources(work: WorkFolder, run: RunContext, versions: Sequence[VersionSpec]) -> list[dict[str, Any]]:
    """Each version's sources record (the report's section), in the versions' order."""
    out = []
    for spec in versions:
        record = read_sources(work, run, spec.run_id)
        if record is not None:
            out.append(record)
    return out


def shares_of(record: Mapping[str, Any]) -> list[SourceShare]:
    """The :class:`SourceShare` rows of a record (for readers that recompute)."""
    return [SourceShare(s["source"], s["slots"], s["total"], s["judged"], s["relevant"]) for s in record["shares"]]
