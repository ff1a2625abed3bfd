"""Every CSV evalops writes for people neutralises formulas (OWASP CSV injection): a text cell starting with
``= + - @``, a tab or a carriage return gets a leading ``'``; numbers, and numbers written as text, stay."""

from __future__ import annotations

import csv
import io

import click
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from evalops.cli import main
from evalops.cli._common import Output, emit
from evalops.safetext import csv_cell

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
