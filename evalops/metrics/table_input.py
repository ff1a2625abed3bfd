"""Runs read from files (:class:`~evalops.data.RunTable`): ranked straight from the reader's integer codes.

The join between the run and the judged documents is one Arrow hash lookup of the doc dictionary in the
judged doc ids (``index_in``, exact string equality), then integer work: no hash of every row's doc id,
no sort of every row's key, no Python string per row. Only the documents that tie with a relevant one
are turned into Python strings (the tie rule compares doc ids).
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

import numpy as np

from evalops.data import RunTable
from evalops.metrics.gold import CompactGold, Gold
from evalops.metrics.ranking import Hits, as_trec_eval_scores, query_segments, ranks_in_segments
from evalops.metrics.strhash import hash_strings, pair_keys
from evalops.util.arrow import call, compute_options, from_numpy, from_strings, numeric, strings

__all__ = [
    "hits_from_table", "judged_rows", "keep_doc_hashes", "merge_hits", "table_ranks", "top_k_table", "unjudged_rows",
]


def hits_from_table(gold: Gold, table: RunTable, retrieved_into: np.ndarray | None = None) -> Hits:
    """Rank the table's judged documents (the same ``Hits`` as ``locate_hits(gold, table.to_run())``).

    Work is proportional to the table and the judgments of its queries, not to the whole gold set, so
    streamed blocks stay cheap. ``retrieved_into``: add the per-gold-query counts into this array and
    leave ``Hits.retrieved`` empty (a block's hits then hold nothing the size of the gold set).
    """
    codes = table.query_codes
    uniques = table.query_ids
    gold_of_code = _table_gold_index(gold, table)
    in_gold = gold_of_code >= 0
    answered = gold_of_code[in_gold]
    held_ranks = table.__dict__.get("_ranks")  # the table's ranks, when computed already (table_ranks)
    if held_ranks is None:
        scores = as_trec_eval_scores(table.scores)
        lengths, start, end, order, scores_desc = query_segments(codes, len(uniques), scores)
    else:
        lengths = np.bincount(codes, minlength=len(uniques))
    if retrieved_into is None:
        retrieved = np.zeros(len(gold), dtype=np.int64)
        retrieved[answered] = lengths[in_gold]
    else:
        retrieved_into[answered] += lengths[in_gold]
        retrieved = np.zeros(0, dtype=np.int64)

    row, pairs = judged_rows(gold, table)
    relevant = np.flatnonzero(gold.grades[pairs] > 0)
    by_pair = np.argsort(pairs[relevant], kind="stable")  # in the judgments' order (then the rows')
    row, pairs = row[relevant[by_pair]], pairs[relevant[by_pair]]
    if held_ranks is not None:
        rank = held_ranks[row].astype(np.int64, copy=False)
    else:
        segment = codes[row].astype(np.int64)

        def docs_at(positions: np.ndarray) -> np.ndarray:
            return table.doc_ids(positions if order is None else order[positions])

        rank = ranks_in_segments(scores_desc, start[segment], end[segment], scores[row],
                                 lambda at: table.doc_ids(row[at]), docs_at)
    return Hits(gold.qidx[pairs], rank, gold.grades[pairs], retrieved, uniques[~in_gold])


def judged_rows(gold: Gold, table: RunTable) -> tuple[np.ndarray, np.ndarray]:
    """(the rows of ``table`` whose (query, document) has a judgment in ``gold``, whatever its grade, in row
    order; the index of that judgment in ``gold``'s arrays).

    One join per table and judgments: kept on the table for ``gold``'s judgment arrays (a gold set with
    other grades, :func:`evalops.metrics.judged.judged_gold`, shares it), so the measures, the unjudged
    documents and the holes bound of one version look the run's documents up once."""
    judgment_arrays = (gold.qidx, gold.__dict__.get("doc_arrow", gold.__dict__.get("doc_ids")))
    held = table.__dict__.get("_judged")
    if held is not None and held[0] is judgment_arrays[0] and held[1] is judgment_arrays[1]:
        return held[2], held[3]
    codes = table.query_codes
    gold_of_code = _table_gold_index(gold, table)
    judgments = _judgments_of(gold, gold_of_code[gold_of_code >= 0])
    row = np.zeros(0, dtype=np.int64)
    pairs = np.zeros(0, dtype=np.int64)
    hashed = _hashed_judged_rows(gold, table, gold_of_code, judgments) if judgments.size and len(codes) else None
    if hashed is not None:
        row, pairs = hashed
    elif judgments.size and len(codes):
        # every judged doc id is numbered by its first occurrence among the judged doc ids, and every
        # dictionary entry gets that number (-1: not judged for any of the table's queries)
        canon_pair, lut = _judged_lookup(_judged_docs(gold, judgments, table.doc_dictionary), table.doc_dictionary)
        m = np.int64(len(judgments))
        pair_key = gold.qidx[judgments].astype(np.int64) * m + canon_pair
        row_doc = lut[table.doc_codes]
        cand = np.flatnonzero(row_doc >= 0)
        gq = gold_of_code[codes[cand]]
        keep = gq >= 0
        cand, gq = cand[keep], gq[keep]
        row_key = gq * m + row_doc[cand]
        by_key = np.argsort(pair_key)
        sorted_keys = pair_key[by_key]
        at = np.minimum(np.searchsorted(sorted_keys, row_key), len(sorted_keys) - 1)
        found = sorted_keys[at] == row_key
        row = cand[found]
        pairs = judgments[by_key[at[found]]]
    object.__setattr__(table, "_judged", (*judgment_arrays, row, pairs))
    return row, pairs


def keep_doc_hashes(table: RunTable, hashes: np.ndarray) -> None:
    """Keep on ``table`` the :func:`~evalops.metrics.strhash.hash_strings` of each row's doc id (a reader that
    hashed them for its duplicate check): :func:`judged_rows` then finds the judged documents by them."""
    if len(hashes) == len(table):
        object.__setattr__(table, "_doc_hashes", hashes)


# Entries of the judged doc ids' hash filter per judgment of a table's queries: about 1 row in 16 whose
# document is not judged passes it (and is then looked up exactly). A streamed block's filter (a few
# thousand judgments) stays in the processor's cache, where one over all the judgments took three times
# as long to look up.
_FILTER_PER_JUDGMENT = 16


def _hashed_judged_rows(gold: Gold, table: RunTable, gold_of_code: np.ndarray, judgments: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`judged_rows` by the rows' doc id hashes (:func:`keep_doc_hashes`), None when the table has none.

    The rows whose doc id's hash is among those of the judgments of the table's queries (a table of
    booleans indexed by the hash's top bits) are keyed by (query, hash) and looked up among the keys of
    those judgments; every match is confirmed by comparing the two doc ids (exact). No Arrow hash of every
    row's doc id, as ``index_in`` took. Judgments of one query whose keys are equal (a hash collision) send
    the table to the exact lookup."""
    row_hashes: np.ndarray | None = table.__dict__.get("_doc_hashes")
    if row_hashes is None or len(table.query_ids) >= 1 << 24:  # (pair_keys' layout is the same for both sides)
        return None
    judged_hashes = _judged_hashes(gold)[judgments]
    bits = max(10, (len(judgments) * _FILTER_PER_JUDGMENT).bit_length())
    shift = np.uint64(64 - bits)
    passes = np.zeros(1 << bits, dtype=bool)
    passes[judged_hashes >> shift] = True
    candidate = np.flatnonzero(passes[row_hashes >> shift])
    # each judgment's query as the table's code
    table_codes = np.flatnonzero(gold_of_code >= 0)
    by_gold = np.argsort(gold_of_code[table_codes], kind="stable")
    gold_sorted = gold_of_code[table_codes][by_gold]
    code_of_judgment = table_codes[by_gold][np.searchsorted(gold_sorted, gold.qidx[judgments])]
    judged_keys = pair_keys(code_of_judgment, judged_hashes)
    by_key = np.argsort(judged_keys, kind="stable")  # (runs of one query: several times quicker)
    sorted_keys = judged_keys[by_key]
    if len(sorted_keys) > 1 and bool(np.any(sorted_keys[1:] == sorted_keys[:-1])):
        return None
    keys = pair_keys(table.query_codes[candidate], row_hashes[candidate])
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    found = np.flatnonzero(sorted_keys[at] == keys)
    row, pairs = candidate[found], judgments[by_key[at[found]]]
    if len(row) and not _all_equal(table, row, gold.docs_of(pairs)):
        judged = gold.docs_of(pairs)
        same = table.doc_ids(row) == (judged if isinstance(judged, np.ndarray) else strings(judged))
        row, pairs = row[same], pairs[same]
    return row.astype(np.int64), pairs.astype(np.int64)


def _all_equal(table: RunTable, rows: np.ndarray, judged: Any) -> bool:
    """Whether the doc ids of ``rows`` are ``judged`` (an Arrow string array), compared in Arrow."""
    if isinstance(judged, np.ndarray) or isinstance(table.doc_dictionary, np.ndarray):
        return False  # (compared as Python strings)
    ours = call("take", table.doc_dictionary, from_numpy(table.doc_codes[rows]))
    return bool(call("all", call("equal", ours, judged)).as_py())


def _judged_hashes(gold: Gold) -> np.ndarray:
    """The hash of each judgment's doc id, computed once per ``Gold`` (kept on it; a
    :class:`CompactGold` builds them with its lookups, :meth:`CompactGold.index`)."""
    if isinstance(gold, CompactGold):
        return gold.doc_hashes()
    held: np.ndarray | None = gold.__dict__.get("_judged_hashes")
    if held is None:
        held = hash_strings(gold.docs_of(np.arange(len(gold.qidx))))
        object.__setattr__(gold, "_judged_hashes", held)
    return held


def _judgments_of(gold: Gold, queries: np.ndarray) -> np.ndarray:
    """Rows of ``gold``'s judgments that belong to the gold queries ``queries`` (one grouping, cached)."""
    by_query, bounds = gold.query_groups()
    first, counts = bounds[queries], bounds[queries + 1] - bounds[queries]
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(first - (np.cumsum(counts) - counts), counts) + np.arange(total)
    return np.sort(by_query[offsets], kind="stable")  # (runs in order: timsort merges them)


def _table_gold_index(gold: Gold, table: RunTable) -> np.ndarray:
    """:func:`_gold_index` of the table's query ids, kept on the table for ``gold``'s query ids (a gold set
    with other grades shares them): the ranking and the judged lookup of a streamed block look it up once."""
    queries = gold.__dict__.get("query_arrow", gold.__dict__.get("query_ids"))
    held: tuple[Any, np.ndarray] | None = table.__dict__.get("_gold_of_code")
    if held is not None and held[0] is queries and queries is not None:
        return held[1]
    found = _gold_index(gold, table.query_ids)
    object.__setattr__(table, "_gold_of_code", (queries, found))
    return found


def _gold_index(gold: Gold, query_ids: np.ndarray) -> np.ndarray:
    """Position of each query id among the gold queries, -1 if absent; the lookup table is built once per
    ``Gold`` (streamed blocks reuse it; a :class:`CompactGold` keeps hashes instead of a dict)."""
    if isinstance(gold, CompactGold):
        return gold.positions(query_ids)
    position = gold.__dict__.get("_position")
    if position is None:
        position = dict(zip(gold.query_ids.tolist(), range(len(gold.query_ids))))
        object.__setattr__(gold, "_position", position)
    return np.fromiter(map(position.get, query_ids.tolist(), repeat(-1)), dtype=np.int64, count=len(query_ids))


def _judged_docs(gold: Gold, judgments: np.ndarray, dictionary: Any) -> Any:
    """``gold.docs_of(judgments)``; for an Arrow dictionary, as Arrow strings taken from the gold set's doc
    ids converted once (kept on it: each version of a run looks its table up in the same gold set)."""
    if isinstance(dictionary, np.ndarray) or isinstance(gold, CompactGold):
        return gold.docs_of(judgments)
    held = gold.__dict__.get("_doc_arrow")
    if held is None:
        held = from_strings(gold.doc_ids)
        object.__setattr__(gold, "_doc_arrow", held)
    return call("take", held, from_numpy(np.asarray(judgments, dtype=np.int64)))


def _judged_lookup(judged_docs: Any, dictionary: Any) -> tuple[np.ndarray, np.ndarray]:
    """(number of each judged doc id, number of each dictionary entry or -1), exact string equality.
    ``judged_docs``: an object array of str or an Arrow string array (:meth:`Gold.docs_of`)."""
    if isinstance(dictionary, np.ndarray):  # a small file read by the exact parser: no Arrow needed
        docs = judged_docs.tolist() if isinstance(judged_docs, np.ndarray) else judged_docs.to_pylist()
        first: dict[str, int] = {}
        for i, doc in enumerate(docs):
            first.setdefault(doc, i)
        canon = np.fromiter(map(first.__getitem__, docs), dtype=np.int64, count=len(docs))
        lut = np.fromiter(map(first.get, dictionary.tolist(), repeat(-1)), dtype=np.int64, count=len(dictionary))
        return canon, lut
    judged = from_strings(judged_docs) if isinstance(judged_docs, np.ndarray) else judged_docs
    lookup = compute_options("SetLookupOptions", judged)
    canon = numeric(call("index_in", judged, options=lookup)).astype(np.int64)
    found = call("index_in", dictionary, options=lookup)
    return canon, numeric(found, fill=-1).astype(np.int64)


def merge_hits(parts: list[Hits], n_gold: int, retrieved: np.ndarray | None = None) -> Hits:
    """Hits of disjoint query blocks of one run, as one (each query lies wholly in one block).

    ``retrieved``: the per-gold-query counts when the blocks added them up themselves (``retrieved_into``).
    """
    if retrieved is None:
        retrieved = np.zeros(n_gold, dtype=np.int64)
        for part in parts:
            retrieved += part.retrieved
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return Hits(empty, empty, empty, retrieved, np.zeros(0, dtype=object))
    return Hits(  # int64 whatever the parts hold (a streamed run keeps them as int32 meanwhile)
        np.concatenate([p.qidx for p in parts], dtype=np.int64),
        np.concatenate([p.rank for p in parts], dtype=np.int64),
        np.concatenate([p.grade for p in parts], dtype=np.int64),
        retrieved,
        np.concatenate([p.ignored_query_ids for p in parts]),
    )


def table_ranks(table: RunTable) -> np.ndarray:
    """Each row's 0-based rank within its query in evaluation order (score descending at float32
    precision, ties by doc id descending: :func:`evalops.metrics.ranking.trec_eval_order`), from the codes:
    one sort of the rows, and the doc ids compared as the dictionary's dense rank (no Python string).
    Computed once per table (kept on it, like the lookups kept on a ``Gold``)."""
    held: np.ndarray | None = table.__dict__.get("_ranks")
    if held is not None:
        return held
    ranks = _ranks(table)
    object.__setattr__(table, "_ranks", ranks)
    return ranks


def _ranks(table: RunTable) -> np.ndarray:
    """One sort by (query, score descending); only rows that tie with a neighbour on both are put in doc id
    order (descending), and only their doc ids become Python strings."""
    n = len(table)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    codes = table.query_codes
    scores = as_trec_eval_scores(table.scores)  # (a new array)
    scores += 0.0  # -0.0 and 0.0 tie, as in C
    # a file written query by query and ranked too needs no sort
    _, start, _, order, ordered_scores = query_segments(codes, len(table.query_ids), scores)
    ordered_codes = codes if order is None else codes[order]
    tied = (ordered_codes[1:] == ordered_codes[:-1]) & (ordered_scores[1:] == ordered_scores[:-1])
    del scores, ordered_scores
    if tied.any():
        order = np.arange(n) if order is None else order
        member = np.r_[tied, False] | np.r_[False, tied]  # positions in a run of equal (query, score)
        at = np.flatnonzero(member)
        group = np.cumsum(np.r_[True, ~tied[at[1:] - 1]])  # a new run where the previous position does not tie
        docs = table.doc_ids(order[at])
        _, doc_rank = np.unique(docs.astype(str), return_inverse=True)
        order[at] = order[at][np.lexsort((-doc_rank.reshape(-1), group))]
    if order is None:  # the rows are in evaluation order: a row's rank is its offset among its query's rows
        ranks = np.arange(n, dtype=np.int64)
        ranks -= start[codes]
        return ranks
    ranks = np.empty(n, dtype=np.int64)
    ranks[order] = np.arange(n) - start[ordered_codes]
    return ranks


def top_k_table(table: RunTable, k: int, query_ids: Any = None) -> tuple[RunTable, np.ndarray]:
    """(the rows of ``table`` ranked within the first ``k`` of their query, their ranks): the table a
    retriever cut at ``k`` gives, in the table's row order, with queries renumbered (by first appearance).
    ``query_ids``: keep only these queries (the others are dropped, not counted as ignored)."""
    ranks = table_ranks(table)
    keep = ranks < k
    if query_ids is not None:
        position = dict(zip(table.query_ids.tolist(), range(len(table.query_ids))))
        wanted = np.zeros(len(table.query_ids), dtype=bool)
        wanted[[position[q] for q in query_ids if q in position]] = True
        if not wanted.all():
            keep &= wanted[table.query_codes]
    used = np.flatnonzero(np.bincount(table.query_codes, minlength=len(table.query_ids)))
    if len(used) == len(table.query_ids) and keep.all():  # every row kept: the table's own columns, not copies
        cut = RunTable(table.query_codes, table.query_ids, table.doc_codes, table.doc_dictionary, table.scores,
                       table.name, table.source)
        object.__setattr__(cut, "_ranks", ranks)
        return cut, ranks
    rows = np.flatnonzero(keep)
    codes = table.query_codes[rows]
    used = np.flatnonzero(np.bincount(codes, minlength=len(table.query_ids)))
    renumber = np.full(len(table.query_ids), -1, dtype=np.int64)
    renumber[used] = np.arange(len(used))
    cut = RunTable(renumber[codes].astype(table.query_codes.dtype), table.query_ids[used], table.doc_codes[rows],
                   table.doc_dictionary, table.scores[rows], table.name, table.source)
    object.__setattr__(cut, "_ranks", ranks[rows])  # a query's first k keep their ranks
    return cut, ranks[rows]


def unjudged_rows(gold: Gold, table: RunTable, ranks: np.ndarray, k: int) -> np.ndarray:
    """Rows of ``table`` ranked within the first ``k`` (``ranks``: :func:`table_ranks`) of a gold query
    whose document has no judgment for that query (any grade counts as judged), in row order."""
    in_gold = _table_gold_index(gold, table) >= 0
    unjudged = ranks < k
    if not in_gold.all():
        unjudged &= in_gold[table.query_codes]
    if len(gold) and unjudged.any():
        unjudged[judged_rows(gold, table)[0]] = False
    return np.flatnonzero(unjudged)
