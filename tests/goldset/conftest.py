"""A small valid gold set and knowledge base that each contract test breaks in exactly one way."""

from __future__ import annotations

import pandas as pd
import pytest

from evalops.contracts import GoldSetRules
from evalops.goldset import GoldSet
from evalops.knowledge import KnowledgeBaseSnapshot

# 10 queries: 6 semantic, 3 keyword, 1 no_answer (share 0.1).
QUERIES = [
    ("q1", "how long do refunds take", "semantic", "en"),
    ("q2", "hotel limit in Tokyo", "semantic", "en"),
    ("q3", "can I fly business class", "semantic", "en"),
    ("q4", "support hours in Germany", "semantic", "en"),
    ("q5", "退款多久到账", "semantic", "zh"),
    ("q6", "lost receipt", "semantic", "en"),
    ("q7", "ORDER-2024", "keyword", "en"),
    ("q8", "AX-350 reset", "keyword", "en"),
    ("q9", "PAY-3102", "keyword", "en"),
    ("q10", "parental leave policy", "no_answer", "en"),
]
JUDGMENTS = [
    ("q1", "d1", 2), ("q1", "d2", 1), ("q2", "d3", 2), ("q3", "d4", 2), ("q4", "d5", 2), ("q5", "d1", 1),
    ("q5", "d6", 2), ("q6", "d7", 2), ("q7", "d8", 2), ("q8", "d9", 2), ("q8", "d10", 0), ("q9", "d11", 2),
    ("q10", "d12", 0),
]
DOCS = [f"d{i}" for i in range(1, 13)]
RULES = GoldSetRules(min_queries=10, no_answer_share=(0.05, 0.30), allowed_grades=(0, 1, 2))


def gold_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    queries = pd.DataFrame(QUERIES, columns=["query_id", "text", "type", "language"])
    queries["tags"] = [("sample",)] * len(queries)
    return queries, pd.DataFrame(JUDGMENTS, columns=["query_id", "doc_id", "grade"])


def kb_frame(doc_ids: list[str] | None = None) -> pd.DataFrame:
    ids = DOCS if doc_ids is None else doc_ids
    return pd.DataFrame({"doc_id": ids, "title": [f"title {d}" for d in ids], "text": [f"text of {d}" for d in ids]})


@pytest.fixture
def make_frames():
    """A factory: fresh (queries, judgments) frames of the valid tiny gold set."""
    return gold_frames


@pytest.fixture
def make_kb():
    """A factory: a knowledge-base snapshot over the given doc ids (default: every judged doc)."""
    return lambda doc_ids=None: KnowledgeBaseSnapshot.from_frame(kb_frame(doc_ids), source="tiny-kb")


@pytest.fixture
def rules() -> GoldSetRules:
    return RULES


@pytest.fixture
def gold() -> GoldSet:
    return GoldSet.from_frames(*gold_frames(), source="tiny")


@pytest.fixture
def snapshot() -> KnowledgeBaseSnapshot:
    return KnowledgeBaseSnapshot.from_frame(kb_frame(), source="tiny-kb")
