"""One input rule for ids and query texts (evalops.util.safetext.refuse_unsafe): NUL, C0/C1 controls, ANSI escapes,
a byte order mark inside the text and lone surrogates are refused where they are read, naming the file, the
line and the character, by every reader (TREC runs and qrels on both parsers, BEIR, gold sets, knowledge
bases); a query log marks such a row malformed instead (its reader tolerates bad rows)."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from evalops.errors import FormatError
from evalops.formats import read_beir_corpus, read_beir_queries, read_qrels, read_run
from evalops.formats._table import load_arrow_readers
from evalops.util.safetext import refuse_unsafe, unsafe_character

BAD_IDS = [("d\x00x", "a NUL byte"), ("d\x1b[31mx", "an escape character"), ("d\ufeffx", "a byte order mark"),
           ("d\x85", "the C1 control character U\\+0085"), ("d\x07", "the C0 control character U\\+0007"),
           ("d\x7f", "a DEL character")]


@pytest.mark.parametrize("value, named", BAD_IDS)
def test_the_rule_names_the_character(value, named):
    assert re.search(named, unsafe_character(value))
    with pytest.raises(FormatError, match=r"^f\.run:7: query id holds .*at character 2") as exc:
        refuse_unsafe(value, "query id", path="f.run", line=7)
    assert "\x00" not in str(exc.value) and "\x1b" not in str(exc.value)  # shown escaped


def test_a_query_text_may_hold_tabs_and_line_breaks_but_not_other_controls():
    assert unsafe_character("two\tlines\r\nhere", "text") is None
    assert unsafe_character("a\tb") is not None  # not in an id
    assert "lone surrogate" in unsafe_character("x\ud800", "text")
    assert unsafe_character("page\x0cbreak", "document") is None  # a document's text: surrogates only


@pytest.mark.parametrize("value, named", BAD_IDS)
def test_run_files_refuse_them_with_the_line_on_the_exact_parser(tmp_path, value, named):
    path = tmp_path / "a.run"
    path.write_bytes(b"q1 Q0 d1 1 2.0 t\n" + f"q1 Q0 {value} 2 1.0 t\n".encode())
    with pytest.raises(FormatError, match=rf"a\.run:2: doc id holds {named}"):
        read_run(path)


def test_the_arrow_path_refuses_them_too(tmp_path):
    load_arrow_readers()  # files over 64 KB then take the Arrow path
    good = b"".join(b"q%d Q0 d%d 1 1.0 t\n" % (i, i) for i in range(10_000))
    run, qrels = tmp_path / "a.run", tmp_path / "a.qrels"
    run.write_bytes(good + b"q\x1b[2J Q0 d1 1 1.0 t\n")
    with pytest.raises(FormatError, match=r"a\.run:10001: query id holds an escape character"):
        read_run(run)
    qrels.write_bytes(good.replace(b" Q0 ", b" 0 ").replace(b" 1 1.0 t", b" 1") + b"q1 0 d\x00 1\n")
    with pytest.raises(FormatError, match=r"a\.qrels:10001: doc id holds a NUL byte"):
        read_qrels(qrels)


def test_the_arrow_paths_check_of_id_bytes_finds_every_refused_character():
    """``unsafe_ids`` passes printable ASCII in one step; every other byte is looked at again, and each
    character the rule refuses is found, at either end of an id and amid a chunk of good ones."""
    import pyarrow as pa

    from evalops.formats._table import unsafe_ids

    printable = "".join(map(chr, range(0x20, 0x7F)))
    assert not unsafe_ids(pa.array([printable, "d1", "", "é-doc", "ё"]))
    refused = [chr(c) for c in (*range(0x20), 0x7F, 0x80, 0x85, 0x9F, 0xFEFF)]
    for char in refused:
        for bad in (f"d{char}", f"{char}d"):
            assert unsafe_ids(pa.array(["d1", bad, "d2"])), repr(bad)
            assert unsafe_ids(pa.chunked_array([["d1"], ["d2", bad]])), repr(bad)
            assert unsafe_ids(pa.array(["pad", bad]).slice(1)), repr(bad)


def test_beir_queries_and_corpus(tmp_path):
    queries, corpus = tmp_path / "queries.jsonl", tmp_path / "corpus.jsonl"
    queries.write_text('{"_id": "1", "text": "fine\\tquery"}\n{"_id": "2", "text": "bad \\u0000"}\n')
    with pytest.raises(FormatError, match=r"queries\.jsonl:2: 'text' holds a NUL byte"):
        read_beir_queries(queries)
    corpus.write_text('{"_id": "a", "text": "page\\fbreak"}\n{"_id": "b\\u009b", "text": "x"}\n')
    with pytest.raises(FormatError, match=r"corpus\.jsonl:2: '_id' holds the C1 control character U\+009B"):
        read_beir_corpus(corpus)


@pytest.mark.parametrize("layout", ["csv", "jsonl", "tsv"])
def test_gold_sets_refuse_them_in_query_ids_texts_and_judgments(tmp_path, layout):
    from evalops.goldset.io import load_gold_set, load_gold_set_trec

    qrels = tmp_path / "q.qrels"
    qrels.write_text("q1 0 d1 1\n")
    if layout == "csv":
        (tmp_path / "queries.csv").write_text("query_id,text\nq1,hello\nq\x002,x\n")
        (tmp_path / "judgments.csv").write_text("query_id,doc_id,grade\nq1,d1,1\n")
        with pytest.raises(FormatError, match=r"queries\.csv:3: query id holds a NUL byte"):
            load_gold_set(tmp_path)
        (tmp_path / "queries.csv").write_text("query_id,text\nq1,hello\n")
        (tmp_path / "judgments.csv").write_text("query_id,doc_id,grade\nq1,d1,1\nq1,d\x1b,0\n")
        with pytest.raises(FormatError, match=r"judgments\.csv:3: doc id holds an escape character"):
            load_gold_set(tmp_path)
    elif layout == "jsonl":
        (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "bad \\ud800 text"}\n')
        (tmp_path / "judgments.jsonl").write_text('{"query_id": "q1", "doc_id": "d1", "grade": 1}\n')
        with pytest.raises(FormatError, match=r"queries\.jsonl:1: query text holds a lone surrogate"):
            load_gold_set(tmp_path)
        (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "fine"}\n')
        (tmp_path / "judgments.jsonl").write_text('{"query_id": "q1\\ufeff", "doc_id": "d1", "grade": 1}\n')
        with pytest.raises(FormatError, match=r"judgments\.jsonl:1: query id holds a byte order mark"):
            load_gold_set(tmp_path)
    else:
        (tmp_path / "topics.tsv").write_text("q1\tgood\nq2\tbad \x00 text\n")
        with pytest.raises(FormatError, match=r"topics\.tsv:2: query text holds a NUL byte"):
            load_gold_set_trec(qrels, tmp_path / "topics.tsv")


def test_knowledge_base_folder_refuses_a_file_name_with_a_control_character(tmp_path):
    from evalops.knowledge.sources import snapshot_from_directory

    (tmp_path / "ok.md").write_text("fine")
    (tmp_path / "bad\x1b[1m.md").write_text("x")
    with pytest.raises(FormatError, match=r"document id \(the file's path\) holds an escape character"):
        snapshot_from_directory(tmp_path)


def test_a_query_log_marks_such_rows_malformed_on_both_parsers(tmp_path):
    from evalops.querylog.read import read_log_window

    day = tmp_path / "2026-01-01"
    day.mkdir()
    row = '{"timestamp": "2026-01-01T01:00:00Z", "query": "%s", "retriever_version": "1"}'
    texts = ["ok", "nul \\u0000", "lone \\ud800", "esc \\u001b[31m", "tab\\tnewline\\n", "ver"]
    lines = [row % t for t in texts]
    lines[-1] = lines[-1].replace('"1"}', '"1\\u0085"}')
    (day / "log.jsonl").write_text("\n".join(lines) + "\n")
    frame = read_log_window(tmp_path, datetime(2026, 1, 1, tzinfo=timezone.utc),
                            datetime(2026, 1, 2, tzinfo=timezone.utc)).frame
    reasons = dict(zip(frame["line"], frame["malformed"]))
    assert reasons[1] is None and reasons[5] is None
    assert reasons[2].startswith("query holds a NUL byte")
    assert reasons[3].startswith("query holds a lone surrogate")
    assert reasons[4].startswith("query holds an escape character")
    assert reasons[6].startswith("retriever_version holds the C1 control character")
    assert frame["query"].isna().tolist() == [False, True, True, True, False, False]
