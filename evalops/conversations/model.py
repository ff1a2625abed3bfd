"""Conversations: turns with an id ``<conversation>_<turn>``, their history and an optional rewrite.

Conventions owned here (TREC CAsT / iKAT style):

* A turn's id is ``<conversation_id>_<turn>``: the conversation id, an underscore, the turn number (1, 2, ...).
  The conversation id may itself contain underscores (the turn is after the *last* one).
* A conversation's turns are numbered 1..N with no gap, in the order they were asked.
* A turn's **history** is every earlier turn of its conversation (its question and, when the gold set has
  one, the answer that was given), oldest first.
* A turn may carry a **rewrite**: the question made self-contained ("what about its side effects?" ->
  "what are the side effects of statins?"), written by an annotator.
* A turn without judgments is **history only**: it is part of later turns' history and is never scored.
  Only judged turns are scored, and the statistical unit of a comparison is the conversation
  (:mod:`evalops.conversations.stats`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from evalops.conversations.checks import parse_turn_id, structure_problems, turn_id
from evalops.errors import InputError
from evalops.fingerprint import content_digest
from evalops.turns import HistoryTurn

__all__ = ["Conversations", "Turn", "parse_turn_id", "turn_id"]

@dataclass(frozen=True)
class Turn:
    """One turn. ``row`` is its line in the file it came from (for messages); not part of the content."""

    query_id: str
    conversation_id: str
    turn: int
    question: str
    answer: str | None = None
    rewrite: str | None = None
    language: str = "und"
    type: str = ""
    row: int | None = None


@dataclass(frozen=True, eq=False)
class Conversations:
    """Turns grouped by conversation, in turn order. Build with :meth:`of` (checked) or the readers in
    :mod:`evalops.conversations.io`; ``source`` names where they came from."""

    turns: tuple[Turn, ...]
    source: str | None = None

    @classmethod
    def of(cls, turns: Iterable[Turn], source: str | None = None) -> Conversations:
        """Turns in any order; duplicate turns and gaps are refused (see :mod:`evalops.conversations.checks`
        for the full contract with every problem at once)."""
        turns = tuple(turns)
        problems = structure_problems(turns, source)
        if problems:
            raise InputError(problems[0].message() + (f" (and {len(problems) - 1} more problem(s))"
                                                      if len(problems) > 1 else ""))
        return cls(tuple(sorted(turns, key=lambda t: (t.conversation_id, t.turn))), source)

    def __len__(self) -> int:
        return len(self.turns)

    @cached_property
    def by_id(self) -> dict[str, Turn]:
        return {t.query_id: t for t in self.turns}

    @cached_property
    def conversation_ids(self) -> tuple[str, ...]:
        """Every conversation id, sorted."""
        return tuple(sorted({t.conversation_id for t in self.turns}))

    def conversation_of(self) -> dict[str, str]:
        """query id -> conversation id."""
        return {t.query_id: t.conversation_id for t in self.turns}

    def depth_of(self) -> dict[str, int]:
        """query id -> turn number (its depth in the conversation)."""
        return {t.query_id: t.turn for t in self.turns}

    @cached_property
    def _grouped(self) -> dict[str, tuple[Turn, ...]]:
        """conversation id -> its turns in turn order (the turns are sorted by conversation and turn)."""
        out: dict[str, list[Turn]] = {}
        for t in self.turns:
            out.setdefault(t.conversation_id, []).append(t)
        return {c: tuple(ts) for c, ts in out.items()}

    def turns_of(self, conversation_id: str) -> tuple[Turn, ...]:
        return self._grouped.get(conversation_id, ())

    def history(self, query_id: str) -> tuple[HistoryTurn, ...]:
        """The earlier turns of ``query_id``'s conversation, oldest first."""
        try:
            turn = self.by_id[query_id]
        except KeyError:
            raise InputError(f"{self.source or 'conversations'}: no turn {query_id!r}") from None
        return tuple(HistoryTurn(t.question, t.answer) for t in self.turns_of(turn.conversation_id)
                     if t.turn < turn.turn)

    def restrict(self, query_ids: Iterable[str]) -> dict[str, Turn]:
        """The turns of ``query_ids`` (those that are turns), by id."""
        wanted = set(query_ids)
        return {q: t for q, t in self.by_id.items() if q in wanted}

    @cached_property
    def version(self) -> str:
        """Content hash of the turns (ids, questions, answers, rewrites, languages; not file rows)."""
        return content_digest([[t.query_id, t.conversation_id, t.turn, t.question, t.answer, t.rewrite, t.language]
                               for t in self.turns])

    def describe(self, judged: Iterable[str] = ()) -> dict[str, object]:
        judged = set(judged)
        return {"source": self.source, "version": self.version, "conversations": len(self.conversation_ids),
                "turns": len(self.turns), "judged_turns": sum(t.query_id in judged for t in self.turns),
                "max_depth": max((t.turn for t in self.turns), default=0),
                "rewrites": sum(t.rewrite is not None for t in self.turns)}


def history_questions(history: Iterable[HistoryTurn]) -> list[str]:
    return [h.question for h in history]


def as_turn_map(values: Mapping[str, float], conversations: Conversations) -> dict[str, Turn]:
    """The turns of the query ids in ``values`` (every one must be a turn)."""
    by_id = conversations.by_id
    missing = [q for q in values if q not in by_id]
    if missing:
        raise InputError(f"{len(missing)} scored query id(s) are not turns of "
                         f"{conversations.source or 'the conversations'}"
                         f" (first: {missing[0]!r}); score the conversation gold set's turns only")
    return {q: by_id[q] for q in values}
