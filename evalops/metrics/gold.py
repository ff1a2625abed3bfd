"""The gold side of an evaluation: judged queries, coded for the kernels.

``Gold`` holds the qrels as integer-coded arrays over the *sorted* gold query ids. Everything the
measures need from the qrels comes from here: R (relevant judged documents per query, at a threshold)
and the ideal ranking for nDCG (judged grades sorted descending), never from the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from evalops.data import Qrels, QrelsLike, Run, RunLike, RunTable
from evalops.errors import InputError
from evalops.metrics.strhash import hash_strings
from evalops.util.arrow import call, from_numpy, strings

__all__ = ["Gold", "CompactGold", "as_gold", "as_qrels", "as_run"]


def as_gold(qrels: QrelsLike | Gold) -> Gold:
    """Accept ``Qrels``, ``{qid: {docid: grade}}``, a DataFrame (query_id, doc_id, grade) or a ``Gold``
    (as is: its arrays are trusted, as built by ``Gold``'s constructors)."""
    if isinstance(qrels, Gold):
        return qrels
    if isinstance(qrels, Mapping):
        return Gold.from_dict(qrels)
    if isinstance(qrels, Qrels):  # built once per Qrels (neither is modified): its lookups are shared too
        held = qrels.__dict__.get("_gold")
        if held is None:
            held = Gold.from_qrels(qrels)
            object.__setattr__(qrels, "_gold", held)
        return held
    return Gold.from_qrels(as_qrels(qrels))


def as_qrels(qrels: QrelsLike) -> Qrels:
    """Accept ``Qrels``, ``{qid: {docid: grade}}`` or a DataFrame (query_id, doc_id, grade)."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, Mapping):
        return Qrels.from_dict(qrels)
    if hasattr(qrels, "columns"):
        return Qrels.from_frame(qrels)
    raise InputError(
        f"qrels must be Qrels, a {{qid: {{docid: grade}}}} dict or a DataFrame, not {type(qrels).__name__}"
    )


def as_run(run: RunLike) -> Run:
    """Accept ``Run``, ``{qid: {docid: score}}``, ``{qid: [docid, ...]}`` (plain ranked lists: rank order is
    list order, :meth:`Run.from_lists`) or a DataFrame (query_id, doc_id[, score])."""
    if isinstance(run, Run):
        return run
    if isinstance(run, RunTable):
        return run.to_run()
    if isinstance(run, Mapping):
        return Run.from_dict(run)
    if hasattr(run, "columns"):
        return Run.from_frame(run, score_col="score" if "score" in run.columns else None)
    raise InputError(f"run must be Run, a {{qid: {{docid: score}}}} or {{qid: [docid, ...]}} dict or a DataFrame, "
                     f"not {type(run).__name__}")


@dataclass(frozen=True, eq=False)
class Gold:
    """Judgments coded by gold query: ``qidx[j]`` indexes ``query_ids`` (sorted, unique)."""

    query_ids: np.ndarray
    qidx: np.ndarray
    doc_ids: np.ndarray
    grades: np.ndarray

    @classmethod
    def from_qrels(cls, qrels: Qrels) -> Gold:
        codes, uniques = qrels._query_codes()
        order = np.argsort(uniques, kind="stable")  # Python string order = byte order of UTF-8
        renumber = np.empty_like(order)
        renumber[order] = np.arange(len(order))
        return cls(uniques[order], renumber[codes], qrels.doc_ids, qrels.grades)

    @classmethod
    def from_dict(cls, qrels: Mapping[Any, Any]) -> Gold:
        """From ``{qid: {docid: grade}}``; the same result as ``from_qrels(Qrels.from_dict(qrels))``.

        With string ids and numeric grades (the usual case) this skips building a ``Qrels``: dict keys
        cannot repeat, so there is nothing to check but the grades. Anything else goes through ``Qrels``,
        which converts ids with ``str`` and explains what is wrong.
        """
        keys = list(qrels.keys())
        inner = list(qrels.values())
        if set(map(type, keys)) - {str} or set(map(type, inner)) - {dict}:
            return cls.from_qrels(Qrels.from_dict(qrels))
        import pandas as pd

        lengths = np.fromiter(map(len, inner), dtype=np.int64, count=len(inner))
        total = int(lengths.sum())
        docs = np.fromiter(chain.from_iterable(inner), dtype=object, count=total)
        if total and not pd.api.types.infer_dtype(docs, skipna=False) == "string":
            return cls.from_qrels(Qrels.from_dict(qrels))
        try:
            grades = np.fromiter(chain.from_iterable(map(dict.values, inner)), dtype=np.float64, count=total)
        except (TypeError, ValueError):
            return cls.from_qrels(Qrels.from_dict(qrels))
        if not np.all(np.isfinite(grades) & (grades == np.round(grades))):
            return cls.from_qrels(Qrels.from_dict(qrels))  # raises, naming the problem
        present = np.flatnonzero(lengths > 0)  # a query with no judgments is not a gold query
        ids = np.array(keys, dtype=object)[present]
        order = np.argsort(ids, kind="stable")
        renumber = np.empty_like(order)
        renumber[order] = np.arange(len(order))
        qidx = np.repeat(renumber, lengths[present])
        return cls(ids[order], qidx, docs, grades.astype(np.int64))

    def __len__(self) -> int:
        return len(self.query_ids)

    def n_relevant(self, threshold: int) -> np.ndarray:
        """R per gold query: judged documents with grade >= threshold."""
        return np.bincount(self.qidx[self.grades >= threshold], minlength=len(self))

    def ideal(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positive judged grades as (query index, 0-based ideal rank, grade), sorted by query then rank."""
        positive = self.grades > 0
        q = self.qidx[positive]
        g = self.grades[positive]
        del positive
        if g.size:
            span = int(g.max()) + 1
            if span * (len(self) + 1) < 2**62:  # one sort of integer keys: much faster than lexsort
                # the key is (query, grade descending) itself, so sorting it (no argsort, no gathers) gives both;
                # 32 bits when they hold it: 2 M judgments sort in 8 MB arrays instead of 16 MB ones
                key: np.ndarray = q.astype(np.int32 if span * (len(self) + 1) < 2**31 else np.int64)
                del q
                key *= span
                key += span - 1
                key -= g
                del g
                key.sort(kind="stable")  # (the same values; timsort takes the runs of a query: a quarter of the time)
                q, g = np.divmod(key, span)
                del key
                np.subtract(span - 1, g, out=g)
            else:
                order = np.lexsort((-g, q))
                q, g = q[order], g[order]
        return q, _position_in_group(q, np.int32 if len(q) < 2**31 else np.int64), g


    def query_ids_where(self, mask: np.ndarray) -> np.ndarray:
        """The ids of the gold queries where ``mask`` holds: the values of ``query_ids[mask]``."""
        ids: np.ndarray = self.query_ids[mask]
        return ids

    def query_groups(self) -> tuple[np.ndarray, np.ndarray]:
        """(judgment rows ordered by query, where each query's rows start: ``len(self) + 1`` bounds), built
        once (streamed blocks reuse it)."""
        groups = self.__dict__.get("_groups")
        if groups is None:
            by_query = np.argsort(self.qidx, kind="stable")
            bounds = np.searchsorted(self.qidx[by_query], np.arange(len(self) + 1))
            if len(by_query) < 2**31:
                by_query = by_query.astype(np.int32)
            groups = (by_query, bounds)
            object.__setattr__(self, "_groups", groups)
        return groups

    def docs_of(self, rows: np.ndarray) -> Any:
        """The doc ids of judgments ``rows``: an object array of str here, an Arrow string array in
        :class:`CompactGold` (the run-table join takes either)."""
        return self.doc_ids[rows]

    def with_grades(self, grades: np.ndarray) -> Gold:
        """The same judgments with other grades (the same class, ids shared, not copied)."""
        return Gold(self.query_ids, self.qidx, self.doc_ids, grades)


class CompactGold(Gold):
    """A :class:`Gold` whose ids stay in Arrow string arrays: no Python object per judged document or query.

    What ``evalops evaluate`` holds while it streams a large run (2 M judgments over 1 M queries: about
    70 MB, against 336 MB as Python strings). ``query_ids`` (sorted, as in ``Gold``) becomes an object
    array only when asked for, once, when the results are put together; ``query_arrow`` and ``doc_arrow``
    hold the ids meanwhile (``doc_arrow[doc_codes]`` when the reader's doc dictionary is kept as it is, with
    ``doc_codes`` per judgment), and :meth:`positions` finds run query ids among them by a 64-bit hash, confirmed
    by comparing the strings (exact). ``qidx`` and ``grades`` are ``Gold``'s arrays, in the file's order of the
    judgments, held as int32 when they fit (grades: when no two differ by 2**30 or more, so that the judged
    measures' shift cannot overflow); what reads them casts where 64 bits are needed.
    """

    query_arrow: Any  # pyarrow string arrays (set by __init__)
    doc_arrow: Any
    doc_codes: np.ndarray | None

    def __init__(self, query_arrow: Any, qidx: np.ndarray, doc_arrow: Any, grades: np.ndarray,
                 doc_codes: np.ndarray | None = None) -> None:
        for name, value in (("query_arrow", query_arrow), ("qidx", qidx), ("doc_arrow", doc_arrow),
                            ("grades", grades), ("doc_codes", doc_codes)):
            object.__setattr__(self, name, value)

    @property
    def query_ids(self) -> np.ndarray:
        held = self.__dict__.get("_query_ids")
        if held is None:
            held = _fixed_width_ids(self.query_arrow)
            held = strings(self.query_arrow) if held is None else held
            object.__setattr__(self, "_query_ids", held)
        return held

    def query_ids_where(self, mask: np.ndarray) -> np.ndarray:
        """The values of ``query_ids[mask]``, built from the Arrow ids of those queries only when
        ``query_ids`` was not asked for (1 M ids of 7 characters take 28 MB as a numpy str array)."""
        held: np.ndarray | None = self.__dict__.get("_query_ids")
        if held is not None:
            picked: np.ndarray = held[mask]
            return picked
        rows = np.flatnonzero(mask).astype(np.int32 if len(self) < 2**31 else np.int64)
        ids = _fixed_width_ids(self.query_arrow, rows)
        return strings(call("take", self.query_arrow, from_numpy(rows))) if ids is None else ids

    @property
    def doc_ids(self) -> np.ndarray:
        """Every judged doc id as an object array of str (built on each call: prefer :meth:`docs_of`)."""
        return strings(self.docs_of(np.arange(len(self.qidx))))

    def __len__(self) -> int:
        return len(self.query_arrow)

    def docs_of(self, rows: np.ndarray) -> Any:
        rows = np.asarray(rows, dtype=np.int64)
        return call("take", self.doc_arrow, from_numpy(rows if self.doc_codes is None else self.doc_codes[rows]))

    def with_grades(self, grades: np.ndarray) -> Gold:
        other = CompactGold(self.query_arrow, self.qidx, self.doc_arrow, grades, self.doc_codes)
        for held in ("_hashes", "_groups", "_query_ids", "_doc_hashes"):  # the same ids: the lookups are shared
            if held in self.__dict__:
                object.__setattr__(other, held, self.__dict__[held])
        return other

    def nbytes(self) -> int:
        """The bytes its arrays hold (the lookups, once built, included)."""
        held: int = self.qidx.nbytes + self.grades.nbytes + self.query_arrow.nbytes + self.doc_arrow.nbytes
        held += 0 if self.doc_codes is None else self.doc_codes.nbytes
        built: list[np.ndarray | None] = [*(self.__dict__.get("_hashes") or ()), *(self.__dict__.get("_groups") or ()),
                                          self.__dict__.get("_doc_hashes")]
        return held + sum(a.nbytes for a in built if a is not None)

    def index(self) -> CompactGold:
        """Build the lookups streamed blocks use (query positions, judgments by query) now, so that what the
        judgments hold can be measured before the run is read; returns ``self``."""
        self.positions(np.zeros(0, dtype=object))
        self.query_groups()
        self.doc_hashes()
        return self

    def doc_hashes(self) -> np.ndarray:
        """The 64-bit hash of each judgment's doc id (:func:`~evalops.metrics.strhash.hash_strings`), built
        once: streamed blocks find their judged documents by them."""
        held: np.ndarray | None = self.__dict__.get("_doc_hashes")
        if held is None:
            held = hash_strings(self.doc_arrow)  # with codes, each distinct doc id hashed once
            held = held if self.doc_codes is None else held[self.doc_codes]
            object.__setattr__(self, "_doc_hashes", held)
        return held

    def keep_doc_hashes(self, hashes: np.ndarray) -> None:
        """Keep ``hashes``, the :func:`~evalops.metrics.strhash.hash_strings` of ``doc_arrow`` (a reader that
        hashed them for its duplicate check), as :meth:`doc_hashes` would compute them."""
        object.__setattr__(self, "_doc_hashes", hashes if self.doc_codes is None else hashes[self.doc_codes])

    def positions(self, query_ids: np.ndarray) -> np.ndarray:
        """The position of each of ``query_ids`` (an object array of str) among the gold queries, -1 if absent."""
        lookup: tuple[np.ndarray | None, np.ndarray | None] | None = self.__dict__.get("_hashes")
        if lookup is None:
            hashed = hash_strings(self.query_arrow)
            by_hash = np.argsort(hashed, kind="stable")
            hashed = hashed[by_hash]
            if len(hashed) > 1 and bool(np.any(hashed[1:] == hashed[:-1])):  # a collision: look up by dict
                lookup = (None, None)
            else:
                lookup = (hashed, by_hash.astype(np.int32 if len(by_hash) < 2**31 else np.int64))
            object.__setattr__(self, "_hashes", lookup)
        hashes, order = lookup
        out = np.full(len(query_ids), -1, dtype=np.int64)
        if len(query_ids) == 0 or len(self) == 0:
            return out
        if hashes is None or order is None:
            position = dict(zip(self.query_ids.tolist(), range(len(self)), strict=False))
            return np.fromiter((position.get(q, -1) for q in query_ids.tolist()), dtype=np.int64,
                               count=len(query_ids))
        wanted = hash_strings(query_ids)
        at = np.minimum(np.searchsorted(hashes, wanted), len(hashes) - 1)
        hit = np.flatnonzero(hashes[at] == wanted)
        if hit.size:
            found = order[at[hit]].astype(np.int64)
            same = np.array(call("take", self.query_arrow, from_numpy(found)).to_pylist(), dtype=np.object_) == query_ids[hit]
            out[hit[same]] = found[same]
        return out


_FIXED_WIDTH_MAX = 16  # a numpy str of 16 characters takes 64 bytes: about what a Python str of 1-8 does


def _fixed_width_ids(ids: Any, rows: np.ndarray | None = None) -> np.ndarray | None:
    """Short ASCII ids (at most :data:`_FIXED_WIDTH_MAX` characters, none ending in NUL, which numpy would
    drop) as a fixed-width numpy str array, built from the Arrow buffers: 4 bytes a character instead of a
    Python object per id (1 M ids of 7 characters: 28 MB instead of 72 MB). Indexing it and ``tolist`` give
    the same str values as an object array. ``rows``: only those ids (the values and dtype of the whole
    array indexed by them, without building it). None when the ids do not qualify."""
    import pyarrow as pa

    n = len(ids)
    if n == 0 or ids.null_count or not pa.types.is_string(ids.type):
        return None
    offsets_buffer, data_buffer = ids.buffers()[1:3]
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)[ids.offset: ids.offset + n + 1]  # (a view)
    lengths = np.diff(offsets)
    width = int(lengths.max())
    if width == 0 or width > _FIXED_WIDTH_MAX:
        return None
    data = np.frombuffer(data_buffer, dtype=np.uint8)[offsets[0]: offsets[-1]]
    if data.size and (int(data.max()) >= 0x80):  # not ASCII
        return None
    ends = offsets[1:] - offsets[0]
    if bool(np.any(data[ends[lengths > 0] - 1] == 0)):  # an id ending in NUL
        return None
    del ends
    starts = offsets[:-1] if rows is None else offsets[rows]
    if rows is not None:
        lengths = lengths[rows]
    out = np.zeros(len(starts), dtype=f"U{width}")  # filled in place: ASCII bytes are their code points
    raw = out.view(np.uint32).reshape(len(starts), width)
    step = 1 << 13  # (a slice's index arrays stay under 1 MB for ids of up to 16 characters)
    for lo in range(0, len(starts), step):  # rows by slices: the byte positions of one slice at a time
        hi = min(len(starts), lo + step)
        size = lengths[lo:hi]
        at = np.repeat(np.arange(lo, hi), size)
        first = np.cumsum(size, dtype=np.int64) - size  # where each id starts among this slice's bytes
        cols = np.arange(len(at)) - np.repeat(first, size)
        raw[at, cols] = data[np.repeat((starts[lo:hi] - offsets[0]).astype(np.int64), size) + cols]
    return out


def _position_in_group(sorted_keys: np.ndarray, dtype: Any = np.int64) -> np.ndarray:
    """0, 1, 2, ... restarting wherever ``sorted_keys`` changes (as ``dtype``, which must hold ``len``)."""
    n = len(sorted_keys)
    if n == 0:
        return np.zeros(0, dtype=dtype)
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]).astype(dtype)
    lengths = np.diff(np.r_[starts, dtype(n)])
    out = np.arange(n, dtype=dtype)
    out -= np.repeat(starts, lengths)
    return out
