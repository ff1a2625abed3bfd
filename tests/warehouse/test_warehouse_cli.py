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
    trend = json.loads(invoke("history", "bm25", "-m", "nDCG@10", "--format", "json").output)
    assert [round(r["mean"], 6) for r in trend] == [0.6, 0.7]
    assert trend[0]["ci_high"] is None and trend[0]["logical_date"] == "2024-05-01T00:00:00Z"
    csv = invoke("history", "bm25", "-m", "nDCG@10", "--format", "csv").output
    assert csv.splitlines()[0].startswith("logical_date,retriever,version")
    table = invoke("history", "bm25", "-m", "nDCG@10").output
    assert "0.6000" in table and "nDCG@10" in table


def test_promote_and_roll_back(url):
    invoke("db", "upgrade")
    fp = populate(url)
    promoted = invoke("promote", "bm25", "v1", "--reason", "first", "--by", "alice")
    assert "baseline is now v1" in promoted.output
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
        (["history", "-m", "nDCG@10"], "needs a RETRIEVER", ExitCode.BAD_INPUT),
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
