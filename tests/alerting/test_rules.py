from __future__ import annotations


import pytest

from evalops.alerting import AlertKind, dedup_key, regression_alerts, retriever_alert, validation_alert

POLICY = {"alpha": 0.05, "min_delta": 0.01, "alert_on": "warning", "correction": "holm"}
TEXT = {"q7": "refund for order ORDER-2024, mail me at jane.doe@example.com", "q9": "support hours"}


def scrub(text: str) -> str:
    return text.replace("jane.doe@example.com", "[EMAIL]")


def test_only_regression_decisions_raise_alerts(context, comparison_factory):
    comparisons = {
        "nDCG@10": comparison_factory("regression"),
        "P@5": comparison_factory("inconclusive"),
        "R@100": comparison_factory("no_change"),
        "RR@10": comparison_factory("improvement"),
    }
    alerts = regression_alerts(comparisons, context, policy=POLICY, query_text=TEXT, scrub=scrub)
    assert [a.measure for a in alerts] == ["nDCG@10"]
    assert alerts[0].kind == AlertKind.REGRESSION


def test_message_carries_everything_an_on_call_engineer_needs(context, comparison_factory):
    (alert,) = regression_alerts(
        {"nDCG@10": comparison_factory()}, context, policy=POLICY, query_text=TEXT, scrub=scrub
    )
    m = alert.message
    for expected in (
        "handbook-search",
        "v3-degraded",
        "baseline version: v1",
        "nDCG@10: 0.6125 -> 0.4875",
        "delta -0.1250 (95% CI -0.1700 .. -0.0800)",
        "p (reported test) = 1.2e-04",
        "adjusted p (decision) = 4.8e-04",
        "d_z = -0.71",
        "n = 64",
        "wins/ties/losses = 3/20/41",
        "q7: 1.0000 -> 0.0000",
        "ORDER-2024",
        "fingerprint: fp0123456789abcdef",
        "report: /tmp/reports/run-2/report.html",
        "alpha=0.05",
    ):
        assert expected in m, expected
    assert "jane.doe@example.com" not in m and "[EMAIL]" in m
    assert alert.details["worst_queries"][0]["delta"] == pytest.approx(-1.0)
    assert alert.details["policy"] == POLICY


def test_a_comparison_object_alerts_as_its_record(context):
    """One shape: an evalops.stats.Comparison is read through its JSON record (no attribute sniffing)."""
    import numpy as np

    from evalops.stats import align, compare

    rng = np.random.default_rng(3)
    base = rng.uniform(0.5, 0.9, 64)
    paired = align((list(map(str, range(64))), base.tolist()), (list(map(str, range(64))), (base - 0.2).tolist()))
    comparison = compare(paired, measure="nDCG@10")
    assert comparison.decision == "regression"
    (from_object,) = regression_alerts({"nDCG@10": comparison}, context, policy=POLICY, query_text={}, scrub=scrub)
    (from_record,) = regression_alerts({"nDCG@10": comparison.to_record()}, context, policy=POLICY,
                                       query_text={}, scrub=scrub)
    assert from_object == from_record and from_object.details["n"] == 64


def test_worst_queries_as_tuples(context, comparison_factory):
    record = comparison_factory(worst_queries=[("q9", 0.8, 0.1)])
    (alert,) = regression_alerts({"m": record}, context, policy=POLICY, query_text=TEXT, scrub=scrub)
    assert alert.details["worst_queries"][0]["text"] == "support hours"


def test_dedup_key_is_per_version_measure_fingerprint_and_day(context, comparison_factory):
    def key(**changes):
        ctx = context.__class__(**{**context.__dict__, **changes})
        (a,) = regression_alerts({"nDCG@10": comparison_factory()}, ctx, policy=POLICY, query_text={}, scrub=scrub)
        return a.dedup_key

    base = key()
    assert key() == base
    assert key(report_location="/elsewhere") == base  # where the report is does not make a new alert
    assert key(version="v4") != base
    assert key(fingerprint="other") != base
    assert key(day="2024-06-03") != base
    other_measure = regression_alerts(
        {"P@5": comparison_factory()}, context, policy=POLICY, query_text={}, scrub=scrub
    )[0].dedup_key
    assert other_measure != base


