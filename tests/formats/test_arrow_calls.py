"""``evalops.util.arrow.call``: Arrow's compute functions through its registry give what ``pyarrow.compute``'s
wrappers give for the calls the reading path makes (same values, same types, nulls where they were)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evalops.util.arrow import call, compute_options, from_numpy

IDS = ["d3", "é-1", "a", "", "MED-10", "d3", "z\u00a0", "a b", "a", "10", "9", "Ω"]


def test_sort_indices_take_and_dictionary_encode_match_the_wrappers():
    ids = pa.array(IDS)
    assert call("sort_indices", ids).equals(pc.sort_indices(ids))
    rows = from_numpy(np.array([5, 0, 11, 2], dtype=np.int64))
    assert call("take", ids, rows).equals(pc.take(ids, rows))
    assert call("take", ids, rows).equals(ids.take(rows))
    assert call("dictionary_encode", ids).equals(pc.dictionary_encode(ids))
    chunked = pa.chunked_array([IDS[:5], IDS[5:]])
    assert call("dictionary_encode", chunked).equals(pc.dictionary_encode(chunked))


def test_index_in_matches_the_wrapper_with_misses_as_nulls():
    judged = pa.array(["a", "d3", "Ω", "a"])
    ids = pa.array(IDS)
    lookup = compute_options("SetLookupOptions", judged)
    found = call("index_in", ids, options=lookup)
    assert found.equals(pc.index_in(ids, value_set=judged))
    assert found.null_count == len(IDS) - 5


def test_any_of_a_regular_expression_matches_the_wrapper():
    ids = pa.array(IDS)
    for pattern in ("^\\s|\\s$", "[\u00a0]", "^MED-", "nothing"):
        found = call("match_substring_regex", ids, options=compute_options("MatchSubstringOptions", pattern))
        assert found.equals(pc.match_substring_regex(ids, pattern))
        assert call("any", found).as_py() == pc.any(pc.match_substring_regex(ids, pattern)).as_py()
