"""What a retriever is asked for each turn: the query policies, the built-in baselines of query rewriting.

=============  ======================================================================================
policy         the query text of a turn
=============  ======================================================================================
``raw``        the question as the user asked it ("what about its side effects?"): a retriever that
               ignores the history
``history``    the earlier questions of the conversation and the question, oldest first, joined by a
               space (answers are not added: they are long and would swamp the question)
``rewrite``    the annotator's rewrite ("what are the side effects of statins?"); a first turn without
               one is asked as it is (it has no history to resolve); a later turn without one is refused
               with its file row
=============  ======================================================================================

Every query also carries its history (:class:`~evalops.retrievers.base.Query`), whatever the policy, so a
retriever that rewrites on its own (an HTTP service, a Python function) gets what it needs. The policy is
recorded with the results (:class:`ConversationPolicy`).
"""

from __future__ import annotations

from collections.abc import Sequence

from evalops.conversations.checks import ContractProblem, raise_problems
from evalops.conversations.model import Conversations, Turn
from evalops.conversations.policy import QUERY_POLICIES, UNITS, ConversationPolicy
from evalops.errors import InputError
from evalops.retrievers.base import Query

__all__ = ["QUERY_POLICIES", "UNITS", "ConversationPolicy", "conversation_queries", "query_text"]

def query_text(turn: Turn, earlier: Sequence[Turn], policy: str) -> str:
    """The text ``turn`` is asked with under ``policy`` (see the module docs); ``earlier``: its earlier turns."""
    if policy == "raw":
        return turn.question
    if policy == "history":
        return " ".join([*(t.question for t in earlier), turn.question])
    if policy == "rewrite":
        if turn.rewrite is not None:
            return turn.rewrite
        if turn.turn == 1:
            return turn.question
        raise InputError(f"turn {turn.query_id!r} has no rewrite")
    raise InputError(f"unknown query policy {policy!r}; use one of {list(QUERY_POLICIES)}")


def conversation_queries(conversations: Conversations, query_ids: Sequence[str], policy: str = "raw") -> list[Query]:
    """One :class:`Query` per id in ``query_ids`` (turns), its text under ``policy``, its history attached.

    Under ``rewrite`` every later turn asked must have a rewrite: the missing ones are raised together, each
    with its row and the fix."""
    if policy not in QUERY_POLICIES:
        raise InputError(f"unknown query policy {policy!r}; use one of {list(QUERY_POLICIES)}")
    by_id = conversations.by_id
    unknown = [q for q in query_ids if q not in by_id]
    if unknown:
        raise InputError(f"{conversations.source or 'conversations'}: {len(unknown)} query id(s) are no turn "
                         f"(first: {unknown[0]!r})")
    if policy == "rewrite":
        raise_problems([ContractProblem("rewrite", f"turn {t.query_id!r} has no rewrite",
                                        "add its rewrite (the question made self-contained) or compare with the "
                                        "raw or history policy", conversations.source, t.row)
                        for t in (by_id[q] for q in query_ids) if t.rewrite is None and t.turn > 1])
    out = []
    for q in query_ids:
        turn = by_id[q]
        earlier = [t for t in conversations.turns_of(turn.conversation_id) if t.turn < turn.turn]
        out.append(Query(q, query_text(turn, earlier, policy), conversations.history(q)))
    return out
