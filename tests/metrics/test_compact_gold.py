"""``CompactGold`` (the judgments ``evalops evaluate`` reads: ids in Arrow arrays) scores exactly as ``Gold``
from ``read_qrels``: per-query values equal on real qrels and on the edge cases (repeated judgments are
refused naming the line, negative grades, judged queries missing from the run, run queries without
judgments), read in memory and streamed by query blocks."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from evalops.errors import FormatError
from evalops.formats import read_gold, read_qrels, read_run_table
import evalops.formats.stream as stream
from evalops.formats.stream import evaluate_run_file
from evalops.metrics import evaluate
from evalops.metrics.gold import CompactGold, Gold

MEASURES = ["nDCG@10", "AP", "P@5", "RR", "R-Prec", "Recall@100", "nDCG(gain=exp)@10", "P(rel=2)@5",
            "Judged@10", "Bpref", "nDCG(judged_only=True)@10", "NumRet", "NumRelRet"]


def assert_same(new, old) -> None:
    assert new.query_ids.tolist() == old.query_ids.tolist()
    assert list(new.per_query) == list(old.per_query)
    for name, values in old.per_query.items():
        np.testing.assert_array_equal(new.per_query[name], values, err_msg=name)  # exact, NaN in the same places
    assert new.no_answer_ids == old.no_answer_ids
    assert new.missing_from_run_ids == old.missing_from_run_ids
    assert new.ignored_run_query_ids == old.ignored_run_query_ids


def measures_known() -> list[str]:
    from evalops.metrics import parse_measures

    known = []
    for m in MEASURES:
        try:
            parse_measures([m])
        except Exception:
            continue
        known.append(m)
    return known


@pytest.mark.parametrize("collection, run_file", [("scifact", "bm25.trec"),
                                                  ("scifact", "itsumida-te3large-zerank1-top15.trec"),
                                                  ("nfcorpus-orig-test", "bm25.trec")])
def test_real_qrels_score_as_before(shared_data: Path, collection: str, run_file: str, monkeypatch) -> None:
    folder = shared_data / collection
    gold = read_gold(folder)
    assert isinstance(gold, CompactGold)
    old_gold = Gold.from_qrels(read_qrels(folder))
    assert gold.query_ids.tolist() == old_gold.query_ids.tolist()
    np.testing.assert_array_equal(gold.qidx, old_gold.qidx)  # (held as int32 when they fit)
    np.testing.assert_array_equal(gold.grades, old_gold.grades)
    assert gold.doc_ids.tolist() == old_gold.doc_ids.tolist()
    run = folder / "runs" / run_file
    table = read_run_table(run)
    measures = measures_known()
    old = evaluate(read_qrels(folder), table, measures)
    assert_same(evaluate(gold, table, measures), old)
    # streamed by query blocks (small ones: 16 MB): the same values
    monkeypatch.setattr(stream, "STREAM_ABOVE", 0)
    notices: list[str] = []
    assert_same(evaluate_run_file(read_gold(folder), run, measures, memory_budget=16 << 20,
                                  notice=notices.append), old)
    assert any("streamed in one pass" in n for n in notices)


EDGE_QRELS = """\
q1 0 d1 1
q1 0 d2 2
q1 0 d3 0
q1 0 d4 -1
q2 0 d1 -2
q2 0 d9 0
q3 0 d5 3
q3 0 d6 1
qé 0 d1 1
qé 0 dü 2
q10 0 d2 1
q4 0 d7 1
"""
EDGE_RUN = """\
q1 Q0 d4 1 3.0 r
q1 Q0 d2 2 2.0 r
q1 Q0 d1 3 2.0 r
q1 Q0 d8 4 1.0 r
q2 Q0 d1 1 1.5 r
q2 Q0 d9 2 1.5 r
qé Q0 dü 1 0.5 r
qé Q0 d1 2 0.5 r
qé Q0 d3 3 0.5 r
qx Q0 d1 1 9.0 r
qy Q0 d7 1 9.0 r
q10 Q0 d2 1 1.0 r
q10 Q0 d1 2 1.0 r
"""


@pytest.mark.parametrize("compress", [False, True])
def test_edge_cases_score_as_before(tmp_path: Path, compress: bool, monkeypatch) -> None:
    """Negative grades, grade 0, ties, non-ASCII ids, q3 and q4 judged but missing from the run, qx and qy
    retrieved but not judged (qy retrieves a document judged for another query)."""
    qrels = tmp_path / ("qrels.txt.gz" if compress else "qrels.txt")
    run = tmp_path / "run.txt"
    (gzip.open(qrels, "wt", encoding="utf-8") if compress else open(qrels, "w", encoding="utf-8")).write(EDGE_QRELS)
    run.write_text(EDGE_RUN, encoding="utf-8")
    measures = measures_known()
    monkeypatch.setattr(stream, "STREAM_ABOVE", 0)  # evaluate_run_file streams (a one-query block at a time)
    for no_answer in ("exclude", "zero"):
        from evalops.metrics import Policy

        policy = Policy(no_answer=no_answer)
        old = evaluate(read_qrels(qrels), read_run_table(run), measures, policy)
        assert_same(evaluate(read_gold(qrels), read_run_table(run), measures, policy), old)
        assert_same(evaluate_run_file(read_gold(qrels), run, measures, policy, memory_budget=16 << 20), old)
    assert set(old.missing_from_run_ids) == {"q3", "q4"}
    assert set(old.ignored_run_query_ids) == {"qx", "qy"}


def test_gold_lookup_is_exact() -> None:
    """Positions come from hashes confirmed by the strings: absent ids (and the empty id) are -1."""
    import pyarrow as pa

    ids = sorted(f"q{i}" for i in range(1000))
    gold = CompactGold(pa.array(ids), np.arange(1000, dtype=np.int32), pa.array([f"d{i}" for i in range(1000)]),
                       np.ones(1000, dtype=np.int64))
    asked = np.array(["q5", "nope", "", "q999", "q5\x00", ids[0]], dtype=object)
    assert gold.positions(asked).tolist() == [ids.index("q5"), -1, -1, ids.index("q999"), -1, 0]


@pytest.mark.parametrize("text, line", [("q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 0\n", 3), ("q1 0 d1 1\nq1 0 d1 x\n", 2)])
def test_bad_qrels_name_file_and_line(tmp_path: Path, text: str, line: int) -> None:
    path = tmp_path / "bad.qrels"
    path.write_text(text)
    with pytest.raises(FormatError) as caught:
        read_gold(path)
    assert "bad.qrels" in str(caught.value) and str(line) in str(caught.value)


def test_short_ascii_query_ids_are_held_fixed_width_with_the_same_values() -> None:
    import pyarrow as pa

    from evalops.metrics.gold import _fixed_width_ids

    ids = ["", "a", "q12", "x" * 16, "b c"]
    fixed = _fixed_width_ids(pa.array(ids))
    assert fixed is not None and fixed.tolist() == ids and fixed[2] == "q12"
    sliced = pa.array(["zz", *ids]).slice(1)
    assert _fixed_width_ids(sliced).tolist() == ids
    for unfit in (["é"], ["a\x00"], ["y" * 17]):
        assert _fixed_width_ids(pa.array(unfit)) is None


def test_judgments_read_in_columns_keep_plain_doc_ids_and_name_a_repeat(tmp_path: Path, monkeypatch) -> None:
    """A qrels file over the small-file size is read in columns with its doc ids plain strings (one per
    judgment): the same judgments as ``read_qrels``, and a judgment repeated in a later segment, with a
    document judged for other queries in between, is refused naming its line."""
    from evalops.formats import _table

    _table.load_arrow_readers()
    monkeypatch.setattr(_table, "SEGMENT", 1 << 16)  # several segments, so that the repeat is in a later one
    lines = [f"q{q} 0 d{(q * 7 + j) % 500} {j % 3}\n" for q in range(4000) for j in range(4)]
    path = tmp_path / "qrels.txt"
    path.write_text("".join(lines))
    assert path.stat().st_size > 2 * _table.SMALL_FILE_ARROW_LOADED
    gold, old = read_gold(path), Gold.from_qrels(read_qrels(path))
    assert gold.doc_codes is not None and len(gold.doc_arrow) == len(lines)  # one doc id per judgment
    assert gold.query_ids.tolist() == old.query_ids.tolist()
    np.testing.assert_array_equal(gold.qidx, old.qidx)
    assert gold.doc_ids.tolist() == old.doc_ids.tolist()
    repeated = tmp_path / "repeated.txt"
    repeated.write_text("".join(lines) + "q3 0 d23 1\n")  # q3 judges d23 at line 15 already
    assert "q3 0 d23 " in lines[14]
    with pytest.raises(FormatError, match=rf"repeated\.txt:{len(lines) + 1}: query 'q3' judges document 'd23' a"):
        read_gold(repeated)
