"""The data contracts: the gold set, the knowledge-base snapshot and the query logs.

Each contract is a table of checks (``checks``) built from explicit thresholds (``rules``) and run through
Great Expectations (``_gx``), which is imported only inside the ``validate_*`` functions (the import
costs 2.5-3.5 s of CPU). The outcome is a :class:`ValidationReport` (``report``). The query-log row checks that
decide which rows a window drops are ``logrows``.

The package imports ``evalops.goldset`` (the gold set it checks); no data package imports it back except
to validate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalops.util.lazy import lazy_exports

if TYPE_CHECKING:  # what a type checker sees; at run time each name is imported on first use
    from evalops.contracts.logrows import row_problems as row_problems
    from evalops.contracts.report import Failure as Failure, ValidationReport as ValidationReport
    from evalops.contracts.rules import (
        LOG_REQUIRED_COLUMNS as LOG_REQUIRED_COLUMNS,
        GoldSetRules as GoldSetRules,
        KnowledgeBaseRules as KnowledgeBaseRules,
        QueryLogRules as QueryLogRules,
    )
    from evalops.contracts.validation import (
        DEFAULT_DOCS_DIR as DEFAULT_DOCS_DIR,
        validate_gold_set as validate_gold_set,
        validate_knowledge_base as validate_knowledge_base,
        validate_query_logs as validate_query_logs,
    )

# public name -> module inside evalops.contracts (imported on first use: the checks need pandas, while the
# settings only need the rules)
_EXPORTS: dict[str, str] = {
    "Failure": "report", "ValidationReport": "report",
    "GoldSetRules": "rules", "KnowledgeBaseRules": "rules", "QueryLogRules": "rules",
    "LOG_REQUIRED_COLUMNS": "rules",
    "DEFAULT_DOCS_DIR": "validation", "validate_gold_set": "validation", "validate_knowledge_base": "validation",
    "validate_query_logs": "validation",
    "row_problems": "logrows",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports("evalops.contracts", _EXPORTS, __all__)
