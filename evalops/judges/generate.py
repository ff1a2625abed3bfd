"""Generated evaluation sets: question-answer pairs drafted from knowledge-base documents, for annotators.

Drafts never go into the gold set. They go to the **annotation queue**: one JSONL file, one schema for
every source of work for annotators, with a ``source`` column:

==================  ===========================================================================
column              meaning
==================  ===========================================================================
``item_id``         stable id: a hash of (source, query text, doc id), so writing twice adds nothing
``source``          ``generated`` (drafted here), ``sampled_query`` (a production query to judge),
                    ``hole`` (an unjudged document in a compared version's top k, evalops.judged.holes)
``query``           the query text (for generated pairs, the drafted question)
``query_id``        the production or gold query id, or null for a generated question
``doc_id``          the document proposed as relevant (for generated pairs, the source document)
``proposed_grade``  the grade proposed to the annotator (generated pairs: 2, "the source answers it")
``answer``          the drafted reference answer, or null
``origin``          who proposed it: the judge's fingerprint ("fake-judge [LLM]", "… [lexical (offline…)]")
``created_at``      UTC timestamp (ISO 8601)
``status``          ``pending`` until an annotator accepts or rejects it
==================  ===========================================================================

The queue file is ``<project>/.evalops/annotation/queue.jsonl`` (:func:`default_queue`) unless a caller names
another. Sources: ``evalops generate-queries`` writes ``generated`` rows; the evaluation run's judge step
writes the production queries it judged as ``sampled_query`` rows (:func:`sampled_query_rows`: no
document, no proposed grade, the scrubbed query text, origin "production sample <day> ..."), so that
annotators can label what the judge labelled and the judge's agreement can later be measured on
production traffic too; ``hole`` rows name an unjudged document of a version's top k. The same
query text from another day has the same ``item_id`` and is not queued twice.

De-duplication: a drafted question is dropped when it matches a gold query or an earlier draft after
normalisation (case-folded tokens of :func:`evalops.context.tokens.default_tokenize`), exactly or as a
near-duplicate (Jaccard similarity of the token sets >= ``near_duplicate``, default 0.8). The reasons are
counted.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalops.context.tokens import default_tokenize
from evalops.errors import InputError
from evalops.judges.base import Judge, JudgeItem
from evalops.util import utc

__all__ = ["QUEUE_COLUMNS", "QUEUE_SOURCES", "Drafts", "draft_pairs", "queue_path", "queue_row", "read_queue",
           "sampled_query_rows", "write_queue"]

QUEUE_COLUMNS = ("item_id", "source", "query", "query_id", "doc_id", "proposed_grade", "answer", "origin",
                 "created_at", "status")
QUEUE_SOURCES = ("generated", "sampled_query", "hole")


def default_queue(home: str | Path) -> Path:
    """The project's annotation queue: ``<home>/.evalops/annotation/queue.jsonl``, beside the other state
    evalops writes (and so in the ``.gitignore`` that ``evalops init`` writes).

    A queue at the earlier place, ``<home>/annotation/queue.jsonl``, is used while there is none at the new
    one: it holds people's work (each item's ``status``), so it is never left behind silently."""
    queue = Path(home) / ".evalops" / "annotation" / "queue.jsonl"
    earlier = Path(home) / "annotation" / "queue.jsonl"
    return earlier if earlier.is_file() and not queue.exists() else queue


@dataclass
class Drafts:
    rows: list[dict[str, Any]] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)  # doc id -> why no draft

    def drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1


def _tokens(text: str) -> frozenset[str]:
    return frozenset(default_tokenize(text))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def queue_row(*, source: str, query: str, doc_id: str | None, proposed_grade: int | None, origin: str,
              query_id: str | None = None, answer: str | None = None, now: dt.datetime | None = None) -> dict[str, Any]:
    if source not in QUEUE_SOURCES:
        raise InputError(f"annotation queue source must be one of {', '.join(QUEUE_SOURCES)}, got {source!r}")
    key = json.dumps([source, " ".join(default_tokenize(query)), doc_id], ensure_ascii=False)
    return {"item_id": hashlib.sha256(key.encode()).hexdigest()[:16], "source": source, "query": query,
            "query_id": query_id, "doc_id": doc_id, "proposed_grade": proposed_grade, "answer": answer,
            "origin": origin, "created_at": (now or utc.now()).isoformat(timespec="seconds"),
            "status": "pending"}


def draft_pairs(judge: Judge, documents: Mapping[str, str], gold_queries: Iterable[str], *,
                near_duplicate: float = 0.8, now: dt.datetime | None = None) -> Drafts:
    """Ask ``judge`` (prompt ``generate_qa``) for one question-answer pair per document; de-duplicate."""
    doc_ids = list(documents)
    answers = judge.judge([JudgeItem("generate_qa", "", context=documents[d]) for d in doc_ids])
    seen = [_tokens(q) for q in gold_queries]
    n_gold = len(seen)
    out = Drafts()
    origin = judge.fingerprint.describe()
    for doc_id, judged in zip(doc_ids, answers):
        if judged.missing is not None or "question" not in judged.detail:
            out.missing[doc_id] = judged.missing or "no question drafted"
            continue
        question, answer = judged.detail["question"], judged.detail["answer"]
        tokens = _tokens(question)
        if not tokens:
            out.drop("empty question")
            continue
        match = next((i for i, other in enumerate(seen) if _jaccard(tokens, other) >= near_duplicate), None)
        if match is not None:
            out.drop("duplicates a gold query" if match < n_gold else "duplicates another draft")
            continue
        seen.append(tokens)
        out.rows.append(queue_row(source="generated", query=question, doc_id=doc_id, proposed_grade=2,
                                  origin=origin, answer=answer, now=now))
    return out


def sampled_query_rows(texts: Mapping[str, str], *, origin: str, now: dt.datetime | None = None
                       ) -> list[dict[str, Any]]:
    """``sampled_query`` rows for production queries (query id -> scrubbed text), in query id order: a query
    to label, with no document and no proposed grade."""
    return [queue_row(source="sampled_query", query=texts[q], query_id=q, doc_id=None, proposed_grade=None,
                      origin=origin, now=now) for q in sorted(texts)]


def queue_path(cfg: Any) -> Path:
    """The project's annotation queue (:func:`default_queue` of ``cfg.home``)."""
    return default_queue(cfg.home)


