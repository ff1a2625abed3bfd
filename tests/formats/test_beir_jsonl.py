"""BEIR folders, BEIR qrels TSVs, JSONL, and format autodetection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalops.errors import FormatError
from evalops.formats import (
    load_beir,
    read_beir_corpus,
    read_beir_queries,
    read_jsonl,
    read_qrels,
    write_beir_corpus,
    write_beir_qrels,
    write_beir_queries,
)


def make_beir(folder: Path, qrels_in_subdir: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text(
        "\n".join(json.dumps(d) for d in [{"_id": "d1", "title": "T", "text": "x"}, {"_id": "d2", "text": "y"}]) + "\n"
    )
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "what"}) + "\n")
    qrels = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n"
    if qrels_in_subdir:
        (folder / "qrels").mkdir(exist_ok=True)
        (folder / "qrels" / "test.tsv").write_text(qrels)
    else:
        (folder / "qrels.tsv").write_text(qrels)
    return folder


@pytest.mark.parametrize("subdir", [True, False])
def test_load_beir_folder(tmp_path, subdir):
    ds = load_beir(make_beir(tmp_path / "b", subdir))
    assert list(ds.corpus["doc_id"]) == ["d1", "d2"]
    assert list(ds.corpus["title"]) == ["T", ""]
    assert ds.queries == {"q1": "what"}
    assert ds.qrels.to_dict() == {"q1": {"d1": 1, "d2": 0}}


def test_read_qrels_autodetects_all_three_shapes(tmp_path):
    folder = make_beir(tmp_path / "b")
    trec = tmp_path / "q.trec"
    trec.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    expected = {"q1": {"d1": 1, "d2": 0}}
    assert read_qrels(folder).to_dict() == expected
    assert read_qrels(folder / "qrels" / "test.tsv").to_dict() == expected
    assert read_qrels(trec).to_dict() == expected


def test_beir_qrels_without_header(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_text("q1\td1\t2\n")
    assert read_qrels(p).to_dict() == {"q1": {"d1": 2}}


def test_beir_qrels_bad_grade_names_line(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\tyes\n")
    with pytest.raises(FormatError) as info:
        read_qrels(p)
    assert f"{p}:3:" in str(info.value) and "'yes' is not an integer" in str(info.value)


def test_beir_qrels_wrong_column_count_names_line(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\t7\n")
    with pytest.raises(FormatError) as info:
        read_qrels(p)
    assert f"{p}:2:" in str(info.value) and "expected 3 columns" in str(info.value)


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ('{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": "b"\n', 2, "invalid JSON"),
        ('{"_id": "d1", "text": "a"}\n[1, 2]\n', 2, "expected a JSON object"),
        ('{"_id": "d1", "text": "a"}\n\n{"text": "b"}\n', 3, "no '_id' field"),
        ('{"_id": "d1", "text": "a"}\n{"_id": "d1", "text": "b"}\n', 2, "appears twice (first on line 1)"),
        ('{"_id": "d1"}\n', 1, "no 'text' field"),
    ],
)
def test_malformed_corpus_names_file_and_line(tmp_path, text, line, fragment):
    p = tmp_path / "corpus.jsonl"
    p.write_text(text)
    with pytest.raises(FormatError) as info:
        read_beir_corpus(p)
    assert f"{p}:{line}:" in str(info.value)
    assert fragment in str(info.value)


def test_duplicate_query_id_is_an_error(tmp_path):
    p = tmp_path / "queries.jsonl"
    p.write_text('{"_id": "q", "text": "a"}\n{"_id": "q", "text": "b"}\n')
    with pytest.raises(FormatError, match=r":2: query id 'q' appears twice"):
        read_beir_queries(p)


def test_jsonl_yields_line_numbers(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"a": 1}\n\n{"a": 2}\n')
    assert list(read_jsonl(p)) == [(1, {"a": 1}), (3, {"a": 2})]


def test_beir_round_trip(tmp_path):
    ds = load_beir(make_beir(tmp_path / "src"))
    out = tmp_path / "out"
    out.mkdir()
    write_beir_corpus(ds.corpus, out / "corpus.jsonl")
    write_beir_queries(ds.queries, out / "queries.jsonl")
    write_beir_qrels(ds.qrels, out / "qrels.tsv")
    back = load_beir(out)
    assert back.corpus.equals(ds.corpus)
    assert back.queries == ds.queries
    assert back.qrels.to_dict() == ds.qrels.to_dict()


def test_real_collections_load(shared_data):
    sf = load_beir(shared_data / "scifact")
    assert len(sf.corpus) == 5183 and len(sf.queries) == 300 and len(sf.qrels) == 339
    nf = load_beir(shared_data / "nfcorpus-orig-test")
    assert len(nf.qrels) == 12334
    assert set(nf.qrels.grades.tolist()) == {1, 2}
