"""A judge that cannot be reached, or loses more labels than its budget, fails the judge step loudly: one
line with the cause, exit 8, a ``judge_failed`` alert row, and a report that leads with it; the gold-grade
results of the run are stored as usual."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode
from evalops.judges.fakeserver import FakeChatServer, Reply, completion
from tests.dags.conftest import INCLUDE
from tests.judges.conftest import closed_port

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _no_judge_key(monkeypatch):
    # the default key variable, unset: a keyless judge (a local endpoint) is legitimate and runs; a variable
    # named in judge.api_key_env and absent stops the run before anything (tests/config/test_empty_settings.py)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def project(root, base_url, **judge):
    settings = {"kind": "openai", "base_url": base_url, "model": "judge-model", "max_retries": 0, "top_k": 2,
                **judge}
    root.mkdir(parents=True, exist_ok=True)
    (root / "evalops.yaml").write_text(
        f"gold_set: {{path: {INCLUDE / 'goldset'}}}\nknowledge_base: {{path: {INCLUDE / 'knowledge_base'}}}\n"
        f"registry: {INCLUDE / 'retrievers.yaml'}\nlog_sample_size: 0\njudge: {json.dumps(settings)}\n")
    return root


def test_a_judge_at_a_closed_port_fails_the_judge_step(tmp_path):
    from evalops.config import load_config
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import list_alerts
    from evalops.warehouse.judgments import count_judgments, load_judge_runs

    url = f"http://127.0.0.1:{closed_port()}/v1"
    root = project(tmp_path / "p", url)
    result = CliRunner().invoke(main, ["run", "--date", "2024-06-01", "--project", str(root)])

    cause = (f"judge preflight: cannot connect to {url}/chat/completions (connection refused); no API key was "
             "found ($OPENAI_API_KEY is unset)")
    assert result.exit_code == ExitCode.JUDGE_FAILED, result.output
    assert f"error: judge step on gold failed: {cause}" in result.output
    assert "judge step will fail" in result.output  # said before anything was scored

    cfg = load_config(root, environ={})
    engine = engine_for(cfg)
    (row,) = load_judge_runs(engine).to_dict("records")
    assert row["scope"] == "gold" and row["gate"] == {"status": "failed", "reason": cause}
    assert row["results"]["failed"] == cause and row["requests"] == 0 and count_judgments(engine) == 0
    alerts = list_alerts(engine).to_dict("records")
    (judge_alert,) = [a for a in alerts if a["kind"] == "judge_failed"]
    assert judge_alert["severity"] == "critical" and cause in judge_alert["message"]
    assert judge_alert["day"].isoformat() == "2024-06-01"

    report = next(cfg.report_dir.glob("*2024-06-01*")).joinpath("report.md").read_text()
    first_section = report.split("\n## ", 2)[1]
    assert first_section.startswith("Failed steps") and cause in first_section
    # the gold-grade scores are there all the same
    assert "Measures per version (gold set)" in report and "handbook-search" in report

    # the gate, on the same day: exit 8, the judge step one JUnit error case; the alert is not sent twice
    junit = tmp_path / "junit.xml"
    gated = CliRunner().invoke(main, ["gate", "--date", "2024-06-01", "--project", str(root), "--junit-xml",
                                      str(junit)])
    assert gated.exit_code == ExitCode.JUDGE_FAILED, gated.output
    xml = junit.read_text()
    assert '<error message="judge step failed: ' in xml and "connection refused" in xml
    assert [a["kind"] for a in list_alerts(engine).to_dict("records")].count("judge_failed") == 1


def test_a_judge_that_loses_more_labels_than_its_budget_fails_the_step(tmp_path):
    """The preflight passes (the server answers), then every label is unreadable: over the 5 % budget."""
    from evalops.config import load_config
    from evalops.pipeline import IncompleteRunError, RunContext, run_local
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import list_alerts

    lines: list[str] = []
    with FakeChatServer(script=[Reply(200, completion("OK"))]
                        + [Reply(200, completion("I cannot say"))] * 5000) as server:
        root = project(tmp_path / "p", server.url)
        cfg = load_config(root, environ={})
        with pytest.raises(IncompleteRunError) as raised:
            run_local(cfg, RunContext.for_day("2024-06-01"), judge_progress=lines.append)
    judged = raised.value.result["judged"]
    assert judged["status"] == "failed"
    assert judged["cause"].startswith("gold: ") and "judge labels are missing (100.0%), over the budget of 5.0%" \
        in judged["cause"] and judged["cause"].endswith("(judge.missing_budget)")
    assert "judge step on gold failed" in str(raised.value)
    assert [a["kind"] for a in raised.value.result["alerts"]].count("judge_failed") == 1
    assert any(a["kind"] == "judge_failed" for a in list_alerts(engine_for(cfg)).to_dict("records"))
    # progress: the start, at least the last count, and the summary
    assert lines[0].startswith("judging gold: ") and any("requests, " in ln and " missing" in ln for ln in lines)
