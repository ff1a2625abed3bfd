"""Streaming by query blocks: the same per-query values as the in-memory path, sorted or not."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from evalops.errors import DuplicateDocumentError, InputError
from evalops.formats import read_qrels, read_run_table
from evalops.formats.stream import evaluate_run_file, parse_memory_budget, run_blocks
from evalops.metrics import Policy, evaluate

MEASURES = ["nDCG@10", "P@5", "AP", "RR", "R@100", "nDCG", "R-Prec"]


def _same(a, b):
    assert list(a.per_query) == list(b.per_query)
    for name in a.per_query:
        np.testing.assert_array_equal(a.per_query[name], b.per_query[name])
    assert a.query_ids.tolist() == b.query_ids.tolist()
    assert a.missing_from_run_ids == b.missing_from_run_ids
    assert a.ignored_run_query_ids == b.ignored_run_query_ids
    assert a.run_name == b.run_name


def _bm25_run(folder, tmp_path, shuffle, seed):
    """The collection's BM25 run, or a copy with its lines shuffled (not grouped by query)."""
    run_path = folder / "runs" / "bm25.trec"
    if not shuffle:
        return run_path
    lines = run_path.read_text().splitlines(keepends=True)
    random.Random(seed).shuffle(lines)
    shuffled = tmp_path / "shuffled.trec"
    shuffled.write_text("".join(lines))
    return shuffled


@pytest.mark.parametrize("collection", ["scifact", "nfcorpus-orig-test"])
@pytest.mark.parametrize("shuffle", [False, True], ids=["grouped", "shuffled"])
@pytest.mark.parametrize("no_answer", ["exclude", "zero"])
def test_streaming_and_in_memory_give_identical_per_query_values(shared_data, tmp_path, collection, shuffle, no_answer):
    folder = shared_data / collection
    run_path = _bm25_run(folder, tmp_path, shuffle, seed=7)
    gold = read_qrels(folder)
    policy = Policy(no_answer=no_answer)
    in_memory = evaluate(gold, read_run_table(run_path), MEASURES, policy)
    notices: list[str] = []
    streamed = evaluate_run_file(gold, run_path, MEASURES, policy, memory_budget=200_000, notice=notices.append)
    _same(in_memory, streamed)
    assert any("streamed in one pass" in n for n in notices) != shuffle  # said only when it is true
    assert any("not grouped by query, so read in two passes" in n for n in notices) == shuffle


@pytest.mark.parametrize("shuffle", [False, True], ids=["grouped", "shuffled"])
def test_a_large_file_within_the_budget_is_streamed_and_an_ungrouped_one_read_in_memory(
        shared_data, tmp_path, monkeypatch, shuffle):
    import evalops.formats.stream as stream

    folder = shared_data / "scifact"
    run_path = _bm25_run(folder, tmp_path, shuffle, seed=3)
    gold = read_qrels(folder)
    in_memory = evaluate(gold, read_run_table(run_path), MEASURES)
    monkeypatch.setattr(stream, "STREAM_ABOVE", 0)  # "large": streamed although 1 GB would hold it
    notices: list[str] = []
    _same(in_memory, evaluate_run_file(gold, run_path, MEASURES, notice=notices.append))
    assert any("streamed in one pass" in n for n in notices) != shuffle  # said only when it is true
    assert any("not grouped by query, so read in memory" in n for n in notices) == shuffle
    assert not any("two passes" in n for n in notices)


def test_every_query_is_in_exactly_one_block(shared_data):
    run_path = shared_data / "scifact" / "runs" / "bm25.trec"
    blocks = list(run_blocks(run_path, 100_000))
    assert len(blocks) > 3
    ids = [q for b in blocks for q in b.query_ids.tolist()]
    assert len(ids) == len(set(ids)) == 300
    assert sum(len(b) for b in blocks) == len(read_run_table(run_path))


def test_streamed_duplicate_names_its_line(tmp_path):
    lines = [f"q{i // 100} Q0 d{i % 100} {i % 100 + 1} {1000 - i} run\n" for i in range(20000)]
    lines.insert(15050, "q150 Q0 d7 101 0.5 run\n")
    path = tmp_path / "dup.trec"
    path.write_text("".join(lines))
    gold = {"q150": {"d7": 1}}
    with pytest.raises(DuplicateDocumentError) as info:
        evaluate_run_file(gold, path, ["P@5"], memory_budget=100_000)
    assert f"{path}:15051" in str(info.value)


