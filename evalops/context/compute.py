"""Computing the context measures: per-query functions over texts, and a batch over a whole run.

Texts are tokenized once each and coded as integer arrays over one vocabulary; an n-gram is the bytes of
n consecutive token codes, so n-grams compare exactly (no hashing). The formulas are on the measure
classes in :mod:`evalops.context.measures`; the array functions below follow them term by term.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evalops.context.measures import CONTEXT_MEASURE_TYPES
from evalops.context.tokens import Tokenize, default_tokenize
from evalops.errors import InputError
from evalops.metrics.measures import Measure
from evalops.metrics.parse import parse_measures

__all__ = [
    "ContextValues",
    "context_values",
    "parse_context_measures",
    "context_tokens",
    "redundancy",
    "near_duplicate_share",
    "query_coverage",
    "relevant_token_share",
]


def parse_context_measures(measures: Iterable[str | Measure] | str | Measure) -> tuple[Measure, ...]:
    """Parse names such as ``Tokens@10`` or ``Redundancy(n=3)@5``; ``MeasureError`` on anything else."""
    given = [measures] if isinstance(measures, (str, Measure)) else list(measures)
    parsed = parse_measures(given, CONTEXT_MEASURE_TYPES)
    for m in parsed:
        if type(m) not in CONTEXT_MEASURE_TYPES.values():
            raise InputError(f"{m} is not a context measure; valid: {', '.join(CONTEXT_MEASURE_TYPES)}")
    return parsed


class _Coder:
    """Token -> integer code, one vocabulary for the contexts and the queries of one computation."""

    def __init__(self, tokenize: Tokenize) -> None:
        self.tokenize = tokenize
        self.vocabulary: dict[Hashable, int] = {}

    def __call__(self, text: str) -> np.ndarray:
        vocab = self.vocabulary
        setdefault = vocab.setdefault
        tokens = self.tokenize(text)
        return np.fromiter((setdefault(t, len(vocab)) for t in tokens), dtype=np.int32, count=len(tokens))


def _ngrams(codes: np.ndarray, n: int) -> np.ndarray:
    """The n-grams of consecutive codes as fixed-size byte strings (empty if fewer than n codes)."""
    if len(codes) < n:
        return np.zeros(0, dtype=np.dtype((np.void, 4 * n)))
    windows = np.lib.stride_tricks.sliding_window_view(codes, n)
    return np.ascontiguousarray(windows).view(np.dtype((np.void, 4 * n))).ravel()


def _shingles(codes: np.ndarray, n: int) -> np.ndarray:
    """A context's shingle set; shorter than n tokens, the context itself (padded) is its one shingle."""
    if len(codes) < n:
        padded = np.full(n, -1, dtype=np.int32)
        padded[: len(codes)] = codes
        return padded.view(np.dtype((np.void, 4 * n)))
    return np.unique(_ngrams(codes, n))


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


# -- one query, from texts -----------------------------------------------------------------------------


def context_tokens(contexts: Sequence[str], tokenize: Tokenize = default_tokenize) -> int:
    """Tokens@k of one query: the number of tokens of ``contexts`` (its top k texts, best first)."""
    return sum(len(tokenize(text)) for text in contexts)


def redundancy(contexts: Sequence[str], n: int = 5, tokenize: Tokenize = default_tokenize) -> float:
    """Redundancy(n)@k of one query (see :class:`evalops.context.measures.Redundancy`)."""
    coder = _Coder(tokenize)
    return _redundancy([_ngrams(coder(text), n) for text in contexts])


def near_duplicate_share(
    contexts: Sequence[str], shingle: int = 5, jaccard: int = 80, tokenize: Tokenize = default_tokenize
) -> float:
    """NearDuplicates(shingle, jaccard)@k of one query (see :class:`evalops.context.measures.NearDuplicates`)."""
    coder = _Coder(tokenize)
    return _near_duplicate_share([_shingles(coder(text), shingle) for text in contexts], jaccard)


def query_coverage(query: str, contexts: Sequence[str], tokenize: Tokenize = default_tokenize) -> float:
    """QueryCoverage@k of one query (see :class:`evalops.context.measures.QueryCoverage`)."""
    coder = _Coder(tokenize)
    coded = [coder(text) for text in contexts]
    return _coverage(coder(query), coded)


def relevant_token_share(
    contexts: Sequence[str], relevant: Sequence[bool], tokenize: Tokenize = default_tokenize
) -> float:
    """RelevantTokenShare@k of one query: ``relevant[i]`` says whether context i is judged relevant."""
    if len(relevant) != len(contexts):
        raise InputError(f"relevant has {len(relevant)} flags for {len(contexts)} contexts")
    sizes = [len(tokenize(text)) for text in contexts]
    return _ratio(sum(s for s, r in zip(sizes, relevant) if r), sum(sizes))


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
    if qrels is None and any(m.NAME == "RelevantTokenShare" for m in parsed):
        raise InputError("RelevantTokenShare needs qrels: the judged grades of the contexts")
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
    coder = _Coder(tokenize)
    codes = {d: coder(texts[d]) for d in dict.fromkeys(d for docs in contexts.values() for d in docs)}
    ngram_cache: dict[tuple[str, int], np.ndarray] = {}
    shingle_cache: dict[tuple[str, int], np.ndarray] = {}

    def ngrams(doc: str, n: int) -> np.ndarray:
        key = (doc, n)
        if key not in ngram_cache:
            ngram_cache[key] = _ngrams(codes[doc], n)
        return ngram_cache[key]

    def shingles(doc: str, n: int) -> np.ndarray:
        key = (doc, n)
        if key not in shingle_cache:
            shingle_cache[key] = _shingles(codes[doc], n) if len(codes[doc]) < n else np.unique(ngrams(doc, n))
        return shingle_cache[key]

    per_query: dict[str, np.ndarray] = {}
    for m in parsed:
        k = m.cutoff
        out = np.zeros(len(query_ids), dtype=np.float64)
        for i, q in enumerate(query_ids):
            top = contexts[q][:k]
            if m.NAME == "Tokens":
                out[i] = sum(len(codes[d]) for d in top)
            elif m.NAME == "Redundancy":
                out[i] = _redundancy([ngrams(d, m["n"]) for d in top])
            elif m.NAME == "NearDuplicates":
                out[i] = _near_duplicate_share([shingles(d, m["shingle"]) for d in top], m["jaccard"])
            elif m.NAME == "QueryCoverage":
                out[i] = _coverage(coder(queries[q]), [codes[d] for d in top])
            else:  # RelevantTokenShare
                grades = qrels.get(q, {}) if qrels is not None else {}
                sizes = [len(codes[d]) for d in top]
                rel = [grades.get(d, 0) >= m["rel"] for d in top]
                out[i] = _ratio(sum(s for s, r in zip(sizes, rel) if r), sum(sizes))
        per_query[str(m)] = out
    return ContextValues(parsed, np.array(query_ids, dtype=object), per_query)
