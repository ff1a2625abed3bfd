"""Computing the context measures: per-query functions over texts, and a batch over a whole run.

Texts are tokenized once each and coded as integer arrays over one vocabulary, and every n-gram gets an
exact integer id (see ``_Coded``), so the measures are set operations on small integer arrays. The
formulas are on the measure classes in :mod:`evalops.context.measures`; the array functions below follow
them term by term.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import ClassVar

import numpy as np

from evalops.chunking.names import parse_span_measures
from evalops.context.measures import NearDuplicates, QueryCoverage, Redundancy, RelevantTokenShare, Tokens
from evalops.context.tokens import Tokenize, default_tokenize
from evalops.errors import InputError, MeasureError
from evalops.metrics.measures import Measure
from evalops.metrics.parse import parse_measure, parse_measures
from evalops.metrics.registry import MeasureEntry, Need, entry_of, measure_types, needs, register

__all__ = [
    "CONTEXT",
    "CONTEXT_MEASURE_TYPES",
    "ContextEntry",
    "ContextKernel",
    "ContextQuery",
    "ContextValues",
    "context_values",
    "parse_context_measures",
    "parse_any_measure",
    "context_tokens",
    "redundancy",
    "near_duplicate_share",
    "query_coverage",
    "relevant_token_share",
]


CONTEXT = "context"  # the context measures' family in evalops.metrics.registry


class ContextQuery:
    """What a context kernel reads of one query: its top k contexts (as slots of the coded texts), their
    document ids and the query's judgments (``Need.GRADES``), its own coded text (``Need.QUERY_TEXT``)."""

    __slots__ = ("coded", "top", "docs", "judgments", "query_slot", "shingles")

    def __init__(self, coded: _Coded, top: list[int], docs: list[str], judgments: Mapping[str, int],
                 query_slot: int, shingles: Callable[[int, int], np.ndarray]) -> None:
        self.coded, self.top, self.docs, self.judgments = coded, top, docs, judgments
        self.query_slot, self.shingles = query_slot, shingles


#: (measure, one query's contexts) -> the measure's value for that query
ContextKernel = Callable[[Measure, ContextQuery], float]


@dataclass(frozen=True)
class ContextEntry(MeasureEntry):
    """A context measure (:mod:`evalops.context.measures`): a kernel per query over its top k texts."""

    kernel: ContextKernel
    FAMILY: ClassVar[str] = CONTEXT

    def _kernel(self) -> object:
        return self.kernel


def parse_context_measures(measures: Iterable[str | Measure] | str | Measure) -> tuple[Measure, ...]:
    """Parse names such as ``Tokens@10`` or ``Redundancy(n=3)@5``; ``MeasureError`` on anything else."""
    given = [measures] if isinstance(measures, (str, Measure)) else list(measures)
    parsed = parse_measures(given, CONTEXT_MEASURE_TYPES)
    for m in parsed:
        if type(m) not in CONTEXT_MEASURE_TYPES.values():
            raise InputError(f"{m} is not a context measure; valid: {', '.join(CONTEXT_MEASURE_TYPES)}")
    return parsed


def parse_any_measure(name: str | Measure) -> Measure:
    """An IR measure (``nDCG@10``), a context measure (``Tokens@10``) or a span measure (``TokenIoU@10``,
    :mod:`evalops.chunking.names`), from its name: what the statistics and the alerting rule need to read a
    stored measure's direction (``higher_is_better``)."""
    if isinstance(name, Measure):
        return name
    if name.startswith("chunk/"):  # an IR measure on overlap-derived chunk judgments (evalops.pipeline.spans)
        return parse_measure(name.removeprefix("chunk/"))
    try:
        return parse_measure(name)
    except MeasureError as ir_error:

        try:
            return parse_measure(name, CONTEXT_MEASURE_TYPES)
        except MeasureError:
            pass
        try:
            return parse_span_measures(name)[0]
        except MeasureError:
            raise ir_error from None


