"""Judge the top k contexts of every version with the configured judge, and score versions on judge labels.

One step after scoring (``judge_versions``), for every query set of the run:

* **Which queries.** Gold queries: all of them (their human grades measure the judge's agreement).
  Production queries: a seeded sample of ``judge.production_queries`` of the day's log sample (seed = the
  run's seed), so a re-run judges the same queries.
* **What is judged.** Each version's top ``judge.top_k`` documents as its score step retrieved them (kept in
  the shard outcomes; the retriever is not asked again), each (query, document text) pair with the
  ``context_relevance`` prompt (binary) or ``context_relevance_graded`` (0-3), ``judge.samples`` times.
  Through the warehouse cache: a pair already judged under the same model, prompt version and decoding
  costs nothing.
* **Answers.** A version whose retriever returns generated answers (a RAG endpoint, HTTP field
  ``answer``) has each answer judged for faithfulness to that version's own top k contexts (the share of
  its claims they support) and for relevance to the query (1-5): ``judge:Faithfulness`` and
  ``judge:AnswerRelevance``, one label per query and version, averaged over repeats; a query whose label
  is missing is excluded from that measure (counted in ``excluded_by_measure``). They are compared,
  gated and reported like the context measures; versions without answers have none.
* **Context recall.** A gold query with a reference answer (the optional ``reference_answer`` query field)
  has each version's top k judged against it with the ``context_recall`` prompt (the share of the
  reference's statements the contexts support): ``judge:ContextRecall@k``, one label per query and
  version, excluded, compared and reported like the answer measures. Production queries have no
  reference answer and so no context recall.
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
  regression policy), stored in ``judge_runs.results``. Multiple comparisons: the judge-label comparisons
  of a query set are one stated family, ``judge-<query set>``, corrected on their own
  (``policy.correction``): on a gold set every judge measure x candidate together; on the production
  sample one family per candidate run that also spends its error over the days the version has been
  compared there (the production family's look). The family, its size, members and looks are recorded
  in ``judge_runs.results["families"]``, on every comparison, and printed in the report.

* **A judge that fails, fails loudly.** Before any judging (and in ``evalops run`` before any scoring,
  :func:`preflight_judge`), an OpenAI-compatible judge gets one request of one token with its own short
  timeout (``judge.preflight_timeout``); a refused connection, a timeout or an error answer (HTTP 401,
  404, ...) fails the judge step at once with that one-line cause, and nothing is sent to the judge. A
  query set whose missing labels exceed ``judge.missing_budget`` fails it too (its results withheld). A
  failed step is recorded (``judge_runs.results["failed"]``, ``gate.status`` ``failed``), raises a
  ``judge_failed`` alert, leads the report ("Failed steps"), and makes ``evalops run`` / ``gate`` exit 8
  (``ExitCode.JUDGE_FAILED``); the gold-grade results of the run are stored and reported as usual.
* **Progress.** While labels are requested, a line ``judging <query set>: <done>/<total> requests, <n>
  missing`` at most every ``PROGRESS_SECONDS`` (and at the end) goes to the log (the task log under
  Airflow) and to ``progress`` (``evalops run`` prints it on stderr).

Everything (judge fingerprint, prompt version, requests, cache hits, missing labels and reasons, tokens,
cost, agreement, gate, results) is recorded per (DAG run, query set) in ``judge_runs``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from evalops.config import PRODUCTION
from evalops.pipeline.context import RunContext

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config, JudgeSettings
    from evalops.judges.base import Judge

__all__ = ["build_judge", "failed_judge_steps", "judge_alerts_for", "judge_failures", "judge_report", "judge_versions", "JudgePreflight",
           "JUDGE_POLICY", "preflight_judge"]

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


#: Seconds between two progress lines of one query set's judging.
PROGRESS_SECONDS = 10.0


@dataclass(frozen=True)
class JudgePreflight:
    """The outcome of the judge's preflight: ``cause`` is None when it answered (or needs no check)."""

    cause: str | None = None
    judge: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.cause is None


