"""Recording runs and scores: idempotency, atomicity, NaN and time zones, on both backends."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pandas as pd
import pytest

import evalops.warehouse._bulk as bulk_module
from evalops.errors import AlignmentError, InputError, WarehouseError
from evalops.warehouse import (
    RunKey,
    find_run,
    get_run,
    load_aggregates,
    load_paired_scores,
    load_score_vectors,
    load_scores,
    record_aggregates,
    record_run,
    upsert_scores,
)
from warehouse_helpers import T0, score_frame, table_counts

QUERIES = [f"q{i:03d}" for i in range(50)]
MEASURES = ("P@5", "nDCG@10")


def aggregates_for(frame: pd.DataFrame) -> pd.DataFrame:
    grouped = frame.groupby("measure")["value"]
    out = grouped.agg(["mean", "count"]).reset_index().rename(columns={"count": "n"})
    out["ci_low"] = out["mean"] - 0.1
    out["ci_high"] = out["mean"] + 0.1
    return out


def test_record_run_round_trips_every_field(seed, engine):
    fp = seed.fingerprint()
    frame = score_frame(QUERIES, MEASURES)
    run = seed.run(
        fingerprint=fp,
        scores=frame,
        n_queries=50,
        n_failed=2,
        failed_query_ids=["q001", "q002"],
        aggregates=aggregates_for(frame),
        ci_level=0.95,
        ci_method="bootstrap-percentile",
    )
    assert run.key == RunKey("retrieval_eval", "scheduled__2024-05-01", "bm25", "v1", "gold")
    assert run.fingerprint == fp
    assert run.status == "succeeded"
    assert run.failed_query_ids == ("q001", "q002")
    assert run.logical_date == T0
    assert get_run(engine, run.id) == run
    assert find_run(engine, run.key) == run
    stored = load_scores(engine, run.id)
    expected = frame.sort_values(["measure", "query_id"], ignore_index=True)
    pd.testing.assert_frame_equal(stored, expected, check_dtype=False)
    aggregates = load_aggregates(engine, run.id)
    assert list(aggregates["measure"]) == list(MEASURES)
    assert set(aggregates["ci_method"]) == {"bootstrap-percentile"}


def test_writing_the_same_run_twice_leaves_the_same_rows(seed, engine):
    frame = score_frame(QUERIES, MEASURES)
    kwargs = dict(scores=frame, aggregates=aggregates_for(frame), ci_level=0.95, ci_method="t")
    first = seed.run(status="running", n_queries=50, **kwargs)
    counts = table_counts(engine)
    second = seed.run(status="succeeded", n_queries=50, **kwargs)
    assert table_counts(engine) == counts
    assert second.id == first.id
    assert second.status == "succeeded"
    assert counts["eval_runs"] == 1 and counts["query_scores"] == 100 and counts["run_aggregates"] == 2


def test_rewriting_scores_replaces_them(seed, engine):
    run = seed.run(scores=score_frame(QUERIES, MEASURES, seed=1))
    new = score_frame(QUERIES[:10], MEASURES, seed=2)
    seed.run(scores=new)
    stored = load_scores(engine, run.id)
    assert len(stored) == 20
    np.testing.assert_array_equal(
        stored["value"].to_numpy(), new.sort_values(["measure", "query_id"])["value"].to_numpy()
    )


def test_a_run_marker_without_scores_keeps_the_stored_scores(seed, engine):
    run = seed.run(scores=score_frame(QUERIES, MEASURES))
    seed.run(status="running")
    assert len(load_scores(engine, run.id)) == 100


def test_upsert_scores_replaces_only_the_measures_given(seed, engine):
    run = seed.run(scores=score_frame(QUERIES, MEASURES, seed=1))
    p5 = score_frame(QUERIES[:5], ["P@5"], seed=3)
    assert upsert_scores(engine, run.id, p5) == 5
    stored = load_scores(engine, run.id)
    assert (stored["measure"] == "P@5").sum() == 5
    assert (stored["measure"] == "nDCG@10").sum() == 50
    upsert_scores(engine, run.id, p5)
    assert len(load_scores(engine, run.id)) == 55


def test_a_failure_midway_through_the_score_insert_leaves_no_run(seed, engine, monkeypatch):
    fp = seed.fingerprint()
    before = table_counts(engine)
    real = {"postgresql": bulk_module._copy_scores, "sqlite": bulk_module._executemany_scores}

    def half_then_fail(conn, run_id, qids, mids, values):
        real[conn.dialect.name](conn, run_id, qids[: len(qids) // 2], mids[: len(qids) // 2], values[: len(qids) // 2])
        raise RuntimeError("injected failure after half the rows")

    monkeypatch.setattr(bulk_module, "_copy_scores", half_then_fail)
    monkeypatch.setattr(bulk_module, "_executemany_scores", half_then_fail)
    with pytest.raises(RuntimeError, match="injected"):
        seed.run(fingerprint=fp, scores=score_frame(QUERIES, MEASURES))
    after = table_counts(engine)
    assert after["eval_runs"] == before["eval_runs"] == 0
    assert after["query_scores"] == 0
    assert after == before


def test_a_failed_rewrite_keeps_the_previous_rows(seed, engine, monkeypatch):
    original = score_frame(QUERIES, MEASURES, seed=1)
    run = seed.run(status="succeeded", scores=original)

    def fail(*_args):
        raise RuntimeError("injected")

    import evalops.warehouse.runs as runs_module

    monkeypatch.setattr(runs_module, "write_aggregates", fail)
    with pytest.raises(RuntimeError):
        seed.run(
            status="failed",
            scores=score_frame(QUERIES[:3], MEASURES, seed=9),
            aggregates=aggregates_for(original),
            ci_level=0.95,
            ci_method="t",
        )
    assert get_run(engine, run.id).status == "succeeded"
    pd.testing.assert_frame_equal(
        load_scores(engine, run.id), original.sort_values(["measure", "query_id"], ignore_index=True), check_dtype=False
    )


@pytest.mark.parametrize(
    "frame, message",
    [
        (pd.DataFrame({"query_id": ["q1"], "value": [1.0]}), "missing column"),
        (pd.DataFrame({"query_id": ["q1"], "measure": ["MAP"], "value": [1.0]}), "not in the run's fingerprint"),
        (pd.DataFrame({"query_id": ["q1", "q1"], "measure": ["P@5"] * 2, "value": [1.0, 0.5]}), "more than one"),
        (pd.DataFrame({"query_id": ["q1", None], "measure": ["P@5"] * 2, "value": [1.0, 0.5]}), "row 1 has no query_id"),
        (pd.DataFrame({"query_id": ["q1", "q2"], "measure": ["P@5"] * 2, "value": [1.0, "high"]}), "row 1.*not a number"),
        (pd.DataFrame({"query_id": ["x" * 501], "measure": ["P@5"], "value": [1.0]}), "longer than 500"),
    ],
)
def test_bad_score_frames_are_refused_before_anything_is_written(seed, engine, frame, message):
    fp = seed.fingerprint()
    with pytest.raises(InputError, match=message):
        seed.run(fingerprint=fp, scores=frame)
    assert table_counts(engine)["eval_runs"] == 0


def test_a_run_needs_its_gold_set_and_snapshot_recorded(engine):
    from evalops.fingerprint import EvalFingerprint

    fp = EvalFingerprint.of("unknown-gold", "kb", ["P@5"], {})
    with pytest.raises(WarehouseError, match="record_gold_set_version"):
        record_run(
            engine,
            RunKey("d", "r", "bm25", "v1"),
            fingerprint=fp,
            logical_date=T0,
            status="running",
            started_at=T0,
        )
    assert table_counts(engine)["eval_fingerprints"] == 0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"status": "done"}, "status"),
        ({"n_queries": 3, "n_failed": 4}, "inconsistent"),
        ({"n_queries": 3, "n_failed": 1, "failed_query_ids": ["a", "b"]}, "inconsistent"),
        ({"logical_date": dt.datetime(2024, 5, 1)}, "no time zone"),
    ],
)
def test_bad_run_fields_are_refused(seed, engine, kwargs, message):
    with pytest.raises(InputError, match=message):
        seed.run(**kwargs)


@pytest.mark.parametrize("policy", [{"ci_method": "t"}, {"ci_level": 0.95}, {}])
def test_aggregates_without_their_ci_policy_are_refused_before_anything_is_written(seed, engine, policy):
    frame = score_frame(QUERIES, MEASURES)
    fp = seed.fingerprint()
    with pytest.raises(InputError, match=r"^recording aggregates needs ci_level and ci_method \(the CI policy\)$"):
        seed.run(fingerprint=fp, scores=frame, aggregates=aggregates_for(frame), **policy)
    assert table_counts(engine)["eval_runs"] == 0


@pytest.mark.parametrize("status", ["running", "succeeded"])
def test_recording_an_abandoned_run_again_clears_its_abandonment(seed, engine, status):
    from evalops.warehouse import abandon_expired_runs

    stale = seed.run(status="running", lease_seconds=1)
    later = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=5)
    assert abandon_expired_runs(engine, now=later) == [stale.id]
    assert get_run(engine, stale.id).abandoned_at is not None
    again = seed.run(status=status)
    assert (again.id, again.status, again.abandoned_at) == (stale.id, status, None)


def test_nan_is_stored_as_nan_and_null_stays_distinct(seed, engine):
    frame = pd.DataFrame(
        {
            "query_id": ["a", "b", "c", "d"],
            "measure": ["P@5"] * 4,
            "value": [float("nan"), 0.25, float("inf"), np.nan],
        }
    )
    run = seed.run(scores=frame)
    stored = load_scores(engine, run.id).set_index("query_id")["value"]
    assert math.isnan(stored["a"]) and math.isnan(stored["d"])
    assert stored["b"] == 0.25 and stored["c"] == math.inf
    aggregates = pd.DataFrame({"measure": ["P@5"], "n": [4], "mean": [np.nan], "ci_low": [np.nan], "ci_high": [1.0]})
    record_aggregates(engine, run.id, aggregates, ci_level=0.9, ci_method="t")
    row = load_aggregates(engine, run.id).iloc[0]
    assert math.isnan(row["mean"]) and math.isnan(row["ci_low"]) and row["ci_high"] == 1.0


def test_nan_survives_the_orm_type_too(seed, engine, backend):
    # The bulk path and the ORM column type must agree on the encoding.
    from sqlalchemy import select

    from evalops.warehouse.models import QueryScoreModel

    run = seed.run(scores=pd.DataFrame({"query_id": ["a"], "measure": ["P@5"], "value": [np.nan]}))
    with engine.connect() as conn:
        value = conn.execute(select(QueryScoreModel.value).where(QueryScoreModel.run_id == run.id)).scalar_one()
        raw = conn.exec_driver_sql("SELECT value FROM query_scores").scalar_one()
    assert math.isnan(value)
    assert raw is not None  # stored as NaN (PostgreSQL) or its text encoding (SQLite), never NULL


def test_datetimes_come_back_aware_utc(seed, engine):
    cest = dt.timezone(dt.timedelta(hours=2))
    local = dt.datetime(2024, 5, 1, 8, 30, tzinfo=cest)
    run = seed.run(logical_date=local)
    stored = get_run(engine, run.id)
    for value in (stored.logical_date, stored.started_at, stored.finished_at, stored.created_at):
        assert value.tzinfo is not None and value.utcoffset() == dt.timedelta(0)
    assert stored.logical_date == dt.datetime(2024, 5, 1, 6, 30, tzinfo=dt.UTC)


def test_score_vectors_are_aligned_by_sorted_query_id(seed, engine):
    frame = score_frame(["q2", "q10", "q1"], MEASURES).sample(frac=1, random_state=0)
    run = seed.run(scores=frame)
    vectors = load_score_vectors(engine, run.id)
    assert list(vectors.query_ids) == ["q1", "q10", "q2"]
    expected = frame[frame["measure"] == "P@5"].set_index("query_id").loc[["q1", "q10", "q2"], "value"]
    np.testing.assert_array_equal(vectors.values["P@5"], expected.to_numpy())
    assert vectors.values["P@5"].dtype == np.float64


def test_score_vectors_refuse_measures_over_different_queries(seed, engine):
    frame = pd.concat([score_frame(["q1", "q2"], ["P@5"]), score_frame(["q1"], ["nDCG@10"])])
    run = seed.run(scores=frame)
    with pytest.raises(AlignmentError, match="different queries"):
        load_score_vectors(engine, run.id)
    assert len(load_score_vectors(engine, run.id, ["P@5"]).query_ids) == 2


def test_paired_scores_line_up_two_runs(seed, engine):
    base = seed.run("v1", scores=score_frame(QUERIES, MEASURES, seed=1))
    cand = seed.run("v2", scores=score_frame(QUERIES[::-1], MEASURES, seed=2))
    paired = load_paired_scores(engine, base.id, cand.id, "nDCG@10")
    assert list(paired.query_ids) == sorted(QUERIES)
    base_frame = load_scores(engine, base.id).query("measure == 'nDCG@10'").set_index("query_id")
    cand_frame = load_scores(engine, cand.id).query("measure == 'nDCG@10'").set_index("query_id")
    np.testing.assert_array_equal(paired.baseline, base_frame.loc[paired.query_ids, "value"].to_numpy())
    np.testing.assert_array_equal(paired.candidate, cand_frame.loc[paired.query_ids, "value"].to_numpy())


def test_paired_scores_refuse_missing_queries_and_other_fingerprints(seed, engine):
    base = seed.run("v1", scores=score_frame(QUERIES, MEASURES))
    short = seed.run("v2", scores=score_frame(QUERIES[:-1], MEASURES))
    with pytest.raises(AlignmentError, match="1 only in the first"):
        load_paired_scores(engine, base.id, short.id, "P@5")
    other_fp = seed.fingerprint(gold="gold-v2")
    other = seed.run("v3", fingerprint=other_fp, scores=score_frame(QUERIES, MEASURES))
    with pytest.raises(WarehouseError, match="changed: gold_set_version"):
        load_paired_scores(engine, base.id, other.id, "P@5")


def test_datasets_are_kept_apart(seed, engine):
    gold = seed.run(dataset="gold", scores=score_frame(QUERIES, MEASURES))
    production = seed.run(dataset="production", scores=score_frame(QUERIES[:5], MEASURES))
    assert gold.id != production.id
    assert len(load_scores(engine, gold.id)) == 100
    assert len(load_scores(engine, production.id)) == 10


def test_unknown_run_ids_raise_warehouse_errors(engine):
    with pytest.raises(WarehouseError, match="no evaluation run with id 42"):
        get_run(engine, 42)
    with pytest.raises(WarehouseError, match="no evaluation run"):
        load_scores(engine, 42)


def test_recording_an_input_twice_must_agree(seed, engine):
    from evalops.warehouse import get_gold_set_version, record_gold_set_version

    seed.fingerprint()
    assert get_gold_set_version(engine, "gold-v1").n_queries == 3
    with pytest.raises(WarehouseError, match="different values"):
        record_gold_set_version(engine, "gold-v1", name="gold", n_queries=4, n_judgments=9)


def test_driver_errors_from_the_bulk_path_become_warehouse_errors(seed, engine, monkeypatch):
    # The bulk insert and fetch use the driver's cursor directly; its errors must still be typed.
    dbapi_error = engine.dialect.loaded_dbapi.Error

    def broken(*_args):
        raise dbapi_error("simulated driver failure")

    monkeypatch.setattr(bulk_module, "_copy_scores", broken)
    monkeypatch.setattr(bulk_module, "_executemany_scores", broken)
    with pytest.raises(WarehouseError, match="simulated driver failure"):
        seed.run(scores=score_frame(QUERIES, MEASURES))
    assert table_counts(engine)["eval_runs"] == 0
