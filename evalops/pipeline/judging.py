"""Judge the top k contexts of every version with the configured judge, and score versions on judge labels.

One step after scoring (``judge_versions``), for every query set of the run:

* **Which queries.** Gold queries: all of them (their human grades measure the judge's agreement).
  Production queries: a seeded sample of ``judge.production_queries`` of the day's log sample (seed = the
  run's seed), so a re-run judges the same queries.
* **What is judged.** Each version's top ``judge.top_k`` documents (retrieved again from the version, as
  the scoring step does), each (query, document text) pair with the ``context_relevance`` prompt (binary)
  or ``context_relevance_graded`` (0-3), ``judge.samples`` times. Through the warehouse cache: a pair
  already judged under the same model, prompt version and decoding costs nothing.
* **Measures.** Per query and version: ContextPrecision@k (RAGAS), P@k and nDCG@k over the judge labels
  of the query's **pool** (every document any version put in its top k), so versions share one ideal
  ranking; repeats are averaged per query before anything is compared. A query with a missing label in
  a version's top k is excluded for every version (counted), never scored as irrelevant; a query set
  whose missing share exceeds ``judge.missing_budget`` has no judge results.
* **Agreement and the gate.** On gold queries, judge labels vs human grades for the pairs both labelled
  (Cohen's kappa: unweighted binary, quadratic-weighted graded; confusion matrix; per language) and, with
  repeats, Krippendorff's alpha across samples. The gate (``judge.agreement_threshold``, default 0.6):
  judge-label comparisons are ``alerting`` only when the gold kappa reaches it, otherwise
  ``descriptive``. The decision is recorded with the results; it is not a regression rule of its own.
* **Comparisons.** Each candidate against its baseline version on the same queries, paired (the run's
  regression policy, one family per query set), stored in ``judge_runs.results``.

Everything (judge fingerprint, prompt version, requests, cache hits, missing labels and reasons, tokens,
cost, agreement, gate, results) is recorded per (DAG run, query set) in ``judge_runs``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import numpy as np

from evalops.config import PRODUCTION
from evalops.pipeline.context import RunContext

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config, JudgeSettings
    from evalops.judges.base import Judge

__all__ = ["build_judge", "judge_alerts_for", "judge_report", "judge_versions", "JUDGE_POLICY"]

log = logging.getLogger(__name__)

JUDGE_POLICY = {"pool": "union of every version's top k", "no_answer": "zero", "missing_label": "exclude query",
                "repeats": "averaged per query before pairing"}


def build_judge(settings: JudgeSettings) -> Judge:
    """The configured judge (the lexical judge, or the OpenAI-compatible adapter)."""
    from evalops.errors import ConfigError
    from evalops.judges import LexicalJudge, OpenAIJudge, OpenAISettings

    if settings.kind == "lexical":
        return LexicalJudge()
    if settings.kind == "openai":
        fields = set(OpenAISettings.__dataclass_fields__)
        return OpenAIJudge(OpenAISettings(**{k: v for k, v in settings.model_dump().items() if k in fields}))
    raise ConfigError(f"judge.kind is {settings.kind!r}: there is no judge to build")


def _documents(cfg: Config, snapshot_id: str) -> dict[str, str]:
    from evalops.pipeline.inputs import current_snapshot

    corpus = current_snapshot(cfg, snapshot_id).corpus()
    titles = corpus["title"].fillna("").astype(str).tolist()
    texts = corpus["text"].fillna("").astype(str).tolist()
    return {d: (f"{t}\n{x}" if t else x) for d, t, x in zip(corpus["doc_id"].astype(str).tolist(), titles, texts)}


def _top_k(cfg: Config, spec: dict[str, Any], texts: dict[str, str], k: int) -> tuple[dict[str, list[str]], dict[str, str]]:
    from evalops.errors import EvalopsError
    from evalops.pipeline.inputs import current_snapshot
    from evalops.pipeline.registry import load_registry_for
    from evalops.retrievers import build_retriever
    from evalops.retrievers.base import Query, coerce_results

    queries = [Query(q, t) for q, t in texts.items()]
    try:
        registry = load_registry_for(cfg)
        entry = registry.get(spec["retriever"], spec["version"])
        retriever = build_retriever(entry, corpus=current_snapshot(cfg, spec["snapshot_id"]).corpus(),
                                    registry=registry)
        results = coerce_results(queries, retriever.retrieve(queries, k), k)
    except EvalopsError as exc:
        return {}, {q.id: f"{type(exc).__name__}: {exc}" for q in queries}
    ranked = {r.query_id: [d for d, _ in r.ranked] for r in results if r.ok}
    failed = {r.query_id: str(r.error) for r in results if not r.ok}
    return ranked, failed


def _query_texts(cfg: Config, run: RunContext, spec: dict[str, Any], n_production: int) -> tuple[dict[str, str], Any]:
    from evalops.pipeline.queries import query_set_for

    queries = query_set_for(cfg, spec["dataset"], spec.get("sample_folder"))
    ids = queries.query_ids
    if spec["dataset"] == PRODUCTION and len(ids) > n_production:
        rng = np.random.default_rng(run.seed)
        ids = sorted(rng.choice(np.array(ids, dtype=object), size=n_production, replace=False).tolist())
    return {q: queries.texts[q] for q in ids}, queries


def judge_versions(cfg: Config, run: RunContext, versions: list[dict[str, Any]]) -> dict[str, Any]:
    """Judge every version's top k on every query set of the run; record and return a summary per set.

    Returns ``{"status": "off"}`` when ``judge.kind`` is off, else ``{"status": "judged", "scopes": {...}}``
    with small dicts (ids, counts, gate decisions) for XCom.
    """
    settings = cfg.judge
    if settings.kind == "off" or not versions:
        return {"status": "off", "reason": "judge.kind is off" if settings.kind == "off" else "no versions"}
    from evalops.judges.cache import CachedJudge
    from evalops.judges.prompts import load_prompt
    from evalops.pipeline.store import engine_for
    from evalops.warehouse.judgments import WarehouseJudgmentStore, record_judge_run

    engine = engine_for(cfg)
    inner = build_judge(settings)
    judge = CachedJudge(inner, WarehouseJudgmentStore(engine))
    task = "context_relevance_graded" if settings.graded else "context_relevance"
    prompt = load_prompt(task)
    documents = _documents(cfg, versions[0]["snapshot_id"])
    by_dataset: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for spec in versions:
        by_dataset[spec["dataset"]].append(spec)
    scopes: dict[str, Any] = {}
    try:
        for dataset, specs in sorted(by_dataset.items()):
            scopes[dataset] = _judge_dataset(cfg, run, engine, judge, prompt, task, dataset, specs, documents,
                                             record_judge_run)
    finally:
        close = getattr(inner, "close", None)
        if close is not None:
            close()
    return {"status": "judged", "judge": inner.fingerprint.to_dict(), "prompt": prompt.ref, "scopes": scopes}


def _judge_dataset(cfg: Config, run: RunContext, engine: Any, judge: Any, prompt: Any, task: str, dataset: str,
                   specs: list[dict[str, Any]], documents: dict[str, str], record: Any) -> dict[str, Any]:
    from evalops.judges.base import JudgeItem, MissingBudget, summarize_missing

    s = cfg.judge
    k = s.top_k
    texts, queries = _query_texts(cfg, run, specs[0], s.production_queries)
    ranked: dict[str, dict[str, list[str]]] = {}
    failed: dict[str, dict[str, str]] = {}
    for spec in specs:
        ranked[spec["version"]], failed[spec["version"]] = _top_k(cfg, spec, texts, k)
    pool = sorted({(q, d) for lists in ranked.values() for q, docs in lists.items() for d in docs})
    items = [JudgeItem(task, texts[q], context=documents.get(d, ""), sample=i) for q, d in pool for i in range(s.samples)]
    hits_before, misses_before = judge.hits, judge.misses
    judgments = judge.judge(items)
    labels: dict[tuple[str, str], list[float | None]] = defaultdict(list)
    for (q, d), j in zip([p for p in pool for _ in range(s.samples)], judgments):
        labels[(q, d)].append(j.label)
    missing = summarize_missing(judgments, MissingBudget(s.missing_budget))
    usage = {"items": len(items), "requests": judge.misses - misses_before, "cache_hits": judge.hits - hits_before,
             "input_tokens": sum(j.input_tokens for j in judgments),
             "output_tokens": sum(j.output_tokens for j in judgments),
             "cost": float(sum(j.cost for j in judgments))}

    agreement = _agreement(queries, labels, s, pool, _languages(cfg, dataset)) if dataset != PRODUCTION else None
    from evalops.judges.agreement import AgreementGate

    gate_kappa = agreement.get("kappa") if agreement else None
    gate = AgreementGate(s.agreement_threshold).decide(gate_kappa)
    if dataset == PRODUCTION:
        gate["reason"] += " (kappa from the run's gold set)"
    results: dict[str, Any] = {"policy": JUDGE_POLICY, "versions": {}, "comparisons": [], "excluded_queries": []}
    if missing.within_budget:
        results.update(_results(cfg, run, specs, ranked, labels, k, s.graded))
    else:
        results["withheld"] = (f"{missing.missing} of {missing.total} labels missing ({missing.share:.1%}), over "
                               f"the budget of {missing.budget:.1%}")
    values = {"judge": judge.fingerprint.to_dict(), "prompt": prompt.ref, **usage, "missing": missing.missing,
              "missing_reasons": missing.to_dict(), "gate": gate, "agreement": agreement, "results": results}
    judge_run_id = record(engine, dag_id=run.dag_id, dag_run_id=run.run_id, scope=dataset, values=values)
    log.info("judge %s on %s: %d items, %d requests, %d cached, %d missing, %d tokens",
             judge.fingerprint.describe(), dataset, usage["items"], usage["requests"], usage["cache_hits"],
             missing.missing, usage["input_tokens"] + usage["output_tokens"])
    return {"judge_run_id": judge_run_id, "gate": gate["status"], "kappa": gate_kappa, **usage,
            "missing": missing.missing, "withheld": "withheld" in results}


def _agreement(queries: Any, labels: dict[tuple[str, str], list[float | None]], s: Any,
               pool: list[tuple[str, str]], language: dict[str, str]) -> dict[str, Any]:
    from evalops.judges.agreement import agreement, krippendorff_alpha

    qrels = queries.qrels
    human = {(str(q), str(d)): int(g) for q, d, g in zip(qrels.query_ids.tolist(), qrels.doc_ids.tolist(),
                                                        qrels.grades.tolist())}
    pairs = [p for p in pool if p in human]
    first = [labels[p][0] for p in pairs]
    out = agreement([human[p] for p in pairs], [np.nan if v is None else v for v in first], graded=s.graded,
                    languages=[language.get(q, "und") for q, _ in pairs],
                    levels=[0, 1, 2, 3] if s.graded else None).to_dict()
    out["pairs_with_human_grades"] = len(pairs)
    out["pairs_judged"] = len(pool)
    if s.samples > 1:
        data = np.array([[np.nan if v is None else v for v in labels[p]] for p in pool], dtype=float).T
        out["self_consistency"] = {"krippendorff_alpha": krippendorff_alpha(data, "ordinal" if s.graded else "nominal"),
                                   "samples": s.samples}
    return out


def _languages(cfg: Config, dataset: str) -> dict[str, str]:
    """Query id -> language (BCP-47) of a gold set's queries."""
    from evalops.pipeline.inputs import load_gold_set_for

    queries = load_gold_set_for(cfg, dataset).queries
    return dict(zip(queries["query_id"].astype(str).tolist(), queries["language"].astype(str).tolist()))


