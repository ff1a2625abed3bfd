"""``evalops evaluate``: output formats, clean errors, progress only on a terminal."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode
from evalops.formats import read_qrels, read_run
from evalops.metrics import Policy, evaluate


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def small(tmp_path):
    qrels = write(tmp_path, "qrels.txt", "q1 0 a 1\nq1 0 b 2\nq2 0 c 1\nq3 0 x 0\n")
    run = write(tmp_path, "run.trec", "q1 Q0 a 1 2.0 t\nq1 Q0 z 2 1.0 t\nq3 Q0 x 1 1.0 t\nq9 Q0 a 1 1.0 t\n")
    return str(qrels), str(run)


def invoke(*args: str):
    return CliRunner().invoke(main, ["evaluate", *args], catch_exceptions=False)


def test_json_output_equals_the_library_result(shared_data):
    qrels = shared_data / "scifact" / "qrels.tsv"
    run = shared_data / "scifact" / "runs" / "bm25.trec"
    out = invoke(str(qrels), str(run), "-m", "nDCG@10", "-m", "MRR", "--format", "json", "--per-query")
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    expected = evaluate(read_qrels(qrels), read_run(run), ["nDCG@10", "RR"]).to_json(per_query=True)
    assert payload == expected
    assert list(payload) == ["measures", "per_query", "policies"]
    assert out.stderr == ""  # piped: no progress bar


def test_json_without_per_query_and_the_zero_policy(small):
    out = invoke(*small, "-m", "P@1", "--format", "json", "--no-answer", "zero")
    payload = json.loads(out.stdout)
    assert list(payload) == ["measures", "policies"]
    assert payload["measures"]["P@1"]["n"] == 3
    assert payload["measures"]["P@1"]["mean"] == pytest.approx(1 / 3)
    assert payload["policies"]["no_answer"] == "zero"
    assert payload["policies"]["missing_from_run_queries"] == ["q2"]
    assert payload["policies"]["ignored_run_queries"] == 1
    single = invoke(*small, "-m", "P@1", "--format", "json")  # default exclude: q3 (no answer) is left out
    assert json.loads(single.stdout)["measures"]["P@1"]["n"] == 2


def test_json_encodes_undefined_statistics_as_null(tmp_path):
    qrels = write(tmp_path, "q.txt", "q1 0 a 1\n")
    run = write(tmp_path, "r.trec", "q1 Q0 a 1 1.0 t\n")
    payload = json.loads(invoke(str(qrels), str(run), "-m", "RR", "--format", "json").stdout)
    assert payload["measures"]["RR"] == {
        "n": 1, "mean": 1.0, "std": None, "min": 1.0, "max": 1.0, "ci_low": None, "ci_high": None,
    }  # fmt: skip


def test_csv_outputs(small):
    summary = list(csv.DictReader(io.StringIO(invoke(*small, "-m", "P@1", "-m", "RR", "--format", "csv").stdout)))
    assert [row["measure"] for row in summary] == ["P@1", "RR"]
    assert summary[0]["n"] == "2" and float(summary[0]["mean"]) == 0.5
    rows = list(csv.DictReader(io.StringIO(invoke(*small, "-m", "RR", "--format", "csv", "--per-query").stdout)))
    assert rows == [
        {"query_id": "q1", "measure": "RR", "value": "1.0"},
        {"query_id": "q2", "measure": "RR", "value": "0.0"},
    ]


def test_per_query_markdown_keeps_the_means_under_the_rows(small):
    text = invoke(*small, "-m", "P@1", "-m", "RR", "--format", "markdown", "--per-query").stdout
    assert "| q1 | RR | 1.0000 |" in text
    assert "- P@1: mean 0.5000, 95% CI \\[" in text and "n 2" in text  # brackets escaped, never a link
    assert text.index("| q2 |") < text.index("- RR: mean 0.5000")


def test_table_is_readable_and_states_the_policies(small):
    out = invoke(*small, "-m", "nDCG@10", "-m", "P@1", "--per-query")
    assert out.exit_code == 0
    text = out.stdout
    for fragment in ("nDCG@10", "P@1", "95% CI", "q1", "1.0000", "ties: score desc at float32 precision, docid desc (trec_eval)"):
        assert fragment in text
    assert "no relevant document (1 queries, left out of the means" in text
    assert "missing from the run (1 queries, scored 0): q2" in text
    assert "run queries without judgments (ignored): 1" in text


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["-m", "ndgc@10"], "Error: Invalid value for '-m' / '--measure': unknown measure 'ndgc'; valid measures: "
                            "P, R, F1, nDCG"),
        (["-m", "ndgc@10"], "closest names: ndcg"),
        (["-m", "RBP(p=0.8)"], "ir_measures (the fallback) has no provider installed here that computes it"),
        (["-m", "P"], "Error: Invalid value for '-m' / '--measure': P needs a cutoff"),
        (["-m", ""], "Error: Invalid value for '-m' / '--measure': is empty"),
        (["-m", "P@" + "9" * 100_000], "the cutoff has 100000 digits; it must be below 10^9"),
    ],
)
def test_bad_measures_are_usage_errors(small, args, fragment):
    out = invoke(*small, *args)
    assert out.exit_code == ExitCode.USAGE  # refused by the argument parser, before any file is read
    assert fragment in out.stderr and len(out.stderr) < 2000
    assert "Traceback" not in out.output


def test_malformed_and_duplicate_run_lines_are_reported_with_their_line(tmp_path, small):
    qrels, _ = small
    bad = write(tmp_path, "bad.trec", "q1 Q0 a 1 2.0 t\nq1 Q0 b 2 high t\n")
    out = invoke(qrels, str(bad), "-m", "P@1")
    assert out.exit_code == ExitCode.BAD_INPUT
    assert f"{bad}:2:" in out.stderr and "'high' is not a number" in out.stderr
    dup = write(tmp_path, "dup.trec", "q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\nq1 Q0 a 3 0.5 t\n")
    out = invoke(qrels, str(dup), "-m", "P@1")
    assert out.exit_code == ExitCode.BAD_INPUT
    assert "query 'q1' lists document 'a' more than once" in out.stderr
    missing = invoke(qrels, str(tmp_path / "nope.trec"), "-m", "P@1")
    assert missing.exit_code == ExitCode.BAD_INPUT and "file not found" in missing.stderr


def test_measure_option_is_required(small):
    out = CliRunner().invoke(main, ["evaluate", *small])
    assert out.exit_code == ExitCode.USAGE and "--measure" in out.output


def test_progress_reports_every_gold_query(small, monkeypatch):
    import evalops.cli.evaluate as command

    seen: dict[str, int] = {"advanced": 0}

    @contextlib.contextmanager
    def fake_progress(description, total):
        seen["total"] = total

        def advance(n=1):
            seen["advanced"] += n

        yield advance

    monkeypatch.setattr(command, "progress", fake_progress)
    assert invoke(*small, "-m", "P@1").exit_code == 0
    assert seen == {"total": 3, "advanced": 3}


def test_the_zero_policy_reproduces_trec_eval_means(shared_data):
    qrels = shared_data / "nfcorpus-orig-test"
    run = shared_data / "nfcorpus-orig-test" / "runs" / "bm25.trec"
    out = invoke(str(qrels), str(run), "-m", "P(rel=2)@10", "--format", "json", "--no-answer", "zero")
    payload = json.loads(out.stdout)
    direct = evaluate(read_qrels(qrels), read_run(run), ["P(rel=2)@10"], Policy(no_answer="zero"))
    assert payload["measures"]["P(rel=2)@10"]["n"] == len(read_qrels(qrels).queries) == direct.aggregates["P(rel=2)@10"].n


EVIL = "![x](http://evil/p.png)"


def test_markdown_neutralises_links_and_images_in_every_cell_as_the_report_does(tmp_path):
    import re

    from evalops.reports.render import md_escape

    qrels = write(tmp_path, "q.txt", f"q1 0 a 1\n{EVIL} 0 a 1\n")
    run = write(tmp_path, "r.trec", f"q1 Q0 a 1 2.0 [tag](http://evil/t)\n{EVIL} Q0 b 1 1.0 [tag](http://evil/t)\n")
    for extra in ([], ["--per-query"]):
        text = invoke(str(qrels), str(run), "-m", "RR", "--format", "markdown", *extra).stdout
        # no image or link can start: every `[`, `]` and `!` is escaped
        assert not re.search(r"(?<!\\)[\[\]!]", text.replace("|---|", "")), text
        assert "[tag]" not in text
    assert f"| {md_escape(EVIL)} | RR | 0.0000 |" in text  # the report's escaper, cell for cell


def test_markdown_prints_numbers_as_the_terminal_does(small):
    table = invoke(*small, "-m", "P@1").stdout
    md = invoke(*small, "-m", "P@1", "--format", "markdown").stdout
    row = next(line for line in md.splitlines() if line.startswith("| P@1 |"))
    cells = [c.strip().replace("\\", "") for c in row.strip("|").split("|")]
    terminal = next(line for line in table.splitlines() if line.strip().startswith("P@1"))
    assert [c.strip() for c in terminal.split("│")] == cells


def test_a_measure_is_shown_as_the_user_spelled_it_and_keyed_canonically_in_json(small):
    """``-m MRR`` prints MRR (not its canonical RR) in the table, CSV and markdown; the values are RR's
    (trec_eval's recip_rank) and the stable JSON keys stay canonical."""
    table = invoke(*small, "-m", "MRR", "-m", "MRR@10").stdout
    assert " MRR " in table and " MRR@10 " in table and " RR " not in table and " RR@10 " not in table
    asked = list(csv.DictReader(io.StringIO(invoke(*small, "-m", "MRR", "--format", "csv").stdout)))
    canonical = list(csv.DictReader(io.StringIO(invoke(*small, "-m", "RR", "--format", "csv").stdout)))
    assert [r["measure"] for r in asked] == ["MRR"] and [r["measure"] for r in canonical] == ["RR"]
    assert [r["mean"] for r in asked] == [r["mean"] for r in canonical] == ["0.5"]
    markdown = invoke(*small, "-m", "MRR", "--format", "markdown", "--per-query").stdout
    assert "| q1 | MRR | 1.0000 |" in markdown and "- MRR: mean 0.5000" in markdown
    assert list(json.loads(invoke(*small, "-m", "MRR", "--format", "json").stdout)["measures"]) == ["RR"]


def _rich_per_query(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    from rich.table import Table

    from evalops.cli._common import console_for

    buffer = io.StringIO()
    table = Table(title="per query", show_edge=False)
    for i, head in enumerate(header):
        table.add_column(head, justify="right" if i else "left")
    for row in rows:
        table.add_row(*row)
    console_for(buffer).print(table)
    return buffer.getvalue()


def test_per_query_table_off_a_terminal_is_rich_drawing_written_as_plain_lines(tmp_path):
    """Off a terminal (or longer than the screen) the per-query table is streamed as plain lines; they are
    the lines rich draws, with a wide id padded by its width on screen and control characters removed."""
    qrels = write(tmp_path, "qrels.txt", "q1 0 a 1\n表9 0 b 1\n")
    run = write(tmp_path, "run.trec", "q1 Q0 a 1 2.0 t\nq1 Q0 z 2 1.0 t\n表9 Q0 z 1 1.0 t\n")
    text = invoke(str(qrels), str(run), "-m", "RR", "-m", "P@1", "--per-query").stdout
    expected = _rich_per_query([("q1", "1.0000", "1.0000"), ("表9", "0.0000", "0.0000")], ("query", "RR", "P@1"))
    assert text.startswith(expected)
    # an id with a control character never reaches the table: it is refused where it is read, with its line
    bad = write(tmp_path, "bad.txt", "q1 0 a 1\nq\x1b[2J 0 c 1\n")
    refused = invoke(str(bad), str(run), "-m", "RR", "--per-query")
    assert refused.exit_code == 3 and "bad.txt:2:" in refused.output and "\x1b" not in refused.output


def test_a_mean_over_fewer_queries_than_trec_eval_says_so_and_the_fallback_is_named(shared_data):
    folder = shared_data / "nfcorpus-orig-test"
    out = invoke(str(folder / "qrels.tsv"), str(folder / "runs" / "bm25.trec"), "-m", "P(rel=2)@5", "-m", "infAP",
                 "-m", "ndcg_cut_10")
    assert out.exit_code == 0, out.output
    assert "119 of 323" in out.stdout
    assert ("P(rel=2)@5: mean over 119 of 323 queries (no relevant document: exclude); 323 under trec_eval's "
            "convention (--no-answer zero)") in out.stdout
    assert "infAP: computed by ir_measures" in out.stdout
    zero = invoke(str(folder / "qrels.tsv"), str(folder / "runs" / "bm25.trec"), "-m", "P(rel=2)@5",
                  "--no-answer", "zero", "--format", "json")
    payload = json.loads(zero.stdout)
    assert payload["measures"]["P(rel=2)@5"]["n"] == 323
    assert abs(payload["measures"]["P(rel=2)@5"]["mean"] - 0.07801857585139312) < 1e-12  # ir_measures' number
    assert "queries_under_trec_eval" not in payload["policies"]
