"""The context-efficiency measures, declared in the measure grammar: name, parameters, formula, direction.

They score what a RAG system puts into the model's context: the top k retrieved texts of a query (the
knowledge-base snapshot's text of each document, in the run's order). Every one is a per-query value;
"tokens" are those of the configured tokenizer (:mod:`evalops.context.tokens`). The computation lives in
:mod:`evalops.context.compute`, where each measure's entry in the measure registry names its kernel and
what it reads; this module holds no arithmetic. Each measure's ``higher_is_better``
states its direction, which the statistics and the alerting rule read.

``C_1 .. C_m`` are the top-k contexts (m = min(k, documents retrieved)); ``|C|`` is a context's number of
tokens. A ratio whose denominator is 0 is 0; a query the run did not answer has no contexts.
"""

from __future__ import annotations

from evalops.metrics.measures import REL, Measure, Param

__all__ = [
    "Tokens",
    "Redundancy",
    "NearDuplicates",
    "QueryCoverage",
    "RelevantTokenShare",
]

N = Param("n", int, 5, "n-gram length in tokens (words; characters for CJK text)", minimum=1)
SHINGLE = Param("shingle", int, 5, "shingle length in tokens", minimum=1)
JACCARD = Param(
    "jaccard", int, 80, "Jaccard similarity (percent) from which two contexts are near-duplicates", minimum=1, maximum=100
)


class Tokens(Measure):
    """Tokens@k = |C_1| + ... + |C_m|: what the top k cost in the model's context. Lower is better.

    The default tokenizer counts CJK characters and words, not characters / 4. A query without contexts
    costs 0."""

    NAME = "Tokens"
    DESCRIPTION = "tokens in the top k contexts"
    CUTOFF = "required"
    HIGHER_IS_BETTER = False
    NO_ANSWER_APPLIES = False
    UNIT_RANGE = False  # a count of tokens


class Redundancy(Measure):
    """Redundancy(n)@k = 1 - distinct / total over the token n-grams of the top k contexts. Lower is better.

    Every context contributes its n-grams of consecutive tokens (word n-grams; for Chinese, whose tokens
    are characters, character n-grams; n-grams never span two contexts); ``total`` counts them with
    repeats, ``distinct`` without. It is the share of n-gram occurrences that repeat one seen before, in
    the same context or another. A context shorter than n tokens has no n-gram. 0 when total is 0."""

    NAME = "Redundancy"
    DESCRIPTION = "share of repeated token n-grams across the top k contexts"
    PARAMS = (N,)
    CUTOFF = "required"
    HIGHER_IS_BETTER = False
    NO_ANSWER_APPLIES = False


class NearDuplicates(Measure):
    """NearDuplicates(shingle, jaccard)@k = (contexts that nearly duplicate a higher-ranked one) / m.

    Context i is a near-duplicate when J(S_i, S_j) >= jaccard / 100 for some j < i, where S is the set of
    a context's shingles (its n-grams of ``shingle`` consecutive tokens; a context shorter than that is a
    single shingle, itself) and J(A, B) = |A & B| / |A | B| (exact Jaccard on the shingle sets: with
    k contexts there are only k (k - 1) / 2 pairs, so MinHash's estimate is not needed). The first context
    never counts. Lower is better; 0 without contexts."""

    NAME = "NearDuplicates"
    DESCRIPTION = "share of the top k contexts that nearly duplicate a higher-ranked one"
    PARAMS = (SHINGLE, JACCARD)
    CUTOFF = "required"
    HIGHER_IS_BETTER = False
    NO_ANSWER_APPLIES = False


class QueryCoverage(Measure):
    """QueryCoverage@k = |T(q) & (T(C_1) | ... | T(C_m))| / |T(q)|, T = the set of a text's tokens.

    The share of the query's distinct terms (same tokenizer as the contexts) that occur in some top-k
    context. Higher is better; 0 for a query without tokens."""

    NAME = "QueryCoverage"
    DESCRIPTION = "share of the query's terms found in the top k contexts"
    CUTOFF = "required"
    NO_ANSWER_APPLIES = False


class RelevantTokenShare(Measure):
    """RelevantTokenShare@k = (sum of |C_i| over judged relevant C_i) / (sum of |C_i|), i <= m.

    The meaningful form of "information density": the share of the context tokens that come from
    contexts judged relevant (grade >= rel); unjudged contexts count as not relevant. Higher is better;
    0 without context tokens."""

    NAME = "RelevantTokenShare"
    DESCRIPTION = "share of the top k context tokens from judged relevant contexts"
    PARAMS = (REL,)
    CUTOFF = "required"
