"""The shared output options: every result-printing command takes ``--format table|json|csv|markdown`` and
``-o PATH``; one ``emit`` writes them; read-only commands never create ``.evalops/``."""

from __future__ import annotations

import csv
import io
import json

import click
import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.cli._common import FORMATS, Output, emit, markdown_cell
from evalops.exitcodes import ExitCode

PRINTING = ["evaluate", "compare", "power", "validate", "snapshot", "retrievers", "history", "promote", "run",
            "gate", ("db", "current")]


def _command(path):
    ctx = click.Context(main)
    names = (path,) if isinstance(path, str) else path
    cmd = main.get_command(ctx, names[0])
    for name in names[1:]:
        cmd = cmd.get_command(ctx, name)
    return cmd


@pytest.mark.parametrize("path", PRINTING, ids=str)
def test_every_printing_command_takes_the_four_formats_and_o(path):
    params = {p.name: p for p in _command(path).params}
    assert tuple(params["fmt"].type.choices) == FORMATS and params["fmt"].opts == ["--format"]
    assert sorted(params["output_path"].opts) == ["--output", "-o"]


def test_report_takes_markdown_json_and_o():
    params = {p.name: p for p in _command("report").params}
    assert tuple(params["fmt"].type.choices) == ("markdown", "json") and "-o" in params["output_path"].opts


OUT = Output(data={"rows": [{"name": "a|b", "value": 0.5}]}, columns=("name", "value"),
             rows=[{"name": "a|b", "value": 0.5}, {"name": "<i>x</i>\nnext", "value": float("nan")}],
             title="t", notes=["a note"])


def _emitted(fmt, tmp_path=None):
    path = None if tmp_path is None else tmp_path / "sub" / f"out.{fmt}"

    @click.command()
    def cmd():
        emit(OUT, fmt, path)

    result = CliRunner().invoke(cmd, [])
    assert result.exit_code == 0, result.output
    return result.output if path is None else (result.output, path.read_text())


def test_csv_json_markdown_and_table():
    rows = list(csv.reader(io.StringIO(_emitted("csv"))))
    assert rows == [["name", "value"], ["a|b", "0.5"], ["<i>x</i>\nnext", ""]]
    assert json.loads(_emitted("json")) == OUT.data
    md = _emitted("markdown").splitlines()
    assert md[:5] == ["**t**", "", "| name | value |", "|---|---|", r"| a\|b | 0.5000 |"]
    assert md[5] == "| &lt;i>x&lt;/i> next |  |" and md[-1] == "- a note"
    table = _emitted("table")
    assert "a|b" in table and "0.5000" in table and "a note" in table


def test_o_writes_the_file_and_nothing_to_stdout(tmp_path):
    for fmt in FORMATS:
        stdout, text = _emitted(fmt, tmp_path)
        assert stdout == "" and "a|b" in text.replace("\\|", "|")
    assert "\x1b[" not in _emitted("table", tmp_path)[1]  # plain text in a file, no colour codes


def test_markdown_cell_escapes_table_syntax_html_links_and_images():
    assert markdown_cell("a|b\n<script>`x`") == r"a\|b &lt;script>\`x\`"
    assert markdown_cell("![x](http://evil/p.png) [y](http://evil) *z*") == (
        r"\!\[x\](http://evil/p.png) \[y\](http://evil) \*z\*")


def test_evaluate_in_every_format_to_a_file(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq2 0 c 1\n")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 a 1 2.0 t\nq2 Q0 z 1 1.0 t\n")
    runner = CliRunner()
    for fmt in FORMATS:
        out = tmp_path / f"eval.{fmt}"
        result = runner.invoke(main, ["evaluate", str(qrels), str(run), "-m", "P@1", "--format", fmt, "-o", str(out)])
        assert result.exit_code == 0 and result.stdout == "", result.output
        text = out.read_text()
        assert "P@1" in text and "0.5" in text, (fmt, text)
    assert json.loads((tmp_path / "eval.json").read_text())["measures"]["P@1"]["mean"] == 0.5
    assert (tmp_path / "eval.markdown").read_text().startswith("**t vs ")  # the run tag


