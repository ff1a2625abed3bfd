"""Context-efficiency measures: what the top k retrieved texts cost and how much of it is useful.

    >>> from evalops.context import context_values
    >>> values = context_values(["Tokens@2"], {"q": "vitamin d"}, {"q": ["d1", "d2"]},
    ...                         {"d1": "Vitamin D and bone.", "d2": "维生素D"})
    >>> values.per_query["Tokens@2"].tolist()
    [8.0]

Pure functions over texts (no I/O): ``tokens`` counts tokens (CJK characters and words by default),
``measures`` declares each measure with its formula and direction (``higher_is_better``), ``compute``
computes them for one query or for a whole run.
"""

from evalops.context.compute import (
    CONTEXT_MEASURE_TYPES,
    ContextValues,
    context_tokens,
    context_values,
    near_duplicate_share,
    parse_any_measure,
    parse_context_measures,
    query_coverage,
    redundancy,
    relevant_token_share,
)
from evalops.context.measures import (
    NearDuplicates,
    QueryCoverage,
    Redundancy,
    RelevantTokenShare,
    Tokens,
)
from evalops.context.tokens import Tokenize, default_tokenize

__all__ = [
    "context_values",
    "ContextValues",
    "parse_context_measures",
    "parse_any_measure",
    "context_tokens",
    "redundancy",
    "near_duplicate_share",
    "query_coverage",
    "relevant_token_share",
    "default_tokenize",
    "Tokenize",
    "CONTEXT_MEASURE_TYPES",
    "Tokens",
    "Redundancy",
    "NearDuplicates",
    "QueryCoverage",
    "RelevantTokenShare",
]
