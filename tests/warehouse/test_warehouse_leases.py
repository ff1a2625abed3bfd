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