class _Coded:
    """Texts tokenized once and coded: every token an integer (one vocabulary for all the texts), every
    n-gram an integer, exactly (no hashing).

    The n-gram starting at position i gets its id step by step: the (j+1)-gram's id is the dense rank of
    the pair (j-gram id, code of token i + j), over all the texts at once; n-grams never run past the end
    of their text. ``shingles(t, n)`` adds one more id per text shorter than n tokens: the text itself.
    """

    def __init__(self, texts: Sequence[str], tokenize: Tokenize) -> None:
        import pandas as pd

        tokens = [tokenize(text) for text in texts]
        self.lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        self.end = np.cumsum(self.lengths)
        self.start = self.end - self.lengths
        flat = np.fromiter(chain.from_iterable(tokens), dtype=object, count=int(self.end[-1]) if len(texts) else 0)
        self.codes = pd.factorize(flat)[0].astype(np.int64) if len(flat) else np.zeros(0, dtype=np.int64)
        self._text_end = np.repeat(self.end, self.lengths)  # end of the text each position belongs to
        self._grams: list[np.ndarray] = [self.codes]  # _grams[j - 1][i]: id of the j-gram at i, -1 if none

    def _gram_ids(self, n: int) -> np.ndarray:
        import pandas as pd

        while len(self._grams) < n:
            j = len(self._grams)
            previous = self._grams[-1]
            ids = np.full(len(self.codes), -1, dtype=np.int64)
            valid = np.flatnonzero(np.arange(len(self.codes)) + j < self._text_end)
            key = previous[valid] * (len(self.codes) + 1) + self.codes[valid + j]  # < N^2 + N: exact in int64
            ids[valid] = pd.factorize(key)[0]
            self._grams.append(ids)
        return self._grams[n - 1]

    def size(self, t: int) -> int:
        return int(self.lengths[t])

    def tokens(self, t: int) -> np.ndarray:
        return self.codes[self.start[t] : self.end[t]]

    def ngrams(self, t: int, n: int) -> np.ndarray:
        """Ids of text t's n-grams, in order (with repeats); none if it has fewer than n tokens."""
        if self.lengths[t] < n:
            return np.zeros(0, dtype=np.int64)
        return self._gram_ids(n)[self.start[t] : self.end[t] - n + 1]

    def shingles(self, t: int, n: int) -> np.ndarray:
        """Text t's distinct n-grams; a text shorter than n is one shingle, itself."""
        length = int(self.lengths[t])
        if length >= n:
            return np.unique(self.ngrams(t, n))
        whole = self._gram_ids(length)[self.start[t]] if length else 0  # the length-gram that is the text
        total = len(self.codes) + 1
        return np.array([total * (1 + length) + whole], dtype=np.int64)  # apart from every n-gram id


def _ratio(num: float, den: float) -> float:
    return float(num) / float(den) if den > 0 else 0.0


# -- the formulas, over coded contexts -----------------------------------------------------------------


def _redundancy(ngram_lists: Sequence[np.ndarray]) -> float:
    total = sum(len(g) for g in ngram_lists)
    if total == 0:
        return 0.0
    return 1.0 - len(np.unique(np.concatenate(ngram_lists))) / total


def _near_duplicate_share(shingle_sets: Sequence[np.ndarray], jaccard: int) -> float:
    m = len(shingle_sets)
    if m < 2:
        return 0.0
    owner = np.repeat(np.arange(m), [len(s) for s in shingle_sets])
    _, column = np.unique(np.concatenate(shingle_sets), return_inverse=True)
    incidence = np.zeros((m, int(column.max()) + 1), dtype=np.float32)
    incidence[owner, column] = 1.0
    shared = incidence @ incidence.T  # |S_i & S_j|; exact: small integers in float32
    size = np.diag(shared)
    union = size[:, None] + size[None, :] - shared  # never 0: every shingle set has a shingle
    # J >= jaccard / 100, compared without division: 100 |A & B| >= jaccard |A | B|; only j < i counts
    duplicate = np.tril(100.0 * shared >= jaccard * union, k=-1)
    return float(np.count_nonzero(duplicate.any(axis=1))) / m


