"""Every CSV evalops writes for people neutralises formulas (OWASP CSV injection): a text cell starting with
``= + - @``, a tab or a carriage return gets a leading ``'``; numbers, and numbers written as text, stay."""

from __future__ import annotations

import csv
import io

import click
import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st

from evalops.cli import main
from evalops.cli._common import Output, emit
from evalops.util.safetext import csv_cell

PAYLOADS = ["=1+1", "=HYPERLINK(\"http://evil\",\"x\")", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A2)", "\t=1", "\r=1",
            "'=1", "-", "-inf"]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_formula_start_gets_a_quote(payload: str) -> None:
    assert csv_cell(payload) == "'" + payload


@pytest.mark.parametrize("text", ["-0.25", "+1", "-1e-3", ".5", "12", "refund time", "'quoted", "a=b", ""])
def test_numbers_and_plain_text_stay(text: str) -> None:
    assert csv_cell(text) == text


def _restore(cell: str) -> str:
    """The inverse the docstring of csv_cell states."""
    return cell[1:] if cell.startswith("'") and csv_cell(cell[1:]) != cell[1:] else cell


@given(st.text(alphabet="'=+-@\t\r0123456789.eE ax", max_size=8))
def test_the_quote_is_reversible_and_nothing_starts_a_formula(text: str) -> None:
    cell = csv_cell(text)
    assert _restore(cell) == text
    assert cell[:1] not in ("=", "+", "-", "@", "\t", "\r") or cell == text and text.lstrip("+-")[:1] in "0123456789."


def test_cli_csv_quotes_text_cells_and_keeps_numbers() -> None:
    out = Output(data={}, columns=("query_id", "delta", "shown", "n"),
                 rows=[{"query_id": "=1+1", "delta": -0.25, "shown": "-0.2500", "n": -3},
                       {"query_id": "@x", "delta": 0.5, "shown": "-2+3", "n": 1}])

    @click.command()
    def cmd() -> None:
        emit(out, "csv", None)

    rows = list(csv.reader(io.StringIO(CliRunner().invoke(cmd, []).output)))
    assert rows[1] == ["'=1+1", "-0.25", "-0.2500", "-3"]
    assert rows[2] == ["'@x", "0.5", "'-2+3", "1"]