def read_queue(path: Path) -> list[dict[str, Any]]:
    """The rows of the queue file in file order (none when there is no file yet); a line that is not a
    JSON object with the queue's columns is an error naming the file and line."""
    path = Path(path)
    if not path.exists():
        return []
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise InputError(f"{path}:{n}: not a JSON line; the annotation queue holds one JSON object per line") from None
        if not isinstance(row, dict) or set(row) != set(QUEUE_COLUMNS):
            found = sorted(row) if isinstance(row, dict) else type(row).__name__
            raise InputError(f"{path}:{n}: columns {found} are not the annotation queue's {list(QUEUE_COLUMNS)}")
        rows.append(row)
    return rows


def write_queue(path: Path, rows: Sequence[Mapping[str, Any]], *, gold_paths: Iterable[Path] = ()) -> int:
    """Append ``rows`` to the queue file (JSONL, :data:`QUEUE_COLUMNS`), skipping item ids already in it.

    Refuses a queue inside a gold-set folder or equal to a gold-set file: drafts are never gold. Returns
    the number of rows added.
    """
    path = Path(path)
    resolved = path.resolve()
    for gold in gold_paths:
        g = Path(gold).resolve()
        if resolved == g or g in resolved.parents:
            raise InputError(f"{path}: the annotation queue must not be inside the gold set ({g}); drafts are "
                             "reviewed before anything enters the gold set. Choose another --queue path")
    existing = {row["item_id"] for row in read_queue(path)}
    fresh = [r for r in rows if r["item_id"] not in existing]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as out:
        for row in fresh:
            out.write(json.dumps({c: row[c] for c in QUEUE_COLUMNS}, ensure_ascii=False) + "\n")
    return len(fresh)