def _coverage(query: np.ndarray, contexts: Sequence[np.ndarray]) -> float:
    terms = np.unique(query)
    if len(terms) == 0 or not contexts:
        return 0.0
    return float(np.count_nonzero(np.isin(terms, np.concatenate(contexts)))) / len(terms)


def _relevant_token_share(m: Measure, q: ContextQuery) -> float:
    rel = m["rel"]
    sizes = [q.coded.size(t) for t in q.top]
    relevant = [q.judgments.get(d, 0) >= rel for d in q.docs]
    return _ratio(sum(s for s, r in zip(sizes, relevant, strict=False) if r), sum(sizes))


_TEXT = Need.CONTEXT_TEXT
for _entry in (
    ContextEntry(Tokens, frozenset({_TEXT}), lambda m, q: float(sum(q.coded.size(t) for t in q.top))),
    ContextEntry(Redundancy, frozenset({_TEXT}), lambda m, q: _redundancy([q.coded.ngrams(t, m["n"]) for t in q.top])),
    ContextEntry(NearDuplicates, frozenset({_TEXT}),
                 lambda m, q: _near_duplicate_share([q.shingles(t, m["shingle"]) for t in q.top], m["jaccard"])),
    ContextEntry(QueryCoverage, frozenset({_TEXT, Need.QUERY_TEXT}),
                 lambda m, q: _coverage(q.coded.tokens(q.query_slot), [q.coded.tokens(t) for t in q.top])),
    ContextEntry(RelevantTokenShare, frozenset({_TEXT, Need.GRADES}), _relevant_token_share),
):
    register(_entry)
del _entry

#: ``{name: class}`` of the context measures (the registry's context family)
CONTEXT_MEASURE_TYPES = measure_types(CONTEXT)


def _context_kernel(measure: Measure) -> ContextKernel:
    entry = entry_of(measure)
    if not isinstance(entry, ContextEntry):
        raise MeasureError(f"{measure} is not a context measure; valid: {', '.join(CONTEXT_MEASURE_TYPES)}")
    return entry.kernel


# -- one query, from texts -----------------------------------------------------------------------------


def context_tokens(contexts: Sequence[str], tokenize: Tokenize = default_tokenize) -> int:
    """Tokens@k of one query: the number of tokens of ``contexts`` (its top k texts, best first)."""
    return sum(len(tokenize(text)) for text in contexts)


def redundancy(contexts: Sequence[str], n: int = 5, tokenize: Tokenize = default_tokenize) -> float:
    """Redundancy(n)@k of one query (see :class:`evalops.context.measures.Redundancy`)."""
    coded = _Coded(contexts, tokenize)
    return _redundancy([coded.ngrams(t, n) for t in range(len(contexts))])


def near_duplicate_share(
    contexts: Sequence[str], shingle: int = 5, jaccard: int = 80, tokenize: Tokenize = default_tokenize
) -> float:
    """NearDuplicates(shingle, jaccard)@k of one query (see :class:`evalops.context.measures.NearDuplicates`)."""
    coded = _Coded(contexts, tokenize)
    return _near_duplicate_share([coded.shingles(t, shingle) for t in range(len(contexts))], jaccard)


def query_coverage(query: str, contexts: Sequence[str], tokenize: Tokenize = default_tokenize) -> float:
    """QueryCoverage@k of one query (see :class:`evalops.context.measures.QueryCoverage`)."""
    coded = _Coded([query, *contexts], tokenize)
    return _coverage(coded.tokens(0), [coded.tokens(t) for t in range(1, len(contexts) + 1)])


