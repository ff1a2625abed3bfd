"""One input boundary: every reader gives a result or an InputError naming the file (and line), never
another exception; the fast Arrow path and the exact parser agree; the regression corpus stays fixed.

Hypothesis runs with a fixed seed (``derandomize``) and a bounded number of examples, so the suite is
deterministic; ``benchmarks/bad_inputs.py`` re-measures the hand-made bad inputs through the CLI.
"""

from __future__ import annotations

import os

import gzip
import io
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalops.errors import DuplicateDocumentError, FormatError, InputError
from evalops.formats import (
    load_beir,
    read_beir_corpus,
    read_beir_qrels,
    read_beir_queries,
    read_jsonl,
    read_qrels,
    read_run,
    read_trec_qrels,
    read_trec_run,
)
from evalops.formats._source import as_source
from evalops.formats._table import read_table, read_table_exact
from evalops.formats.beir import QRELS_TSV
from evalops.formats.trec import QRELS_LAYOUT, RUN_LAYOUT

CORPUS = Path(__file__).parent / "corpus"
FUZZ = settings(
    derandomize=True,
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# -- generated inputs ------------------------------------------------------------------------------

_ID = st.text(alphabet="aqd01é-_.", min_size=0, max_size=4)
_NUMBER = st.sampled_from(["0", "1", "-2", "0.5", "1e-3", "3.25", "+1", ".5", "5.", "1_0", "nan", "inf", "1e400",
                           "x", "", "2.0", "007", "-0", "1E5", "999999999999999999999"])
_SEP = st.sampled_from([" ", " ", " ", "\t", "  ", " \t", "\x0b"])
_END = st.sampled_from(["\n", "\n", "\r\n", "\r", " \n", ""])


@st.composite
def table_text(draw, fields: int, value_at: int) -> bytes:
    """Lines that are mostly well formed, with the irregularities real files have."""
    sep = draw(_SEP)
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        n = draw(st.sampled_from([fields, fields, fields, fields - 1, fields + 1, fields + 2]))
        tokens = [draw(_NUMBER) if i == value_at else draw(_ID) for i in range(max(n, 0))]
        line_sep = sep if draw(st.booleans()) else draw(_SEP)
        lines.append(line_sep.join(tokens) + draw(_END))
        if draw(st.integers(0, 9)) == 0:
            lines.append("\n")
    text = "".join(lines).encode("utf-8")
    if draw(st.integers(0, 9)) == 0:
        text = b"\xef\xbb\xbf" + text
    if text and draw(st.integers(0, 14)) == 0:
        at = draw(st.integers(0, len(text) - 1))
        text = text[:at] + b"\xff" + text[at + 1 :]
    return text


def _outcome(read, path):
    """('ok', value) or ('error', message); any other exception fails the test."""
    try:
        return "ok", read(path)
    except InputError as exc:
        assert str(path) in str(exc) or "<stdin>" in str(exc), f"error does not name the file: {exc}"
        return "error", str(exc)


def _columns(read):
    def go(path):
        columns, duplicate = read(path)
        return (
            columns.query_id_rows().tolist(),
            columns.doc_ids().tolist(),
            np.asarray(columns.values).tolist(),
            columns.tag,
            duplicate,
        )

    return go


@pytest.mark.parametrize("layout", [RUN_LAYOUT, QRELS_LAYOUT, QRELS_TSV], ids=["run", "qrels", "beir-tsv"])
@FUZZ
@given(data=st.data())
def test_fast_path_and_exact_parser_agree(tmp_path, monkeypatch, layout, data):
    import evalops.formats._table as table

    monkeypatch.setattr(table, "SMALL_FILE", 0)  # small files skip the fast path; here it must run
    fields = 6 if layout is RUN_LAYOUT else (3 if layout is QRELS_TSV else 4)
    value_at = layout.value[fields]
    text = data.draw(table_text(fields, value_at))
    if layout is QRELS_TSV:
        text = text.replace(b" ", b"\t") if data.draw(st.booleans()) else text
    path = tmp_path / "input.txt"
    path.write_bytes(text)
    fast = _outcome(_columns(lambda p: read_table(as_source(p), layout)), path)
    exact = _outcome(_columns(lambda p: (read_table_exact(as_source(p), layout), None)), path)
    assert fast[0] == exact[0], (text, fast, exact)
    if fast[0] == "ok":
        assert fast[1][:4] == exact[1][:4], text


def test_fast_path_is_taken_for_well_formed_files(shared_data, monkeypatch):
    import evalops.formats._table as table
    from evalops.formats._table import _read_fast

    monkeypatch.setattr(table, "SMALL_FILE", 0)
    source = as_source(shared_data / "scifact" / "runs" / "bm25.trec")
    assert _read_fast(source, RUN_LAYOUT) is not None
    fast, _ = read_table(source, RUN_LAYOUT)
    exact = read_table_exact(source, RUN_LAYOUT)
    assert fast.fast and not exact.fast
    assert fast.query_id_rows().tolist() == exact.query_id_rows().tolist()
    assert fast.doc_ids().tolist() == exact.doc_ids().tolist()
    assert np.array_equal(fast.values, exact.values)


READERS = {
    "trec run": (read_trec_run, table_text(6, 4)),
    "trec qrels": (read_trec_qrels, table_text(4, 3)),
    "qrels (any)": (read_qrels, table_text(3, 2)),
    "beir qrels": (read_beir_qrels, table_text(3, 2)),
}


@pytest.mark.parametrize("name", list(READERS))
@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gz"])
@FUZZ
@given(data=st.data())
def test_every_table_reader_gives_a_result_or_an_input_error(tmp_path, name, compress, data):
    read, strategy = READERS[name]
    text = data.draw(strategy)
    path = tmp_path / ("input.txt.gz" if compress else "input.txt")
    payload = gzip.compress(text) if compress else text
    if compress and payload and data.draw(st.integers(0, 3)) == 0:
        payload = payload[: data.draw(st.integers(0, len(payload) - 1))]  # truncated download
    path.write_bytes(payload)
    _outcome(read, path)


_JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["_id", "text", "title", "x"]), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def jsonl_text(draw) -> bytes:
    import json

    lines = []
    for _ in range(draw(st.integers(0, 5))):
        choice = draw(st.integers(0, 9))
        if choice == 0:
            lines.append(draw(st.binary(max_size=12)))
        else:
            record = draw(_JSON_VALUE)
            if choice > 3:
                record = {"_id": draw(st.one_of(st.text(max_size=3), st.integers(), st.none())), "text": draw(_JSON_VALUE)}
            lines.append(json.dumps(record).encode())
    body = b"\n".join(lines)
    return (b"\xef\xbb\xbf" + body) if draw(st.booleans()) else body


