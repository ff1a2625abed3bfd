"""The unjudged top-k documents of a scored version, kept as columns (a shard's ``.unjudged.parquet``).

Nearly every retrieved document of a large project is unjudged, so these are most of a shard's output:
20,000 queries x 100 results are two million (query, document, rank) rows. They are written as Parquet
columns straight from the run's doc dictionary (no Python string per row) and read back as a
:class:`UnjudgedDocs`, which answers as the ``{query: [(doc, rank), ...]}`` mapping of
:func:`evalops.judged.holes.unjudged_top` (judged coverage in comparisons, the holes queue) and builds a query's
list only when it is asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from evalops.metrics.gold import as_gold
from evalops.metrics.table_input import judged_rows, table_ranks, unjudged_rows
from evalops.util.arrow import from_numpy

__all__ = ["UnjudgedDocs", "docs_from_bytes", "docs_to_bytes", "judged_of_table", "read_unjudged", "unjudged_of_table",
           "write_unjudged"]


class UnjudgedDocs(Mapping[str, list[tuple[str, int]]]):
    """``{query: [(doc, rank), ...]}`` over columns: ``docs`` and ``ranks`` hold one row per unjudged
    document, the rows of ``queries[i]`` at ``bounds[i]:bounds[i + 1]`` in rank order (0-based ranks of the
    evaluation's ranking). ``docs``: a pyarrow string array or a numpy object array."""

    def __init__(self, queries: np.ndarray, bounds: np.ndarray, docs: Any, ranks: np.ndarray):
        self.queries = queries
        self.bounds = bounds
        self.docs = docs
        self.ranks = ranks
        self._position: dict[str, int] | None = None

    @classmethod
    def from_rows(cls, query_ids: np.ndarray, query_codes: np.ndarray, docs: Any, ranks: np.ndarray) -> UnjudgedDocs:
        """From one row per document: ``query_ids[query_codes]`` its query; queries come out in id order.
        ``docs``: the rows' doc ids, or a function giving the doc ids of row positions (one take)."""
        order_of_query = np.argsort(query_ids.astype(str), kind="stable")
        position = np.empty(len(query_ids), dtype=np.int32 if len(query_ids) < 2**31 else np.int64)
        position[order_of_query] = np.arange(len(query_ids))
        row_position = position[query_codes]
        ranks = np.asarray(ranks, dtype=np.int64)
        counts = np.bincount(row_position, minlength=len(query_ids))
        present = counts > 0
        bounds = np.r_[0, np.cumsum(counts[present])].astype(np.int64)
        queries = query_ids[order_of_query][present]
        # one integer key per row, (query in id order, rank): a stable sort of it is the (query, rank) order,
        # rows of equal key kept as they come; in 32 bits when it fits them, where numpy sorts much faster
        span = int(ranks.max()) + 1 if len(ranks) else 1
        if len(ranks) and (int(ranks.min()) < 0 or len(query_ids) * span >= 2**62):  # (a mapping's odd ranks)
            order = np.lexsort((ranks, row_position))
        else:
            kind = np.int32 if len(query_ids) * span < 2**31 else np.int64
            key = row_position.astype(kind) * kind(span)
            key += ranks.astype(kind)
            if bool(np.all(key[1:] >= key[:-1])):  # already in that order
                return cls(queries, bounds, docs(np.arange(len(ranks))) if callable(docs) else docs, ranks)
            order = np.argsort(key, kind="stable")
            del key
        if callable(docs):
            taken = docs(order)
        else:
            taken = docs.take(order) if not isinstance(docs, np.ndarray) else docs[order]
        return cls(queries, bounds, taken, ranks[order])

    @classmethod
    def from_dict(cls, unjudged: Mapping[str, Any]) -> UnjudgedDocs:
        queries = [q for q, docs in unjudged.items() if len(docs)]
        docs = np.array([str(d) for q in queries for d, _ in unjudged[q]], dtype=object)
        ranks = np.array([int(r) for q in queries for _, r in unjudged[q]], dtype=np.int64)
        codes = np.repeat(np.arange(len(queries)), [len(unjudged[q]) for q in queries])
        return cls.from_rows(np.array(queries, dtype=object), codes, docs, ranks)

    @classmethod
    def concat(cls, parts: list[UnjudgedDocs]) -> UnjudgedDocs:
        """Parts over disjoint queries (the shards of one version) as one."""
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.from_dict({})
        if len(parts) == 1:
            return parts[0]
        offsets = np.cumsum([0] + [len(p.ranks) for p in parts])
        bounds = np.concatenate([p.bounds[:-1] + o for p, o in zip(parts, offsets)] + [offsets[-1:]])
        if all(isinstance(p.docs, np.ndarray) for p in parts):
            docs: Any = np.concatenate([p.docs for p in parts])
        else:
            import pyarrow as pa

            docs = pa.concat_arrays([_arrow(p.docs) for p in parts])
        return cls(np.concatenate([p.queries for p in parts]), bounds, docs, np.concatenate([p.ranks for p in parts]))

    @classmethod
    def merge(cls, parts: list[Mapping[str, Any]]) -> UnjudgedDocs:
        """Parts over the same queries (a version's judged and unjudged documents) as one, each query's rows
        in rank order."""
        docs = [p if isinstance(p, UnjudgedDocs) else cls.from_dict(p) for p in parts]
        docs = [d for d in docs if len(d)]
        if not docs:
            return cls.from_dict({})
        # the queries of every part in id order, each row's query found by its part's query (a few per part's
        # query, not a string per row: 10 M rows took seconds and a 240 MB array of fixed-width strings)
        queries = np.unique(np.concatenate([d.queries for d in docs]).astype(str))
        codes = np.concatenate([np.repeat(np.searchsorted(queries, d.queries.astype(str)), np.diff(d.bounds))
                                for d in docs])
        if all(isinstance(d.docs, np.ndarray) for d in docs):
            doc_ids: Any = np.concatenate([d.docs for d in docs]).astype(object)
        else:
            import pyarrow as pa

            doc_ids = pa.concat_arrays([_arrow(d.docs) for d in docs])
        return cls.from_rows(queries.astype(object), codes, doc_ids, np.concatenate([d.ranks for d in docs]))

    def rows(self) -> tuple[np.ndarray, list[str], np.ndarray]:
        """One row per document: its query id, doc id and rank (Python strings for the ids)."""
        docs = self.docs.tolist() if isinstance(self.docs, np.ndarray) else self.docs.to_pylist()
        return np.repeat(self.queries, np.diff(self.bounds)), docs, self.ranks

    def __len__(self) -> int:
        return len(self.queries)

    def __iter__(self) -> Iterator[str]:
        return iter(self.queries.tolist())

    def __contains__(self, query: object) -> bool:
        return query in self._positions()

    def __getitem__(self, query: str) -> list[tuple[str, int]]:
        i = self._positions()[query]
        lo, hi = int(self.bounds[i]), int(self.bounds[i + 1])
        docs = self.docs[lo:hi]
        docs = docs.tolist() if isinstance(docs, np.ndarray) else docs.to_pylist()
        return list(zip(docs, self.ranks[lo:hi].tolist()))

    def _positions(self) -> dict[str, int]:
        if self._position is None:
            self._position = dict(zip(self.queries.tolist(), range(len(self.queries))))
        return self._position

    def n_documents(self) -> int:
        return len(self.ranks)


def _arrow(docs: Any) -> Any:
    import pyarrow as pa

    if isinstance(docs, np.ndarray):
        return pa.array(docs.tolist(), type=pa.string())
    if isinstance(docs, pa.ChunkedArray):
        docs = docs.combine_chunks()
    return docs.cast(pa.string()) if docs.type != pa.string() else docs


def _table(unjudged: Mapping[str, Any]) -> Any:
    import pyarrow as pa

    docs = unjudged if isinstance(unjudged, UnjudgedDocs) else UnjudgedDocs.from_dict(unjudged)
    counts = np.diff(docs.bounds)
    query = pa.DictionaryArray.from_arrays(pa.array(np.repeat(np.arange(len(docs.queries), dtype=np.int32), counts)),
                                           pa.array(docs.queries.tolist(), type=pa.string()))
    return pa.table({"query_id": query, "doc_id": _arrow(docs.docs), "rank": pa.array(docs.ranks, type=pa.int32())})


def _write(table: Any, handle: Any) -> None:
    import pyarrow.parquet as pq

    # doc ids barely repeat within a shard: a dictionary page for them costs time and saves nothing; LZ4
    # writes and reads the millions of rows of a large shard faster than the default Snappy; no column
    # statistics (the file is read whole, never filtered; the doc ids' min and max took a third of the write)
    pq.write_table(table, handle, use_dictionary=["query_id"], compression="lz4", write_statistics=False)


def _docs(table: Any) -> UnjudgedDocs:
    column = table.column("query_id").unify_dictionaries()  # one dictionary for every row group
    codes = np.concatenate([np.asarray(c.indices, dtype=np.int64) for c in column.chunks] or [np.zeros(0, np.int64)])
    queries = np.array(column.chunks[0].dictionary.to_pylist() if column.num_chunks else [], dtype=object)
    counts = np.bincount(codes, minlength=len(queries))
    docs = table.column("doc_id").combine_chunks()
    return UnjudgedDocs(queries, np.r_[0, np.cumsum(counts)].astype(np.int64), docs,
                        np.asarray(table.column("rank"), dtype=np.int64))


def write_unjudged(path: Any, unjudged: Mapping[str, Any]) -> None:
    """Write ``unjudged`` (an :class:`UnjudgedDocs` or a plain mapping) as Parquet columns ``query_id``
    (dictionary-encoded), ``doc_id`` and ``rank``, local or fsspec ``path``."""
    table = _table(unjudged)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        _write(table, handle)


def read_unjudged(path: Any) -> UnjudgedDocs:
    """The :class:`UnjudgedDocs` written by :func:`write_unjudged` at ``path``."""
    import pyarrow.parquet as pq

    with path.open("rb") as handle:
        return _docs(pq.read_table(handle))


def docs_to_bytes(docs: Mapping[str, Any]) -> bytes:
    """``docs`` as the bytes of the Parquet file :func:`write_unjudged` writes (a run's kept ranking in the
    warehouse, ``run_rankings``)."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    _write(_table(docs), sink)
    return sink.getvalue().to_pybytes()


def docs_from_bytes(data: bytes) -> UnjudgedDocs:
    """The :class:`UnjudgedDocs` of :func:`docs_to_bytes`' bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    return _docs(pq.read_table(pa.BufferReader(data)))


def unjudged_of_table(qrels: Any, table: Any, k: int) -> UnjudgedDocs:
    """:func:`evalops.judged.holes.unjudged_top` of a :class:`~evalops.data.RunTable`, from its codes: the same
    (document, rank) pairs, with the doc ids left in the run's dictionary."""
    ranks = table_ranks(table)
    return _docs_of_rows(table, unjudged_rows(as_gold(qrels), table, ranks, k), ranks)


def judged_of_table(qrels: Any, table: Any, k: int) -> UnjudgedDocs:
    """The judged documents (any grade) of a :class:`~evalops.data.RunTable`'s top ``k`` of each gold query,
    as :class:`UnjudgedDocs` columns: with the unjudged ones, the ranking the bounds of a comparison need
    (``evalops.judged.bounds``)."""
    ranks = table_ranks(table)
    rows = np.sort(judged_rows(as_gold(qrels), table)[0])
    return _docs_of_rows(table, rows[ranks[rows] < k], ranks)


def _docs_of_rows(table: Any, rows: np.ndarray, ranks: np.ndarray) -> UnjudgedDocs:
    codes = table.doc_codes[rows]
    dictionary = table.doc_dictionary
    if not isinstance(dictionary, np.ndarray):
        import pyarrow as pa

        if isinstance(dictionary, pa.ChunkedArray):  # one contiguous array: a take from it is much quicker
            dictionary = dictionary.combine_chunks()

    def docs(positions: np.ndarray) -> Any:
        picked = codes[positions]
        return dictionary[picked] if isinstance(dictionary, np.ndarray) else dictionary.take(from_numpy(picked))

    return UnjudgedDocs.from_rows(table.query_ids, table.query_codes[rows], docs, ranks[rows])
