"""The reminder cadence of a regression (pure): first, suppressed, reminder, severity and interval changes."""

from __future__ import annotations

import pytest

from evalops.alerting import Alert, ReminderPolicy, cadence, series_key
from evalops.alerting.cadence import SentAlert

POLICY = ReminderPolicy(remind_every_days=7, realert_shift=0.02)


def regression(day="2024-06-03", severity="critical", lo=-0.20, hi=-0.10, baseline="1.0", kind="regression"):
    return Alert(kind=kind, severity=severity, day=day, title="t", message="m", retriever="r", version="2.0",
                 measure="nDCG@10", fingerprint="fp",
                 details={"delta_ci_low": lo, "delta_ci_high": hi, "baseline_version": baseline, "query_set": "gold"})


LAST = SentAlert(alert_id=7, day="2024-06-02", severity="critical", delta_ci_low=-0.20, delta_ci_high=-0.10,
                 first_day="2024-05-30")


def test_the_first_alert_of_a_series_is_sent():
    decision = cadence(regression(), None, POLICY)
    assert decision.send and decision.reason == "first" and decision.first_day == "2024-06-03"


def test_an_unchanged_regression_is_suppressed_until_its_reminder():
    quiet = cadence(regression(day="2024-06-08", lo=-0.205, hi=-0.095), LAST, POLICY)
    assert not quiet.send and quiet.next_reminder == "2024-06-09"
    assert quiet.reason == ("already sent on 2024-06-02 (alert 7), unchanged; next reminder on 2024-06-09 "
                            "(alerting.remind_every_days 7)")
    due = cadence(regression(day="2024-06-09"), LAST, POLICY)
    assert due.send and due.reason.startswith("reminder: unchanged since 2024-05-30, last sent 2024-06-02")


@pytest.mark.parametrize("alert, reason", [
    (regression(severity="warning"), "severity changed (critical on 2024-06-02 -> warning)"),
    (regression(lo=-0.25), "the delta's interval moved by 0.0500 since 2024-06-02"),
    (regression(hi=-0.07), "the delta's interval moved by 0.0300 since 2024-06-02"),
    (regression(lo=None, hi=None), "the delta's interval appeared or disappeared"),
])
def test_a_changed_regression_alerts_again_at_once(alert, reason):
    decision = cadence(alert, LAST, POLICY)
    assert decision.send and decision.reason.startswith(reason) and decision.first_day == "2024-05-30"


def test_the_series_names_the_baseline_and_only_regressions_have_one():
    assert series_key(regression()) != series_key(regression(baseline="1.1"))
    assert series_key(regression()) == series_key(regression(day="2024-07-01"))
    assert series_key(regression(kind="retriever_failed")) is None
