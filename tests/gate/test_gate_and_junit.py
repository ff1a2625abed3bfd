"""The gate's verdict (``evalops.gate``), the exit-code table (``evalops.exitcodes``) and the JUnit XML
writer (``evalops.junit``), on hand-made records; the end-to-end runs are in tests/cli/test_gate.py."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from evalops.errors import ConfigError, EvalopsError, FormatError, InputError, RetrieverError, ValidationError, WarehouseError
from evalops.exitcodes import PRECEDENCE, ExitCode, for_exception, most_severe
from evalops.gate import DEFAULT_FAIL_ON, GateCase, alerting_regressions, gate_cases, gate_exit_code, parse_fail_on
from evalops.junit import junit_xml, write_junit_xml

MEASURES = ["nDCG@10", "RR@10"]


def _spec(version, run_id, baseline="1.0", dataset="gold"):
    return {"retriever": "search", "version": version, "dataset": dataset, "run_id": run_id,
            "baseline_version": baseline}


def _decision(version, measure, decision, delta=-0.1, dataset="gold", **fields):
    from evalops.pipeline.deciding import DecidedComparison
    from tests.conftest import comparison_of

    return DecidedComparison(
        dataset=dataset, family=dataset, retriever="search", version=version, baseline_version="1.0",
        candidate_run_id=2, baseline_run_id=1, ab_test_id=None, fingerprint="fp", comparison=comparison_of(**{
            "measure": measure, "decision": decision, "baseline_mean": 0.6, "candidate_mean": 0.6 + delta,
            "delta": delta, "delta_ci_low": delta - 0.05, "delta_ci_high": delta + 0.05, "p_adjusted": 0.001,
            "n": 50, "reasons": ["why 1", "why 2"], "policy": {"alpha": 0.05}, "alert": True, **fields}))


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
    # a partial version fails the gate by default (kind partial), also where its comparison would pass
    assert cases["2.0", "RR@10"].outcome == "failure" and cases["2.0", "RR@10"].kind == "partial"
    assert cases["2.0", "RR@10"].message.startswith("partial: regression: ") and "does not alert" in cases["2.0", "RR@10"].message
    lenient = {(c.version, c.measure): c for c in gate_cases(versions, decisions, alerts, statuses, MEASURES,
                                                             fail_on=DEFAULT_FAIL_ON - {"partial"})}
    assert lenient["2.0", "RR@10"].outcome == "passed" and "does not alert" in lenient["2.0", "RR@10"].message
    assert {cases["3.0", m].outcome for m in MEASURES} == {"error"}
    assert cases["4.0", "nDCG@10"].message == "not compared: no baseline yet (promote one)"
    assert cases["1.0", "RR@10"].outcome == "passed" and cases["1.0", "RR@10"].decision == "no_change"
    assert gate_exit_code(cases.values()) == ExitCode.VERSION_FAILED  # a failed version wins over a regression


def test_a_decided_comparison_shows_its_decision_interval_not_a_second_one():
    record = _decision("2.0", "nDCG@10", "regression", severity="critical", interval_low=-0.18,
                       interval_high=-0.02, interval_level=0.975)
    (case, _) = gate_cases([_spec("2.0", 2)], [record], [_alert("2.0", "nDCG@10")], {2: "succeeded"}, MEASURES)
    assert case.message == ("regression (critical): nDCG@10 0.6000 -> 0.5000, delta -0.1000 [decision interval "
                            "-0.1800 .. -0.0200 at 97.5%], adjusted p 0.001, n 50 (against 1.0)")
    c = case.comparison
    assert (c.interval_low, c.interval_high, c.interval_level) == (-0.18, -0.02, 0.975)


def test_inconclusive_is_skipped_and_passes_the_gate():
    (case, _) = gate_cases([_spec("2.0", 2)], [_decision("2.0", "nDCG@10", "inconclusive")], [],
                           {2: "succeeded"}, MEASURES)
    assert case.outcome == "skipped" and gate_exit_code([case]) == ExitCode.SUCCESS


def test_the_fail_on_policy_names_every_held_back_comparison_with_its_reason_code():
    held = _decision("2.0", "nDCG@10", "inconclusive", reason_code="unjudged_documents",
                     judged_coverage={"bound": "pair", "holes_relevant_delta": 0.02, "holes_pessimistic_delta": -0.3,
                                      "condensed_delta": -0.01})
    (case, _) = gate_cases([_spec("2.0", 2)], [held], [], {2: "succeeded"}, MEASURES, alert_measures=["RR@10"])
    assert case.outcome == "skipped" and case.kind == "inconclusive"
    assert case.message.startswith("inconclusive (unjudged_documents): nDCG@10")
    assert "delta -0.1000 [95% CI" in case.message
    assert "bounds of the unjudged documents -0.3000 .. +0.0200, condensed lists -0.0100" in case.message
    # a record stored under the old per-run bound says so: that number is not a bound of the delta
    old = _decision("2.0", "nDCG@10", "inconclusive", reason_code="unjudged_documents",
                    judged_coverage={"holes_relevant_delta": 0.02})
    (case, _) = gate_cases([_spec("2.0", 2)], [old], [], {2: "succeeded"}, MEASURES, alert_measures=["RR@10"])
    assert "+0.0200 with the candidate's unjudged documents relevant (per-run bound)" in case.message
    (strict, _) = gate_cases([_spec("2.0", 2)], [held], [], {2: "succeeded"}, MEASURES,
                             fail_on=parse_fail_on("regression,inconclusive"))
    assert strict.outcome == "failure" and gate_exit_code([strict]) == ExitCode.REGRESSION


def test_a_drop_the_unjudged_documents_could_undo_fails_the_gate_closed_on_an_alert_measure():
    """The judged documents show a drop, every unjudged one relevant would undo it: the gate cannot tell,
    so under the default policy it fails (kind ``unjudged``, exit 4) and says what would decide it."""
    held = _decision("2.0", "nDCG@10", "inconclusive", reason_code="unjudged_documents",
                     judged_coverage={"holes_relevant_delta": 0.02})
    (case, _) = gate_cases([_spec("2.0", 2)], [held], [], {2: "succeeded"}, MEASURES,
                           alert_measures=["nDCG@10"])
    assert (case.outcome, case.kind) == ("failure", "unjudged") and gate_exit_code([case]) == ExitCode.REGRESSION
    assert case.message.startswith("inconclusive (unjudged_documents): nDCG@10")
    assert "fails closed" in case.message and "annotation queue" in case.message
    # not an alert measure, an improvement on the judged documents, another reason, or left out of the policy:
    # skipped as any inconclusive comparison
    elsewhere = _decision("2.0", "RR@10", "inconclusive", reason_code="unjudged_documents")
    gain = _decision("2.0", "nDCG@10", "inconclusive", delta=+0.1, reason_code="unjudged_documents")
    weak = _decision("2.0", "nDCG@10", "inconclusive", reason_code="underpowered")
    for record in (elsewhere, gain, weak):
        cases = gate_cases([_spec("2.0", 2)], [record], [], {2: "succeeded"}, MEASURES, alert_measures=["nDCG@10"])
        [case] = [c for c in cases if c.measure == record.comparison.measure]
        assert (case.outcome, case.kind) == ("skipped", "inconclusive")
    (lenient, _) = gate_cases([_spec("2.0", 2)], [held], [], {2: "succeeded"}, MEASURES,
                              fail_on=parse_fail_on("regression,floor,failed,partial,missing"))
    assert (lenient.outcome, lenient.kind) == ("skipped", "unjudged")


def test_a_comparison_that_cannot_be_found_fails_the_gate_closed():
    spec = {**_spec("2.0", 2), "baseline_run_id": 1}
    cases = gate_cases([spec], [], [], {2: "succeeded"}, MEASURES)
    assert [c.outcome for c in cases] == ["error", "error"] and {c.kind for c in cases} == {"missing"}
    assert cases[0].message.startswith("missing: the nDCG@10 comparison of search 2.0 against 1.0 (baseline run 1) "
                                       "cannot be found")
    assert gate_exit_code(cases) == ExitCode.WAREHOUSE_ERROR
    # a baseline that failed in this run is why: the case is failed (exit 5), not missing
    cases = gate_cases([spec, _spec("1.0", 1)], [], [], {1: "failed", 2: "succeeded"}, MEASURES)
    assert {(c.version, c.kind, c.outcome) for c in cases} == {("2.0", "failed", "error"), ("1.0", "failed", "error")}
    assert gate_exit_code(cases) == ExitCode.VERSION_FAILED
    # the same with missing left out of the policy: not compared, and it passes
    assert {c.outcome for c in gate_cases([spec], [], [], {2: "succeeded"}, MEASURES,
                                          fail_on=parse_fail_on("regression"))} == {"passed"}


def test_fail_on_refuses_an_unknown_kind():
    with pytest.raises(InputError, match="unknown kind.*regresion.*use a comma-separated list of regression, floor"):
        parse_fail_on("regresion,floor")
    assert parse_fail_on("none") == frozenset() and parse_fail_on(None) == DEFAULT_FAIL_ON


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


def test_a_floor_fails_with_or_without_a_baseline_and_is_checked_on_the_chosen_value():
    from evalops.floors import check_floors

    aggs = [{"measure": "nDCG@10", "mean": 0.32, "ci_low": 0.28, "ci_high": 0.36}]
    [on_mean] = check_floors({"nDCG@10": 0.30}, aggs, on="mean", run_id=4)
    [on_low] = check_floors({"nDCG@10": 0.30}, aggs, on="lower_bound", severity="warning", run_id=4)
    [absent] = check_floors({"RR@10": 0.30}, aggs, run_id=4)
    assert (on_mean.breached, on_low.breached, absent.breached) == (False, True, True)
    assert on_low.describe() == ("nDCG@10 95% CI lower bound 0.2800 is under the floor 0.3 "
                                 "(mean 0.3200, 95% CI [0.2800, 0.3600])")
    assert "has no RR@10 score" in absent.describe()
    versions = [_spec("4.0", 4, baseline=None), _spec("2.0", 2)]
    decisions = [_decision("2.0", "nDCG@10", "improvement", 0.05)]
    [breach_2] = check_floors({"nDCG@10": 0.9}, aggs, run_id=2)
    cases = {(c.version, c.measure): c for c in gate_cases(versions, decisions, [], {4: "succeeded", 2: "succeeded"},
                                                           MEASURES, floors=[on_low, breach_2])}
    no_base = cases["4.0", "nDCG@10"]
    assert (no_base.outcome, no_base.kind) == ("failure", "floor")
    assert no_base.message.startswith("floor (warning): nDCG@10 95% CI lower bound 0.2800 is under the floor 0.3")
    assert no_base.message.endswith("not compared: no baseline yet (promote one)")
    assert (cases["2.0", "nDCG@10"].outcome, cases["2.0", "nDCG@10"].kind) == ("failure", "floor")
    assert "improvement: nDCG@10" in cases["2.0", "nDCG@10"].message
    assert cases["4.0", "RR@10"].outcome == "passed"  # no floor on RR@10 here
    assert gate_exit_code(cases.values()) == ExitCode.REGRESSION
    lenient = gate_cases(versions, decisions, [], {4: "succeeded", 2: "succeeded"}, MEASURES,
                         floors=[on_low, breach_2], fail_on=parse_fail_on("regression"))
    assert {c.outcome for c in lenient} == {"passed"}
    tree = junit_xml(list(cases.values()), suite="s")
    failure = next(c for c in tree.getroot().iter("testcase") if c.get("classname") == "search@4.0").find("failure")
    assert failure.get("type") == "floor" and "floor 0.3" in failure.get("message")
