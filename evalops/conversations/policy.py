"""The recorded policy of a conversational evaluation, and the names of its query policies and units
(standard library only: the pipeline's fingerprint reads it without the retrievers)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from evalops.errors import InputError

__all__ = ["QUERY_POLICIES", "UNITS", "ConversationPolicy"]

QUERY_POLICIES: tuple[str, ...] = ("raw", "history", "rewrite")
UNITS: tuple[str, ...] = ("conversation",)


@dataclass(frozen=True)
class ConversationPolicy:
    """The recorded policy of a conversational evaluation: the statistical ``unit`` (each conversation's
    turns are averaged to one value before any paired test), how turns are averaged, which turns are
    scored, and the query policy of each version compared (``queries``: version name -> policy; a run file's
    version is ``given``: its own queries)."""

    unit: str = "conversation"
    aggregate: str = "mean of the judged turns"
    unjudged_turns: str = "history only (never scored)"
    history: str = "earlier questions and answers, oldest first"
    queries: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.unit not in UNITS:
            raise InputError(f"conversation unit {self.unit!r}: the statistical unit of a conversation gold set is "
                             "'conversation' (turns of one conversation are not independent)")

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["queries"] = dict(self.queries)
        return out
