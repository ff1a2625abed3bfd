"""Built-in BM25 over a corpus, on bm25s.

Scoring is bm25s's ``method="lucene"``: score(q, d) = Σ_{t ∈ q} idf(t) · tf(t, d) / (tf(t, d) + k1 · (1 - b +
b · |d| / avgdl)) with idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5)), summed over the query tokens
(a token repeated in the query counts each time); |d| counts the document's tokens after tokenization.
The defaults k1 = 0.9, b = 0.4 are those of the shared SciFact BM25 run (and Anserini's).
Documents scoring 0 share no token with the query and are not returned.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from evalops.errors import ConfigError
from evalops.retrievers.base import Query, QueryResult, top_k
from evalops.retrievers.corpus import as_corpus
from evalops.retrievers.text import Tokenizer
from evalops.util.extras import require

__all__ = ["BM25Retriever", "truncated", "require_terms"]


def truncated(corpus: Any, index_fraction: float):
    """The first ``ceil(index_fraction * N)`` documents in collection order (a deliberately truncated index)."""
    docs = as_corpus(corpus)
    if not (0 < index_fraction <= 1):
        raise ConfigError(f"index_fraction must be in (0, 1], got {index_fraction}")
    return docs.head(max(1, math.ceil(index_fraction * len(docs))))


def require_terms(token_lists: Sequence[list[str]], tokenizer: Tokenizer, what: str) -> None:
    """Refuse an index without a single term: it would answer every query with no document, and the run
    would be scored 0 instead of failing (the corpus's text is empty, or the tokenizer drops all of it)."""
    if not any(token_lists):
        raise ConfigError(f"{what}: the {len(token_lists)} indexed document(s) give no term with {tokenizer!r}, so "
                          "every query would get no document; check that the corpus has text (title/text columns) "
                          "and the tokenizer settings (stopwords, chinese)")


class BM25Retriever:
    """BM25 (bm25s, ``method``, ``k1``, ``b``) with :class:`~evalops.retrievers.text.Tokenizer`.

    ``index_fraction`` < 1 indexes only the first part of the corpus. It exists to plant a regression on
    purpose (the demo's "truncated index" candidate); leave it at 1 for a real retriever.
    """

    remote = False  # in-process, over local data (see evalops.retrievers.base)

    def __init__(
        self,
        corpus: Any,
        *,
        k1: float = 0.9,
        b: float = 0.4,
        method: str = "lucene",
        tokenizer: Tokenizer | None = None,
        index_fraction: float = 1.0,
    ):
        bm25s = require("bm25s", "retrievers", "use the built-in BM25 retriever")
        if not (math.isfinite(k1) and k1 >= 0 and math.isfinite(b) and 0 <= b <= 1):
            # NaN scored every document NaN, so every query got an empty list and the run scored 0
            raise ConfigError(f"bm25: k1 must be a finite number >= 0 and b one between 0 and 1, got k1={k1}, b={b}")
        if method not in ("lucene", "robertson", "atire", "bm25l", "bm25+"):
            raise ConfigError(f"bm25: unknown method {method!r}; use lucene, robertson, atire, bm25l or bm25+")
        self.docs = truncated(corpus, index_fraction)
        self.tokenizer = tokenizer or Tokenizer()
        self.params = {"k1": k1, "b": b, "method": method, "index_fraction": index_fraction}
        self._bm25 = bm25s.BM25(method=method, k1=k1, b=b)
        doc_tokens = self.tokenizer.many(self.docs.texts)
        require_terms(doc_tokens, self.tokenizer, "bm25")
        self._bm25.index(doc_tokens, show_progress=False)

    def __repr__(self) -> str:
        return f"BM25Retriever({len(self.docs)} docs, {self.params}, {self.tokenizer!r})"

    def scores(self, text: str):
        """Scores of every indexed document for one query text (numpy array, collection order)."""
        import numpy as np

        ids = self._bm25.get_tokens_ids(self.tokenizer(text))
        if not ids:
            return np.zeros(len(self.docs), dtype=np.float64)
        return np.asarray(self._bm25.get_scores_from_ids(ids), dtype=np.float64)

    def score_documents(self, text: str, doc_ids: Sequence[str]):
        """The scores of ``doc_ids`` (indexed documents) for one query text (for a rerank stage)."""
        return self.scores(text)[self.docs.rows_of(doc_ids, "bm25")]

    def retrieve(self, queries: Sequence[Query], k: int) -> list[QueryResult]:
        return [QueryResult(q.id, top_k(self.scores(q.text), self.docs.doc_ids, k)) for q in queries]