def _check(judge: Any) -> JudgePreflight:
    check = getattr(judge, "preflight", None)
    cause = check() if check is not None else None
    if cause is None and check is not None:
        log.info("judge preflight: %s answered", judge.fingerprint.describe())
    return JudgePreflight(cause, judge.fingerprint.to_dict())


def preflight_judge(cfg: Config) -> JudgePreflight:
    """Check the configured judge before any work: one tiny request to an OpenAI-compatible endpoint (see
    :meth:`evalops.judges.OpenAIJudge.preflight`); nothing to check for the lexical judge or when it is off."""
    if cfg.judge.kind != "openai":
        return JudgePreflight()
    judge = build_judge(cfg.judge)
    try:
        return _check(judge)
    finally:
        judge.close()


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


def _documents(cfg: Config, snapshot_id: str) -> dict[str, str]:
    from evalops.pipeline.inputs import current_snapshot

    corpus = current_snapshot(cfg, snapshot_id).corpus()
    titles = corpus["title"].fillna("").astype(str).tolist()
    texts = corpus["text"].fillna("").astype(str).tolist()
    return {d: (f"{t}\n{x}" if t else x) for d, t, x in zip(corpus["doc_id"].astype(str).tolist(), titles, texts)}


def _retrieved(cfg: Config, run: RunContext, spec: dict[str, Any], query_ids: list[str], k: int
               ) -> tuple[dict[str, list[str]], dict[str, str], dict[str, str]]:
    """(top k documents, failed queries, generated answers) of ``query_ids`` for one version, as its score
    step retrieved them (the shard outcomes in the work folder): the judge never asks a retriever again,
    so it judges exactly the contexts that were scored, and a RAG endpoint's answers are not regenerated."""
    import json

    from evalops.pipeline.workdir import shard_file

    wanted = set(query_ids)
    ranked: dict[str, list[str]] = {}
    failed: dict[str, str] = {}
    answers: dict[str, str] = {}
    for shard in range(int(spec["n_shards"])):
        path = shard_file(cfg, run, spec["run_id"], shard).with_suffix(".json")
        if not path.exists():
            why = f"{path}: the score step of shard {shard + 1}/{spec['n_shards']} wrote no outcome"
            return {}, {q: why for q in query_ids}, {}
        meta = json.loads(path.read_text())
        if meta.get("error"):
            return {}, {q: str(meta["error"]) for q in query_ids}, {}
        contexts = meta.get("contexts")
        if contexts is None:
            why = f"{path}: the score step kept no contexts (the judge was off when it ran)"
            return {}, {q: why for q in query_ids}, {}
        ranked.update({q: list(docs)[:k] for q, docs in contexts.items() if q in wanted})
        failed.update({q: str(e) for q, e in meta.get("failed", {}).items() if q in wanted})
        answers.update({q: str(a) for q, a in (meta.get("answers") or {}).items() if q in wanted})
    return ranked, failed, answers


def _query_texts(cfg: Config, run: RunContext, spec: dict[str, Any], n_production: int) -> tuple[dict[str, str], Any]:
    from evalops.pipeline.queries import query_set_for

    queries = query_set_for(cfg, spec["dataset"], spec.get("sample_folder"))
    ids = queries.query_ids
    if spec["dataset"] == PRODUCTION and len(ids) > n_production:
        rng = np.random.default_rng(run.seed)
        ids = sorted(rng.choice(np.array(ids, dtype=object), size=n_production, replace=False).tolist())
    return {q: queries.texts[q] for q in ids}, queries


def judge_versions(cfg: Config, run: RunContext, versions: list[dict[str, Any]], *,
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
    from evalops.judges.cache import CachedJudge
    from evalops.judges.prompts import load_prompt
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
        by_dataset[spec["dataset"]].append(spec)
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
        documents = _documents(cfg, versions[0]["snapshot_id"])
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
              "results": {"policy": JUDGE_POLICY, "versions": {}, "comparisons": [], "excluded_queries": [],
                          "failed": cause}}
    judge_run_id = record(engine, dag_id=run.dag_id, dag_run_id=run.run_id, scope=dataset, values=values)
    return {"judge_run_id": judge_run_id, "gate": "failed", "kappa": None, "items": 0, "requests": 0,
            "cache_hits": 0, "missing": 0, "withheld": True, "failed": cause}