def _results(cfg: Config, run: RunContext, specs: list[dict[str, Any]], ranked: dict[str, dict[str, list[str]]],
             labels: dict[tuple[str, str], list[float | None]], k: int, graded: bool) -> dict[str, Any]:
    from evalops.metrics import Policy, evaluate
    from evalops.stats import adjust_and_decide, align, compare

    versions = list(ranked)
    common = set.intersection(*(set(r) for r in ranked.values())) if ranked else set()
    excluded = sorted(q for q in common if any(any(v is None for v in labels[(q, d)])
                                               for r in ranked.values() for d in r[q]))
    keep = sorted(common - set(excluded))
    mean = {p: float(np.mean(v)) for p, v in labels.items() if all(x is not None for x in v)}
    qrels = {q: {d: int(round(v)) for (qq, d), v in mean.items() if qq == q} for q in keep}
    qrels = {q: docs for q, docs in qrels.items() if docs}
    measures = [f"ContextPrecision@{k}", f"P@{k}", f"nDCG@{k}"]
    per_version: dict[str, dict[str, dict[str, float]]] = {}
    summary: dict[str, Any] = {}
    for v in versions:
        runs = {q: {d: float(k - i) for i, d in enumerate(ranked[v][q])} for q in keep if q in qrels}
        if not qrels:
            continue
        result = evaluate(qrels, runs, measures, Policy(no_answer="zero"))
        per_version[v] = {m: dict(zip(result.query_ids, map(float, result.per_query[m]))) for m in measures}
        summary[v] = {m: float(np.nanmean(result.per_query[m])) if len(result.query_ids) else None for m in measures}
    comparisons = []
    policy = cfg.stats_policy(run.seed)
    for spec in specs:
        base = spec.get("baseline_version")
        if spec["role"] != "candidate" or base not in per_version or spec["version"] not in per_version:
            continue
        for m in measures:
            paired = align(per_version[base][m], per_version[spec["version"]][m], missing="intersection",
                           baseline_name=base, candidate_name=spec["version"])
            comparisons.append(compare(paired, measure=f"judge:{m}", policy=policy,
                                       baseline_name=f"{spec['retriever']}@{base}",
                                       candidate_name=f"{spec['retriever']}@{spec['version']}"))
    decided = adjust_and_decide(comparisons, policy) if comparisons else []
    return {"versions": summary, "comparisons": [c.to_dict() for c in decided], "excluded_queries": excluded,
            "queries": len(keep), "graded": graded, "per_query": per_version}


