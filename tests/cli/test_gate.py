"""``evalops gate`` and ``evalops run --fail-on-regression --junit-xml`` on the sample data in include/.

Day 1 scores the baseline (handbook-search 1.0) and promotes it. Then the gate runs on a day that deploys
the planted regression (2.0-truncated: BM25 over half the knowledge base) and fails with the documented
code and one failing JUnit case; on a day that deploys the better hybrid it passes. Everything goes
through the command line (click's CliRunner) with a temporary home and SQLite warehouse.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
import yaml
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode
from tests.alerting.hook_server import dead_url
from tests.dags.conftest import INCLUDE

pytestmark = pytest.mark.slow

DAY1, DAY2, DAY3, DAY4 = "2024-05-31", "2024-06-01", "2024-06-02", "2024-06-03"


def _registry(path, deployed, extra=()):
    entries = [e for e in yaml.safe_load((INCLUDE / "retrievers.yaml").read_text())["retrievers"]
               if e["name"] == "handbook-search"]
    for entry in entries:
        entry["deployed"] = entry["version"] in deployed
    path.write_text(yaml.safe_dump({"retrievers": entries + list(extra)}))
    return str(path)


def project_env(home):
    """The settings of a project in ``home`` over the sample data, registry of day 1 (1.0 deployed)."""
    return {
        "EVALOPS_HOME": str(home),
        "EVALOPS_WAREHOUSE_URL": f"sqlite:///{home / 'warehouse.db'}",
        "EVALOPS_GOLD_SET": str(INCLUDE / "goldset"),
        "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"),
        "EVALOPS_REGISTRY": _registry(home / "day1.yaml", {"1.0"}),
        "EVALOPS_LOG_SAMPLE_SIZE": "0",
        # a developer's own settings must not leak in (None unsets a variable for CliRunner)
        "EVALOPS_RETRIEVERS_OVERLAY": None, "EVALOPS_CONFIG": None, "EVALOPS_WEBHOOK_URL": None,
        "EVALOPS_ALERTING__EMAIL_TO": None, "EVALOPS_MEASURES": None, "EVALOPS_ALERT_MEASURES": None,
    }


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A home whose baseline (1.0, day 1) is promoted; yields (home, env)."""
    home = tmp_path_factory.mktemp("gate")
    env = project_env(home)
    runner = CliRunner()
    first = runner.invoke(main, ["run", "--date", DAY1], env=env, catch_exceptions=False)
    assert first.exit_code == 0, first.output
    promoted = runner.invoke(main, ["promote", "handbook-search", "1.0", "--reason", "day 1", "--by", "tests"], env=env)
    assert promoted.exit_code == 0, promoted.output
    return home, env


def _cases(path):
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    return suite, suite.findall("testcase")


def test_a_planted_regression_fails_the_gate_with_one_failing_case(project, tmp_path):
    home, env = project
    env = {**env, "EVALOPS_REGISTRY": _registry(home / "day2.yaml", {"1.0", "2.0-truncated"})}
    junit = tmp_path / "junit.xml"
    result = CliRunner().invoke(main, ["gate", "--date", DAY2, "--junit-xml", str(junit)], env=env)
    assert result.exit_code == ExitCode.REGRESSION == 4, result.output
    assert "gate FAILED (exit 4, regression)" in result.output

    suite, cases = _cases(junit)
    measures = ("nDCG@10", "RR@10", "R@100")
    assert sorted((c.get("classname"), c.get("name")) for c in cases) == sorted(
        (f"handbook-search@{v}", m) for v in ("1.0", "2.0-truncated") for m in measures)
    failing = [c for c in cases if c.find("failure") is not None]
    assert [(c.get("classname"), c.get("name")) for c in failing] == [("handbook-search@2.0-truncated", "nDCG@10")]
    failure = failing[0].find("failure")
    assert failure.get("type") == "regression"
    message = failure.get("message")
    # one interval: the decision interval at the family's level (the bootstrap interval is not printed beside it)
    assert message.startswith("regression (critical): nDCG@10 0.6433 -> 0.3640, delta -0.2792 [decision interval -")
    assert "95% CI" not in message
    assert "adjusted p" in message and "against 1.0" in message
    # the other measures regress too, but only the alert measure (the first) fails the gate
    assert suite.get("tests") == "6" and suite.get("failures") == "1" and suite.get("errors") == "0"
    assert all(c.find("error") is None for c in cases)