def _judge_dataset(cfg: Config, run: RunContext, engine: Any, judge: Any, prompt: Any, task: str, dataset: str,
                   specs: list[dict[str, Any]], documents: dict[str, str], record: Any,
                   say: Callable[[str], None]) -> dict[str, Any]:
    from evalops.judges.base import JudgeBudgetError, JudgeItem, MissingBudget, summarize_missing
    from evalops.judges.prompts import load_prompt

    s = cfg.judge
    k = s.top_k
    texts, queries = _query_texts(cfg, run, specs[0], s.production_queries)
    ranked: dict[str, dict[str, list[str]]] = {}
    failed: dict[str, dict[str, str]] = {}
    answers: dict[str, dict[str, str]] = {}
    for spec in specs:
        v = spec["version"]
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
    from evalops.judges.agreement import AgreementGate

    gate_kappa = agreement.get("kappa") if agreement else None
    gate = AgreementGate(s.agreement_threshold).decide(gate_kappa)
    if dataset == PRODUCTION:
        gate["reason"] += " (kappa from the run's gold set)"
    results: dict[str, Any] = {"policy": JUDGE_POLICY, "versions": {}, "comparisons": [], "excluded_queries": []}
    if missing.within_budget:
        results.update(_results(cfg, run, specs, ranked, labels, k, s.graded, query_labels))
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
    judge_run_id = record(engine, dag_id=run.dag_id, dag_run_id=run.run_id, scope=dataset, values=values)
    say(f"judge {judge.fingerprint.describe()} on {dataset}: {usage['items']} items, {usage['requests']} requests, "
        f"{usage['cache_hits']} cached, {missing.missing} missing, "
        f"{usage['input_tokens'] + usage['output_tokens']} tokens")
    if results.get("failed"):
        log.error("judge step on %s failed: %s", dataset, results["failed"])
    return {"judge_run_id": judge_run_id, "gate": gate["status"], "kappa": gate_kappa, **usage,
            "missing": missing.missing, "withheld": "withheld" in results, "failed": results.get("failed")}


def _queue_sampled_queries(cfg: Config, run: RunContext, texts: dict[str, str], fingerprint: Any) -> dict[str, Any]:
    """Append the judged production queries to the annotation queue as ``sampled_query`` rows (see
    :mod:`evalops.judges.generate`); returns where, how many were offered and how many were new."""
    from evalops.judges.generate import default_queue, sampled_query_rows, write_queue

    path = default_queue(cfg.home)
    origin = f"production sample {run.day} (seed {run.seed}), judged by {fingerprint.describe()}"
    rows = sampled_query_rows(texts, origin=origin)
    added = write_queue(path, rows, gold_paths=[spec.path for spec in cfg.require_gold_sets().values()])
    return {"path": str(path), "source": "sampled_query", "offered": len(rows), "added": added}


#: Judge measures of generated answers (one label per query and version) and their prompts (tasks).
ANSWER_MEASURES = {"Faithfulness": "faithfulness", "AnswerRelevance": "answer_relevance"}


def _query_items(texts: dict[str, str], ranked: dict[str, dict[str, list[str]]], answers: dict[str, dict[str, str]],
                 documents: dict[str, str], samples: int, references: dict[str, str], k: int
                 ) -> list[tuple[tuple[str, str, str], Any]]:
    """((measure, version, query id), item) for every judge label that is one per query and version: the
    context recall of a version's top k against the query's reference answer (gold queries that have one),
    the faithfulness of a version's generated answer to its own top k contexts, and the answer's relevance
    to the query (versions that return answers)."""
    from evalops.judges.base import JudgeItem

    out: list[tuple[tuple[str, str, str], Any]] = []
    for v in sorted(ranked):
        for q, docs in sorted(ranked[v].items()):
            if q in texts and references.get(q):
                contexts = tuple(documents.get(d, "") for d in docs)
                out.extend(((f"ContextRecall@{k}", v, q), JudgeItem("context_recall", texts[q], contexts=contexts,
                                                                    reference=references[q], sample=i))
                           for i in range(samples))
    for v in sorted(answers):
        for q, answer in sorted(answers[v].items()):
            if q not in texts or q not in ranked[v]:
                continue
            contexts = tuple(documents.get(d, "") for d in ranked[v][q])
            for i in range(samples):
                for m, task in ANSWER_MEASURES.items():  # answer relevance does not read the contexts
                    out.append(((m, v, q), JudgeItem(task, texts[q], answer=answer, sample=i,
                                                     contexts=contexts if m == "Faithfulness" else ())))
    return out


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


