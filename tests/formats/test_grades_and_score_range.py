"""Grades are integers as written (``1.0`` and ``1e2`` are errors naming the line, on both parsers); a score
beyond the float32 range runs are ranked at is refused with its line, never turned into an infinity."""

from __future__ import annotations

import warnings

import pytest

import evalops.formats._table as table
from evalops.errors import FormatError
from evalops.formats import read_qrels, read_run


@pytest.fixture(params=["exact", "fast"])
def parser(request, monkeypatch):
    if request.param == "fast":
        monkeypatch.setattr(table, "SMALL_FILE", 0)  # small files skip the Arrow path; here it must run
    return request.param


@pytest.mark.parametrize("grade", ["1e2", "1.0", "2.", "1E0", "0x1"])
def test_a_grade_that_is_not_written_as_an_integer_is_refused(tmp_path, parser, grade):
    path = tmp_path / "qrels.txt"
    path.write_text(f"q1 0 d1 1\nq1 0 d2 {grade}\n")
    with pytest.raises(FormatError, match=rf"qrels.txt:2: grade: '{grade}' is not an integer"):
        read_qrels(path)


def test_integer_grades_with_a_sign_or_leading_zeros_are_read(tmp_path, parser):
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 +2\nq1 0 d2 007\nq1 0 d3 -1\n")
    assert read_qrels(path).to_dict() == {"q1": {"d1": 2, "d2": 7, "d3": -1}}


@pytest.mark.parametrize("score", ["1e308", "-1e308", "3.5e38"])
def test_a_score_beyond_float32_is_refused_with_its_line(tmp_path, parser, score):
    path = tmp_path / "run.txt"
    path.write_text(f"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 {score} t\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning on the way either
        with pytest.raises(FormatError, match=r"run.txt:2: score .* is beyond the range scores are ranked at"):
            read_run(path)


def test_the_largest_float32_scores_are_kept(tmp_path, parser):
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 3.4e38 t\nq1 Q0 d2 2 -3.4e38 t\n")
    assert read_run(path).to_dict()["q1"]["d1"] == pytest.approx(3.4e38, rel=1e-6)


@pytest.mark.parametrize("text", ["0x1 q", "q 0x", "q 00X", "q1 0 d 0x1\n"])
def test_the_hexadecimal_prefix_is_found_wherever_it_lies_in_a_segment(text):
    """The forbidden-byte scan looks for the prefix's second byte first: the prefix is found at the start or
    the end of the scanned bytes as in the middle, and not outside them."""
    data = b"#" + text.encode() + b"#"
    pattern = b"0X" if "X" in text else b"0x"
    assert table._holds(data, 1, len(data) - 1, pattern)
    at = data.find(pattern)
    assert not table._holds(data, at + 1, len(data), pattern)
    assert not table._holds(data, 0, at + 1, pattern)
    assert not table._holds(b"x0x", 0, 2, b"0x") and not table._holds(b"00 x", 0, 4, b"0x")
