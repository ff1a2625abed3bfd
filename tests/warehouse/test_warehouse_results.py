"""A/B results and alerts: upserts on natural keys, fingerprint checks, de-duplication and delivery."""

from __future__ import annotations

import datetime as dt
import math

import pytest
from warehouse_helpers import table_counts

from evalops.errors import InputError, WarehouseError
from evalops.warehouse import (
    ABTestResult,
    alert_dedup_key,
    list_alerts,
    load_ab_tests,
    mark_alert_delivery,
    record_ab_tests,
    record_alert,
)
from tests.conftest import comparison_of

DAY = dt.date(2024, 5, 1)


def result(baseline_id: int, candidate_id: int, measure: str = "nDCG@10", **changes) -> ABTestResult:
    values = dict(
        measure=measure,
        n=50,
        baseline_mean=0.52,
        candidate_mean=0.47,
        delta=-0.05,
        delta_ci_low=-0.08,
        delta_ci_high=-0.02,
        test="paired-t",
        p_value=0.003,
        p_adjusted=0.006,
        effect_size_dz=-0.41,
        effect_size_ci=[-0.7, -0.12],
        wins=10,
        ties=15,
        losses=25,
        decision="regression",
        reasons=["the interval lies below 0 but reaches past -0.01: a significant drop, size uncertain"],
        policy={"alpha": 0.05, "min_delta": 0.01, "correction": "holm"},
        severity="warning",
        criterion="significant",
        margin=0.01,
        interval_low=-0.09,
        interval_high=-0.01,
        interval_level=1 - 0.05 / 3,
        family_size=3,
    )
    return ABTestResult(comparison_of(**{**values, **changes}), baseline_run_id=baseline_id,
                        candidate_run_id=candidate_id, family="gold")


def test_ab_results_round_trip_and_upsert(seed, engine):
    base, cand = seed.run("v1"), seed.run("v2")
    stored = record_ab_tests(engine, [result(base.id, cand.id), result(base.id, cand.id, "P@5", p_value=None)])
    assert all(s.id is not None and s.created_at.tzinfo is not None for s in stored)
    first = stored[0]
    written = result(base.id, cand.id)
    assert first.comparison.to_record() == written.comparison.to_record()  # NaN (statistic) is no NaN's equal
    assert (first.baseline_run_id, first.candidate_run_id, first.family, list(first.segments)) == (
        written.baseline_run_id, written.candidate_run_id, written.family, list(written.segments))
    assert math.isnan(stored[1].comparison.p_value)  # undefined: None in the record, NaN in the comparison

    counts = table_counts(engine)
    again = record_ab_tests(engine, [result(base.id, cand.id, decision="no_change", reasons=[])])
    assert table_counts(engine) == counts
    assert again[0].id == first.id and again[0].comparison.decision == "no_change" and again[0].comparison.reasons == ()

    frame = load_ab_tests(engine, candidate_run_id=cand.id)
    assert list(frame["measure"]) == ["P@5", "nDCG@10"]
    assert list(frame["severity"]) == ["warning", "warning"] and list(frame["family_size"]) == [3, 3]
    assert frame["interval_level"].iloc[0] == pytest.approx(1 - 0.05 / 3)
    inconclusive = record_ab_tests(engine, [result(base.id, cand.id, decision="inconclusive", severity=None,
                                                   criterion=None, reason_code="partial_run")])
    assert (inconclusive[0].comparison.severity, inconclusive[0].comparison.reason_code) == (None, "partial_run")
    assert list(frame["decision"]) == ["regression", "no_change"]


def test_ab_results_across_fingerprints_are_refused(seed, engine):
    base = seed.run("v1")
    other = seed.run("v2", fingerprint=seed.fingerprint(kb="kb-2"))
    with pytest.raises(WarehouseError, match="changed: kb_snapshot_id"):
        record_ab_tests(engine, [result(base.id, other.id)])
    assert table_counts(engine)["ab_tests"] == 0


def test_ab_results_need_a_fingerprint_measure(seed, engine):
    base, cand = seed.run("v1"), seed.run("v2")
    with pytest.raises(InputError, match="MAP"):
        record_ab_tests(engine, [result(base.id, cand.id), result(base.id, cand.id, "MAP")])
    assert table_counts(engine)["ab_tests"] == 0


