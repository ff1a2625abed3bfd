"""Built-in lexical vector retriever: TF-IDF cosine similarity on scipy.sparse (no scikit-learn).

Weights, for a token t in a text (document or query) over a corpus of N documents:
w(t) = (1 + ln tf(t)) · idf(t), idf(t) = ln((1 + N) / (1 + df(t))) + 1 (the smoothed idf), and each vector
is L2-normalised, so the score is the cosine ⟨q, d⟩ in [0, 1]. Query tokens absent from the corpus are
ignored. Documents scoring 0 share no token with the query and are not returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from evalops.retrievers.base import Query, QueryResult, top_k
from evalops.retrievers.bm25 import require_terms, truncated
from evalops.retrievers.text import Tokenizer

__all__ = ["TfidfRetriever"]

# Dense score block held at once while ranking (queries x documents), in float64 cells.
_BLOCK_CELLS = 20_000_000


class TfidfRetriever:
    """TF-IDF cosine (see the module docstring). ``index_fraction`` as for BM25 (a planted regression)."""

    remote = False  # in-process, over local data (see evalops.retrievers.base)

    def __init__(self, corpus: Any, *, tokenizer: Tokenizer | None = None, index_fraction: float = 1.0):
        self.docs = truncated(corpus, index_fraction)
        self.tokenizer = tokenizer or Tokenizer()
        self.params = {"index_fraction": index_fraction}
        self.vocab: dict[str, int] = {}
        doc_tokens = self.tokenizer.many(self.docs.texts)
        require_terms(doc_tokens, self.tokenizer, "tfidf")
        for toks in doc_tokens:
            for t in toks:
                self.vocab.setdefault(t, len(self.vocab))
        counts = self._counts(doc_tokens)
        df = np.bincount(counts.indices, minlength=len(self.vocab))
        n = len(self.docs)
        self.idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
        self._doc_matrix_t = self._weigh(counts).T.tocsr()

    def __repr__(self) -> str:
        return f"TfidfRetriever({len(self.docs)} docs, {len(self.vocab)} terms, {self.tokenizer!r})"

    def _counts(self, token_lists: Sequence[list[str]]):
        from scipy import sparse

        rows: list[int] = []
        cols: list[int] = []
        for r, toks in enumerate(token_lists):
            ids = [self.vocab[t] for t in toks if t in self.vocab]
            rows.extend([r] * len(ids))
            cols.extend(ids)
        data = np.ones(len(rows), dtype=np.float64)
        m = sparse.csr_matrix((data, (rows, cols)), shape=(len(token_lists), len(self.vocab)))
        m.sum_duplicates()
        return m

    def _weigh(self, counts):
        from scipy import sparse

        w = counts.copy()
        w.data = (1.0 + np.log(w.data)) * self.idf[w.indices]
        norms = np.sqrt(np.asarray(w.multiply(w).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0  # an empty vector stays zero
        return sparse.diags(1.0 / norms) @ w

    def score_documents(self, text: str, doc_ids: Sequence[str]) -> np.ndarray:
        """The cosine of one query text with each of ``doc_ids`` (indexed documents; for a rerank stage)."""
        q = self._weigh(self._counts([self.tokenizer(text)]))
        cols = self._doc_matrix_t[:, self.docs.rows_of(doc_ids, "tfidf")]
        return np.asarray((q @ cols).toarray()).ravel()

    def retrieve(self, queries: Sequence[Query], k: int) -> list[QueryResult]:
        out: list[QueryResult] = []
        block = max(1, _BLOCK_CELLS // max(1, len(self.docs)))
        for start in range(0, len(queries), block):
            chunk = queries[start : start + block]
            q = self._weigh(self._counts(self.tokenizer.many(qq.text for qq in chunk)))
            scores = (q @ self._doc_matrix_t).toarray()
            out.extend(QueryResult(qq.id, top_k(row, self.docs.doc_ids, k)) for qq, row in zip(chunk, scores))
        return out