def test_streamed_bad_line_is_named_by_the_exact_parser(tmp_path):
    lines = [f"q{i // 100} Q0 d{i % 100} {i % 100 + 1} {1000 - i} run\n" for i in range(20000)]
    lines[17000] = "q170 Q0 d0 1 high run\n"
    path = tmp_path / "bad.trec"
    path.write_text("".join(lines))
    with pytest.raises(InputError, match=f"{path}:17001: score: 'high' is not a number"):
        evaluate_run_file({"q1": {"d1": 1}}, path, ["P@5"], memory_budget=100_000)


def test_empty_streamed_run_is_an_error_unless_allowed(tmp_path):
    path = tmp_path / "empty.trec"
    path.write_text("")
    with pytest.raises(InputError, match="the run is empty"):
        evaluate_run_file({"q1": {"d1": 1}}, path, ["P@5"], memory_budget=0)
    result = evaluate_run_file({"q1": {"d1": 1}}, path, ["P@5"], memory_budget=0, allow_empty=True)
    assert result.aggregates["P@5"].mean == 0.0


@pytest.mark.parametrize(("text", "size"), [("1GB", 1 << 30), ("512MB", 512 << 20), ("2g", 2 << 30), ("100000000", 100000000)])
def test_memory_budget_sizes(text, size):
    assert parse_memory_budget(text) == size


@pytest.mark.parametrize("text", ["lots", "-1GB", "1TB", "1kb"])
def test_bad_memory_budget_is_an_input_error(text):
    with pytest.raises(InputError):
        parse_memory_budget(text)


@pytest.mark.parametrize("size", [7, 64, 1000])
@pytest.mark.parametrize("ending", ["\n", ""], ids=["newline", "no-final-newline"])
def test_segments_are_whole_lines_in_file_order(tmp_path, size, ending):
    from evalops.formats._source import as_source
    from evalops.formats._table import segments as _segments

    rng = random.Random(size)
    lines = ["q" * rng.randint(0, 90) + f" Q0 d{i} 1 1.0 run" for i in range(200)]
    path = tmp_path / "run.trec"
    path.write_bytes(("\n".join(lines) + ending).encode())
    pieces = [bytes(buffer[start:end]) for buffer, start, end in _segments(as_source(path), size)]
    assert b"".join(pieces) == path.read_bytes()
    assert all(p.endswith(b"\n") for p in pieces[:-1]) and all(pieces)


@pytest.mark.parametrize("odd", ["q5 Q0 d1\tx 1 2.0 run\n", "q5 Q0 d1\x0cx 1 2.0 run\n", "q5 Q0  d1 1 2.0\n",
                                 "q5  d1 1 2.0 run\n", " q5 Q0 d1 1 2.0\n", "q5 Q0 d1 1 2.0 \n", "q5 Q0 d1 1 2.0 run \n",
                                 "q5 Q0 d1 1 2.0 run\r\n", "q5 Q0 d1 1 2.0 run\rq5 Q0 d2 2 1.0 run\n",
                                 "q5 Q0 d1  2.0 run\n", "q5 Q0 d1 1 2.0 run\n\n"],
                         ids=["tab", "form-feed", "doubled-space", "empty-field", "leading-space", "empty-tag",
                              "trailing-space", "crlf", "lone-cr", "empty-rank", "blank-line"])
def test_a_line_the_fast_reader_would_split_otherwise_goes_to_the_exact_parser(tmp_path, monkeypatch, odd):
    """Streamed and read in memory by Arrow, the file gives what the exact parser gives: the same values
    or the same error (the line)."""
    import evalops.formats._table as table

    lines = [f"q{i // 100} Q0 d{i % 100} {i % 100 + 1} {1000 - i} run\n" for i in range(20000)]
    lines[15000] = odd
    path = tmp_path / "odd.trec"
    path.write_text("".join(lines))
    gold = read_qrels_text(tmp_path, "q5 0 d1 1\nq150 0 d3 1\n")
    monkeypatch.setattr(table, "SMALL_FILE_ARROW_LOADED", 1 << 30)  # the exact parser, for the expectation
    monkeypatch.setattr(table, "SMALL_FILE", 1 << 30)
    try:
        expected = evaluate(gold, read_run_table(path), ["P@5", "RR"])
    except InputError as exc:
        expected = exc
    monkeypatch.setattr(table, "SMALL_FILE", 0)  # then the Arrow path, in memory and streamed
    monkeypatch.setattr(table, "SMALL_FILE_ARROW_LOADED", 0)
    for read in (lambda: evaluate(gold, read_run_table(path), ["P@5", "RR"]),
                 lambda: evaluate_run_file(gold, path, ["P@5", "RR"], memory_budget=100_000)):
        if isinstance(expected, InputError):
            with pytest.raises(InputError, match=re.escape(str(expected))):
                read()
        else:
            _same(expected, read())


