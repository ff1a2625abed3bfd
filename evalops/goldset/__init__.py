"""Gold sets: queries with their relevance judgments, and their readers and writers.

The contract a gold set must meet is :mod:`evalops.contracts`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalops.util.lazy import lazy_exports

if TYPE_CHECKING:  # what a type checker sees; at run time each name is imported on first use
    from evalops.goldset.io import (
        load_gold_set as load_gold_set,
        load_gold_set_trec as load_gold_set_trec,
        save_gold_set as save_gold_set,
        save_gold_set_trec as save_gold_set_trec,
    )
    from evalops.goldset.model import GoldSet as GoldSet, Query as Query

# The query types of a gold set. Declared here, not in ``model``, so that the contract rules (read by the
# settings) can name them without importing pandas.
QUERY_TYPES: tuple[str, ...] = ("semantic", "keyword", "no_answer")

# public name -> module inside evalops.goldset (imported on first use: the model and readers need pandas)
_EXPORTS: dict[str, str] = {
    "load_gold_set": "io", "load_gold_set_trec": "io", "save_gold_set": "io", "save_gold_set_trec": "io",
    "GoldSet": "model", "Query": "model",
}

__all__ = ["QUERY_TYPES", *sorted(_EXPORTS)]

__getattr__, __dir__ = lazy_exports("evalops.goldset", _EXPORTS, __all__)