@pytest.mark.parametrize(
    "read",
    [lambda p: list(read_jsonl(p)), read_beir_queries, read_beir_corpus],
    ids=["jsonl", "beir queries", "beir corpus"],
)
@FUZZ
@given(data=st.data())
def test_jsonl_readers_give_a_result_or_an_input_error(tmp_path, read, data):
    path = tmp_path / "records.jsonl"
    path.write_bytes(data.draw(jsonl_text()))
    _outcome(read, path)


@FUZZ
@given(qrels=table_text(3, 2), queries=jsonl_text(), corpus=jsonl_text())
def test_beir_folders_and_gold_sets_give_a_result_or_an_input_error(tmp_path, qrels, queries, corpus):
    from evalops.goldset.io import load_gold_set

    folder = tmp_path / "beir"
    folder.mkdir(exist_ok=True)
    (folder / "qrels.tsv").write_bytes(qrels.replace(b" ", b"\t"))
    (folder / "queries.jsonl").write_bytes(queries)
    (folder / "corpus.jsonl").write_bytes(corpus)
    _outcome(load_beir, folder)
    _outcome(lambda p: load_gold_set(p, default_type="keyword"), folder)


@st.composite
def csv_text(draw) -> bytes:
    header = draw(st.sampled_from(["query_id,doc_id,grade", "query_id,doc_id", "\ufeffquery_id,doc_id,grade", ""]))
    rows = [",".join(draw(st.sampled_from(["q1", "d1", '"x,y"', "1", "nan", "1e400", "2.5", "-1", "", "999999999999"]))
                     for _ in range(3)) for _ in range(draw(st.integers(0, 4)))]
    text = "\n".join([header, *rows]).encode()
    if text and draw(st.integers(0, 5)) == 0:
        text = text[:-1] + b"\xff"
    return text