@pytest.mark.parametrize("text, clean", [
    (b"q1 Q0 d1 1 2.0 run\nq1 Q0 d2 2 1.0 run\n", True), (b"q1 Q0 d1 1 2.0 run", True), (b"", True),
    (b"q1 Q0  1 2.0 run\n", False), (b"q1 Q0 d1 1 2.0 \n", False), (b" q1 Q0 d1 1 2.0\n", False),
    (b"q1 Q0 d1 1 2.0 run ", False), (b"q1 Q0 d1 1 2.0 run\r\n", False), (b"q1 Q0 d1 1 2.0 run\n\n", False),
])
def test_no_empty_fields_finds_every_place_an_empty_field_can_be(text, clean):
    """Segments it passes are read without converting Q0, rank and tag: an empty one of those would go
    unseen, so every doubled separator, one at a line's either end, and the bytes around it count."""
    from evalops.formats._table import _SCANNED, no_empty_fields

    assert no_empty_fields(text, 0, len(text), b" ") is clean
    tabbed = text.replace(b" ", b"\t")  # a tab-separated run
    assert no_empty_fields(tabbed, 0, len(tabbed), b"\t") is clean
    padded = b"x" * (_SCANNED - 3) + b"\n" + text  # after a megabyte of other lines
    assert no_empty_fields(padded, 0, len(padded), b" ") is clean
    straddling = b"x" * (_SCANNED - 1) + b"  x"  # the doubled separator across the megabyte cut
    assert no_empty_fields(straddling, 0, len(straddling), b" ") is False
    assert no_empty_fields(b"zz" + text + b"zz", 2, 2 + len(text), b" ") is clean  # only [start, end) counts


def read_qrels_text(folder, text):
    path = folder / "qrels.txt"
    path.write_text(text)
    return read_qrels(path)


def test_hashed_duplicate_check_confirms_by_the_doc_ids(monkeypatch):
    """Streamed blocks keep doc ids as plain strings and find repeated pairs by hashing them: a hash shared by
    different documents is never reported, a real repeat is, at its first repeated row."""
    import pyarrow as pa

    from evalops.formats import _table

    codes = np.array([0, 0, 0, 1, 1, 1], dtype=np.int32)
    docs = pa.chunked_array([pa.array(["a", "b", "c"]), pa.array(["a", "c", "d"])])
    monkeypatch.setattr(_table, "hash_strings", lambda values: np.zeros(len(values), dtype=np.uint64))
    assert _table.first_duplicate_row_hashed(codes, docs) is None
    repeated = pa.chunked_array([pa.array(["a", "b", "c"]), pa.array(["d", "c", "d"])])
    assert _table.first_duplicate_row_hashed(codes, repeated) == 5
    monkeypatch.undo()
    assert _table.first_duplicate_row_hashed(codes, docs) is None
    assert _table.first_duplicate_row_hashed(codes, repeated) == 5


def _first_repeat_by_hand(codes, docs):
    seen = set()
    for row, pair in enumerate(zip(codes.tolist(), docs, strict=True)):
        if pair in seen:
            return row
        seen.add(pair)
    return None


@pytest.mark.parametrize("lengths", ["one", "few", "many", "ungrouped"])
def test_hashed_duplicate_check_by_runs_finds_every_repeat(lengths):
    """The check sorts each query's doc id hashes (rows of a matrix, per length of the runs of one query)
    before the sort of every row's key: whether the queries have one length, a few, many (more than the
    matrix path takes) or are not grouped, the first repeated (query, document) row is the one found by
    hand, and a file without one has none."""
    import pyarrow as pa

    from evalops.formats import _table

    rng = np.random.default_rng(5)
    for trial in range(40):
        n_queries = int(rng.integers(1, 40))
        sizes = {"one": np.full(n_queries, 7), "few": rng.choice([1, 3, 8], n_queries),
                 "many": rng.integers(1, 40, n_queries), "ungrouped": rng.integers(1, 6, n_queries)}[lengths]
        codes = np.repeat(np.arange(n_queries, dtype=np.int32), sizes)
        if lengths == "ungrouped":
            codes = rng.permutation(codes)
        docs = [f"d{rng.integers(0, 10_000)}-{row}" for row in range(len(codes))]  # distinct
        assert _table.first_duplicate_row_hashed(codes, pa.array(docs)) is None
        if len(codes) < 2:
            continue
        at, to = sorted(rng.choice(len(codes), 2, replace=False).tolist())
        same_query = np.flatnonzero(codes == codes[at])
        to = int(same_query[-1]) if trial % 2 and same_query[-1] != at else to
        docs[to] = docs[at]
        expected = _first_repeat_by_hand(codes, docs)
        assert _table.first_duplicate_row_hashed(codes, pa.array(docs)) == expected