def test_without_the_regression_the_gate_passes(project, tmp_path):
    home, env = project
    env = {**env, "EVALOPS_REGISTRY": _registry(home / "day3.yaml", {"1.0", "2.0-hybrid"})}
    junit = tmp_path / "junit.xml"
    result = CliRunner().invoke(main, ["gate", "--date", DAY3, "--junit-xml", str(junit), "--format", "json"],
                                env=env)
    assert result.exit_code == ExitCode.SUCCESS, result.output
    import json

    payload = json.loads(result.stdout)  # the steps go to stderr
    assert payload["gate"]["exit_code"] == 0
    decisions = {(c["version"], c["measure"]): (c["decision"], c["outcome"]) for c in payload["gate"]["cases"]}
    assert decisions[("2.0-hybrid", "nDCG@10")] == ("improvement", "passed")
    suite, cases = _cases(junit)
    assert suite.get("failures") == "0" and suite.get("errors") == "0" and len(cases) == 6
    skipped = {(c.get("classname"), c.get("name")) for c in cases if c.find("skipped") is not None}
    assert skipped == {("handbook-search@2.0-hybrid", m) for (v, m), (d, _) in decisions.items()
                       if v == "2.0-hybrid" and d == "inconclusive"}
    # the same results as `run` prints them: one row per version and measure, each decision as decided
    rows = {(r["version"], r["measure"]): r for r in payload["results"]["gold"]}
    assert rows[("1.0", "nDCG@10")]["decision"] is None and rows[("1.0", "nDCG@10")]["role"] == "baseline"
    assert rows[("2.0-hybrid", "nDCG@10")]["decision"] == decisions[("2.0-hybrid", "nDCG@10")][0]
    table = CliRunner().invoke(main, ["run", "--date", DAY3], env=env)
    assert table.exit_code == 0, table.output
    line = next(x for x in table.output.splitlines() if x.lstrip().startswith("handbook-search 2.0-hybrid"))
    assert "nDCG@10" in line and f"{rows[('2.0-hybrid', 'nDCG@10')]['delta']:+.4f}" in line
    assert "improvement" in line and " vs 1.0" in line and "at 95%" in line
    assert "nan" not in table.output  # an empty severity or reason code is left out, not printed as NaN


def test_run_reports_a_regression_but_exits_0_without_the_flag(project, tmp_path):
    home, env = project
    env = {**env, "EVALOPS_REGISTRY": _registry(home / "day2.yaml", {"1.0", "2.0-truncated"})}
    runner = CliRunner()
    plain = runner.invoke(main, ["run", "--date", DAY2], env=env)
    assert plain.exit_code == 0 and "ALERT  Regression: handbook-search 2.0-truncated" in plain.output
    # what the run decided comes first: each version's measures, the delta, the decision interval, the decision
    assert plain.stdout.startswith("gold set gold")  # on stdout; the steps went to stderr
    truncated = next(x for x in plain.output.splitlines() if x.lstrip().startswith("handbook-search 2.0-truncated"))
    assert "nDCG@10" in truncated and "0.3640" in truncated and "-0.2792" in truncated
    assert "REGRESSION (critical) vs 1.0" in truncated
    quiet = runner.invoke(main, ["run", "--date", DAY2, "--quiet", "--fail-on-regression"], env=env)
    assert quiet.exit_code == ExitCode.REGRESSION and quiet.stdout == ""
    junit = tmp_path / "run.xml"
    gated = runner.invoke(main, ["run", "--date", DAY2, "--fail-on-regression", "--junit-xml", str(junit)], env=env)
    assert gated.exit_code == ExitCode.REGRESSION, gated.output
    assert len([c for c in _cases(junit)[1] if c.find("failure") is not None]) == 1


def test_a_version_that_cannot_be_scored_is_an_error_case_and_exit_5(project, tmp_path):
    home, env = project
    down = {"name": "handbook-search", "version": "9.9-down", "adapter": "http", "deployed": True, "owner": "tests",
            "params": {"url": dead_url(), "timeout": 0.5, "max_retries": 0}}
    env = {**env, "EVALOPS_REGISTRY": _registry(home / "day4.yaml", {"1.0", "2.0-truncated"}, [down])}
    junit = tmp_path / "junit.xml"
    result = CliRunner().invoke(main, ["gate", "--date", DAY4, "--junit-xml", str(junit)], env=env)
    # a failed version and a regression: the failed version wins (see evalops.exitcodes.PRECEDENCE)
    assert result.exit_code == ExitCode.VERSION_FAILED == 5, result.output
    suite, cases = _cases(junit)
    errors = {c.get("name") for c in cases if c.find("error") is not None and
              c.get("classname") == "handbook-search@9.9-down"}
    assert errors == {"nDCG@10", "RR@10", "R@100"}
    assert suite.get("errors") == "3" and suite.get("failures") == "1"


def test_bad_input_exits_3_with_one_junit_error_and_nothing_scored(project, tmp_path):
    from sqlalchemy import create_engine, text

    home, env = project
    missing = tmp_path / "missing"
    env = {**env, "EVALOPS_GOLD_SET": str(missing)}
    junit = tmp_path / "junit.xml"
    engine = create_engine(env["EVALOPS_WAREHOUSE_URL"])
    with engine.connect() as conn:
        before = conn.execute(text("SELECT count(*) FROM eval_runs")).scalar_one()
    result = CliRunner().invoke(main, ["gate", "--date", DAY2, "--junit-xml", str(junit)], env=env)
    assert result.exit_code == ExitCode.BAD_INPUT == 3, result.output
    assert "error: " in result.output and str(missing) in result.output
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM eval_runs")).scalar_one() == before
    engine.dispose()
    suite, cases = _cases(junit)
    (case,) = cases
    assert (case.get("classname"), case.get("name")) == ("evalops", "inputs")
    error = case.find("error")
    assert error.get("type") == "bad_input" and str(missing) in error.get("message")


def test_usage_errors_keep_click_s_code(project):
    _, env = project
    result = CliRunner().invoke(main, ["gate", "--no-such-option"], env=env)
    assert result.exit_code == ExitCode.USAGE == 2
