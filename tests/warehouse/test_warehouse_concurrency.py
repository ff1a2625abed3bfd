"""Concurrent writers in separate processes: nothing lost, nothing duplicated, one current baseline.

Run on both backends: PostgreSQL (row locks + advisory locks) and SQLite (BEGIN IMMEDIATE queues writers).
"""

from __future__ import annotations

import pandas as pd
import pytest

from evalops.warehouse import baseline_history, find_baseline, load_scores
from warehouse_helpers import promote_worker, run_workers, table_counts, write_run_worker

pytestmark = pytest.mark.slow
N_QUERIES = 10_000  # x 3 measures = 30,000 score rows per writer


def test_two_writers_of_different_runs_lose_nothing(engine):
    url = engine.url.render_as_string(hide_password=False)
    reports = run_workers(
        write_run_worker,
        [(url, "v1", "scheduled__a", N_QUERIES, 1), (url, "v2", "scheduled__a", N_QUERIES, 2)],
    )
    assert all(status == "ok" for status, *_ in reports), reports
    counts = table_counts(engine)
    assert counts["eval_runs"] == 2
    assert counts["query_scores"] == 2 * 3 * N_QUERIES
    assert counts["measures"] == 3 and counts["eval_fingerprints"] == 1
    for _, _, run_id in reports:
        assert len(load_scores(engine, run_id)) == 3 * N_QUERIES


def test_two_writers_of_the_same_run_leave_one_copy(engine):
    url = engine.url.render_as_string(hide_password=False)
    reports = run_workers(
        write_run_worker,
        [(url, "v1", "scheduled__same", N_QUERIES, 1), (url, "v1", "scheduled__same", N_QUERIES, 2)],
    )
    assert all(status == "ok" for status, *_ in reports), reports
    assert len({run_id for *_, run_id in reports}) == 1
    counts = table_counts(engine)
    assert counts["eval_runs"] == 1
    assert counts["query_scores"] == 3 * N_QUERIES


def test_simultaneous_promotions_leave_exactly_one_current_baseline(seed, engine):
    url = engine.url.render_as_string(hide_password=False)
    fp = seed.fingerprint()
    run_ids = [seed.run(f"v{i}", fingerprint=fp).id for i in range(2)]
    reports = run_workers(promote_worker, [(url, run_id, f"user{i}") for i, run_id in enumerate(run_ids)])
    assert all(status == "ok" for status, *_ in reports), reports
    history = baseline_history(engine, "bm25")
    assert len(history) == 2
    assert history["is_current"].sum() == 1
    current = find_baseline(engine, "bm25", fp).baseline
    assert current.id == history.loc[history["is_current"], "id"].item()
    # They queued: the second replaced the first, so a rollback restores the first.
    first, second = history.sort_values("id").to_dict("records")
    assert pd.isna(first["previous_id"]) and second["previous_id"] == first["id"]
    assert not first["is_current"] and second["is_current"]