def test_evaluate_per_query_csv(tmp_path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("=cmd|'/c.calc'!A0 0 a 1\n-0.25 0 b 1\n", encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text("=cmd|'/c.calc'!A0 Q0 a 1 2.0 t\n-0.25 Q0 c 1 1.0 t\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["evaluate", str(qrels), str(run), "-m", "RR", "--per-query", "--format", "csv"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert {r["query_id"]: r["value"] for r in rows} == {"'=cmd|'/c.calc'!A0": "1.0", "-0.25": "0.0"}


def test_retrievers_csv(tmp_path) -> None:
    reg = tmp_path / "mine.yaml"
    reg.write_text("retrievers:\n  - {name: r, version: '1', adapter: builtin, deployed: true, owner: '=evil()', "
                   "params: {kind: bm25}}\n")
    res = CliRunner().invoke(main, ["retrievers", "--registry", str(reg), "--format", "csv"])
    assert res.exit_code == 0, res.output
    row = next(r for r in csv.DictReader(io.StringIO(res.stdout)) if r["name"] == "r")
    assert row["owner"] == "'=evil()"


# -- every CSV writer goes through safetext.csv_text -------------------------------------------------------

HOSTILE_IDS = ['=HYPERLINK("http://evil","x")', "+cmd|'/Ccalc'!A0", "@SUM(1)", "-1+cmd|'/Ccalc'!A0", "'=1"]
HOSTILE_TEXTS = ["=1+1", "\t=1+1", "\r=1+1", "-2+3", "@x", "'@y"]


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def _no_formula(rows: list[list[str]]) -> None:
    from evalops.util.safetext import _NUMBER

    bad = [c for row in rows for c in row if c[:1] in ("=", "+", "-", "@", "\t", "\r") and not _NUMBER.fullmatch(c)]
    assert bad == []


def test_csv_text_quotes_every_text_cell_and_keeps_numbers_and_none() -> None:
    from evalops.util.safetext import csv_text

    out = csv_text(["id", "value", "note"], [["=1", -0.5, None], ["-0.25", 3, "@x"]])
    assert _cells(out) == [["id", "value", "note"], ["'=1", "-0.5", ""], ["-0.25", "3", "'@x"]]
    # a carriage return would end the row unquoted, and its rest start a row of its own: written as a line feed
    assert _cells(csv_text(None, [["a\r=1+1", "\r@x"]])) == [["a\n=1+1", "'\n@x"]]


@given(st.text(alphabet="'=+-@\t\r0123456789.eE ax", max_size=8))
def test_csv_uncell_inverts_csv_cell(text: str) -> None:
    from evalops.util.safetext import csv_uncell

    assert csv_uncell(csv_cell(text)) == text


def _hostile_gold():
    from evalops.goldset import GoldSet

    queries = [{"query_id": q, "text": HOSTILE_TEXTS[i % len(HOSTILE_TEXTS)], "type": "", "tags": ["=t"]}
               for i, q in enumerate(HOSTILE_IDS)]
    return GoldSet.from_records(queries, [(q, f"=d{i}", 1) for i, q in enumerate(HOSTILE_IDS)])


def test_gold_set_csv_layout_is_neutralised_and_reads_back_unchanged(tmp_path) -> None:
    from evalops.goldset import load_gold_set, save_gold_set

    gold = _hostile_gold()
    save_gold_set(gold, tmp_path / "g", layout="csv")
    queries = _cells((tmp_path / "g" / "queries.csv").read_text(encoding="utf-8"))
    judgments = _cells((tmp_path / "g" / "judgments.csv").read_text(encoding="utf-8"))
    _no_formula(queries)
    _no_formula(judgments)
    assert [r[0] for r in queries[1:]] == ["'" + q for q in HOSTILE_IDS]
    assert judgments[1] == ["'" + HOSTILE_IDS[0], "'=d0", "1"]
    back = load_gold_set(tmp_path / "g")
    assert sorted(back.queries["query_id"]) == sorted(HOSTILE_IDS)
    # the same texts, a carriage return written as a line feed (safetext.csv_text)
    assert dict(zip(back.queries["query_id"], back.queries["text"], strict=False)) == {
        q: t.replace("\r", "\n") for q, t in zip(gold.queries["query_id"], gold.queries["text"], strict=False)}
    assert sorted(back.judgments["doc_id"]) == sorted(gold.judgments["doc_id"])


def test_gold_set_trec_queries_csv_is_neutralised(tmp_path) -> None:
    from evalops.goldset import save_gold_set_trec

    save_gold_set_trec(_hostile_gold(), tmp_path / "q.qrels", tmp_path / "queries.csv")
    rows = _cells((tmp_path / "queries.csv").read_text(encoding="utf-8"))
    _no_formula(rows)
    assert {r[1] for r in rows[1:]} == {"'" + t.replace("\r", "\n") for t in HOSTILE_TEXTS[:5]}


def test_merge_appends_neutralised_csv_lines() -> None:
    from evalops.annotation.merge import _lines

    rows = [{"query_id": q, "doc_id": "@d", "grade": 2} for q in HOSTILE_IDS]
    out = _lines(rows, "csv")
    _no_formula(_cells(out))
    assert _cells(out)[0] == ["'" + HOSTILE_IDS[0], "'@d", "2"]


def test_annotation_queue_csv_goes_through_csv_text(tmp_path) -> None:
    import pandas as pd

    from evalops.querylog import write_annotation_queue

    queue = pd.DataFrame({"query_id": HOSTILE_IDS, "text": HOSTILE_TEXTS[:5], "segment": ["=seg"] * 5,
                          "occurrences": [-1, 2, 3, 4, 5]})
    write_annotation_queue(queue, tmp_path / "q.csv")
    rows = _cells((tmp_path / "q.csv").read_text(encoding="utf-8"))
    _no_formula(rows)
    assert rows[1] == ["'" + HOSTILE_IDS[0], "'=1+1", "'=seg", "-1"]
