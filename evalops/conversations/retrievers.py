"""The query-rewriting baselines as retrievers: any retriever asked each turn under a query policy.

:class:`QueryPolicyRetriever` wraps a retriever and changes only the text it is asked: ``raw`` (the turn as
asked) or ``history`` (the earlier questions of the conversation, then the turn; see
:mod:`evalops.conversations.queries`). The history stays attached to each query. It reads nothing but the
:class:`~evalops.retrievers.base.Query`, so it works wherever queries carry their history: in the pipeline
(a conversational gold set) and in :func:`evalops.conversations.evaluate.retrieve_conversations`. The
``rewrite`` policy needs the gold set's rewrites and is asked through
:func:`~evalops.conversations.queries.conversation_queries` instead.

In a registry, a BM25 over the knowledge base asked with the history::

    - name: handbook-search
      version: "1.1-history"
      adapter: python
      params: {entry_point: "evalops.conversations.retrievers:history_bm25", factory: true, with_corpus: true,
               options: {policy: history}}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalops.errors import ConfigError
from evalops.retrievers import BM25Retriever
from evalops.retrievers.base import Query, is_remote

__all__ = ["QueryPolicyRetriever", "history_bm25"]

POLICIES = ("raw", "history")


class QueryPolicyRetriever:
    """``inner`` asked under ``policy`` (``raw`` or ``history``)."""

    def __init__(self, inner: Any, policy: str = "history"):
        if policy not in POLICIES:
            raise ConfigError(f"query policy {policy!r}: a retriever can apply {list(POLICIES)}; the rewrite policy "
                              "reads the gold set's rewrites (evalops conversations ... bm25:rewrite)")
        self.inner = inner
        self.policy = policy
        self.remote = is_remote(inner)

    def __repr__(self) -> str:
        return f"QueryPolicyRetriever({self.inner!r}, policy={self.policy!r})"

    def text(self, query: Query) -> str:
        if self.policy == "raw" or not query.history:
            return query.text
        return " ".join([*(h.question for h in query.history), query.text])

    def retrieve(self, queries: Sequence[Query], k: int) -> Sequence[Any]:
        return self.inner.retrieve([Query(q.id, self.text(q), q.history) for q in queries], k)


def history_bm25(corpus: Any, policy: str = "history", **bm25: Any) -> QueryPolicyRetriever:
    """The built-in BM25 over ``corpus`` (``bm25``: its parameters) asked under ``policy``."""
    return QueryPolicyRetriever(BM25Retriever(corpus, **bm25), policy)