def test_an_alert_is_recorded_once_per_key_and_day(seed, engine):
    run = seed.run("v2")
    kwargs = dict(
        kind="regression",
        retriever="bm25",
        version="v2",
        measure="nDCG@10",
        fingerprint_hash=run.fingerprint.hash,
        day=DAY,
        severity="critical",
        message="nDCG@10 dropped by 0.05",
        payload={"delta": -0.05},
        run_id=run.id,
    )
    alert, created = record_alert(engine, **kwargs)
    assert created and alert.delivery_status == "pending" and alert.delivery_attempts == 0
    assert alert.dedup_key == alert_dedup_key("regression", "bm25", "v2", "nDCG@10", run.fingerprint.hash, DAY)
    again, created_again = record_alert(engine, **{**kwargs, "message": "re-run"})
    assert not created_again and again.id == alert.id and again.message == alert.message
    next_day, created_next = record_alert(engine, **{**kwargs, "day": DAY + dt.timedelta(days=1)})
    assert created_next and next_day.id != alert.id
    assert table_counts(engine)["alerts"] == 2


def test_delivery_is_marked_after_storing(seed, engine):
    alert, _ = record_alert(engine, kind="validation", retriever="bm25", day=DAY, severity="warning", message="m")
    failed = mark_alert_delivery(engine, alert.id, delivered=False, error="HTTP 503 from webhook")
    assert (failed.delivery_status, failed.delivery_error, failed.delivery_attempts) == (
        "undelivered",
        "HTTP 503 from webhook",
        1,
    )
    assert list(list_alerts(engine, delivery_status="undelivered")["id"]) == [alert.id]
    at = dt.datetime(2024, 5, 1, 7, tzinfo=dt.UTC)
    sent = mark_alert_delivery(engine, alert.id, delivered=True, at=at)
    assert (sent.delivery_status, sent.delivered_at, sent.delivery_error, sent.delivery_attempts) == (
        "delivered",
        at,
        None,
        2,
    )
    assert list_alerts(engine, delivery_status="undelivered").empty
    assert alert.dedup_key == "validation|bm25|-|-|-|2024-05-01"


def test_bad_alert_calls_are_refused(engine):
    with pytest.raises(InputError, match="severity"):
        record_alert(engine, kind="k", retriever="r", day=DAY, severity="loud", message="m")
    with pytest.raises(InputError, match="date"):
        record_alert(engine, kind="k", retriever="r", day=dt.datetime(2024, 5, 1), severity="info", message="m")
    with pytest.raises(InputError, match="error"):
        mark_alert_delivery(engine, 1, delivered=False)
    with pytest.raises(WarehouseError, match="no alert"):
        mark_alert_delivery(engine, 12345, delivered=True)


def test_the_look_counter_starts_again_when_the_baseline_or_the_candidate_changes(seed, engine):
    from evalops.warehouse import comparison_look

    day = dt.timedelta(days=1)
    t0 = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
    base_a = seed.run("a", retriever="base", dag_run_id="d0", logical_date=t0)
    base_b = seed.run("b", retriever="base", dag_run_id="d0b", logical_date=t0)
    cands = [seed.run("v2", dag_run_id=f"d{k}", logical_date=t0 + k * day) for k in range(1, 5)]
    # days 1 and 2 against baseline a, day 3 against baseline b
    for k, base in ((0, base_a), (1, base_a), (2, base_b)):
        record_ab_tests(engine, [result(base.id, cands[k].id)])
    assert comparison_look(engine, cands[3].id) == 4  # every earlier day of the candidate version
    assert comparison_look(engine, cands[3].id, base_a.id) == 3  # two earlier days against a
    assert comparison_look(engine, cands[3].id, base_b.id) == 2  # one earlier day against b
    other = seed.run("v3", dag_run_id="d9", logical_date=t0 + 9 * day)
    assert comparison_look(engine, other.id, base_a.id) == 1  # a new candidate version starts at 1


def _judge_run(engine, scope: str = "gold") -> int:
    from evalops.warehouse.judgments import record_judge_run

    return record_judge_run(engine, dag_id="retrieval_eval", dag_run_id="scheduled__2024-05-01", scope=scope, values={
        "judge": {"model": "m"}, "prompt": "p@1", "items": 0, "requests": 0, "cache_hits": 0, "input_tokens": 0,
        "output_tokens": 0, "cost": 0.0, "missing": 0, "missing_reasons": {}, "gate": {"status": "alerting"},
        "agreement": None, "results": {}})


