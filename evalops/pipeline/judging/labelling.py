"""The judge step: label every version's top k (and answers) on every query set of the run, through the
warehouse cache, and record usage, missing labels, agreement, gate and what it measured in ``judge_runs``,
and its decided comparisons in ``ab_tests`` (each naming the judge run whose labels it is on), both in one
transaction per query set: stopped while writing, the step leaves both or neither, and a re-run (the task
retried, ``evalops run`` again) judges the query set again and completes it."""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from evalops.config import PRODUCTION
from evalops.judges.agreement import AgreementGate
from evalops.judges.base import JudgeBudgetError, JudgeItem, MissingBudget, summarize_missing
from evalops.judges.cache import CachedJudge
from evalops.judges.prompts import load_prompt
from evalops.pipeline.context import RunContext
from evalops.pipeline.judging.agreement import _agreement
from evalops.pipeline.judging.comparisons import JudgeComparison, _results
from evalops.pipeline.judging.items import _documents, _query_items, _retrieved
from evalops.pipeline.judging.preflight import JudgePreflight, _check, build_judge
from evalops.pipeline.judging.sampling import _gold_fields, _query_texts, _queue_sampled_queries

if TYPE_CHECKING:  # pragma: no cover
    from evalops.pipeline.specs import VersionSpec
    from evalops.config import Config
    from evalops.warehouse.domain import ABTestResult

log = logging.getLogger("evalops.pipeline.judging")


JUDGE_POLICY = {"pool": "union of every version's top k", "no_answer": "zero", "missing_label": "exclude query",
                "repeats": "averaged per query before pairing"}

#: Seconds between two progress lines of one query set's judging.
PROGRESS_SECONDS = 10.0

def _reporter(dataset: str, say: Callable[[str], None]) -> Callable[[int, int, int], None]:
    """``on_progress(done, total, missing)`` that says a line at most every ``PROGRESS_SECONDS`` and at the end."""
    lock = threading.Lock()
    last = [time.monotonic()]

    def report(done: int, total: int, missing: int) -> None:
        now = time.monotonic()
        with lock:
            if done < total and now - last[0] < PROGRESS_SECONDS:
                return
            last[0] = now
        say(f"judging {dataset}: {done}/{total} requests, {missing} missing")

    return report

def judge_versions(cfg: Config, run: RunContext, versions: Sequence[VersionSpec], *,
                   preflight: JudgePreflight | None = None, progress: Callable[[str], None] | None = None
                   ) -> dict[str, Any]:
    """Judge every version's top k on every query set of the run; record and return a summary per set.

    Returns ``{"status": "off"}`` when ``judge.kind`` is off, else ``{"status": "judged" | "failed",
    "scopes": {...}}`` with small dicts (ids, counts, gate decisions) for XCom; a failed step also has
    ``"cause"`` (one line). ``preflight`` is the outcome of an earlier :func:`preflight_judge` (``evalops
    run`` checks before scoring); without it the judge is checked here, before any judging.
    """
    settings = cfg.judge
    if settings.kind == "off" or not versions:
        return {"status": "off", "reason": "judge.kind is off" if settings.kind == "off" else "no versions"}
    from evalops.pipeline.store import engine_for
    from evalops.warehouse.judgments import WarehouseJudgmentStore, record_judge_run

    def say(message: str) -> None:
        log.info("%s", message)
        if progress is not None:
            progress(message)

    engine = engine_for(cfg)
    task = "context_relevance_graded" if settings.graded else "context_relevance"
    prompt = load_prompt(task)
    by_dataset: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for spec in versions:
        by_dataset[spec.dataset].append(spec)
    inner = build_judge(settings)
    scopes: dict[str, Any] = {}
    try:
        checked = preflight if preflight is not None else _check(inner)
        if not checked.ok:
            log.error("judge step failed: %s", checked.cause)
            for dataset in sorted(by_dataset):
                scopes[dataset] = _record_failure(engine, run, dataset, inner.fingerprint.to_dict(), prompt.ref,
                                                  str(checked.cause), record_judge_run)
            return {"status": "failed", "cause": checked.cause, "judge": inner.fingerprint.to_dict(),
                    "prompt": prompt.ref, "scopes": scopes}
        judge = CachedJudge(inner, WarehouseJudgmentStore(engine))
        documents = _documents(cfg, versions[0].snapshot_id)
        for dataset, specs in sorted(by_dataset.items()):
            scopes[dataset] = _judge_dataset(cfg, run, engine, judge, prompt, task, dataset, specs, documents,
                                             record_judge_run, say)
    finally:
        close = getattr(inner, "close", None)
        if close is not None:
            close()
    failed = {d: s["failed"] for d, s in scopes.items() if s.get("failed")}
    out = {"status": "failed" if failed else "judged", "judge": inner.fingerprint.to_dict(), "prompt": prompt.ref,
           "scopes": scopes}
    if failed:
        out["cause"] = "; ".join(f"{d}: {c}" for d, c in sorted(failed.items()))
    return out

def _record_failure(engine: Any, run: RunContext, dataset: str, judge: dict[str, Any], prompt: str, cause: str,
                    record: Any) -> dict[str, Any]:
    """Record a judge step that judged nothing (its preflight failed) for one query set."""
    values = {"judge": judge, "prompt": prompt, "items": 0, "requests": 0, "cache_hits": 0, "input_tokens": 0,
              "output_tokens": 0, "cost": 0.0, "missing": 0, "missing_reasons": {}, "agreement": None,
              "gate": {"status": "failed", "reason": cause},
              "results": {"policy": JUDGE_POLICY, "versions": {}, "excluded_queries": [], "failed": cause}}
    # an earlier attempt's comparisons are not this step's: none, stored with the record
    judge_run_id = record(engine, dag_id=run.dag_id, dag_run_id=run.run_id, scope=dataset, values=values,
                          comparisons=_stored([]))
    return {"judge_run_id": judge_run_id, "gate": "failed", "kappa": None, "items": 0, "requests": 0,
            "cache_hits": 0, "missing": 0, "withheld": True, "failed": cause}