@pytest.mark.parametrize("args", [["history"], ["history", "bm25", "-m", "nDCG@10"], ["report"],
                                  ["report", "--format", "json"]])
def test_read_only_commands_never_create_the_evalops_folder(tmp_path, monkeypatch, args):
    (tmp_path / "evalops.yaml").write_text("gold_set: {path: goldset}\n")  # a new project, never run
    monkeypatch.chdir(tmp_path)
    env = {k: None for k in ("EVALOPS_WAREHOUSE_URL", "EVALOPS_HOME", "EVALOPS_CONFIG", "EVALOPS_REPORT_DIR",
                             "AIRFLOW_CONN_EVALOPS_WAREHOUSE")}
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert "nothing has been recorded" in result.output or "no report yet" in result.output
    assert [p.name for p in tmp_path.iterdir()] == ["evalops.yaml"]


def _reference_json(payload):
    """What the JSON output has always been: the standard library's indent=2 layout, NaN/inf as null."""
    from evalops.cli._common import json_default

    def clean(value):
        if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
            return None
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return json.dumps(clean(json.loads(json.dumps(payload, default=json_default))), indent=2, allow_nan=False)


def test_json_output_is_laid_out_like_the_standard_library_indent():
    import numpy as np

    from evalops.cli._common import dump_json

    payload = {
        "measures": {"nDCG@10": {"n": np.int64(3), "mean": 0.5, "std": float("nan"), "ci_low": float("inf")}},
        "per_query": {"q\u00e9 \"1\"": {"RR": 1.0, "P@5": np.float32(0.25)}, "q2": {}, "q3": {"RR": -0.0}},
        "policies": {"no_answer_queries": {"RR": []}, "ids": ("a", "b\n"), "nested": [[1, [2, {}]], {"x": None}],
                     "flags": [True, False, None], "big": 12345678901234567890, "tiny": 1e-7, "array": np.arange(3)},
        "": "",
    }
    for value in (payload, [], {}, [float("-inf"), 1], "text", 1.5, None):
        assert dump_json(value) == _reference_json(value)


TABLES = [
    Output(data=None, columns=("a", "bb", "ccc", "d"), rows=[{"a": 1, "bb": "x", "ccc": 0.5, "d": None},
                                                             {"a": 12345, "bb": "long text here", "ccc": None, "d": "q"}]),
    Output(data=None, columns=("alpha_long", "flag", "p"), rows=[{"alpha_long": 1, "flag": True, "p": 0.00001},
                                                                 {"alpha_long": -3, "flag": False, "p": float("nan")}]),
    Output(data=None, columns=("x", "y"), rows=[{"x": "", "y": 2}], table_columns=("y", "x")),
    Output(data=None, columns=("when", "n"), rows=[{"when": f"2025-01-{d:02d} 00:00", "n": d * 1000} for d in range(1, 29)],
           notes=("a note after the table",), cell=lambda c, v: f"<{v}>" if c == "n" else str(v)),
    Output(data=None, columns=("text",), rows=[{"text": "naïve café"}, {"text": "wide 表"}]),  # drawn by rich
    Output(data=None, columns=("c",), rows=[{"c": "x" * 300}]),  # wider than the console: rich wraps it
]


@pytest.mark.parametrize("output", TABLES)
def test_the_plain_table_is_drawn_as_rich_draws_it(output, monkeypatch):
    """Large tables skip rich's per-cell rendering; what is printed is the same."""
    from evalops.cli import _common

    fast = _common._table(output, to_file=True)
    monkeypatch.setattr(_common, "plain_table_lines", lambda *args: None)
    assert fast == _common._table(output, to_file=True)
