"""The demo's conversations: a small bilingual conversation set over the handbook, asked three ways.

``include/goldset/conversations`` holds 8 conversations (4 in English, 4 in Chinese; 20 turns, the later ones
referring back: "And what about food there?", "那打车需要什么凭证？"), each turn judged as the gold query it
rewrites. The demo asks BM25 over the handbook each turn under the three query policies (the rewrite as the
baseline, the raw turn and the turn with the history) and writes the conversation report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalops.conversations.io import load_conversation_gold_set
from evalops.formats.beir import read_beir_corpus

__all__ = ["CONVERSATIONS", "demo_conversations"]

CONVERSATIONS = Path("include") / "goldset" / "conversations"
CORPUS = Path("include") / "knowledge_base" / "corpus.jsonl"
MEASURE = "nDCG@10"


def demo_conversations(home: str | Path, out: str | Path) -> tuple[Any, dict[str, Path]]:
    """(the results, the report's paths in ``out``) for the sample conversations of the project at ``home``."""
    from evalops.conversations.evaluate import (
        evaluate_conversations,
        retrieve_conversations,
    )
    from evalops.conversations.report import write_report
    from evalops.retrievers import BM25Retriever
    from evalops.retrievers.corpus import as_corpus

    home = Path(home)
    gold = load_conversation_gold_set(home / CONVERSATIONS)
    bm25 = BM25Retriever(as_corpus(read_beir_corpus(home / CORPUS)))
    policies = ("rewrite", "raw", "history")
    runs = {p: retrieve_conversations(bm25, gold, p, name=p) for p in policies}
    results = evaluate_conversations(gold, runs, [MEASURE], baseline="rewrite", query_policies={p: p for p in policies})
    return results, write_report(results, out)
