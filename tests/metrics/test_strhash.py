"""String hashing for columnar joins: equal strings hash equal, and collisions never change a result."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from evalops.data import Run
from evalops.errors import DuplicateDocumentError
from evalops.metrics import Policy, evaluate
from evalops.metrics.strhash import hash_strings, pair_keys

STRINGS = ["", "a", "a\x00", "ab", "abcdefgh", "abcdefgh\x00", "abcdefghi", "é", "ё-doc-17", "x" * 40, "x" * 41]


def test_equal_strings_hash_equal_whatever_the_container():
    expected = hash_strings(pa.array(STRINGS))
    assert len(set(expected.tolist())) == len(STRINGS)  # these distinct ids do not collide
    np.testing.assert_array_equal(hash_strings(np.array(STRINGS, dtype=object)), expected)
    np.testing.assert_array_equal(hash_strings(pa.array(STRINGS, type=pa.large_string())), expected)
    np.testing.assert_array_equal(hash_strings(pa.chunked_array([STRINGS[:4], STRINGS[4:]])), expected)
    sliced = pa.array(["pad", "pad", *STRINGS]).slice(2)  # a non-zero array offset
    np.testing.assert_array_equal(hash_strings(sliced), expected)
    assert hash_strings(pa.array([], type=pa.string())).size == 0


@pytest.mark.parametrize("others", [["doc1234567"] * 9, ["d1"] * 9], ids=["most-longer", "most-shorter"])
def test_a_strings_hash_does_not_depend_on_the_strings_beside_it(others):
    """A step is taken over every string while most of them go on (those that are done keep their hash),
    else over those that go on: either way each string hashes as it does alone."""
    alone = [int(hash_strings(pa.array([s]))[0]) for s in STRINGS]
    for at in range(len(others) + 1):
        mixed = [*others[:at], *STRINGS, *others[at:]]
        assert hash_strings(pa.array(mixed))[at: at + len(STRINGS)].tolist() == alone


def test_a_long_string_takes_a_bounded_number_of_steps(monkeypatch):
    """The word-by-word fold stops after a few words; the rest of a long id is one pass (a 15 MB id took
    176 s as 2 M numpy steps). Counted in calls of the mixer, each one numpy step over the strings."""
    import evalops.metrics.strhash as strhash

    calls = []
    real = strhash.mix
    monkeypatch.setattr(strhash, "mix", lambda h: calls.append(1) or real(h))
    monkeypatch.setattr(strhash, "_PASS_WORDS", 1000)  # pieces of the pass, so that they are exercised
    long = "ab" * 20_000
    hashes = hash_strings(pa.array([long, long[:-1] + "c", "ba" * 20_000, "q", long]))
    assert len(calls) < 100  # word by word: 5,000 steps
    assert hashes[0] == hashes[4] and len(set(hashes.tolist())) == 4
    np.testing.assert_array_equal(hash_strings(np.array([long, "q"], dtype=object)), hashes[[0, 3]])


def test_pair_keys_separate_queries_for_small_and_huge_query_codes():
    h = hash_strings(pa.array(["d1", "d1", "d2"]))
    small = pair_keys(np.array([0, 1, 0]), h)
    assert len(set(small.tolist())) == 3
    huge = pair_keys(np.array([0, 1 << 30, 0]), h)
    assert len(set(huge.tolist())) == 3


@pytest.fixture
def colliding(monkeypatch):
    """Every string hashes to 0: the join and the duplicate check must fall back on the strings."""
    import evalops.metrics.frame_input as frame_input
    import evalops.metrics.ranking as ranking

    def constant(values):
        return np.zeros(len(values), dtype=np.uint64)

    monkeypatch.setattr(ranking, "hash_strings", constant)
    monkeypatch.setattr(frame_input, "hash_strings", constant)


def _data():
    rng = np.random.default_rng(5)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in rng.choice(30, 6, replace=False)} for i in range(12)}
    run = {f"q{i}": {f"d{j}": float(rng.integers(0, 5)) for j in rng.choice(30, 15, replace=False)} for i in range(12)}
    return qrels, run


def test_collisions_do_not_change_values(colliding):
    qrels, run = _data()
    measures = ["nDCG@5", "AP", "RR", "P@3", "R-Prec"]
    expected = evaluate(qrels, run, measures, Policy(no_answer="zero"))  # dict path: no hashing
    for given in (Run.from_dict(run), Run.from_dict(run).to_frame()):
        got = evaluate(qrels, given, measures, Policy(no_answer="zero"))
        for name in expected.per_query:
            np.testing.assert_array_equal(got.per_query[name], expected.per_query[name], err_msg=name)


def test_collisions_are_not_reported_as_duplicates_but_real_duplicates_are(colliding):
    frame = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "score": [1.0, 2.0, 3.0]})
    assert evaluate({"q1": {"a": 1}}, frame, ["RR"]).per_query["RR"].tolist() == [0.5]
    dup = pd.DataFrame({"query_id": ["q1", "q2", "q1"], "doc_id": ["a", "b", "a"], "score": [1.0, 2.0, 3.0]})
    with pytest.raises(DuplicateDocumentError, match="query 'q1' lists document 'a'"):
        evaluate({"q1": {"a": 1}}, dup, ["RR"])


def test_many_strings_are_hashed_in_pieces_with_the_same_hashes(monkeypatch):
    """Hashed a piece at a time (what the steps hold stays small): the same hashes as all at once, from an
    Arrow array, a chunked one (pieces across its chunks) and an object array."""
    import evalops.metrics.strhash as strhash

    ids = [f"doc{i}" * (i % 5) for i in range(1000)]
    arrow = pa.chunked_array([ids[:333], ids[333:]])
    whole = hash_strings(arrow)
    calls = []
    real = strhash._hash_piece
    monkeypatch.setattr(strhash, "_hash_piece", lambda values: calls.append(len(values)) or real(values))
    monkeypatch.setattr(strhash, "_PIECE", 64)
    for values in (arrow, arrow.combine_chunks(), np.array(ids, dtype=object)):
        np.testing.assert_array_equal(hash_strings(values), whole)
    assert max(calls) == 64 and len(calls) == 3 * 16
