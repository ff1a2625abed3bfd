"""The conversation gold-set contract: every problem at once, each naming the file, the row and the fix.

==================  ============================================================================
check               refused when
==================  ============================================================================
``turn_id``         a turn's query id is ``<c>_<t>`` for another conversation or turn number
``duplicate``       two rows are the same turn (or share a query id)
``turn_order``      a conversation's turns are not in increasing turn order in the file
``gaps``            a conversation's turns are not numbered 1..N (a turn is missing)
``judged_turns``    a judgment names a query id that is no turn; a conversation has no judged turn
``rewrite``         a rewrite is given but empty
==================  ============================================================================

A turn without judgments is allowed (history only, never scored; see :mod:`evalops.conversations.model`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evalops.errors import InputError

__all__ = [
    "CHECKS",
    "ContractProblem",
    "ConversationContractError",
    "judged_problems",
    "raise_problems",
    "structure_problems",
]

_TURN_ID = re.compile(r"^(?P<conversation>.+)_(?P<turn>[0-9]+)$")


def turn_id(conversation_id: str, turn: int) -> str:
    """``<conversation_id>_<turn>`` (TREC CAsT's turn id)."""
    return f"{conversation_id}_{turn}"


def parse_turn_id(query_id: str) -> tuple[str, int] | None:
    """``(conversation_id, turn)`` of a CAsT-style turn id (the turn after the *last* underscore), or None when
    ``query_id`` is not one."""
    m = _TURN_ID.match(str(query_id))
    if m is None or int(m.group("turn")) < 1:
        return None
    return m.group("conversation"), int(m.group("turn"))


CHECKS: tuple[str, ...] = ("turn_id", "duplicate", "turn_order", "gaps", "judged_turns", "rewrite")
_SHOW = 10


@dataclass(frozen=True)
class ContractProblem:
    """One broken rule: which ``check``, where (``path``, ``row``: 1-based line), what and how to fix it."""

    check: str
    what: str
    fix: str
    path: str | None = None
    row: int | None = None

    def message(self) -> str:
        where = f"{self.path}:{self.row}: " if self.path and self.row else f"{self.path}: " if self.path else (
            f"row {self.row}: " if self.row else "")
        return f"{where}{self.what}; {self.fix}"


class ConversationContractError(InputError):
    """The conversation gold set breaks its contract; ``problems`` lists every broken rule."""

    def __init__(self, problems: Sequence[ContractProblem]):
        self.problems = tuple(problems)
        shown = "\n".join(f"  [{p.check}] {p.message()}" for p in self.problems[:_SHOW])
        more = f"\n  ... and {len(self.problems) - _SHOW} more" if len(self.problems) > _SHOW else ""
        super().__init__(f"the conversation gold set breaks its contract ({len(self.problems)} problem(s)):\n"
                         f"{shown}{more}")


def raise_problems(problems: Sequence[ContractProblem]) -> None:
    if problems:
        raise ConversationContractError(problems)


def structure_problems(turns: Sequence, path: str | None) -> list[ContractProblem]:  # Sequence[Turn]
    """Turn ids, duplicates, order in the file and gaps (turns in file order)."""
    out: list[ContractProblem] = []
    seen_ids: dict[str, int | None] = {}
    seen_turns: dict[tuple[str, int], int | None] = {}
    last: dict[str, int] = {}
    for t in turns:
        parsed = parse_turn_id(t.query_id)
        if parsed is not None and parsed != (t.conversation_id, t.turn):
            out.append(ContractProblem(
                "turn_id", f"query id {t.query_id!r} reads as conversation {parsed[0]!r} turn {parsed[1]}, but the row "
                f"says conversation {t.conversation_id!r} turn {t.turn}",
                f"use query id {turn_id(t.conversation_id, t.turn)!r} or drop the query_id field", path, t.row))
        if t.query_id in seen_ids:
            out.append(ContractProblem("duplicate", f"query id {t.query_id!r} is used again (first on row "
                                       f"{seen_ids[t.query_id]})", "give each turn its own id", path, t.row))
        seen_ids.setdefault(t.query_id, t.row)
        key = (t.conversation_id, t.turn)
        if key in seen_turns:
            out.append(ContractProblem("duplicate", f"conversation {t.conversation_id!r} has turn {t.turn} twice "
                                       f"(first on row {seen_turns[key]})", "remove or renumber one of them",
                                       path, t.row))
            continue
        seen_turns[key] = t.row
        if t.conversation_id in last and t.turn < last[t.conversation_id]:
            out.append(ContractProblem(
                "turn_order", f"conversation {t.conversation_id!r}: turn {t.turn} comes after turn "
                f"{last[t.conversation_id]}", "list a conversation's turns in the order they were asked", path, t.row))
        last[t.conversation_id] = max(t.turn, last.get(t.conversation_id, 0))
        if t.rewrite is not None and not t.rewrite.strip():
            out.append(ContractProblem("rewrite", f"turn {t.query_id!r} has an empty rewrite",
                                       "write the self-contained question or leave the rewrite out", path, t.row))
    numbers: dict[str, list[tuple[int, int | None]]] = {}
    for (conv, n), row in seen_turns.items():
        numbers.setdefault(conv, []).append((n, row))
    for conv, have in numbers.items():
        present = {n for n, _ in have}
        missing = [n for n in range(1, max(present) + 1) if n not in present]
        if missing:
            row = min((r for n, r in have if n > missing[0]), default=None, key=lambda r: r or 0)
            out.append(ContractProblem(
                "gaps", f"conversation {conv!r} has no turn {', '.join(map(str, missing[:_SHOW]))} "
                f"(its turns must be numbered 1..{max(present)})",
                "add the missing turn(s) (a turn without judgments is history only) or renumber the turns",
                path, row))
    return out


def judged_problems(turns: Sequence, judged_ids: Iterable[tuple[str, int | None]], path: str | None,
                    judgments_path: str | None) -> list[ContractProblem]:
    """Judgments of query ids that are no turn (named by the judgment's row), and conversations without a
    judged turn. ``judged_ids``: (query id, row in the judgments file) per judgment."""
    ids = {t.query_id for t in turns}
    out: list[ContractProblem] = []
    judged: set[str] = set()
    reported: set[str] = set()
    for qid, row in judged_ids:
        judged.add(qid)
        if qid not in ids and qid not in reported:
            reported.add(qid)
            out.append(ContractProblem("judged_turns", f"a judgment names query {qid!r}, which is no turn of the "
                                       "conversations", "fix the query id or add the turn", judgments_path, row))
    first_row: dict[str, int | None] = {}
    has_judged: dict[str, bool] = {}
    for t in turns:
        first_row.setdefault(t.conversation_id, t.row)
        has_judged[t.conversation_id] = has_judged.get(t.conversation_id, False) or t.query_id in judged
    for conv, ok in has_judged.items():
        if not ok:
            out.append(ContractProblem("judged_turns", f"conversation {conv!r} has no judged turn",
                                       "judge at least one of its turns or remove the conversation", path,
                                       first_row[conv]))
    return out