def _results(cfg: Config, run: RunContext, specs: list[dict[str, Any]], ranked: dict[str, dict[str, list[str]]],
             labels: dict[tuple[str, str], list[float | None]], k: int, graded: bool,
             query_labels: dict[str, dict[str, dict[str, list[float | None]]]] | None = None) -> dict[str, Any]:
    from evalops.metrics import Policy, evaluate
    from evalops.pipeline.comparing import data_seed
    from evalops.stats import align, compare

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
    # One label per query and version (answers): a query with a missing repeat is excluded from that
    # measure for that version, and counted; the rest are averaged over the repeats.
    excluded_by_measure: dict[str, dict[str, int]] = {}
    for m, by_version in sorted((query_labels or {}).items()):
        measures.append(m)
        for v, by_query in sorted(by_version.items()):
            values = {q: float(np.mean(ls)) for q, ls in sorted(by_query.items()) if all(x is not None for x in ls)}
            per_version.setdefault(v, {})[m] = values
            summary.setdefault(v, {})[m] = float(np.mean(list(values.values()))) if values else None
            if len(values) < len(by_query):
                excluded_by_measure.setdefault(m, {})[v] = len(by_query) - len(values)
    comparisons: list[tuple[dict[str, Any], Any]] = []
    policy = cfg.stats_policy(run.seed)
    for spec in specs:
        base = spec.get("baseline_version")
        if spec["role"] != "candidate" or base not in per_version or spec["version"] not in per_version:
            continue
        for m in measures:
            if m not in per_version[base] or m not in per_version[spec["version"]]:
                continue  # e.g. only one of the two versions returns answers
            paired = align(per_version[base][m], per_version[spec["version"]][m], missing="intersection",
                           baseline_name=base, candidate_name=spec["version"])
            if paired.n == 0:
                continue
            comparisons.append((spec, compare(paired, measure=f"judge:{m}", policy=policy,
                                              baseline_name=f"{spec['retriever']}@{base}",
                                              candidate_name=f"{spec['retriever']}@{spec['version']}",
                                              rng=data_seed(paired.query_ids, paired.baseline, paired.candidate))))
    decided, families = _decide_families(cfg, specs[0]["dataset"] if specs else "", comparisons, policy)
    return {"versions": summary, "comparisons": decided, "families": families, "excluded_queries": excluded,
            "excluded_by_measure": excluded_by_measure, "queries": len(keep), "graded": graded,
            "per_query": per_version}


def judge_family(dataset: str) -> str:
    """The multiple-comparison family of the judge-label comparisons on ``dataset``: ``judge-<dataset>``."""
    return f"judge-{dataset}"


