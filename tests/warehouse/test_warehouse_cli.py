"""`evalops db`, `evalops history` and `evalops promote` against a temporary warehouse."""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode
from evalops.warehouse import RunKey, create_warehouse_engine, record_gold_set_version, record_kb_snapshot, record_run
from evalops.fingerprint import EvalFingerprint

T0 = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)


@pytest.fixture
def url(tmp_path, monkeypatch):
    value = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("EVALOPS_WAREHOUSE_URL", value)
    return value


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def populate(url: str) -> EvalFingerprint:
    engine = create_warehouse_engine(url)
    try:
        record_gold_set_version(engine, "g1", name="gold", n_queries=2, n_judgments=4)
        record_kb_snapshot(engine, "kb1", n_documents=10, content_hash="h")
        fp = EvalFingerprint.of("g1", "kb1", ["nDCG@10"], {"ties": "trec_eval"})
        for i, version in enumerate(["v1", "v2"]):
            record_run(
                engine,
                RunKey("retrieval_eval", "scheduled__2024-05-01", "bm25", version),
                fingerprint=fp,
                logical_date=T0 + dt.timedelta(days=i),
                status="succeeded",
                started_at=T0,
                n_queries=2,
                scores=pd.DataFrame({"query_id": ["a", "b"], "measure": ["nDCG@10"] * 2, "value": [0.5, 0.7]}),
                aggregates=pd.DataFrame(
                    {"measure": ["nDCG@10"], "n": [2], "mean": [0.6 + i / 10], "ci_low": [0.5], "ci_high": [float("nan")]}
                ),
                ci_level=0.95,
                ci_method="t",
            )
    finally:
        engine.dispose()
    return fp


def test_db_upgrade_is_idempotent_and_current_reports_it(url):
    first = invoke("db", "upgrade")
    assert first.exit_code == 0 and "empty ->" in first.output
    again = invoke("db", "upgrade")
    assert "already at" in again.output
    info = json.loads(invoke("db", "current", "--format", "json").output)
    assert info["source"] == "env" and info["up_to_date"] is True and info["revision"] == info["head"]


def test_db_downgrade_needs_confirmation(url):
    invoke("db", "upgrade")
    refused = CliRunner().invoke(main, ["db", "downgrade", "base"], input="n\n")
    assert refused.exit_code != 0
    assert json.loads(invoke("db", "current", "--format", "json").output)["up_to_date"] is True
    assert invoke("db", "downgrade", "base", "--yes").exit_code == 0
    assert json.loads(invoke("db", "current", "--format", "json").output)["revision"] is None


def test_history_views(url):
    invoke("db", "upgrade")
    populate(url)
    latest = json.loads(invoke("history", "--format", "json").output)
    assert [r["version"] for r in latest] == ["v1", "v2"]
    assert [round(r["nDCG@10"], 6) for r in latest] == [0.6, 0.7]  # each run's mean of each measure
    assert "nDCG@10" in invoke("history").output.splitlines()[0]
    trend = json.loads(invoke("history", "bm25", "-m", "nDCG@10", "--format", "json").output)
    assert [round(r["mean"], 6) for r in trend] == [0.6, 0.7]
    assert trend[0]["ci_high"] is None and trend[0]["logical_date"] == "2024-05-01T00:00:00Z"
    csv = invoke("history", "bm25", "-m", "nDCG@10", "--format", "csv").output
    assert csv.splitlines()[0].startswith("logical_date,retriever,version")
    table = invoke("history", "bm25", "-m", "nDCG@10").output
    assert "0.6000" in table and "nDCG@10" in table


def record_failed_run(url: str, fp: EvalFingerprint, version: str = "v3") -> None:
    engine = create_warehouse_engine(url)
    try:
        record_run(engine, RunKey("retrieval_eval", "scheduled__2024-05-01", "bm25", version), fingerprint=fp,
                   logical_date=T0 + dt.timedelta(days=1), status="failed", started_at=T0, n_queries=2, n_failed=2)
    finally:
        engine.dispose()