def _judge_dataset(cfg: Config, run: RunContext, engine: Any, judge: Any, prompt: Any, task: str, dataset: str,
                   specs: list[VersionSpec], documents: dict[str, str], record: Any,
                   say: Callable[[str], None]) -> dict[str, Any]:
    s = cfg.judge
    k = s.top_k
    texts, queries = _query_texts(cfg, run, specs[0], s.production_queries)
    ranked: dict[str, dict[str, list[str]]] = {}
    failed: dict[str, dict[str, str]] = {}
    answers: dict[str, dict[str, str]] = {}
    for spec in specs:
        v = spec.version
        ranked[v], failed[v], answers[v] = _retrieved(cfg, run, spec, list(texts), k)
    pool = sorted({(q, d) for lists in ranked.values() for q, docs in lists.items() for d in docs})
    items = [JudgeItem(task, texts[q], context=documents.get(d, ""), sample=i) for q, d in pool for i in range(s.samples)]
    languages, references = _gold_fields(cfg, dataset)
    per_query = _query_items(texts, ranked, answers, documents, s.samples, references, k)
    hits_before, misses_before = judge.hits, judge.misses
    inner = getattr(judge, "inner", judge)
    if hasattr(inner, "on_progress"):
        inner.on_progress = _reporter(dataset, say)
    say(f"judging {dataset}: {len(items) + len(per_query)} labels (cached labels are not requested again)")
    judgments = judge.judge(items + [item for _, item in per_query])
    n_context = len(items)
    labels: dict[tuple[str, str], list[float | None]] = defaultdict(list)
    for (q, d), j in zip([p for p in pool for _ in range(s.samples)], judgments):
        labels[(q, d)].append(j.label)
    query_labels: dict[str, dict[str, dict[str, list[float | None]]]] = {}
    for ((measure, v, q), _), j in zip(per_query, judgments[n_context:]):
        query_labels.setdefault(measure, {}).setdefault(v, {}).setdefault(q, []).append(j.label)
    missing = summarize_missing(judgments, MissingBudget(s.missing_budget))
    usage = {"items": len(judgments), "requests": judge.misses - misses_before, "cache_hits": judge.hits - hits_before,
             "input_tokens": sum(j.input_tokens for j in judgments),
             "output_tokens": sum(j.output_tokens for j in judgments),
             "cost": float(sum(j.cost for j in judgments))}

    agreement = _agreement(queries, labels, s, pool, languages) if dataset != PRODUCTION else None

    gate_kappa = agreement.get("kappa") if agreement else None
    gate = AgreementGate(s.agreement_threshold).decide(gate_kappa)
    if dataset == PRODUCTION:
        gate["reason"] += " (kappa from the run's gold set)"
    results: dict[str, Any] = {"policy": JUDGE_POLICY, "versions": {}, "excluded_queries": []}
    comparisons: list[JudgeComparison] = []
    if missing.within_budget:
        measured, comparisons = _results(cfg, run, specs, ranked, labels, k, s.graded, query_labels)
        results.update(measured)
        results["answers"] = {v: len(a) for v, a in answers.items() if a}
        results["prompts"] = {m: load_prompt(item.task).ref for (m, _, _), item in per_query}
    else:
        results["withheld"] = (f"{missing.missing} of {missing.total} labels missing ({missing.share:.1%}), over "
                               f"the budget of {missing.budget:.1%}")
        try:
            MissingBudget(s.missing_budget).check(missing)
        except JudgeBudgetError as exc:  # the one wording of an exceeded budget
            results["failed"] = f"{exc} (judge.missing_budget)"
    if dataset == PRODUCTION:
        results["annotation_queue"] = _queue_sampled_queries(cfg, run, texts, judge.fingerprint)
    values = {"judge": judge.fingerprint.to_dict(), "prompt": prompt.ref, **usage, "missing": missing.missing,
              "missing_reasons": missing.to_dict(), "gate": gate, "agreement": agreement, "results": results}
    judge_run_id = record(engine, dag_id=run.dag_id, dag_run_id=run.run_id, scope=dataset, values=values,
                          comparisons=_stored(comparisons))
    say(f"judge {judge.fingerprint.describe()} on {dataset}: {usage['items']} items, {usage['requests']} requests, "
        f"{usage['cache_hits']} cached, {missing.missing} missing, "
        f"{usage['input_tokens'] + usage['output_tokens']} tokens")
    if results.get("failed"):
        log.error("judge step on %s failed: %s", dataset, results["failed"])
    return {"judge_run_id": judge_run_id, "gate": gate["status"], "kappa": gate_kappa, **usage,
            "missing": missing.missing, "withheld": "withheld" in results, "failed": results.get("failed"),
            "comparisons": len(comparisons)}


def _stored(comparisons: Sequence[JudgeComparison]) -> Callable[[int], list[ABTestResult]]:
    """The judge run's decided comparisons as its ``ab_tests`` rows, given its id: ``record_judge_run`` stores
    them with the run in one transaction (replacing what an earlier attempt of the step stored), so a step
    stopped while writing leaves both or neither, and a re-run completes the day."""
    return lambda judge_run_id: [c.stored(judge_run_id) for c in comparisons]
