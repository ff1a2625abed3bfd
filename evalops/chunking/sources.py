"""The source text that text-anchored judgments and chunk manifests point into.

A span ``[start, end)`` of document ``doc_id`` counts characters of that document's ``text`` (never its
title). The source text is a knowledge-base snapshot of the *unchunked* documents
(:class:`evalops.knowledge.KnowledgeBaseSnapshot`): its ``snapshot_id`` is the source-text identity that
text-anchored judgments depend on (see :mod:`evalops.chunking.conditions`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalops.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from evalops.knowledge import KnowledgeBaseSnapshot

__all__ = ["SourceTexts"]


@dataclass(frozen=True, eq=False)
class SourceTexts:
    """``texts``: document id -> text; ``snapshot_id``: the source snapshot's id; ``name``: for messages."""

    texts: Mapping[str, str]
    snapshot_id: str
    name: str = "source documents"

    @classmethod
    def of(cls, snapshot: KnowledgeBaseSnapshot) -> SourceTexts:
        """The texts of a snapshot that holds them (one read from a manifest does not)."""
        corpus = snapshot.corpus()
        dup = snapshot.duplicate_ids()
        if dup:
            raise InputError(f"{snapshot.source}: document id(s) {dup[:5]} appear more than once; spans need "
                             "one text per document")
        texts = {str(d): ("" if t is None else str(t)) for d, t in zip(corpus["doc_id"], corpus["text"], strict=False)}
        return cls(texts, snapshot.snapshot_id, snapshot.source or "source documents")

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.texts

    def text(self, doc_id: str) -> str:
        return self.texts[doc_id]
