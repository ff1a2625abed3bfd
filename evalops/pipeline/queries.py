"""The query sets a run scores: the gold set, and the day's production sample with its weak labels.

Only judged queries are scored (a query without any judgment cannot be evaluated). Query ids are sorted
as strings; shards are contiguous slices of that order (``planning.shard_bounds``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from evalops.config import DEFAULT_GOLD_SET, PRODUCTION

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config
    from evalops.data import Qrels

__all__ = ["QuerySet", "gold_queries", "production_queries", "query_attributes", "query_set_for"]


@dataclass(frozen=True, eq=False)
class QuerySet:
    query_ids: list[str]
    texts: dict[str, str]
    qrels: Qrels
    source: str
    # a conversational gold set's turns: query id -> its history (evalops.conversations.pipeline); empty otherwise
    history: dict[str, tuple] = field(default_factory=dict)

    def slice(self, start: int, stop: int) -> QuerySet:
        ids = self.query_ids[start:stop]
        return QuerySet(ids, {q: self.texts[q] for q in ids}, self.qrels.restrict(ids), self.source,
                        {q: self.history[q] for q in ids if q in self.history})

    def queries(self) -> list:
        """The queries as the retrievers are asked them: each with its history (a conversation's turn)."""
        from evalops.retrievers.base import Query

        return [Query(q, self.texts[q], self.history.get(q, ())) for q in self.query_ids]


def _judged(texts: dict[str, str], qrels: Qrels, source: str) -> QuerySet:
    judged = set(qrels.query_ids.tolist())
    ids = sorted(q for q in texts if q in judged)
    return QuerySet(ids, {q: texts[q] for q in ids}, qrels.restrict(ids), source)


# gold set name -> (the GoldSet, its QuerySet): the last one built, shared by the steps of a run in this
# process (planning, every shard, the facts, the report) while they are handed the same prepared gold set
_built: dict[str, tuple[object, QuerySet]] = {}


def gold_queries(cfg: Config, name: str = DEFAULT_GOLD_SET) -> QuerySet:
    """The judged queries of gold set ``name`` (read-only: callers share it)."""
    from evalops.pipeline.inputs import gold_set_for_run

    gold = gold_set_for_run(cfg, name)
    held = _built.get(name)
    if held is not None and held[0] is gold:
        return held[1]
    texts = dict(zip(gold.queries["query_id"].tolist(), gold.queries["text"].tolist()))
    queries = _judged(texts, gold.qrels, str(cfg.gold_set_named(name).path))
    from evalops.conversations.pipeline import conversations_for

    turns = conversations_for(cfg, name)
    if turns is not None:
        queries = QuerySet(queries.query_ids, queries.texts, queries.qrels, queries.source,
                           {q: turns.history(q) for q in queries.query_ids})
    _built[name] = (gold, queries)
    return queries


def query_attributes(cfg: Config, dataset: str, sample_folder: str | None = None) -> dict[str, dict[str, str]]:
    """Per query id, what its results are also read by: ``type``, ``language`` and ``split`` of a gold query;
    the log ``segment`` (web, mobile, agent-assist, ...) of a production query, when the log has one."""
    if dataset != PRODUCTION:
        from evalops.pipeline.inputs import gold_set_for_run

        q = gold_set_for_run(cfg, dataset).queries
        return {qid: {"type": t or "untyped", "language": lang, "split": split}
                for qid, t, lang, split in zip(q["query_id"], q["type"], q["language"], q["split"])}
    if not sample_folder:
        return {}
    import json

    from evalops.pipeline.workdir import local_copy

    path = local_copy(sample_folder) / "sample.jsonl"
    column = getattr(cfg.query_logs.rules, "segment_column", "segment")
    out: dict[str, dict[str, str]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                segment = row.get(column)
                if row.get("query_id") is not None and segment not in (None, ""):
                    out[str(row["query_id"])] = {"segment": str(segment)}
    return out


def production_queries(folder: str | Path) -> QuerySet:
    """The sample written by ``sample_query_logs``: ``queries.jsonl`` (scrubbed) and ``weak_qrels.tsv``."""
    from evalops.formats import read_beir_qrels, read_beir_queries

    from evalops.pipeline.workdir import local_copy

    folder = local_copy(folder)  # the work folder may be remote storage
    texts = read_beir_queries(folder / "queries.jsonl")
    return _judged(texts, read_beir_qrels(folder / "weak_qrels.tsv"), str(folder))


def query_set_for(cfg: Config, dataset: str, sample_folder: str | None) -> QuerySet:
    """The query set of a warehouse ``dataset``: a gold set by its name, or the production sample."""
    if dataset != PRODUCTION:
        return gold_queries(cfg, dataset)
    if not sample_folder:
        raise ValueError("a production query set needs the sample folder")
    return production_queries(sample_folder)
