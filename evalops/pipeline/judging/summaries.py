"""The judge steps of a run as the report reads them: rows, policies and notes, and the failed steps.

A judge step is read from ``judge_runs`` (the judge, its usage, gate and what it measured) and its
comparisons from ``ab_tests`` (the rows naming the judge run), as every stored comparison is."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from evalops.pipeline.context import RunContext
from evalops.reports import ABResult
from evalops.stats import Comparison

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config
    from evalops.warehouse.domain import ABTestResult


def judge_report(cfg: Config, run: RunContext) -> tuple[list[Any], dict[str, Any], list[str]]:
    """(A/B rows, policies, notes) of the run's judge steps for the report; empty when the judge is off.

    Every row names the judge and its kind in the query set ("gold, judge fake-judge [LLM]") and a
    comparison the gate keeps descriptive says so first in its reasons, whatever its decision.
    """
    if cfg.judge.kind == "off":
        return [], {}, []
    rows: list[Any] = []
    policies: dict[str, Any] = {}
    notes: list[str] = []
    for rec, stored in judge_steps(cfg, run):
        comparisons = [s.comparison for s in stored]
        judge = rec["judge"]
        scope = rec["scope"]
        who = f"{judge['model']} [{judge['kind']}]"
        gate = rec["gate"]
        policies[f"judge ({scope})"] = (f"{who}, prompt {rec['prompt']}, {rec['items']} labels: {rec['requests']} "
                                       f"requested, {rec['cache_hits']} cached, {rec['missing']} missing; "
                                       f"{rec['input_tokens']} input + {rec['output_tokens']} output tokens, "
                                       f"cost {rec['cost']:.4f}")
        policies[f"judge gate ({scope})"] = gate["reason"]
        agreement = rec.get("agreement") or {}
        if agreement.get("n"):
            langs = ", ".join(f"{lang} {v['kappa'] if v['kappa'] is None else round(v['kappa'], 3)} (n={v['n']})"
                              for lang, v in agreement.get("per_language", {}).items())
            kappa = agreement.get("kappa")
            notes.append(f"judge agreement on {scope}: {agreement['kind']} kappa "
                         f"{'n/a' if kappa is None else round(kappa, 3)} over {agreement['n']} pairs with human grades"
                         + (f"; per language: {langs}" if langs else "") + f"; confusion {agreement['confusion']}")
        results = rec["results"] or {}
        if results.get("prompts"):
            policies[f"judge measures ({scope})"] = "; ".join(
                f"judge:{m} (prompt {p})" for m, p in sorted(results["prompts"].items()))
            if results.get("answers"):
                policies[f"judge measures ({scope})"] += "; generated answers judged: " + ", ".join(
                    f"{v} {n}" for v, n in sorted(results["answers"].items()))
        for m, by_version in sorted((results.get("excluded_by_measure") or {}).items()):
            notes.append(f"judge:{m} on {scope}: " + ", ".join(f"{v} {n} queries excluded for a missing label"
                                                               for v, n in sorted(by_version.items())))
        for name, fam in sorted((results.get("families") or {}).items()):
            looks = _family_looks(fam, [s.comparison for s in stored if s.family == name])
            policies[f"judge family {name}"] = (f"{fam['size']} comparisons ({fam['scope']}), {fam['correction']} "
                                                f"at alpha {fam['alpha']}" + (f"; {looks}" if looks else ""))
        queue = results.get("annotation_queue")
        if queue:
            notes.append(f"annotation queue: {queue['added']} of the {queue['offered']} judged {scope} queries added "
                         f"as {queue['source']} rows for human labels ({queue['path']})")
        if results.get("withheld"):
            notes.append(f"judge results on {scope} withheld: {results['withheld']}")
        if results.get("failed"):
            policies[f"judge gate ({scope})"] = f"failed: {results['failed']}"
        if results.get("excluded_queries"):
            notes.append(f"judge on {scope}: {len(results['excluded_queries'])} queries excluded for a missing label")
        for c in comparisons:
            retriever, _, base = c.baseline_name.rpartition("@")
            if gate["status"] != "alerting":
                c = dataclasses.replace(c, decision=f"descriptive ({c.decision})",
                                        reasons=("descriptive only: " + gate["reason"], *c.reasons))
            rows.append(ABResult(comparison=c, retriever=retriever, baseline_version=base,
                                 candidate_version=c.candidate_name.rpartition("@")[2],
                                 query_set=f"{scope}, judge {who}"))
    return rows, policies, notes


def judge_steps(cfg: Config, run: RunContext) -> list[tuple[dict[str, Any], list[ABTestResult]]]:
    """Each judge step of this run (its ``judge_runs`` row) with its stored comparisons (``ab_tests``)."""
    from evalops.pipeline.store import engine_for
    from evalops.warehouse.abtests import judge_ab_tests
    from evalops.warehouse.judgments import load_judge_runs

    engine = engine_for(cfg)
    frame = load_judge_runs(engine, run.run_id)
    records: list[dict[str, Any]] = frame.to_dict("records") if len(frame) else []  # type: ignore[assignment]
    steps = [rec for rec in records if rec["dag_id"] == run.dag_id]
    stored = judge_ab_tests(engine, [int(rec["id"]) for rec in steps])
    return [(rec, stored[int(rec["id"])]) for rec in steps]


def _family_looks(family: dict[str, Any], members: list[Comparison]) -> str:
    """What decided each candidate's members of the family: the pooled test (the looks since the restart,
    since which day and why, the queries pooled; its record's ``pooled``) or the spending rule (the look
    counter, alpha spent over the looks: a measure not declared within [0, 1])."""
    parts = []
    for cand, n in sorted(family["looks"].items()):
        mine = [c for c in members if c.candidate_name == cand]
        pooled: dict[tuple[int, str, str, int], list[str]] = {}
        for c in mine:
            if c.pooled:
                p: Any = c.pooled
                pooled.setdefault((int(p["looks"]), str(p["since"]), str(p["restart"]), int(p["queries"])),
                                  []).append(c.measure)
        if not pooled:
            parts.append(f"{cand} look {n}")
            continue
        for (k, since, restart, queries), measures in sorted(pooled.items()):
            parts.append(f"{cand} pooled over {k} look{'s' if k != 1 else ''} since {since} ({restart}), "
                         f"{queries:,} queries ({', '.join(measures)})")
        spent = [c.measure for c in mine if not c.pooled]
        if spent:
            parts.append(f"{cand} look {n}, alpha spent over the looks ({', '.join(spent)})")
    return "; ".join(parts)


def failed_judge_steps(cfg: Config, run: RunContext) -> list[tuple[str, str]]:
    """(query set, one-line cause) of every failed judge step of this run."""
    return [(scope, cause) for scope, cause, _ in _failed_steps(cfg, run)]

def _failed_steps(cfg: Config, run: RunContext) -> list[tuple[str, str, dict[str, Any]]]:
    """(query set, cause, judge) of every failed judge step of this run, from ``judge_runs``."""
    if cfg.judge.kind == "off":
        return []
    from evalops.pipeline.store import engine_for
    from evalops.warehouse.judgments import load_judge_runs

    frame = load_judge_runs(engine_for(cfg), run.run_id)
    return [(rec["scope"], str((rec["results"] or {})["failed"]), rec["judge"])
            for rec in (frame.to_dict("records") if len(frame) else [])
            if rec["dag_id"] == run.dag_id and (rec["results"] or {}).get("failed")]

def judge_failures(cfg: Config, run: RunContext) -> list[str]:
    """One line per failed judge step of this run (the report's "Failed steps" section leads with them)."""
    return [f"judge step on {scope} failed: {cause}. No judge-label results for {scope} in this run; the "
            f"gold-grade results below are complete." for scope, cause in failed_judge_steps(cfg, run)]