def _decide_families(cfg: Config, dataset: str, comparisons: list[tuple[dict[str, Any], Any]], policy: Any
                     ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Correct and decide the judge-label comparisons of one query set as their own family (see
    ``deciding``: judge labels are another instrument than the gold grades, so they neither dilute nor
    borrow the gold family's error).

    * A gold set: one family ``judge-<gold set>``, every judge measure x candidate version, corrected
      together (``policy.correction``), like the ``gold`` family.
    * The production sample: ``judge-production``, one family per candidate run, each spending its error
      over the days the version has been compared on production (the look of
      ``warehouse.comparison_look``, as the click-label production family does: a version is judged on at
      most the days it was compared, so the spending is never too lenient).

    Returns the decided comparison records (each with its ``family`` and ``look``) and the families'
    description (members, size, correction, alpha, looks) for the warehouse and the report.
    """
    import dataclasses

    from evalops.pipeline.comparing import data_seed
    from evalops.stats import adjust_and_decide

    family = judge_family(dataset)
    groups: dict[int | None, list[int]] = {}
    for i, (spec, _) in enumerate(comparisons):
        groups.setdefault(spec["run_id"] if dataset == PRODUCTION else None, []).append(i)
    decided: dict[int, dict[str, Any]] = {}
    looks: dict[str, int] = {}
    for run_id, idx in groups.items():
        look = None
        if run_id is not None:
            from evalops.pipeline.store import engine_for
            from evalops.warehouse import comparison_look

            look = comparison_look(engine_for(cfg), run_id)
        # the family's bootstrap (a decision interval under interval: bootstrap) is seeded by its members'
        # per-query deltas, not by the day, as the gold family's is (deciding): identical data, identical bounds
        seed = data_seed(*(part for i in idx for c in [comparisons[i][1]]
                           for part in ([c.measure, c.candidate_name], c.deltas)))
        members = [dataclasses.replace(comparisons[i][1], policy=dataclasses.replace(comparisons[i][1].policy, seed=seed))
                   for i in idx]
        for i, comp in zip(idx, adjust_and_decide(members, dataclasses.replace(policy, seed=seed), look=look)):
            decided[i] = {**comp.to_dict(), "family": family, "look": look}
            if look is not None:
                looks[comp.candidate_name] = look
    records = [decided[i] for i in range(len(comparisons))]
    description = {"name": family, "size": len(records), "correction": policy.correction, "alpha": policy.alpha,
                   "members": [f"{r['measure']} {r['candidate']}" for r in records],
                   "scope": ("one family per candidate run, alpha spent over its looks" if dataset == PRODUCTION
                             else "every judge measure x candidate version"), "looks": looks}
    return records, {family: description} if records else {}


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
            looks = ", ".join(f"{cand} look {n}" for cand, n in sorted(fam["looks"].items()))
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
        for c in results.get("comparisons", []):
            retriever, _, base = c["baseline"].rpartition("@")
            reasons = list(c["reasons"])
            if gate["status"] != "alerting":
                reasons.insert(0, "descriptive only: " + gate["reason"])
            rows.append(ABResult.from_record(
                c, retriever=retriever, baseline_version=base, candidate_version=c["candidate"].rpartition("@")[2],
                query_set=f"{scope}, judge {who}",
                decision=c["decision"] if gate["status"] == "alerting" else f"descriptive ({c['decision']})",
                reasons=reasons, worst_queries=[],
            ))
    return rows, policies, notes


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


def judge_alerts_for(cfg: Config, run: RunContext, versions: list[dict[str, Any]]) -> list[Any]:
    """The ``judge_failed`` alert of a failed judge step (one for the run, naming every query set that
    failed), and regression alerts from judge-label comparisons, only for query sets whose gate said
    ``alerting``.

    Production comparisons on judge labels may alert too (unlike click labels) once the judge has passed
    the gate on the gold set. Each alert names the judge and the query set in its version field's details.
    """
    if cfg.judge.kind == "off":
        return []
    import dataclasses

    from evalops.alerting import AlertContext, judge_failed_alert, regression_alerts
    from evalops.pipeline.workdir import report_location
    from evalops.querylog import scrub_text as _scrub
    from evalops.pipeline.store import engine_for
    from evalops.warehouse.judgments import load_judge_runs

    failed = _failed_steps(cfg, run)
    alerts: list[Any] = []
    if failed:
        alerts.append(judge_failed_alert(causes={scope: cause for scope, cause, _ in failed},
                                         judge=f"{failed[0][2]['model']} [{failed[0][2]['kind']}]", day=run.day,
                                         report_location=report_location(cfg, run)))
    frame = load_judge_runs(engine_for(cfg), run.run_id)
    fingerprints = {(s["dataset"], s["retriever"]): s["fingerprint"] for s in versions}
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
