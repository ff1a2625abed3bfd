"""The gate's verdict (``evalops.gate``), the exit-code table (``evalops.exitcodes``) and the JUnit XML
writer (``evalops.junit``), on hand-made records; the end-to-end runs are in tests/cli/test_gate.py."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from evalops.errors import ConfigError, EvalopsError, FormatError, RetrieverError, ValidationError, WarehouseError
from evalops.exitcodes import PRECEDENCE, ExitCode, for_exception, most_severe
from evalops.gate import GateCase, alerting_regressions, gate_cases, gate_exit_code
from evalops.junit import junit_xml, write_junit_xml

MEASURES = ["nDCG@10", "RR@10"]


def _spec(version, run_id, baseline="1.0", dataset="gold"):
    return {"retriever": "search", "version": version, "dataset": dataset, "run_id": run_id,
            "baseline_version": baseline}


def _decision(version, measure, decision, delta=-0.1, dataset="gold"):
    return {"dataset": dataset, "retriever": "search", "version": version, "comparison": {
        "measure": measure, "decision": decision, "baseline_mean": 0.6, "candidate_mean": 0.6 + delta,
        "delta": delta, "delta_ci_low": delta - 0.05, "delta_ci_high": delta + 0.05, "p_adjusted": 0.001, "n": 50,
        "reasons": ["why 1", "why 2"], "policy": {"alpha": 0.05}}}


def _alert(version, measure, kind="regression"):
    return {"kind": kind, "title": "t", "dedup_key": f"{kind}|search|{version}|{measure}|fp|2024-06-01"}


def test_each_outcome():
    versions = [_spec("1.0", 1), _spec("2.0", 2), _spec("3.0", 3), _spec("4.0", 4, baseline=None),
                _spec("2.0", 5, dataset="production")]
    decisions = [_decision("1.0", "nDCG@10", "no_change", 0.0), _decision("1.0", "RR@10", "no_change", 0.0),
                 _decision("2.0", "nDCG@10", "regression"), _decision("2.0", "RR@10", "regression"),
                 _decision("2.0", "nDCG@10", "regression", dataset="production")]
    statuses = {1: "succeeded", 2: "partial", 3: "failed", 4: "succeeded", 5: "succeeded"}
    alerts = [_alert("2.0", "nDCG@10"), _alert("3.0", "-", kind="retriever_failed")]
    cases = {(c.version, c.measure): c for c in gate_cases(versions, decisions, alerts, statuses, MEASURES)}
    assert len(cases) == 8  # 4 gold versions x 2 measures; the production sample is not gated
    assert cases["2.0", "nDCG@10"].outcome == "failure"
    assert cases["2.0", "nDCG@10"].message == ("regression: nDCG@10 0.6000 -> 0.5000, delta -0.1000 "
                                               "[95% CI -0.1500, -0.0500], adjusted p 0.001, n 50 (against 1.0); "
                                               "the version was scored partially (failed queries left out)")
    assert cases["2.0", "RR@10"].outcome == "passed" and "does not alert" in cases["2.0", "RR@10"].message
    assert {cases["3.0", m].outcome for m in MEASURES} == {"error"}
    assert cases["4.0", "nDCG@10"].message == "not compared: no baseline yet (promote one)"
    assert cases["1.0", "RR@10"].outcome == "passed" and cases["1.0", "RR@10"].decision == "no_change"
    assert gate_exit_code(cases.values()) == ExitCode.VERSION_FAILED  # a failed version wins over a regression


def test_inconclusive_is_skipped_and_passes_the_gate():
    (case, _) = gate_cases([_spec("2.0", 2)], [_decision("2.0", "nDCG@10", "inconclusive")], [],
                           {2: "succeeded"}, MEASURES)
    assert case.outcome == "skipped" and gate_exit_code([case]) == ExitCode.SUCCESS


def test_alerting_regressions_read_the_dedup_key():
    assert alerting_regressions([_alert("2.0", "nDCG@10"), _alert("x", "y", kind="retriever_failed"),
                                 {"kind": "regression", "dedup_key": "broken"}]) == {("search", "2.0", "nDCG@10")}


def test_the_exit_code_table():
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 4, 5, 6, 7, 8]
    assert set(PRECEDENCE) == set(ExitCode) and PRECEDENCE[-1] is ExitCode.SUCCESS
    assert all(member.__doc__ for member in ExitCode)
    assert most_severe() is ExitCode.SUCCESS
    assert most_severe(ExitCode.REGRESSION, ExitCode.UNDELIVERED_ALERTS) is ExitCode.REGRESSION
    assert most_severe(ExitCode.REGRESSION, ExitCode.VERSION_FAILED) is ExitCode.VERSION_FAILED
    assert most_severe(ExitCode.REGRESSION, ExitCode.JUDGE_FAILED) is ExitCode.JUDGE_FAILED
    assert most_severe(ExitCode.VERSION_FAILED, ExitCode.BAD_INPUT) is ExitCode.BAD_INPUT


@pytest.mark.parametrize("exc, code", [
    (FormatError("bad line", path="f", line=2), ExitCode.BAD_INPUT), (ConfigError("x"), ExitCode.BAD_INPUT),
    (ValidationError("contract failed"), ExitCode.BAD_INPUT), (RetrieverError("down"), ExitCode.VERSION_FAILED),
    (WarehouseError("refused"), ExitCode.WAREHOUSE_ERROR), (EvalopsError("x"), ExitCode.BAD_INPUT),
    (KeyError("bug"), ExitCode.INTERNAL_ERROR),
])
def test_exceptions_map_to_the_table(exc, code):
    assert for_exception(exc) is code


def test_junit_counts_children_and_escapes_user_text(tmp_path):
    hostile = 'v<1> & "q"\x07\x1b'
    cases = [
        GateCase("search", hostile, "nDCG@10", "failure", "regression", "regression: <b>drop</b>", details="a\nb"),
        GateCase("search", "2.0", "nDCG@10", "error", None, "could not be scored"),
        GateCase("search", "2.0", "RR@10", "skipped", "inconclusive", "too few queries"),
        GateCase("search", "1.0", "nDCG@10", "passed", "no_change", "fine"),
    ]
    path = write_junit_xml(tmp_path / "deep" / "junit.xml", cases, suite="evalops run", properties={"day": "d"})
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "4", "failures": "1", "errors": "1", "skipped": "1"}
    assert root.get("failures") == "1" and suite.find("properties/property").get("value") == "d"
    first, second, third, fourth = suite.findall("testcase")
    assert first.get("classname") == 'search@v<1> & "q"\ufffd\ufffd'  # control characters replaced, rest intact
    failure = first.find("failure")
    assert failure.get("type") == "regression" and failure.get("message") == "regression: <b>drop</b>"
    assert failure.text == "a\nb"
    assert second.find("error").get("type") == "version_failed" and third.find("skipped") is not None
    assert fourth.find("system-out").text == "fine" and len(fourth.findall("*")) == 1


def test_junit_of_no_cases_is_valid():
    root = junit_xml([], suite="empty").getroot()
    assert root.get("tests") == "0" and root.find("testsuite").findall("testcase") == []


def test_the_docs_document_every_code_in_one_table():
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+) \| `(\w+)` \|", readme, flags=re.M)
    assert [(int(code), name) for code, name in rows] == [(int(c), c.name) for c in ExitCode]
    order = re.search(r"When several apply.*?: ([\d, ]+) \(`evalops\.exitcodes\.PRECEDENCE`\)", readme, flags=re.S)
    assert order and [int(c) for c in order[1].split(",")] == [int(c) for c in PRECEDENCE[:-1]]
