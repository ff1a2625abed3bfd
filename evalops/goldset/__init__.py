"""Gold sets and the data contracts (gold set, knowledge-base snapshot, query logs).

Great Expectations is imported only inside the ``validate_*`` functions (the import costs about 6 s).
"""

from __future__ import annotations

from evalops.goldset.io import load_gold_set, load_gold_set_trec, save_gold_set, save_gold_set_trec
from evalops.goldset.model import QUERY_TYPES, GoldSet, Query
from evalops.goldset.report import Failure, ValidationReport
from evalops.goldset.rules import GoldSetRules, KnowledgeBaseRules, QueryLogRules
from evalops.goldset.validation import (
    DEFAULT_DOCS_DIR,
    validate_gold_set,
    validate_knowledge_base,
    validate_query_logs,
)

__all__ = [
    "GoldSet",
    "Query",
    "QUERY_TYPES",
    "load_gold_set",
    "load_gold_set_trec",
    "save_gold_set",
    "save_gold_set_trec",
    "GoldSetRules",
    "KnowledgeBaseRules",
    "QueryLogRules",
    "Failure",
    "ValidationReport",
    "validate_gold_set",
    "validate_knowledge_base",
    "validate_query_logs",
    "DEFAULT_DOCS_DIR",
]