def _residue_hash(values):
    """A weak hash for ids ``d<n>``: only ``n % 5``, in the top bits (documents collide by design)."""
    texts = values.tolist() if isinstance(values, np.ndarray) else values.to_pylist()
    return np.array([(int(t[1:]) % 5) << 60 for t in texts], dtype=np.uint64)


@pytest.mark.parametrize("judged_q1", [("d1", "d2", "d3"), ("d1", "d6", "d3")], ids=["distinct", "colliding"])
def test_streamed_blocks_find_their_judged_documents_by_hash_exactly(tmp_path, monkeypatch, judged_q1):
    """A streamed block finds its judged rows by the doc ids' hashes: a row whose hash is a judged document's
    but whose id is not is left out (confirmed by the ids), and judgments of one query sharing a hash send
    the block to the exact lookup; either way the rows are exactly the judged (query, document) pairs."""
    from evalops.formats import _table, read_gold
    from evalops.metrics import gold as gold_module, table_input
    from evalops.metrics.table_input import _gold_index, _hashed_judged_rows, _judgments_of, judged_rows

    run = tmp_path / "run.trec"
    run.write_text("".join(f"{q} Q0 d{d} {d + 1} {20 - d} t\n" for q in ("q1", "q2") for d in range(10)))
    judgments = [("q1", d) for d in judged_q1] + [("q2", "d5"), ("q2", "d7"), ("q3", "d1")]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} 1\n" for q, d in judgments))
    for module in (_table, table_input, gold_module):  # the rows', and the judgments' (CompactGold.doc_hashes)
        monkeypatch.setattr(module, "hash_strings", _residue_hash)
    gold = read_gold(qrels)
    found, hashed_blocks = [], 0
    for table in run_blocks(run):
        assert "_doc_hashes" in table.__dict__
        gold_of_code = _gold_index(gold, table.query_ids)
        judgments_of_block = _judgments_of(gold, gold_of_code[gold_of_code >= 0])
        hashed_blocks += _hashed_judged_rows(gold, table, gold_of_code, judgments_of_block) is not None
        rows, pairs = judged_rows(gold, table)
        queries, docs = table.query_ids[table.query_codes].tolist(), table.doc_ids().tolist()
        assert [docs[r] for r in rows.tolist()] == gold.docs_of(pairs).to_pylist()
        assert rows.tolist() == sorted(rows.tolist())
        found += [(queries[r], docs[r]) for r in rows.tolist()]
    assert sorted(found) == sorted(judgments[:-1])
    assert hashed_blocks == (1 if judged_q1[1] == "d6" else 2)  # d1 and d6 share a hash: q1 is looked up exactly


def test_a_query_back_within_one_block_makes_the_run_not_grouped(tmp_path):
    """Query ids are read as runs of equal ids: a query that comes back after another within one block is
    two runs of that block, and the run is not grouped (read again), as when it comes back in a later block."""
    from evalops.formats.stream import NotGrouped, whole_query_blocks

    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 d1 1 3 t\nq1 Q0 d2 2 2 t\nq2 Q0 d1 1 3 t\nq1 Q0 d3 3 1 t\nq3 Q0 d1 1 1 t\n")
    with pytest.raises(NotGrouped):
        list(run_blocks(path))
    read = list(whole_query_blocks(path))
    assert None in read
    blocks = read[len(read) - read[::-1].index(None):]  # read again after the None: q1 has its three rows
    assert sum(len(b) for b in blocks) == 5
    assert sorted(q for b in blocks for q in b.query_ids.tolist()) == ["q1", "q2", "q3"]


def test_judgments_keep_the_doc_id_hashes_their_duplicate_check_computed(tmp_path, monkeypatch):
    """The judgments read on the Arrow path keep the doc id hashes of their duplicate check for the
    streamed blocks' lookups: the same hashes the judgments would compute for themselves."""
    from evalops.formats import _table, read_gold
    from evalops.metrics.strhash import hash_strings

    monkeypatch.setattr(_table, "SMALL_FILE", 0)  # the Arrow path, whatever the size
    path = tmp_path / "qrels.txt"
    path.write_text("".join(f"q{q} 0 d{(q * 7 + d) % 23}-{d} {d % 3}\n" for q in range(40) for d in range(q % 5 + 1)))
    gold = read_gold(path)
    assert "_doc_hashes" in gold.__dict__
    codes = np.arange(len(gold.qidx)) if gold.doc_codes is None else gold.doc_codes
    np.testing.assert_array_equal(gold.doc_hashes(), hash_strings(gold.doc_arrow)[codes])