@FUZZ
@given(judgments=csv_text(), queries=st.sampled_from([b"query_id,text,type\nq1,hello,keyword\n", b"query_id,text\nq1,x\n",
                                                      b"\xff\xfe", b""]))
def test_csv_gold_sets_give_a_result_or_an_input_error(tmp_path, judgments, queries):
    from evalops.goldset.io import load_gold_set

    folder = tmp_path / "csv"
    folder.mkdir(exist_ok=True)
    (folder / "judgments.csv").write_bytes(judgments)
    (folder / "queries.csv").write_bytes(queries)
    _outcome(lambda p: load_gold_set(p, default_type="keyword"), folder)


@FUZZ
@given(body=jsonl_text(), compress=st.booleans(), cut=st.integers(0, 50))
def test_query_logs_give_a_result_or_an_input_error(tmp_path, body, compress, cut):
    from datetime import datetime, timezone

    from evalops.querylog.read import read_log_window

    folder = tmp_path / "logs"
    day = folder / "2026-01-01"
    day.mkdir(parents=True, exist_ok=True)
    for old in day.iterdir():
        old.unlink()
    payload = gzip.compress(body) if compress else body
    if compress and cut:
        payload = payload[: max(0, len(payload) - cut)]
    (day / ("log.jsonl.gz" if compress else "log.jsonl")).write_bytes(payload)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    try:
        read_log_window(folder, start, datetime(2026, 1, 2, tzinfo=timezone.utc))
    except InputError:
        pass


# -- the regression corpus: inputs that once broke a reader ------------------------------------------

CASES = {
    "run_not_utf8.run": (read_trec_run, "1: not valid UTF-8"),
    "run_inf_score.run": (read_trec_run, "1: score: 'inf' is not a number"),
    "run_huge_score.run": (read_trec_run, "2: score: '1e400' is not a finite number"),
    "run_nan_score.run": (read_trec_run, "1: score: 'nan' is not a number"),
    "run_empty.run": (read_trec_run, "the run is empty"),
    "run_bom.run": (read_trec_run, None),
    "run_extra_fields.run": (read_trec_run, None),
    "run_mixed_whitespace.run": (read_trec_run, None),
    "run_duplicate.run": (read_trec_run, ":2: query '1' lists document 'd1' more than once"),
    "run_vertical_tab.run": (read_trec_run, None),  # \x0b separates fields, as isspace() does in trec_eval
    "run_corrupt.run.gz": (read_trec_run, "could not be decompressed as gzip"),
    "qrels_not_utf8.qrels": (read_trec_qrels, "2: not valid UTF-8"),
    "qrels_nan_grade.qrels": (read_trec_qrels, "1: grade: 'nan' is not an integer"),
    "qrels_huge_grade.qrels": (read_trec_qrels, "outside the 32-bit integer range"),
    "qrels_float_grade.qrels": (read_trec_qrels, "'1.5' is not an integer"),
    "qrels_bom.tsv": (read_beir_qrels, None),
    "qrels_duplicate.tsv": (read_beir_qrels, ":4: query '1' judges document 'd1' a second time"),
    "queries_bom.jsonl": (read_beir_queries, None),
    "queries_not_utf8.jsonl": (read_beir_queries, "1: not valid UTF-8"),
    "queries_deep.jsonl": (read_beir_queries, "1: "),
    "queries_corrupt.jsonl.gz": (read_beir_queries, "could not be decompressed as gzip"),
}


