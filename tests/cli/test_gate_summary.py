"""The gate's summary line says how many of its passes compared nothing (a first run, before a baseline is
promoted, passes every check without a comparison)."""

from __future__ import annotations

from evalops.cli.gate import _summary_lines
from evalops.gate import GateCase


def _case(version: str, message: str, decision: str | None = None, baseline: str | None = None) -> GateCase:
    return GateCase(retriever="search", version=version, measure="nDCG@10", outcome="passed", decision=decision,
                    message=message, baseline_version=baseline)


def test_a_gate_that_compared_nothing_says_so():
    cases = [_case("1.0", "not compared: no baseline yet (promote one)"),
             _case("2.0", "not compared: no baseline yet (promote one)")]
    assert _summary_lines(cases, 0)[0] == ("gate PASSED: 2 checks, 0 failures, 0 errors, 0 inconclusive, 2 passed "
                                           "(2 of them not compared: no baseline yet)")


def test_compared_passes_carry_no_note_and_each_kind_is_counted():
    compared = [_case("1.0", "the baseline version", baseline="1.0"),
                _case("2.0", "no change", decision="no_change", baseline="1.0")]
    assert _summary_lines(compared, 0)[0].endswith("0 inconclusive, 2 passed")
    mixed = compared + [_case("3.0", "regression on a quiet measure", decision="regression", baseline="1.0"),
                        _case("4.0", "not compared", baseline="1.0"),
                        _case("5.0", "not compared: no baseline yet (promote one)")]
    assert _summary_lines(mixed, 0)[0].endswith(
        "5 passed (1 of them a regression on a measure that does not alert; 1 of them not compared: no baseline yet; "
        "1 of them not compared)")