def judge_report(cfg: Config, run: RunContext) -> tuple[list[Any], dict[str, Any], list[str]]:
    """(A/B rows, policies, notes) of the run's judge steps for the report; empty when the judge is off.

    Every row names the judge and its kind in the query set ("gold, judge fake-judge [LLM]") and a
    comparison the gate keeps descriptive says so first in its reasons, whatever its decision.
    """
    if cfg.judge.kind == "off":
        return [], {}, []
    from evalops.pipeline.store import engine_for
    from evalops.reports import ABResult
    from evalops.warehouse.judgments import load_judge_runs

    frame = load_judge_runs(engine_for(cfg), run.run_id)
    rows: list[Any] = []
    policies: dict[str, Any] = {}
    notes: list[str] = []
    for rec in frame.to_dict("records") if len(frame) else []:
        if rec["dag_id"] != run.dag_id:
            continue
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
        if results.get("withheld"):
            notes.append(f"judge results on {scope} withheld: {results['withheld']}")
        if results.get("excluded_queries"):
            notes.append(f"judge on {scope}: {len(results['excluded_queries'])} queries excluded for a missing label")
        for c in results.get("comparisons", []):
            retriever, _, base = c["baseline"].rpartition("@")
            reasons = list(c["reasons"])
            if gate["status"] != "alerting":
                reasons.insert(0, "descriptive only: " + gate["reason"])
            rows.append(ABResult.from_record(
                c, retriever=retriever, baseline_version=base, candidate_version=c["candidate"].rpartition("@")[2],
                query_set=f"{scope}, judge {who}",
                decision=c["decision"] if gate["status"] == "alerting" else f"descriptive ({c['decision']})",
                reasons=reasons,
            ))
    return rows, policies, notes


