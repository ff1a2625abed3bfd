"""Gold sets and the data contracts (gold set, knowledge-base snapshot, query logs).

Great Expectations is imported only inside the ``validate_*`` functions (the import costs about 6 s).
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> module inside evalops.goldset (imported on first use: the model and readers need pandas,
# while the settings only need the rules)
_EXPORTS: dict[str, str] = {
    "load_gold_set": "io", "load_gold_set_trec": "io", "save_gold_set": "io", "save_gold_set_trec": "io",
    "QUERY_TYPES": "rules", "GoldSet": "model", "Query": "model",
    "Failure": "report", "ValidationReport": "report",
    "GoldSetRules": "rules", "KnowledgeBaseRules": "rules", "QueryLogRules": "rules",
    "DEFAULT_DOCS_DIR": "validation", "validate_gold_set": "validation", "validate_knowledge_base": "validation",
    "validate_query_logs": "validation",
}

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'evalops.goldset' has no attribute {name!r}")
    return getattr(importlib.import_module(f"evalops.goldset.{module}"), name)


def __dir__() -> list[str]:
    return __all__
