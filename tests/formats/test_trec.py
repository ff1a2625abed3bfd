"""TREC qrels and run files: reading, writing, and line-numbered errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evalops.data import Run
from evalops.errors import DuplicateDocumentError, FormatError
from evalops.formats import read_qrels, read_run, read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_reads_qrels_and_run(tmp_path):
    q = read_trec_qrels(write(tmp_path, "q.txt", "1 0 d1 2\n1 0 d2 0\n\n2 0 d9 -1\n"))
    assert q.to_dict() == {"1": {"d1": 2, "d2": 0}, "2": {"d9": -1}}
    r = read_trec_run(write(tmp_path, "r.txt", "1 Q0 d1 1 3.5 tagA\n1 Q0 d2 2 1e-3 tagA\n2 Q0 d9 1 -2 tagA\n"))
    assert r.name == "tagA"
    assert r.to_dict() == {"1": {"d1": 3.5, "d2": 0.001}, "2": {"d9": -2.0}}


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("1 0 d1 1\n1 0 d2\n", 2, "expected 4 columns"),
        ("1 0 d1 1\n\n1 0 d2 x\n", 3, "grade: 'x' is not an integer"),
        ("1 0 d1 1\n1 0 d2 1.5\n", 2, "'1.5' is not an integer"),
        ("1 0 d1 1 extra\n", 1, "found 5"),
        ("1 0 d1 1\n2 0 d1 1\n1 0 d1 0\n", 3, "judges document 'd1' a second time"),
    ],
)
def test_malformed_qrels_name_file_and_line(tmp_path, text, line, fragment):
    p = write(tmp_path, "bad.qrels", text)
    with pytest.raises(FormatError) as info:
        read_trec_qrels(p)
    assert f"{p}:{line}:" in str(info.value)
    assert fragment in str(info.value)
    assert info.value.line == line


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("1 Q0 d1 1 0.5 t\n1 Q0 d2 2 0.4\n", 2, "expected 6 or more columns"),
        ("1 Q0 d1 1 0.5 t\n1 Q0 d2 2 high t\n", 2, "score: 'high' is not a number"),
        ("1 Q0 d1 1 nan t\n", 1, "'nan' is not a number"),
        ("1 Q0 d1 1 inf t\n", 1, "'inf' is not a number"),
        ("1 Q0 d1 1 0.5 t\n1 Q0 d2 2 1e400 t\n", 2, "'1e400' is not a finite number"),
        ("1 Q0 d1 1 0.5 t\n1\tQ0 d2 2 0.4\n", 2, "expected 6 or more columns"),
    ],
)
def test_malformed_run_names_file_and_line(tmp_path, text, line, fragment):
    p = write(tmp_path, "bad.run", text)
    with pytest.raises(FormatError) as info:
        read_trec_run(p)
    assert f"{p}:{line}:" in str(info.value)
    assert fragment in str(info.value)


def test_duplicate_document_in_run_names_query_document_and_line(tmp_path):
    p = write(tmp_path, "dup.run", "1 Q0 d1 1 0.5 t\n1 Q0 d2 2 0.4 t\n2 Q0 d2 1 0.9 t\n1 Q0 d1 3 0.1 t\n")
    with pytest.raises(DuplicateDocumentError) as info:
        read_trec_run(p)
    assert info.value.query_id == "1" and info.value.doc_id == "d1"
    assert f"{p}:4" in str(info.value)


def test_missing_file_is_a_format_error(tmp_path):
    with pytest.raises(FormatError, match="file not found"):
        read_run(tmp_path / "nope.trec")


def test_empty_run_file_is_an_error_unless_allowed(tmp_path):
    p = write(tmp_path, "empty.run", "\n\n")
    with pytest.raises(FormatError, match="the run is empty.*--allow-empty"):
        read_trec_run(p)
    r = read_trec_run(p, allow_empty=True)
    assert len(r) == 0 and r.name == "empty"


def test_run_accepts_what_trec_eval_accepts(tmp_path):
    """trec_eval ignores the rank field and any fields after the run tag."""
    p = write(tmp_path, "r.run", "1 Q0 d1 x 3.5 tagA extra more\n1 Q0 d2 - 1.0 tagA\n2 Q0 d9 1.0 -2 tagA 7\n")
    r = read_trec_run(p)
    assert r.name == "tagA"
    assert r.to_dict() == {"1": {"d1": 3.5, "d2": 1.0}, "2": {"d9": -2.0}}


def test_qrels_with_three_columns(tmp_path):
    q = read_trec_qrels(write(tmp_path, "q3.txt", "1 d1 2\n1 d2 0\n2 d9 1\n"))
    assert q.to_dict() == {"1": {"d1": 2, "d2": 0}, "2": {"d9": 1}}
    with pytest.raises(FormatError, match="expected 3 columns like the first line") as info:
        read_trec_qrels(write(tmp_path, "mixed.txt", "1 d1 2\n1 0 d2 0\n"))
    assert info.value.line == 2


def test_qrels_round_trip(tmp_path):
    q = read_trec_qrels(write(tmp_path, "q.txt", "b 0 d2 1\na 0 d1 2\na 0 d3 0\n"))
    out = tmp_path / "out.qrels"
    write_trec_qrels(q, out)
    assert read_qrels(out).to_dict() == q.to_dict()


def test_run_writer_ranks_by_score_then_docid_descending(tmp_path):
    run = Run.from_dict({"q": {"a": 1.0, "b": 2.0, "c": 1.0}})
    out = tmp_path / "out.run"
    write_trec_run(run, out, tag="x")
    lines = [line.split() for line in out.read_text().splitlines()]
    assert [(cols[2], cols[3]) for cols in lines] == [("b", "1"), ("c", "2"), ("a", "3")]
    assert read_trec_run(out).to_dict() == run.to_dict()


def test_run_writer_keeps_order_of_unscored_queries(tmp_path):
    run = Run.from_ranked({"q": ["z", "a", "m"]})
    out = tmp_path / "out.run"
    write_trec_run(run, out)
    back = read_trec_run(out)
    ranked = sorted(back.to_dict()["q"].items(), key=lambda kv: -kv[1])
    assert [d for d, _ in ranked] == ["z", "a", "m"]


def test_real_scifact_run_reads_whole(shared_data):
    run = read_run(shared_data / "scifact" / "runs" / "bm25.trec")
    assert len(run) == 29966
    assert run.name == "bm25s-k1_0.9-b_0.4"
    assert np.all(np.isfinite(run.scores))


def test_run_writer_ties_scores_equal_at_float32_like_trec_eval(tmp_path):
    # 1.00000001 and 1.0 are the same C float, so trec_eval ties them and breaks by doc id descending.
    run = Run.from_dict({"q": {"a": 1.00000001, "b": 1.0}})
    out = tmp_path / "out.run"
    write_trec_run(run, out)
    assert [line.split()[2] for line in out.read_text().splitlines()] == ["b", "a"]


def test_qrels_frame_may_name_the_grade_column_relevance():
    import pandas as pd

    from evalops.metrics import evaluate

    frame = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["d1", "d2"], "relevance": [1, 0]})
    result = evaluate(frame, {"1": {"d2": 2.0, "d1": 1.0}}, ["P@1", "RR"])
    assert result.aggregates["P@1"].mean == 0.0 and result.aggregates["RR"].mean == 0.5


def test_standard_input_is_read_once(tmp_path, monkeypatch):
    import io
    import sys

    data = b"1 Q0 d1 1 0.5 t\n1 Q0 d2 2 0.4 t\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    r = read_run("-")
    assert r.to_dict() == {"1": {"d1": 0.5, "d2": 0.4}} and r.source == "<stdin>"
