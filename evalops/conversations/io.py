"""Read conversation gold sets: a turns file plus judgments, or the turn ids of plain TREC / BEIR topics.

**Turns file** (``conversations.jsonl``), one turn per line::

    {"conversation_id": "c1", "turn": 1, "question": "Do statins cause breast cancer?"}
    {"conversation_id": "c1", "turn": 2, "question": "What about its side effects?",
     "answer": "...", "rewrite": "What are the side effects of statins?", "language": "en"}

``conversation_id`` (a string) and ``turn`` (1, 2, ...) are required, and so is ``question`` (the turn as the
user asked it). ``answer`` (what was answered, part of later turns' history), ``rewrite`` (the question made
self-contained by an annotator), ``language`` (BCP-47, default ``und``), ``type`` (a gold query type) and
``query_id`` (default ``<conversation_id>_<turn>``, the TREC CAsT turn id) are optional.

**A conversation gold-set folder** holds ``conversations.jsonl`` and judgments keyed by turn id:
``qrels.tsv`` (BEIR), ``qrels/test.tsv``, ``qrels.trec`` (TREC) or ``judgments.jsonl`` (``{"query_id",
"doc_id", "grade"}``). :func:`load_gold_set_folder` reads it or any other gold-set folder (what the pipeline
and ``evalops validate`` call), so a project's ``gold_set.path`` may point at one: the pipeline then asks each
turn with its history and decides by conversation (``docs/conversations.md``). A folder without
``conversations.jsonl`` is read as a plain gold set whose query ids are turn ids (:func:`conversations_from_gold_set`).

**Plain topics.** :func:`conversations_from_gold_set` reads the conversation structure from the query ids of
any gold set (``31_1``, ``31_2``, ... as in CAsT's topics): each query is a turn, its text the question.

Every reader checks the contract (:mod:`evalops.conversations.checks`) and raises one
:class:`~evalops.conversations.checks.ConversationContractError` listing every problem with its file, row and
fix; nothing is returned from a broken file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from evalops.conversations.checks import (
    ContractProblem,
    judged_problems,
    raise_problems,
    structure_problems,
)
from evalops.conversations.model import Conversations, Turn, parse_turn_id, turn_id
from evalops.errors import FormatError
from evalops.fingerprint import content_digest
from evalops.formats import read_jsonl, read_qrels, write_jsonl
from evalops.util.safetext import refuse_unsafe

__all__ = [
    "TURNS_FILE",
    "ConversationGoldSet",
    "conversations_from_gold_set",
    "load_conversation_gold_set",
    "load_conversations",
    "load_gold_set_folder",
    "save_conversations",
]

TURNS_FILE = "conversations.jsonl"
_JUDGMENT_FILES = ("qrels.tsv", "qrels/test.tsv", "qrels.trec", "judgments.jsonl")


@dataclass(frozen=True, eq=False)
class ConversationGoldSet:
    """A gold set of the judged turns (``gold``: its queries are the judged turns, their text the question as
    asked) and every turn with its history (``conversations``)."""

    gold: Any  # evalops.goldset.GoldSet
    conversations: Conversations

    @cached_property
    def version(self) -> str:
        """The gold set's version and the turns' (history and rewrites change what a retriever is asked)."""
        return content_digest([self.gold.version, self.conversations.version])

    @property
    def judged_ids(self) -> list[str]:
        return self.gold.query_ids

    def describe(self) -> dict[str, object]:
        return {**self.conversations.describe(self.judged_ids), "version": self.version,
                "gold_set_version": self.gold.version}


def _text(record: dict[str, Any], key: str, path: str, line: int, *, required: bool) -> str | None:
    value = record.get(key)
    if value is None:
        if required:
            raise FormatError(f"turn has no {key!r} (have {sorted(record)})", path=path, line=line)
        return None
    if not isinstance(value, str):
        raise FormatError(f"{key!r} must be a string, got {type(value).__name__}", path=path, line=line)
    return refuse_unsafe(value, key, "text", path=path, line=line)


def load_conversations(path: str | os.PathLike[str]) -> Conversations:
    """The turns of a ``conversations.jsonl`` file (see the module docs), checked."""
    p = str(path)
    if not Path(p).is_file():
        raise FormatError("file not found; expected a conversations.jsonl turns file", path=p)
    turns: list[Turn] = []
    for line, record in read_jsonl(p):
        conv = record.get("conversation_id")
        if conv is None or isinstance(conv, (dict, list, bool)) or str(conv).strip() == "":
            raise FormatError("turn has no conversation_id; give every turn the id of its conversation", path=p,
                              line=line)
        conv = refuse_unsafe(str(conv), "conversation id", path=p, line=line)
        number = record.get("turn")
        if isinstance(number, bool) or not isinstance(number, int | float) or number != int(number) or number < 1:
            raise FormatError(f"turn is {number!r}; a turn number is an integer 1, 2, ... (its position in the "
                              "conversation)", path=p, line=line)
        question = _text(record, "question", p, line, required=True)
        if not question or not question.strip():
            raise FormatError("the question is empty; write the turn as the user asked it", path=p, line=line)
        qid = record.get("query_id")
        qid = turn_id(conv, int(number)) if qid is None else refuse_unsafe(str(qid), "query id", path=p, line=line)
        turns.append(Turn(qid, conv, int(number), question, _text(record, "answer", p, line, required=False),
                          _text(record, "rewrite", p, line, required=False),
                          str(record.get("language") or "und"), str(record.get("type") or ""), line))
    raise_problems(structure_problems(turns, p))
    return Conversations(tuple(sorted(turns, key=lambda t: (t.conversation_id, t.turn))), p)


def conversations_from_gold_set(gold: Any) -> Conversations:
    """The conversation structure of a plain gold set whose query ids are turn ids (``<conversation>_<turn>``),
    checked; a query id that is no turn id is a problem naming its row."""
    turns: list[Turn] = []
    problems: list[ContractProblem] = []
    q = gold.queries
    for row, (qid, text, lang) in enumerate(zip(q["query_id"], q["text"], q["language"], strict=False), start=1):
        parsed = parse_turn_id(qid)
        if parsed is None:
            problems.append(ContractProblem("turn_id", f"query id {qid!r} is not a turn id",
                                            "name each query <conversation>_<turn> (e.g. 31_2)", gold.source, row))
            continue
        turns.append(Turn(str(qid), parsed[0], parsed[1], str(text), language=str(lang), row=row))
    problems += structure_problems(turns, gold.source)
    raise_problems(problems)
    return Conversations(tuple(sorted(turns, key=lambda t: (t.conversation_id, t.turn))), gold.source)


def _judgments(folder: Path) -> tuple[Any, str, int]:
    """(judgments frame, its path, the file line of the frame's first row)."""
    for name in _JUDGMENT_FILES:
        path = folder / name
        if path.is_file():
            if name == "judgments.jsonl":
                from evalops.goldset.io import _read_judgments_jsonl

                return _read_judgments_jsonl(path), str(path), 1
            with open(path, encoding="utf-8", errors="replace") as fh:
                first = fh.readline()
            header = 2 if name.endswith(".tsv") and not first.split("\t")[-1].strip().lstrip("-").isdigit() else 1
            return read_qrels(path).to_frame(), str(path), header
    raise FormatError(f"no judgments: expected one of {list(_JUDGMENT_FILES)} beside {TURNS_FILE}", path=str(folder))


def load_conversation_gold_set(folder: str | os.PathLike[str], *, default_type: str | None = None,
                               default_language: str | None = None) -> ConversationGoldSet:
    """A conversation gold-set folder (see the module docs), checked: the contract's problems of the turns file
    and of the judgments are raised together. Without ``conversations.jsonl``, a plain gold-set folder whose
    query ids are turn ids."""
    import pandas as pd

    from evalops.goldset import GoldSet

    f = Path(folder)
    if not f.is_dir():
        raise FormatError("expected a conversation gold-set folder (conversations.jsonl and judgments)", path=str(f))
    if not (f / TURNS_FILE).is_file():
        from evalops.goldset import load_gold_set

        plain = load_gold_set(f, default_type=default_type, default_language=default_language)
        conversations = conversations_from_gold_set(plain)
        raise_problems(judged_problems(conversations.turns, ((q, None) for q in plain.judgments["query_id"]),
                                       plain.source, plain.source))
        judged = set(plain.judgments["query_id"])
        keep = plain.queries["query_id"].isin(judged)
        return ConversationGoldSet(GoldSet(plain.queries[keep].reset_index(drop=True), plain.judgments, plain.source),
                                   conversations)
    if (f / "queries.jsonl").is_file():
        raise FormatError("holds both queries.jsonl and conversations.jsonl; a conversation gold set's queries are "
                          "its turns: remove queries.jsonl (or conversations.jsonl for a plain gold set)", path=str(f))
    conversations = load_conversations(f / TURNS_FILE)
    judgments, jpath, first_line = _judgments(f)
    ids = judgments["query_id"].astype(str).tolist()
    raise_problems(judged_problems(conversations.turns, ((q, i + first_line) for i, q in enumerate(ids)),
                                   conversations.source, jpath))
    judged = set(ids)
    rows = [{"query_id": t.query_id, "text": t.question, "type": t.type or default_type or "",
             "language": t.language if t.language != "und" else (default_language or "und"),
             "reference_answer": t.answer or ""}
            for t in sorted(conversations.turns, key=lambda t: (t.row or 0)) if t.query_id in judged]
    gold = GoldSet.from_frames(pd.DataFrame(rows, columns=["query_id", "text", "type", "language", "reference_answer"]),
                               judgments, source=str(f))
    return ConversationGoldSet(gold, conversations)


def load_gold_set_folder(folder: str | os.PathLike[str], **options: Any) -> Any:
    """The gold set of ``folder``: its judged turns when it holds ``conversations.jsonl`` (checked as above),
    else :func:`evalops.goldset.load_gold_set` (``options``: its keyword arguments)."""
    f = Path(folder)
    if (f / TURNS_FILE).is_file():
        keep = {k: options[k] for k in ("default_type", "default_language") if k in options}
        return load_conversation_gold_set(f, **keep).gold
    from evalops.goldset import load_gold_set

    return load_gold_set(f, **options)


def save_conversations(conversations: Conversations, path: str | os.PathLike[str]) -> Path:
    """Write the turns as a ``conversations.jsonl`` file (the format :func:`load_conversations` reads)."""
    def record(t: Turn) -> dict[str, Any]:
        out: dict[str, Any] = {"conversation_id": t.conversation_id, "turn": t.turn, "question": t.question}
        if t.query_id != turn_id(t.conversation_id, t.turn):
            out["query_id"] = t.query_id
        for key in ("answer", "rewrite"):
            if getattr(t, key) is not None:
                out[key] = getattr(t, key)
        if t.language != "und":
            out["language"] = t.language
        return out

    p = Path(path)
    write_jsonl((record(t) for t in conversations.turns), p)
    return p