def test_judge_label_comparisons_share_the_table_and_are_never_read_as_the_fingerprints(seed, engine):
    """A judge run's comparisons are ab_tests rows naming it, written by the one writer: a re-run of the step
    adds no rows and drops what it no longer compares; the readers of the fingerprint's labels (the decide
    step's, the results frame, the look counter) never see them, and the two kinds never share a measure."""
    from dataclasses import replace

    from evalops.warehouse import ab_test_results, comparison_look
    from evalops.warehouse.abtests import judge_ab_tests, record_judge_ab_tests

    base, cand = seed.run("v1"), seed.run("v2")
    record_ab_tests(engine, [result(base.id, cand.id)])
    judge_run_id = _judge_run(engine)

    def judged(measure: str, **changes) -> ABTestResult:
        return replace(result(base.id, cand.id, measure, **changes), family="judge-gold", judge_run_id=judge_run_id)

    stored = record_judge_ab_tests(engine, judge_run_id, [judged("judge:nDCG@3"), judged("judge:P@3")])
    assert [(s.comparison.measure, s.judge_run_id, s.family) for s in stored] == [
        ("judge:nDCG@3", judge_run_id, "judge-gold"), ("judge:P@3", judge_run_id, "judge-gold")]
    counts = table_counts(engine)
    again = record_judge_ab_tests(engine, judge_run_id, [judged("judge:nDCG@3", decision="no_change", reasons=[])])
    assert table_counts(engine)["ab_tests"] == counts["ab_tests"] - 1  # the re-run no longer compares P@3
    assert again[0].id == stored[0].id and again[0].comparison.decision == "no_change"
    assert [s.comparison.measure for s in judge_ab_tests(engine, [judge_run_id])[judge_run_id]] == ["judge:nDCG@3"]

    human = ab_test_results(engine, candidate_run_id=cand.id, baseline_run_id=base.id)
    assert [r.comparison.measure for r in human] == ["nDCG@10"] and human[0].judge_run_id is None
    assert list(load_ab_tests(engine)["measure"]) == ["nDCG@10"]
    assert comparison_look(engine, cand.id) == 1

    with pytest.raises(InputError, match="judge-label measure is stored only with the judge run"):
        record_ab_tests(engine, [result(base.id, cand.id, "judge:P@3")])
    with pytest.raises(InputError, match="needs a judge: measure"):
        record_judge_ab_tests(engine, judge_run_id, [replace(result(base.id, cand.id), judge_run_id=judge_run_id)])
    with pytest.raises(InputError, match="do not name judge run"):
        other = _judge_run(engine, "production")
        record_judge_ab_tests(engine, judge_run_id, [replace(judged("judge:P@3"), judge_run_id=other)])


def test_a_judge_run_is_recorded_with_its_comparisons_or_not_at_all(seed, engine):
    """record_judge_run with the run's comparisons stores both in one transaction: comparisons it cannot
    store (here: across fingerprints) leave neither the new run nor a changed record of an earlier attempt,
    whose comparisons stay whole; stored again, the same key keeps its id and adds no row."""
    from dataclasses import replace

    from evalops.warehouse.abtests import judge_ab_tests
    from evalops.warehouse.judgments import load_judge_runs, record_judge_run

    base, cand = seed.run("v1"), seed.run("v2")
    stranger = seed.run("v9", fingerprint=seed.fingerprint(gold="gold-v2"))
    values = {"judge": {"model": "m"}, "prompt": "p@1", "items": 3, "requests": 3, "cache_hits": 0, "input_tokens": 0,
              "output_tokens": 0, "cost": 0.0, "missing": 0, "missing_reasons": {}, "gate": {"status": "alerting"},
              "agreement": None, "results": {}}
    key = {"dag_id": "retrieval_eval", "dag_run_id": "scheduled__2024-05-01", "scope": "gold"}

    def judged(candidate: int, measure: str = "judge:P@3"):
        return lambda judge_run_id: [replace(result(base.id, candidate, measure), family="judge-gold",
                                             judge_run_id=judge_run_id)]

    with pytest.raises(WarehouseError, match="different fingerprints"):
        record_judge_run(engine, **key, values=values, comparisons=judged(stranger.id))
    assert load_judge_runs(engine).empty and table_counts(engine)["ab_tests"] == 0  # neither

    first = record_judge_run(engine, **key, values=values, comparisons=judged(cand.id))
    stored = [(s.id, s.created_at, s.comparison.measure) for s in judge_ab_tests(engine, [first])[first]]
    with pytest.raises(WarehouseError, match="different fingerprints"):
        record_judge_run(engine, **key, values={**values, "items": 7}, comparisons=judged(stranger.id))
    (row,) = load_judge_runs(engine).to_dict("records")
    assert row["id"] == first and row["items"] == 3  # the earlier attempt, whole
    assert [(s.id, s.created_at, s.comparison.measure) for s in judge_ab_tests(engine, [first])[first]] == stored

    again = record_judge_run(engine, **key, values=values, comparisons=judged(cand.id, "judge:nDCG@3"))
    assert again == first and len(load_judge_runs(engine)) == 1
    assert [s.comparison.measure for s in judge_ab_tests(engine, [first])[first]] == ["judge:nDCG@3"]
