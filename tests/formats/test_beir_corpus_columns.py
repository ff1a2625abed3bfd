"""The columnar corpus reader gives exactly the line reader's values, and its errors (file and line) on bad
input; the snapshot built from it has the same ids, hashes and snapshot id."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from evalops.errors import FormatError
from evalops.formats import read_beir_corpus
from evalops.formats.beir import read_beir_corpus_columns
from evalops.knowledge import load_snapshot
from evalops.knowledge.snapshot import KnowledgeBaseSnapshot

GOOD = [
    {"_id": "d1", "title": "T", "text": "plain"},
    {"_id": "d2", "text": "no title, a quote \" and a backslash \\ and a tab\t"},
    {"_id": "d3", "title": None, "text": "é ü 中文 \u0001 control", "metadata": {"x": 1}},
    {"_id": "d\u00e9", "title": "", "text": ""},
]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _exact(path: Path) -> tuple[list[str], list[str], list[str]]:
    frame = read_beir_corpus(path)
    return frame["doc_id"].tolist(), frame["title"].tolist(), frame["text"].tolist()


def test_same_values_as_the_line_reader(tmp_path: Path) -> None:
    path = _write(tmp_path / "corpus.jsonl", [json.dumps(r, ensure_ascii=False) for r in GOOD] + [""])
    assert read_beir_corpus_columns(path) == _exact(path)


def test_numeric_ids_and_compressed_files_take_the_line_reader(tmp_path: Path) -> None:
    path = _write(tmp_path / "corpus.jsonl", ['{"_id": 7, "text": "seven"}', '{"_id": "b", "text": "bee"}'])
    assert read_beir_corpus_columns(path) == (["7", "b"], ["", ""], ["seven", "bee"])
    gz = tmp_path / "corpus.jsonl.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert read_beir_corpus_columns(gz) == (["7", "b"], ["", ""], ["seven", "bee"])


@pytest.mark.parametrize(("lines", "line", "words"), [
    (['{"_id": "a", "text": "x"}', '{"_id": "a", "text": "y"}'], 2, "appears twice"),
    (['{"_id": "a", "text": "x"}', '{"_id": "b"}'], 2, "no 'text'"),
    (['{"_id": "a", "text": "x"}', '{"text": "y"}'], 2, "no '_id'"),
    (['{"_id": "a", "text": "x"}', '{"_id": "b", "text": null}'], 2, "null"),
    (['{"_id": "a", "text": "x"}', '[1, 2]'], 2, "JSON object"),
    (['{"_id": "a", "text": "x"}', '{"_id": "b", "text": '], 2, "invalid JSON"),
])
def test_bad_input_names_the_file_and_line(tmp_path: Path, lines: list[str], line: int, words: str) -> None:
    path = _write(tmp_path / "corpus.jsonl", lines)
    with pytest.raises(FormatError) as err:
        read_beir_corpus_columns(path)
    assert str(path) in str(err.value) and f"{line}" in str(err.value) and words in str(err.value)


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b'{"_id": "a", "text": "x"}\n{"_id": "b", "text": "\xff"}\n')
    with pytest.raises(FormatError) as err:
        read_beir_corpus_columns(path)
    assert "2" in str(err.value)


def test_snapshot_from_columns_equals_the_frame_one(tmp_path: Path) -> None:
    path = _write(tmp_path / "corpus.jsonl", [json.dumps(r, ensure_ascii=False) for r in GOOD])
    fast = load_snapshot(path)
    slow = KnowledgeBaseSnapshot.from_frame(read_beir_corpus(path), source=str(path))
    assert fast.docs.equals(slow.docs)
    from evalops.fingerprint import content_digest

    pairs = sorted(zip(slow.docs["doc_id"].tolist(), slow.docs["content_hash"].tolist()))
    assert fast.snapshot_id == content_digest([list(p) for p in pairs])


def test_a_lone_surrogate_escape_is_refused_with_its_line(tmp_path):
    """``\\ud800`` with no pair is valid JSON but not a character: refused with the file, line and field,
    not a UnicodeEncodeError from the reader's column."""
    from evalops.errors import FormatError
    from evalops.formats.beir import read_beir_corpus_columns

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "a", "title": "", "text": "fine"}\n{"_id": "b", "title": "", "text": "bad \\ud800 x"}\n')
    with pytest.raises(FormatError, match=r"corpus.jsonl:2: 'text' holds a lone surrogate escape"):
        read_beir_corpus_columns(corpus)