def judge_alerts_for(cfg: Config, run: RunContext, versions: list[dict[str, Any]]) -> list[Any]:
    """Regression alerts from judge-label comparisons, only for query sets whose gate said ``alerting``.

    Production comparisons on judge labels may alert too (unlike click labels) once the judge has passed
    the gate on the gold set. Each alert names the judge and the query set in its version field's details.
    """
    if cfg.judge.kind == "off":
        return []
    import dataclasses

    from evalops.alerting import AlertContext, regression_alerts
    from evalops.pipeline.alerts import _scrub, report_location
    from evalops.pipeline.store import engine_for
    from evalops.warehouse.judgments import load_judge_runs

    frame = load_judge_runs(engine_for(cfg), run.run_id)
    fingerprints = {(s["dataset"], s["retriever"]): s["fingerprint"] for s in versions}
    alerts: list[Any] = []
    for rec in frame.to_dict("records") if len(frame) else []:
        if rec["dag_id"] != run.dag_id or rec["gate"].get("status") != "alerting":
            continue
        by_candidate: dict[tuple[str, str, str], dict[str, Any]] = defaultdict(dict)
        for c in (rec["results"] or {}).get("comparisons", []):
            retriever, _, base = c["baseline"].rpartition("@")
            by_candidate[(retriever, base, c["candidate"].rpartition("@")[2])][c["measure"]] = c
        for (retriever, base, version), comparisons in sorted(by_candidate.items()):
            context = AlertContext(retriever=retriever, version=version, baseline_version=base,
                                   fingerprint=fingerprints.get((rec["scope"], retriever)), day=run.day,
                                   report_location=report_location(cfg, run))
            for alert in regression_alerts(comparisons, context, policy=cfg.regression.model_dump(), query_text={},
                                           scrub=_scrub):
                alerts.append(dataclasses.replace(alert, details={
                    **alert.details, "judge_run_id": int(rec["id"]), "query_set": rec["scope"],
                    "judge": rec["judge"], "gate": rec["gate"]}))
    return alerts