def test_history_of_a_measure_needs_no_retriever_and_shows_retriever_and_measure(url):
    """``history -m MEASURE`` reads every retriever (no RETRIEVER argument), one row per version and date,
    with a retriever and a measure column."""
    invoke("db", "upgrade")
    populate(url)
    engine = create_warehouse_engine(url)
    try:
        fp = EvalFingerprint.of("g1", "kb1", ["nDCG@10"], {"ties": "trec_eval"})
        record_run(engine, RunKey("retrieval_eval", "scheduled__2024-05-01", "dense", "d1"), fingerprint=fp,
                   logical_date=T0, status="succeeded", started_at=T0, n_queries=2,
                   scores=pd.DataFrame({"query_id": ["a", "b"], "measure": ["nDCG@10"] * 2, "value": [0.1, 0.3]}),
                   aggregates=pd.DataFrame({"measure": ["nDCG@10"], "n": [2], "mean": [0.2], "ci_low": [0.1],
                                            "ci_high": [0.3]}), ci_level=0.95, ci_method="t")
    finally:
        engine.dispose()
    out = invoke("history", "-m", "nDCG@10")
    assert out.exit_code == 0, out.output
    header = out.output.splitlines()[0]
    assert "retriever" in header and "measure" in header and "mean" in header
    rows = json.loads(invoke("history", "-m", "nDCG@10", "--format", "json").output)
    assert [(r["retriever"], r["version"], r["measure"], r["mean"]) for r in rows] == [
        ("bm25", "v1", "nDCG@10", 0.6), ("dense", "d1", "nDCG@10", 0.2), ("bm25", "v2", "nDCG@10", 0.7)]
    one = json.loads(invoke("history", "dense", "-m", "nDCG@10", "--format", "json").output)
    assert [(r["retriever"], r["version"]) for r in one] == [("dense", "d1")]


def test_history_lists_a_failed_version_with_its_status_and_empty_measure_cells(url):
    invoke("db", "upgrade")
    record_failed_run(url, populate(url))
    latest = json.loads(invoke("history", "--format", "json").output)
    assert [(r["version"], r["status"], r["n_failed"]) for r in latest] == [
        ("v1", "succeeded", 0), ("v2", "succeeded", 0), ("v3", "failed", 2)]
    csv = invoke("history", "--format", "csv").output.splitlines()
    assert len(csv) == 4 and ",v3,gold," in csv[3] and ",failed," in csv[3]
    table = invoke("history").output
    assert "v3" in table and "failed" in table

    trend = json.loads(invoke("history", "bm25", "-m", "nDCG@10", "--format", "json").output)
    failed = [r for r in trend if r["version"] == "v3"]
    assert len(trend) == 3 and len(failed) == 1
    assert failed[0]["status"] == "failed" and failed[0]["measure"] == "nDCG@10"
    assert all(failed[0][k] is None for k in ("n", "mean", "ci_low", "ci_high"))
    assert [r["n"] for r in trend if r["version"] != "v3"] == [2, 2]
    header, *rows = invoke("history", "bm25", "-m", "nDCG@10", "--format", "csv").output.splitlines()
    cells = dict(zip(header.split(","), rows[-1].split(",")))
    assert cells["version"] == "v3" and cells["status"] == "failed"
    assert [cells[k] for k in ("n", "mean", "ci_low", "ci_high")] == ["", "", "", ""]
    markdown = invoke("history", "bm25", "-m", "nDCG@10", "--version", "v3", "--format", "markdown").output
    assert "| nDCG@10 |  |  |  |  |  |" in markdown  # n, mean, CI and superseded_by empty, not 0
    table = invoke("history", "bm25", "-m", "nDCG@10", "--version", "v3").output
    assert "failed" in table and "0.0000" not in table and "nan" not in table.lower()


def test_history_of_a_known_query_without_results_is_an_empty_table_with_a_note(url):
    invoke("db", "upgrade")
    populate(url)
    result = invoke("history", "bm25", "-m", "nDCG@10", "--since", "2030-01-01")
    assert result.exit_code == 0
    assert result.output.strip() == "(no nDCG@10 results of bm25 on dataset gold since 2030-01-01 00:00 UTC)"
    assert json.loads(invoke("history", "bm25", "-m", "nDCG@10", "--since", "2030-01-01", "--format", "json").output) == []
    baselines = invoke("history", "bm25", "--baselines")
    assert baselines.exit_code == 0 and baselines.output.strip() == "(no promotions of bm25)"


def test_history_of_an_empty_warehouse_is_an_empty_table(url):
    invoke("db", "upgrade")
    result = invoke("history")
    assert result.exit_code == 0 and result.output.strip() == "(no finished runs on dataset gold)"


