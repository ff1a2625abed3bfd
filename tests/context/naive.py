"""A naive pure-Python implementation of the context measures, written from their docstrings alone.

It is the oracle of the tests and the peer of ``benchmarks/context_measures.py``: tuples, sets and
counters, every text tokenized again for every query and every measure, no caching, no numpy.
"""

from __future__ import annotations

import re

from evalops.context.tokens import CJK_RANGES

WORD = re.compile(rf"[{CJK_RANGES}]|(?:(?![{CJK_RANGES}])[^\W_])+")


def tokens(text: str) -> list[str]:
    return WORD.findall(text.casefold())


def ngrams(toks: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(toks[i : i + n]) for i in range(len(toks) - n + 1)]


def naive_tokens(contexts: list[str]) -> float:
    return float(sum(len(tokens(c)) for c in contexts))


def naive_redundancy(contexts: list[str], n: int = 5) -> float:
    grams = [g for c in contexts for g in ngrams(tokens(c), n)]
    return 1.0 - len(set(grams)) / len(grams) if grams else 0.0


def naive_near_duplicates(contexts: list[str], shingle: int = 5, jaccard: int = 80) -> float:
    sets = []
    for c in contexts:
        toks = tokens(c)
        sets.append(set(ngrams(toks, shingle)) if len(toks) >= shingle else {tuple(toks)})
    duplicates = 0
    for i in range(1, len(sets)):
        if any(100 * len(sets[i] & sets[j]) >= jaccard * len(sets[i] | sets[j]) for j in range(i)):
            duplicates += 1
    return duplicates / len(sets) if sets else 0.0


def naive_coverage(query: str, contexts: list[str]) -> float:
    terms = set(tokens(query))
    seen = {t for c in contexts for t in tokens(c)}
    return len(terms & seen) / len(terms) if terms else 0.0


def naive_relevant_share(contexts: list[str], relevant: list[bool]) -> float:
    sizes = [len(tokens(c)) for c in contexts]
    total = sum(sizes)
    return sum(s for s, r in zip(sizes, relevant) if r) / total if total else 0.0


def naive_all(queries: dict, ranked: dict, texts: dict, qrels: dict, k: int = 10) -> dict[str, dict[str, float]]:
    """{measure: {query id: value}} for the default-parameter measures at cutoff k."""
    out: dict[str, dict[str, float]] = {
        f"{m}@{k}": {} for m in ("Tokens", "Redundancy", "NearDuplicates", "QueryCoverage", "RelevantTokenShare")
    }
    for q, text in queries.items():
        docs = list(ranked.get(q, []))[:k]
        contexts = [texts[d] for d in docs]
        out[f"Tokens@{k}"][q] = naive_tokens(contexts)
        out[f"Redundancy@{k}"][q] = naive_redundancy(contexts)
        out[f"NearDuplicates@{k}"][q] = naive_near_duplicates(contexts)
        out[f"QueryCoverage@{k}"][q] = naive_coverage(text, contexts)
        grades = qrels.get(q, {})
        out[f"RelevantTokenShare@{k}"][q] = naive_relevant_share(contexts, [grades.get(d, 0) >= 1 for d in docs])
    return out
