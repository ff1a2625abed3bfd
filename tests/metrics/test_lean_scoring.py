"""The leaner scoring paths give exactly what the plain ones gave: the ideal rankings sorted as one integer
key, the kept query ids built at their rows, and the closed queries of a streamed run held as hashes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from evalops.formats.stream import _ClosedQueries
from evalops.metrics.gold import Gold, _fixed_width_ids


def _reference_ideal(gold: Gold) -> tuple[list[int], list[int], list[int]]:
    rows = sorted(((int(q), -int(g)) for q, g in zip(gold.qidx, gold.grades) if g > 0))
    q = [r[0] for r in rows]
    g = [-r[1] for r in rows]
    rank, last, at = [], None, 0
    for qq in q:
        at = at + 1 if qq == last else 0
        rank.append(at)
        last = qq
    return q, rank, g


def test_ideal_is_the_sorted_positive_grades_with_their_ranks() -> None:
    rng = np.random.default_rng(7)
    for trial in range(60):
        n_queries = int(rng.integers(1, 40))
        n = int(rng.integers(0, 300))
        dtype = np.int32 if trial % 2 else np.int64
        grades = rng.integers(-2, [4, 3, 2**20][trial % 3], n).astype(dtype)
        qidx = rng.integers(0, n_queries, n).astype(dtype)
        gold = Gold(np.array([f"q{i:03d}" for i in range(n_queries)], dtype=object), qidx,
                    np.array([f"d{i}" for i in range(n)], dtype=object), grades)
        q, rank, g = gold.ideal()
        assert (q.tolist(), rank.tolist(), g.tolist()) == _reference_ideal(gold)


def test_ids_at_rows_are_the_whole_arrays_rows() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(1, 200))
        ids = pa.array(["".join(rng.choice(list("abXY019_"), int(rng.integers(0, 12)))) for _ in range(n)])
        ids = ids.slice(int(rng.integers(0, n)))  # an offset into the buffers, as a sliced column has
        whole = _fixed_width_ids(ids)
        if whole is None:
            continue
        assert whole.tolist() == ids.to_pylist()
        mask = rng.random(len(ids)) < 0.5
        some = _fixed_width_ids(ids, np.flatnonzero(mask))
        assert some.dtype == whole.dtype and some.tolist() == whole[mask].tolist()


def test_closed_queries_answer_as_a_set_of_the_ids() -> None:
    from evalops.metrics.strhash import hash_strings

    rng = np.random.default_rng(5)
    closed, seen = _ClosedQueries(), set()
    for _ in range(300):
        block = np.array(sorted({f"q{int(i)}" for i in rng.integers(0, 5000, int(rng.integers(0, 30)))}), dtype=object)
        hashes = hash_strings(block)
        assert closed.holds_any(hashes) == (not seen.isdisjoint(block.tolist()))
        if seen.isdisjoint(block.tolist()):  # as the reader closes a block: only when none came before
            closed.add(hashes)
            seen.update(block.tolist())
    assert len(closed.levels) <= 2 + int(np.log2(max(2, len(seen))))
    assert sum(len(level) for level in closed.levels) == len(seen)