def test_promote_and_roll_back(url):
    invoke("db", "upgrade")
    fp = populate(url)
    promoted = invoke("promote", "bm25", "v1", "--reason", "first", "--by", "alice")
    assert "baseline is now v1" in promoted.output
    again = invoke("promote", "bm25", "v1", "--reason", "again", "--by", "carol")
    assert "v1 (run" in again.output and "already is the baseline, promoted by alice" in again.output
    assert ": first; nothing changed (the reason given now is not recorded)" in again.output
    assert json.loads(invoke("promote", "bm25", "v1", "--reason", "x", "--format", "json").output)["changed"] is False
    invoke("promote", "bm25", "v2", "--reason", "better", "--by", "bob")
    back = json.loads(invoke("promote", "bm25", "--rollback", "--fingerprint", fp.short, "--reason", "oops", "--format", "json").output)
    assert back["version"] == "v1" and back["action"] == "rollback" and back["is_current"] is True
    history = json.loads(invoke("history", "bm25", "--baselines", "--format", "json").output)
    assert [(h["version"], h["promoted_by"]) for h in history][:2] == [("v1", "alice"), ("v2", "bob")]


@pytest.mark.parametrize(
    "args, message, code",
    [
        (["promote", "bm25", "v9", "--reason", "x"], "no succeeded gold-set run", ExitCode.WAREHOUSE_ERROR),
        (["promote", "bm25", "--rollback", "--reason", "x"], "--rollback needs --fingerprint", ExitCode.BAD_INPUT),
        (["promote", "bm25", "--rollback", "--fingerprint", "zz", "--reason", "x"], "not a hex hash",
         ExitCode.BAD_INPUT),
        (["history", "-m", "foo"], "measure 'foo' is not stored on dataset gold; stored measures: nDCG@10",
         ExitCode.BAD_INPUT),
        (["history", "--since", "2024-01-01"], "--since does not apply to the runs view", ExitCode.BAD_INPUT),
        (["history", "bm25", "--superseded"], "--superseded does not apply to the runs view", ExitCode.BAD_INPUT),
        (["history", "bm25", "--baselines", "--version", "v1", "--since", "2024-01-01"],
         "--since and --version do not apply to --baselines", ExitCode.BAD_INPUT),
        (["history", "bm25", "-m", "foo"],
         "measure 'foo' is not stored for bm25 on dataset gold; stored measures: nDCG@10", ExitCode.BAD_INPUT),
        (["history", "nosuch"], "no run of retriever 'nosuch' is stored in the warehouse; stored retrievers: bm25",
         ExitCode.BAD_INPUT),
        (["history", "nosuch", "-m", "nDCG@10"], "stored retrievers: bm25", ExitCode.BAD_INPUT),
        (["history", "nosuch", "--baselines"], "stored retrievers: bm25", ExitCode.BAD_INPUT),
        (["history", "--dataset", "prod"], "no run on dataset 'prod' is stored in the warehouse; stored datasets: gold",
         ExitCode.BAD_INPUT),
        (["history", "bm25", "--version", "v9"], "no run of version(s) 'v9' of bm25 on dataset gold is stored; "
         "stored versions: v1, v2", ExitCode.BAD_INPUT),
    ],
)
def test_user_mistakes_are_one_line_errors(url, args, message, code):
    invoke("db", "upgrade")
    populate(url)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == code
    assert message in result.output


def test_an_unmigrated_warehouse_says_to_upgrade(url):
    result = CliRunner().invoke(main, ["history"])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "evalops db upgrade" in result.output


def test_history_answers_without_importing_pandas(url):
    """The history is a handful of rows: the command's cost is its imports, so no pandas (nor numpy's
    heavier parts it pulls in) on its path, and no pydantic when the warehouse is given by --url (the
    settings object is not loaded; the timeouts are read by evalops.config.env). The runs view and the
    baselines import no numpy either (the warehouse's parts are imported where used); the measure view does,
    for the measure name's canonical form (evalops.metrics)."""
    import subprocess
    import sys

    invoke("db", "upgrade")
    fp = populate(url)
    engine = create_warehouse_engine(url)
    try:
        from evalops.warehouse import promote_baseline

        promote_baseline(engine, 1, by="alice", reason="first")
    finally:
        engine.dispose()
    record_failed_run(url, fp)
    script = ("import sys\nfrom evalops.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n"
              "    assert not e.code, e.code\nprint(' '.join(m for m in ('pandas', 'pydantic', 'numpy') if m in sys.modules)"
              " or 'LIGHT')\n")
    for args, expected in ((["history"], "LIGHT"), (["history", "bm25", "-m", "nDCG@10", "--format", "json"], "numpy"),
                           (["history", "bm25", "--baselines", "--format", "csv"], "LIGHT")):
        out = subprocess.run([sys.executable, "-c", script, *args, "--url", url], capture_output=True, text=True,
                             check=True)
        assert out.stdout.strip().splitlines()[-1] == expected, (args, out.stdout, out.stderr)