def relevant_token_share(
    contexts: Sequence[str], relevant: Sequence[bool], tokenize: Tokenize = default_tokenize
) -> float:
    """RelevantTokenShare@k of one query: ``relevant[i]`` says whether context i is judged relevant."""
    if len(relevant) != len(contexts):
        raise InputError(f"relevant has {len(relevant)} flags for {len(contexts)} contexts")
    sizes = [len(tokenize(text)) for text in contexts]
    return _ratio(sum(s for s, r in zip(sizes, relevant, strict=False) if r), sum(sizes))


# -- a whole run -----------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ContextValues:
    """Per-query values of each context measure, keyed by canonical measure string, aligned with
    ``query_ids`` (sorted). ``higher_is_better`` gives each measure's direction."""

    measures: tuple[Measure, ...]
    query_ids: np.ndarray
    per_query: Mapping[str, np.ndarray]

    @property
    def higher_is_better(self) -> dict[str, bool]:
        return {str(m): m.higher_is_better for m in self.measures}


def context_values(
    measures: Iterable[str | Measure] | str | Measure,
    queries: Mapping[str, str],
    ranked: Mapping[str, Sequence[str]],
    texts: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]] | None = None,
    tokenize: Tokenize = default_tokenize,
) -> ContextValues:
    """The context measures of every query in ``queries`` (``{query id: query text}``).

    ``ranked``: ``{query id: [doc id, ...]}`` best first (:func:`evalops.metrics.topk.top_k` gives it
    for a run); a query absent from it has no contexts. ``texts``: ``{doc id: text}`` from the
    knowledge-base snapshot; a ranked document without text is an ``InputError``. ``qrels``
    (``{query id: {doc id: grade}}``) is needed only by ``RelevantTokenShare``. Each text is tokenized
    once, however many queries retrieve it.
    """
    parsed = parse_context_measures(measures)
    graded = [str(m) for m in parsed if Need.GRADES in needs(m)]
    if qrels is None and graded:
        verb = "needs" if len(graded) == 1 else "need"
        raise InputError(f"{', '.join(graded)} {verb} qrels: the judged grades of the contexts")
    depth = max(m.cutoff for m in parsed)
    query_ids = sorted(queries)
    contexts = {q: list(ranked.get(q, ()))[:depth] for q in query_ids}
    missing = sorted({d for docs in contexts.values() for d in docs if d not in texts})
    if missing:
        shown = ", ".join(map(repr, missing[:5]))
        raise InputError(
            f"the knowledge-base texts lack {len(missing)} ranked document(s) ({shown}"
            f"{', ...' if len(missing) > 5 else ''}); give the snapshot the run was retrieved from"
        )
    docs = list(dict.fromkeys(d for docs in contexts.values() for d in docs))
    # the queries' texts after the documents' (slot len(docs) + i), tokenized only for a measure that reads them
    read_queries = any(Need.QUERY_TEXT in needs(m) for m in parsed)
    coded = _Coded([texts[d] for d in docs] + ([queries[q] for q in query_ids] if read_queries else []), tokenize)
    slot = {d: t for t, d in enumerate(docs)}
    top_slots = {q: [slot[d] for d in contexts[q]] for q in query_ids}
    shingle_cache: dict[tuple[int, int], np.ndarray] = {}

    def shingles(t: int, n: int) -> np.ndarray:
        if (t, n) not in shingle_cache:
            shingle_cache[(t, n)] = coded.shingles(t, n)
        return shingle_cache[(t, n)]

    no_judgments: Mapping[str, int] = {}
    per_query: dict[str, np.ndarray] = {}
    for m in parsed:
        k = m.cutoff
        kernel = _context_kernel(m)
        out = np.zeros(len(query_ids), dtype=np.float64)
        for i, q in enumerate(query_ids):
            judgments = qrels.get(q, no_judgments) if qrels is not None else no_judgments
            view = ContextQuery(coded, top_slots[q][:k], contexts[q][:k], judgments, len(docs) + i, shingles)
            out[i] = kernel(m, view)
        per_query[str(m)] = out
    return ContextValues(parsed, np.array(query_ids, dtype=object), per_query)
