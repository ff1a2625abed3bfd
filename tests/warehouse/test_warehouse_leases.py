"""Run leases: a running run lives while its lease is renewed; an expired one is marked abandoned, never read."""

from __future__ import annotations

import datetime as dt

from evalops.warehouse import abandon_expired_runs, get_run, renew_lease
from evalops.warehouse.history import latest_runs


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def test_a_running_run_has_a_lease_and_a_finished_one_has_none(seed, engine):
    running = seed.run("v1", status="running", lease_seconds=60)
    assert running.lease_expires_at is not None
    assert now() < running.lease_expires_at <= now() + dt.timedelta(seconds=61)
    done = seed.run("v1", status="succeeded", n_retries=7)
    assert done.id == running.id and done.lease_expires_at is None and done.n_retries == 7


def test_an_expired_lease_is_abandoned_by_the_next_run_with_the_time(seed, engine):
    stale = seed.run("v1", status="running", lease_seconds=1)
    alive = seed.run("v2", status="running", lease_seconds=3600)
    later = now() + dt.timedelta(seconds=5)
    assert abandon_expired_runs(engine, now=later) == [stale.id]
    row = get_run(engine, stale.id)
    assert row.status == "abandoned" and abs(row.abandoned_at - later) < dt.timedelta(milliseconds=1)
    assert "lease expired" in row.error
    assert get_run(engine, alive.id).status == "running"
    assert abandon_expired_runs(engine, now=later) == []  # idempotent


def test_a_renewed_lease_is_not_abandoned(seed, engine):
    run = seed.run("v1", status="running", lease_seconds=1)
    assert renew_lease(engine, [run.id], seconds=3600) == 1
    assert abandon_expired_runs(engine, now=now() + dt.timedelta(seconds=5)) == []
    finished = seed.run("v1", status="succeeded")
    assert renew_lease(engine, [finished.id]) == 0  # a finished run is not revived


def test_abandoned_and_running_runs_are_never_read_as_results(seed, engine):
    frame = __import__("warehouse_helpers").score_frame(["q1", "q2"], ("P@5", "nDCG@10"))
    seed.run("v1", status="succeeded", scores=frame)
    seed.run("v2", status="running", scores=frame, lease_seconds=1)
    abandon_expired_runs(engine, now=now() + dt.timedelta(seconds=5))
    seed.run("v3", status="running", scores=frame, lease_seconds=3600)
    seen = latest_runs(engine, retriever="bm25")
    assert set(seen["version"]) == {"v1"}


def test_a_re_run_of_a_finished_run_is_an_attempt_beside_it_until_its_final_write(seed, engine):
    from evalops.warehouse import load_scores

    frame = __import__("warehouse_helpers").score_frame(["q1", "q2"], ("P@5", "nDCG@10"))
    done = seed.run("v1", status="succeeded", scores=frame, contracts={"day": 1})
    later = done.logical_date + dt.timedelta(days=3)
    attempt = seed.run("v1", status="running", logical_date=later, contracts={"day": 2}, lease_seconds=60)
    assert attempt.id == done.id
    assert (attempt.status, attempt.started_at, attempt.finished_at, attempt.contracts) == (
        "succeeded", done.started_at, done.finished_at, {"day": 1})  # the finished row as it was
    assert attempt.attempt_started_at == later + dt.timedelta(minutes=1) and attempt.attempt_contracts == {"day": 2}
    assert attempt.lease_expires_at is not None and len(load_scores(engine, done.id)) == 4
    assert renew_lease(engine, [done.id], seconds=60) == 1  # the attempt's heartbeat

    final = seed.run("v1", status="partial", n_queries=2, n_failed=1, failed_query_ids=["q2"],
                     scores=frame[frame["query_id"] == "q1"], contracts=attempt.attempt_contracts)
    assert (final.status, final.contracts, final.attempt_started_at, final.attempt_contracts,
            final.lease_expires_at) == ("partial", {"day": 2}, None, None, None)
    assert len(load_scores(engine, done.id)) == 2


def test_an_expired_attempt_is_dropped_and_the_finished_run_kept(seed, engine):
    done = seed.run("v1", status="succeeded")
    seed.run("v1", status="running", lease_seconds=1)
    never = seed.run("v2", status="running", lease_seconds=1)
    assert abandon_expired_runs(engine, now=now() + dt.timedelta(seconds=5)) == [never.id]
    kept = get_run(engine, done.id)
    assert (kept.status, kept.abandoned_at, kept.error, kept.lease_expires_at, kept.attempt_started_at) == (
        "succeeded", None, None, None, None)
    assert renew_lease(engine, [done.id]) == 0  # a dropped attempt is not revived


def test_a_process_releases_its_runs_with_the_cause(seed, engine):
    from evalops.warehouse import release_runs

    done = seed.run("v1", status="succeeded")
    seed.run("v1", status="running", lease_seconds=3600)
    never = seed.run("v2", status="running", lease_seconds=3600)
    assert release_runs(engine, [done.id, never.id], "the run stopped at scoring: boom") == [never.id]
    released = get_run(engine, never.id)
    assert released.status == "abandoned" and released.error == "abandoned: the run stopped at scoring: boom"
    kept = get_run(engine, done.id)
    assert kept.status == "succeeded" and kept.lease_expires_at is None and kept.attempt_started_at is None
    assert release_runs(engine, [done.id, never.id], "again") == []  # idempotent


def test_a_running_attempt_cannot_bring_scores_nor_a_run_be_recorded_abandoned(seed, engine):
    import pytest

    from evalops.errors import InputError, WarehouseError
    from evalops.warehouse import load_scores

    frame = __import__("warehouse_helpers").score_frame(["q1", "q2"], ("P@5", "nDCG@10"))
    done = seed.run("v1", status="succeeded", scores=frame)
    with pytest.raises(WarehouseError, match="already finished"):
        seed.run("v1", status="running", scores=frame.iloc[:1])
    assert len(load_scores(engine, done.id)) == 4 and get_run(engine, done.id).lease_expires_at is None
    with pytest.raises(InputError, match="only when its lease expires"):
        seed.run("v1", status="abandoned")
