"""An earlier turn of a conversation, as a retriever receives it (standard library only, so that the retriever
protocol and the conversation gold sets share it without importing each other)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HistoryTurn"]


@dataclass(frozen=True)
class HistoryTurn:
    """An earlier turn of a conversation: its question and the answer given (None when not recorded)."""

    question: str
    answer: str | None = None

    def to_dict(self) -> dict[str, str]:
        return {"question": self.question, **({} if self.answer is None else {"answer": self.answer})}
