"""``evalops evaluate`` input handling: standard input, compressed files, empty runs, the memory budget."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from evalops.cli import main


def invoke(*args: str, input: bytes | None = None):
    return CliRunner().invoke(main, ["evaluate", *args], input=input, catch_exceptions=False)


def test_run_from_standard_input_equals_the_file(shared_data):
    qrels = str(shared_data / "scifact" / "qrels.tsv")
    run = shared_data / "scifact" / "runs" / "bm25.trec"
    from_file = invoke(qrels, str(run), "-m", "nDCG@10", "--format", "json")
    from_stdin = invoke(qrels, "-", "-m", "nDCG@10", "--format", "json", input=gzip.compress(run.read_bytes()))
    assert from_file.exit_code == from_stdin.exit_code == 0, from_stdin.output
    assert json.loads(from_file.output)["measures"] == json.loads(from_stdin.output)["measures"]


def test_both_from_standard_input_is_refused(tmp_path):
    out = CliRunner().invoke(main, ["evaluate", "-", "-", "-m", "P@5"], input=b"")
    assert out.exit_code != 0 and "cannot both be standard input" in out.output


def test_empty_run_needs_allow_empty(tmp_path):
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "empty.trec"
    run.write_text("")
    refused = CliRunner().invoke(main, ["evaluate", str(qrels), str(run), "-m", "P@5"])
    assert refused.exit_code != 0 and f"{run}: the run is empty" in refused.output
    allowed = invoke(str(qrels), str(run), "-m", "P@5", "--allow-empty", "--format", "json")
    assert allowed.exit_code == 0 and json.loads(allowed.output)["measures"]["P@5"]["mean"] == 0.0


def test_memory_budget_streams_with_the_same_values(shared_data):
    qrels = str(shared_data / "nfcorpus-orig-test")
    run = str(shared_data / "nfcorpus-orig-test" / "runs" / "bm25.trec")
    whole = invoke(qrels, run, "-m", "nDCG@10", "-m", "AP", "--per-query", "--format", "json")
    streamed = invoke(qrels, run, "-m", "nDCG@10", "-m", "AP", "--per-query", "--format", "json", "--memory-budget", "16MB")
    assert whole.exit_code == streamed.exit_code == 0, streamed.output
    assert json.loads(whole.stdout) == json.loads(streamed.stdout)


def test_a_given_memory_budget_prints_its_floor_and_shares(shared_data):
    qrels = str(shared_data / "scifact" / "qrels.tsv")
    run = str(shared_data / "scifact" / "runs" / "bm25.trec")
    given = invoke(qrels, run, "-m", "nDCG@10", "--format", "json", "--memory-budget", "64MB")
    assert given.exit_code == 0
    [note] = [line for line in given.stderr.splitlines() if line.startswith("memory budget")]
    assert note.startswith("memory budget 64 MB above a floor of ")
    assert "(interpreter and libraries): judgments " in note and "run reading" in note
    floor = int(note.split("above a floor of ")[1].split(" MB")[0])
    peak = int(note.split("peak resident memory ")[1].split(" MB")[0])
    # Linux folds each thread's resident-page count into the process's in batches (up to 64 pages a
    # thread), so in a test process whose heap already holds what SciFact needs the peak can read a little
    # under the floor read just before it (this failed once in CI); 2 MB of slack covers that.
    assert 0 < floor <= peak + 2
    assert json.loads(given.stdout)["measures"]  # stdout stays the JSON document
    default = invoke(qrels, run, "-m", "nDCG@10", "--format", "json")
    assert "memory budget" not in default.stderr


def test_a_budget_the_judgments_alone_exceed_is_refused_with_the_budget_that_fits(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 document-{i}-{j} 1\n" for i in range(100_000) for j in range(3)))
    run = tmp_path / "run.trec"
    run.write_text("q0 Q0 document-0-0 1 1.0 t\n")
    out = CliRunner().invoke(main, ["evaluate", str(qrels), str(run), "-m", "P@5", "--memory-budget", "16MB"])
    assert out.exit_code != 0
    assert "memory budget 16 MB is too small" in out.output and "give --memory-budget" in out.output


def test_bad_memory_budget_is_a_clean_error(shared_data):
    out = CliRunner().invoke(main, ["evaluate", "a", "b", "-m", "P@5", "--memory-budget", "lots"])
    assert out.exit_code != 0 and "memory budget 'lots' is not a size" in out.output


# pyarrow.compute: its import writes a docstring for each compute function (a seventh of a small evaluate's
# CPU); the reading path calls the same functions through Arrow's registry (evalops.util.arrow.call).
@pytest.mark.parametrize("heavy", ["pandas", "scipy.stats", "sqlalchemy", "great_expectations", "airflow",
                                   "pyarrow.compute"])
def test_evaluate_does_not_import_heavy_modules(shared_data, heavy):
    code = (
        "import sys\n"
        "from evalops.cli import main\n"
        "try:\n"
        f"    main(['evaluate', {str(shared_data / 'scifact')!r}, {str(shared_data / 'scifact' / 'runs' / 'bm25.trec')!r},"
        " '-m', 'nDCG@10', '--format', 'json'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print({heavy!r} in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stderr.strip().splitlines()[-1] == "False", done.stderr


def test_the_budget_shares_and_the_budget_that_fits():
    from evalops.util.limits import MIN_READER_BUDGET, ProcessBudget

    mb = 1 << 20
    shares = ProcessBudget(256 * mb, 67 * mb, judgments=100 * mb, results=73 * mb, reading_judgments=162 * mb)
    assert shares.fits and shares.reader == 83 * mb
    too_small = ProcessBudget(128 * mb, 67 * mb, judgments=100 * mb, results=73 * mb, reading_judgments=162 * mb)
    assert not too_small.fits and too_small.reader == MIN_READER_BUDGET
    assert "give --memory-budget 181MB or more" in too_small.refusal()
    read_peak = ProcessBudget(150 * mb, 67 * mb, judgments=50 * mb, results=10 * mb, reading_judgments=160 * mb)
    assert not read_peak.fits and "give --memory-budget 160MB or more" in read_peak.refusal()
    # scoring at the end uses the reader's share again, but must fit beside the judgments
    scoring = ProcessBudget(256 * mb, 67 * mb, judgments=100 * mb, results=40 * mb, scoring=120 * mb)
    assert scoring.fits and scoring.reader == 116 * mb
    too_much = ProcessBudget(256 * mb, 67 * mb, judgments=100 * mb, results=40 * mb, scoring=200 * mb)
    assert not too_much.fits and "give --memory-budget 300MB or more" in too_much.refusal()