def test_dedup_key_format():
    assert dedup_key("regression", "r", "v2", "nDCG@10", "fp", "2024-06-02") == "regression|r|v2|nDCG@10|fp|2024-06-02"
    assert dedup_key("k", "r", None, None, None, "d") == "k|r|-|-|-|d"


def test_validation_alert():
    a = validation_alert(stage="gold_set", summary="expect unique query ids: 2 rows failed", day="2024-06-02",
                         source="include/goldset")
    assert a.kind == "validation_failed:gold_set" and a.retriever == "*"
    logs = validation_alert(stage="query_logs", summary="bad", day="2024-06-02")
    assert logs.dedup_key != a.dedup_key  # two contracts failing on one day are two alerts
    assert "no metric rows were written" in a.message
    assert "2 rows failed" in a.message
    same = validation_alert(stage="gold_set", summary="different wording", day="2024-06-02", source="include/goldset")
    assert same.dedup_key == a.dedup_key


def test_retriever_alerts_failed_and_partial():
    failed = retriever_alert(retriever="r", version="v", fingerprint="f", day="d", error="connection refused")
    partial = retriever_alert(retriever="r", version="v", fingerprint="f", day="d",
                              failed_query_ids=["q2", "q1"], n_queries=60)
    assert failed.kind == AlertKind.RETRIEVER_FAILED and "connection refused" in failed.message
    assert partial.kind == AlertKind.RETRIEVER_PARTIAL
    assert "2 of 60 queries failed" in partial.title
    assert "q1, q2" in partial.message
    assert failed.dedup_key != partial.dedup_key


def test_alert_identity_matches_the_warehouse_key(context, comparison_factory):
    import datetime as dt

    from evalops.warehouse import alert_dedup_key

    (regression,) = regression_alerts({"nDCG@10": comparison_factory()}, context, policy=POLICY, query_text={},
                                      scrub=scrub)
    stage = validation_alert(stage="gold_set", summary="x", day="2024-06-02")
    for alert in (regression, stage):
        assert alert.dedup_key == alert_dedup_key(alert.kind, alert.retriever, alert.version, alert.measure,
                                                  alert.fingerprint, dt.date.fromisoformat(alert.day))


def test_severity_criterion_interval_margin_and_family_are_in_the_alert(context, comparison_factory):
    record = comparison_factory(severity="warning", criterion="significant", margin=0.01, interval_low=-0.19,
                                interval_high=-0.002, interval_level=1 - 0.05 / 3, family_size=3, alert=True,
                                reasons=["the interval lies below 0 but reaches past -0.01: a significant drop"])
    (alert,) = regression_alerts({"nDCG@10": record}, context, policy=POLICY, query_text=TEXT, scrub=scrub)
    assert alert.severity == "warning" and alert.title.startswith("Regression:")
    m = alert.message
    assert "severity: warning   criterion: significant (significant drop, size uncertain" in m
    assert "decision interval: -0.1900 .. -0.0020 at 98.33%   margin: 0.01   family size: 3" in m
    assert alert.details["criterion"] == "significant" and alert.details["family_size"] == 3


def test_regressions_the_policy_does_not_notify_raise_nothing(context, comparison_factory):
    quiet = comparison_factory(severity="warning", criterion="significant", alert=False)
    assert regression_alerts({"nDCG@10": quiet}, context, policy=POLICY, query_text=TEXT, scrub=scrub) == []


def test_the_alert_prints_the_judged_coverage_and_its_threshold(context, comparison_factory):
    judged = {"measure": "Judged@10", "baseline": 0.8, "candidate": 0.75, "difference": -0.05,
              "unjudged_documents": 17}
    record = comparison_factory(severity="critical", criterion="material", alert=True, judged_coverage=judged)
    policy = {**POLICY, "max_judged_coverage_drop": 0.1}
    (alert,) = regression_alerts({"nDCG@10": record}, context, policy=policy, query_text=TEXT, scrub=scrub)
    assert ("judged coverage (Judged@10): baseline 0.800 -> candidate 0.750 (-0.050); 17 unjudged documents in "
            "the top k of either version") in alert.message
    assert "max_judged_coverage_drop=0.1" in alert.message
    assert alert.details["judged_coverage"] == judged


