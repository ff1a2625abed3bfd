"""Loading and saving gold sets in every layout keeps the content (and so the version)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalops.errors import FormatError, InputError
from evalops.goldset import GoldSet, load_gold_set, load_gold_set_trec, save_gold_set, save_gold_set_trec
from evalops.goldset.io import detect_layout


@pytest.mark.parametrize("layout", ["beir", "jsonl", "csv"])
def test_round_trip_keeps_the_version(gold: GoldSet, layout: str, tmp_path: Path) -> None:
    folder = save_gold_set(gold, tmp_path / layout, layout=layout)
    assert detect_layout(folder) == layout
    loaded = load_gold_set(folder)
    assert loaded.version == gold.version
    assert loaded.source == str(folder)
    assert sorted(map(tuple, loaded.queries["tags"])) == sorted(map(tuple, gold.queries["tags"]))


@pytest.mark.parametrize("layout", ["beir", "jsonl", "csv"])
def test_reference_answers_round_trip_in_every_layout(gold: GoldSet, layout: str, tmp_path: Path) -> None:
    q = gold.queries.copy()
    q["reference_answer"] = ["Two nights, \"paid\", 150 | USD."] + [""] * (len(q) - 1)
    with_reference = GoldSet.from_frames(q, gold.judgments)
    assert with_reference.version != gold.version
    loaded = load_gold_set(save_gold_set(with_reference, tmp_path / layout, layout=layout))
    assert loaded.version == with_reference.version
    assert loaded.queries["reference_answer"].tolist() == q["reference_answer"].tolist()


def test_a_reference_answer_that_is_not_text_names_the_file_and_line(tmp_path: Path) -> None:
    folder = tmp_path / "g"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "a", "metadata": {"type": "semantic"}}\n'
                                          '{"_id": "q2", "text": "b", "metadata": {"reference_answer": 7}}\n')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    with pytest.raises(FormatError, match=r"queries.jsonl:2: query .q2.: reference_answer must be a string, got int"):
        load_gold_set(folder)


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_trec_round_trip(gold: GoldSet, suffix: str, tmp_path: Path) -> None:
    save_gold_set_trec(gold, tmp_path / "qrels.txt", tmp_path / f"queries{suffix}")
    assert (tmp_path / "qrels.txt").read_text().splitlines()[0] == "q1 0 d1 2"
    assert load_gold_set_trec(tmp_path / "qrels.txt", tmp_path / f"queries{suffix}").version == gold.version


def test_trec_queries_as_tsv_are_untyped_unless_a_default_type_is_given(tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n2 0 d2 1\n")
    (tmp_path / "topics.tsv").write_text("1\tfirst query\n\n2\tsecond query\n")
    assert set(load_gold_set_trec(tmp_path / "qrels.txt", tmp_path / "topics.tsv").queries["type"]) == {""}
    gold = load_gold_set_trec(tmp_path / "qrels.txt", tmp_path / "topics.tsv", default_type="semantic", default_language="en")
    assert gold.queries["text"].tolist() == ["first query", "second query"]
    assert set(gold.queries["type"]) == {"semantic"} and set(gold.queries["language"]) == {"en"}


def test_saving_queries_as_tsv_is_refused(gold: GoldSet, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot hold type"):
        save_gold_set_trec(gold, tmp_path / "q.txt", tmp_path / "queries.tsv")


def test_beir_query_metadata_and_top_level_fields(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\na\td1\t1\nb\td2\t2\n")
    rows = [{"_id": "a", "text": "x", "metadata": {"type": "keyword", "language": "en", "tags": ["t1"]}},
            {"_id": "b", "text": "y", "type": "semantic", "tags": "t2|t3"}]
    (tmp_path / "queries.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    gold = load_gold_set(tmp_path)
    assert gold.queries["type"].tolist() == ["keyword", "semantic"]
    assert gold.queries["language"].tolist() == ["en", "und"]
    assert [tuple(t) for t in gold.queries["tags"]] == [("t1",), ("t2", "t3")]


def test_a_query_without_a_type_stays_untyped_or_takes_the_default(tmp_path: Path) -> None:
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\na\td1\t1\n")
    (tmp_path / "queries.jsonl").write_text('{"_id": "a", "text": "x", "metadata": {"type": "keyword"}}\n\n{"_id": "b", "text": "y"}\n')
    assert load_gold_set(tmp_path).queries["type"].tolist() == ["keyword", ""]
    assert load_gold_set(tmp_path, default_type="semantic").queries["type"].tolist() == ["keyword", "semantic"]


def test_unknown_default_type_is_refused(tmp_path: Path) -> None:
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\na\td1\t1\n")
    (tmp_path / "queries.jsonl").write_text('{"_id": "a", "text": "x"}\n')
    with pytest.raises(InputError, match="default_type 'easy'"):
        load_gold_set(tmp_path, default_type="easy")


def test_duplicate_trec_judgment_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n1 0 d2 1\n1 0 d1 2\n")
    (tmp_path / "queries.jsonl").write_text('{"_id": "1", "text": "x", "type": "semantic"}\n')
    with pytest.raises(FormatError, match=r"qrels\.txt:3: .*'d1' a second time"):
        load_gold_set_trec(tmp_path / "qrels.txt", tmp_path / "queries.jsonl")


def test_csv_judgment_with_a_bad_grade_names_the_line(gold: GoldSet, tmp_path: Path) -> None:
    folder = save_gold_set(gold, tmp_path / "g", layout="csv")
    lines = (folder / "judgments.csv").read_text().splitlines()
    lines[3] = lines[3].rsplit(",", 1)[0] + ",high"
    (folder / "judgments.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(FormatError, match=r"judgments\.csv:4: grade 'high' is not an integer"):
        load_gold_set(folder)


def test_jsonl_judgments_keep_duplicates_for_the_suite(gold: GoldSet, tmp_path: Path) -> None:
    folder = save_gold_set(gold, tmp_path / "g", layout="jsonl")
    with open(folder / "judgments.jsonl", "a") as fh:
        fh.write('{"query_id": "q1", "doc_id": "d1", "grade": 1}\n')
    assert len(load_gold_set(folder).judgments) == 14


def test_a_folder_without_judgments_is_a_format_error(tmp_path: Path) -> None:
    (tmp_path / "queries.jsonl").write_text("")
    with pytest.raises(FormatError, match="no judgments found"):
        load_gold_set(tmp_path)
    with pytest.raises(FormatError, match="not a directory"):
        load_gold_set(tmp_path / "queries.jsonl")


def test_unknown_layout_is_refused(gold: GoldSet, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown gold-set layout"):
        save_gold_set(gold, tmp_path, layout="xml")


def test_a_gold_set_path_that_does_not_exist_is_said_so(tmp_path):
    with pytest.raises(FormatError, match="nope: no such file or directory; expected a gold-set folder"):
        detect_layout(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(FormatError, match="file: not a directory; expected a gold-set folder"):
        detect_layout(tmp_path / "file")
