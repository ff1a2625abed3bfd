"""What is judged: each version's top k as its score step retrieved them, the documents' texts, and the
items of the labels that are one per query and version (context recall, answers)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalops.judges.base import JudgeItem
from evalops.judges.measures import judge_entries
from evalops.metrics.registry import Need
from evalops.pipeline.context import RunContext

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config
    from evalops.pipeline.specs import VersionSpec


def _documents(cfg: Config, snapshot_id: str) -> dict[str, str]:
    from evalops.pipeline.inputs import current_snapshot

    return document_texts(current_snapshot(cfg, snapshot_id))


def document_texts(snapshot: Any) -> dict[str, str]:
    """Each document's text as the judge reads it (its title, a line break, its text), by document id."""
    corpus = snapshot.corpus()
    titles = corpus["title"].fillna("").astype(str).tolist()
    texts = corpus["text"].fillna("").astype(str).tolist()
    return {d: (f"{t}\n{x}" if t else x) for d, t, x in zip(corpus["doc_id"].astype(str).tolist(), titles, texts)}

def _retrieved(cfg: Config, run: RunContext, spec: VersionSpec, query_ids: list[str], k: int
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
    for shard in range(int(spec.n_shards)):
        path = shard_file(cfg, run, spec.run_id, shard).with_suffix(".json")
        if not path.exists():
            why = f"{path}: the score step of shard {shard + 1}/{spec.n_shards} wrote no outcome"
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

#: Judge measures of generated answers (one label per query and version) and their prompts (tasks), from
#: their entries in the measure registry (evalops.judges.measures).
ANSWER_MEASURES = {e.name: e.task for e in judge_entries() if Need.ANSWER in e.needs}
#: Whether each judge label of one per query lies in [0, 1]: faithfulness and context recall are shares of
#: statements; answer relevance is a 1-5 score (``evalops.pipeline.pooling.unit_range`` reads it).
LABEL_UNIT_RANGE = {e.name: bool(e.measure.UNIT_RANGE) for e in judge_entries()}

def _query_items(texts: dict[str, str], ranked: dict[str, dict[str, list[str]]], answers: dict[str, dict[str, str]],
                 documents: dict[str, str], samples: int, references: dict[str, str], k: int
                 ) -> list[tuple[tuple[str, str, str], Any]]:
    """((measure, version, query id), item) for every judge label that is one per query and version: the
    context recall of a version's top k against the query's reference answer (gold queries that have one),
    the faithfulness of a version's generated answer to its own top k contexts, and the answer's relevance
    to the query (versions that return answers)."""
    out: list[tuple[tuple[str, str, str], Any]] = []
    by_reference = [e for e in judge_entries() if Need.REFERENCE_ANSWER in e.needs]
    by_answer = [e for e in judge_entries() if Need.ANSWER in e.needs]
    for v in sorted(ranked):
        for q, docs in sorted(ranked[v].items()):
            if q in texts and references.get(q):
                contexts = tuple(documents.get(d, "") for d in docs)
                for e in by_reference:
                    key = (str(e.measure(k) if e.measure.CUTOFF != "none" else e.measure()), v, q)
                    out.extend((key, JudgeItem(e.task, texts[q], contexts=contexts, reference=references[q],
                                               sample=i)) for i in range(samples))
    for v in sorted(answers):
        for q, answer in sorted(answers[v].items()):
            if q not in texts or q not in ranked[v]:
                continue
            contexts = tuple(documents.get(d, "") for d in ranked[v][q])
            for i in range(samples):
                for e in by_answer:  # answer relevance does not read the contexts
                    out.append(((e.name, v, q), JudgeItem(e.task, texts[q], answer=answer, sample=i,
                                                          contexts=contexts if Need.CONTEXT_TEXT in e.needs else ())))
    return out