def test_the_alert_prints_the_bounds_and_why_the_judged_delta_decided(context, comparison_factory):
    """The consistent bounds and the condensed lists are printed beside the judged delta; when the judged
    coverage fell by no more than its threshold, the alert says the judged delta decided."""
    policy = {**POLICY, "max_judged_coverage_drop": 0.1}
    judged = {"measure": "Judged@10", "baseline": 0.8, "candidate": 0.75, "difference": -0.052,
              "unjudged_documents": 17, "bound": "pair", "holes_pessimistic_delta": -0.31, "condensed_delta": -0.08}
    record = comparison_factory(severity="critical", criterion="material", alert=True,
                                judged_coverage={**judged, "holes_relevant_delta": 0.52})
    (alert,) = regression_alerts({"nDCG@10": record}, context, policy=policy, query_text=TEXT, scrub=scrub)
    assert ("delta -0.1250 as judged, bounds of the unjudged documents -0.3100 .. +0.5200, condensed lists -0.0800 "
            "(the judged coverage fell by 0.052, within max_judged_coverage_drop 0.1, so the judged delta "
            "decides)") in alert.message, alert.message


def test_a_drop_the_unjudged_documents_leave_unconfirmed_alerts_as_its_own_kind(context, comparison_factory):
    """``inconclusive (unjudged_documents)`` with a drop as judged is never silent: under the default policy
    it raises an ``unjudged`` alert (a warning) whose last reason says what would decide it; a gain, or a
    policy without ``unjudged``, raises nothing; a partial run's drop is ``partial_run``."""
    from evalops.failing import DEFAULT_FAIL_ON

    held = comparison_factory(decision="inconclusive", severity=None, criterion=None, alert=False,
                              reason_code="unjudged_documents",
                              reasons=["why", "unjudged_documents: ... judge the 40 unjudged documents to decide it"])
    (alert,) = regression_alerts({"nDCG@10": held}, context, policy=POLICY, query_text=TEXT, scrub=scrub,
                                 fail_on=DEFAULT_FAIL_ON)
    assert (alert.kind, alert.severity) == ("unjudged", "warning")
    assert alert.title.startswith("Unconfirmed drop (unjudged documents): handbook-search v3-degraded on nDCG@10")
    assert "judge the 40 unjudged documents to decide it" in alert.message
    assert alert.dedup_key.startswith("unjudged|handbook-search|v3-degraded|nDCG@10|")
    assert regression_alerts({"nDCG@10": held}, context, policy=POLICY, query_text=TEXT, scrub=scrub,
                             fail_on=DEFAULT_FAIL_ON - {"unjudged"}) == []
    gain = {**held, "delta": 0.05}
    assert regression_alerts({"nDCG@10": gain}, context, policy=POLICY, query_text=TEXT, scrub=scrub,
                             fail_on=DEFAULT_FAIL_ON) == []
    partial = {**held, "reason_code": "partial_run"}
    (alert,) = regression_alerts({"nDCG@10": partial}, context, policy=POLICY, query_text=TEXT, scrub=scrub,
                                 fail_on=DEFAULT_FAIL_ON)
    assert alert.kind == "partial_run" and alert.title.startswith("Unconfirmed drop (partial run)")


def test_with_no_single_margin_the_alert_quotes_the_margin_table(context, comparison_factory):
    """``min_delta`` unset: the per-measure table decided, and the alert says what it holds."""
    (alert,) = regression_alerts({"nDCG@10": comparison_factory()}, context, policy={"alpha": 0.05, "min_delta": None},
                                 query_text=TEXT, scrub=scrub)
    assert "default_margins={" in alert.message and "'nDCG': 0.02" in alert.message
    assert alert.details["policy"]["default_margins"]["RR"] == 0.03
    (fixed,) = regression_alerts({"nDCG@10": comparison_factory()}, context, policy={"alpha": 0.05, "min_delta": 0.01},
                                 query_text=TEXT, scrub=scrub)
    assert "default_margins" not in fixed.message