def test_every_corpus_file_has_a_case():
    assert sorted(p.name for p in CORPUS.iterdir()) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_regression_corpus(name):
    read, fragment = CASES[name]
    path = CORPUS / name
    if fragment is None:
        read(path)
        return
    with pytest.raises(InputError) as info:
        read(path)
    message = str(info.value)
    assert str(path) in message and fragment in message, message
    assert "\n" not in message


def test_bom_is_handled_the_same_in_every_format():
    assert read_trec_run(CORPUS / "run_bom.run").to_dict() == {"1": {"d1": 0.5}}
    assert read_beir_qrels(CORPUS / "qrels_bom.tsv").to_dict() == {"1": {"d1": 1}}
    assert read_beir_queries(CORPUS / "queries_bom.jsonl") == {"1": "q"}


def test_compressed_inputs_read_like_plain_ones(tmp_path, shared_data):
    run_path = shared_data / "scifact" / "runs" / "bm25.trec"
    plain = read_run(run_path)
    gz = tmp_path / "bm25.trec.gz"
    gz.write_bytes(gzip.compress(run_path.read_bytes()))
    renamed = tmp_path / "bm25-gz.trec"  # recognised by its magic bytes, whatever the name
    renamed.write_bytes(gz.read_bytes())
    for other in (read_run(gz), read_run(renamed)):
        assert other.to_dict() == plain.to_dict()
    import pyarrow as pa

    zst = tmp_path / "bm25.trec.zst"
    with pa.CompressedOutputStream(str(zst), "zstd") as out:
        out.write(run_path.read_bytes())
    assert read_run(zst).to_dict() == plain.to_dict()


def test_standard_input_with_compression(monkeypatch):
    data = gzip.compress(b"1 Q0 d1 1 0.5 t\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert read_run("-").to_dict() == {"1": {"d1": 0.5}}


def test_duplicate_beyond_an_arrow_block_is_found_with_its_line(tmp_path, monkeypatch):
    import evalops.formats._table as table

    monkeypatch.setattr(table, "_BLOCK", 1 << 10)  # many small blocks: queries span blocks
    monkeypatch.setattr(table, "SMALL_FILE", 0)
    lines = [f"q{i // 50} Q0 d{i % 50} {i % 50 + 1} {100 - i % 50} run\n" for i in range(2000)]
    lines.insert(1500, "q29 Q0 d3 99 0.5 run\n")  # q29 already ranked d3 (rows 1450..1499)
    path = tmp_path / "dup.run"
    path.write_text("".join(lines))
    with pytest.raises(DuplicateDocumentError) as info:
        read_trec_run(path)
    assert info.value.query_id == "q29" and info.value.doc_id == "d3"
    assert f"{path}:1501" in str(info.value)
    del lines[1500]
    path.write_text("".join(lines))
    assert len(read_trec_run(path)) == 2000


def test_a_truncated_download_says_how_far_it_could_be_read(tmp_path):
    """The first large read fails at once on a truncated stream; the message still says where it breaks."""
    import re

    text = "".join(f"q{i // 100} Q0 d{i} {i % 100 + 1} {1000 - i % 100} run\n" for i in range(200_000)).encode()
    packed = gzip.compress(text)
    path = tmp_path / "run.trec.gz"
    path.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(FormatError, match="damaged or truncated") as info:
        read_trec_run(path)
    shown = int(re.search(r"after ([\d,]+) bytes of output", str(info.value)).group(1).replace(",", ""))
    assert 0 < shown < len(text)
