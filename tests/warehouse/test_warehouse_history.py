"""History queries over several days, versions, datasets and fingerprints."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from evalops.warehouse import latest_runs, measure_history, record_aggregates, runs_under_fingerprint
from warehouse_helpers import T0

DAYS = [T0 + dt.timedelta(days=i) for i in range(3)]


def aggregate(mean: float) -> pd.DataFrame:
    return pd.DataFrame({"measure": ["nDCG@10"], "n": [50], "mean": [mean], "ci_low": [mean - 0.1], "ci_high": [mean + 0.1]})


@pytest.fixture
def history(seed, engine):
    fp = seed.fingerprint()
    for i, day in enumerate(DAYS):
        for version, offset in (("v1", 0.0), ("v2", 0.05)):
            run = seed.run(version, fingerprint=fp, dag_run_id=f"scheduled__{day.date()}", logical_date=day)
            record_aggregates(engine, run.id, aggregate(0.5 + offset + i / 100), ci_level=0.95, ci_method="t")
    seed.run("v2", fingerprint=fp, dag_run_id="manual__late", logical_date=DAYS[-1] + dt.timedelta(days=1), status="failed")
    seed.run("v1", fingerprint=fp, dag_run_id="scheduled__prod", dataset="production", logical_date=DAYS[-1])
    other = seed.fingerprint(gold="gold-v2")
    seed.run("v1", fingerprint=other, dag_run_id="scheduled__new-gold", logical_date=DAYS[-1] + dt.timedelta(days=2))
    return fp, other


def test_measure_history_per_version_over_time(engine, history):
    frame = measure_history(engine, "bm25", "nDCG@10")
    assert len(frame) == 6
    assert list(frame["version"]) == ["v1", "v2"] * 3
    assert frame["mean"].round(6).tolist() == [0.5, 0.55, 0.51, 0.56, 0.52, 0.57]
    assert str(frame["logical_date"].dt.tz) == "UTC"
    assert frame["logical_date"].is_monotonic_increasing
    only_v2 = measure_history(engine, "bm25", "nDCG@10", versions=["v2"], since=DAYS[1])
    assert only_v2["mean"].round(6).tolist() == [0.56, 0.57]
    assert measure_history(engine, "bm25", "P@5").empty


def test_latest_run_per_version_skips_failed_runs_and_other_datasets(engine, history):
    fp, other = history
    frame = latest_runs(engine, retriever="bm25")
    assert list(frame["version"]) == ["v1", "v2"]
    assert list(frame["logical_date"]) == [DAYS[-1] + dt.timedelta(days=2), DAYS[-1]]
    under_fp = latest_runs(engine, retriever="bm25", fingerprint_hash=fp.hash)
    assert list(under_fp["logical_date"]) == [DAYS[-1], DAYS[-1]]
    assert list(latest_runs(engine, dataset="production")["dag_run_id"]) == ["scheduled__prod"]
    with_failed = latest_runs(engine, retriever="bm25", fingerprint_hash=fp.hash, statuses=("succeeded", "failed"))
    assert with_failed.set_index("version").loc["v2", "status"] == "failed"


def test_runs_under_a_fingerprint(engine, history):
    fp, other = history
    assert len(runs_under_fingerprint(engine, fp.hash)) == 8
    assert len(runs_under_fingerprint(engine, fp.hash, dataset="gold", statuses=("succeeded",))) == 6
    newer = runs_under_fingerprint(engine, other.hash)
    assert list(newer["gold_set_version"]) == ["gold-v2"]
    assert runs_under_fingerprint(engine, "0" * 64).empty


def test_a_second_result_for_the_same_logical_date_supersedes_the_first(seed, engine):
    from evalops.warehouse import latest_per_logical_date

    fp = seed.fingerprint()
    first = seed.run("v1", fingerprint=fp, dag_run_id="manual__a", logical_date=DAYS[0])
    record_aggregates(engine, first.id, aggregate(0.40), ci_level=0.95, ci_method="t")
    other_day = seed.run("v1", fingerprint=fp, dag_run_id="scheduled__b", logical_date=DAYS[1])
    record_aggregates(engine, other_day.id, aggregate(0.45), ci_level=0.95, ci_method="t")
    again = seed.run("v1", fingerprint=fp, dag_run_id="manual__c", logical_date=DAYS[0])  # `dags test` again
    record_aggregates(engine, again.id, aggregate(0.42), ci_level=0.95, ci_method="t")
    failed = seed.run("v1", fingerprint=fp, dag_run_id="manual__d", logical_date=DAYS[0], status="failed")
    v2 = seed.run("v2", fingerprint=fp, dag_run_id="manual__a", logical_date=DAYS[0])  # another version: its own
    record_aggregates(engine, v2.id, aggregate(0.5), ci_level=0.95, ci_method="t")

    shown = measure_history(engine, "bm25", "nDCG@10", versions=["v1"])
    assert list(shown["run_id"]) == [again.id, other_day.id]
    assert shown["mean"].round(6).tolist() == [0.42, 0.45]
    assert not shown["superseded"].any()
    everything = measure_history(engine, "bm25", "nDCG@10", versions=["v1"], include_superseded=True)
    assert sorted(everything["run_id"]) == sorted([first.id, again.id, other_day.id])
    marked = everything.set_index("run_id")
    assert bool(marked.loc[first.id, "superseded"]) and marked.loc[first.id, "superseded_by"] == again.id
    assert not marked.loc[again.id, "superseded"] and pd.isna(marked.loc[again.id, "superseded_by"])

    per_date = latest_per_logical_date(engine, retriever="bm25")
    assert list(zip(per_date["version"], per_date["run_id"])) == [("v1", again.id), ("v2", v2.id),
                                                                  ("v1", other_day.id)]
    with_failed = latest_per_logical_date(engine, retriever="bm25", versions=["v1"], statuses=("succeeded", "failed"))
    assert list(with_failed["run_id"]) == [failed.id, other_day.id]  # the failed re-run is the latest result
    kept = latest_per_logical_date(engine, retriever="bm25", versions=["v1"], include_superseded=True)
    assert set(kept[kept["superseded"]]["run_id"]) == {first.id}
    # the latest run per version is unaffected: one row per version
    assert list(latest_runs(engine, retriever="bm25")["run_id"]) == [other_day.id, v2.id]


def test_a_failed_run_is_a_measure_history_row_with_empty_cells_when_asked(engine, history):
    from evalops.warehouse.models import FINISHED_STATUSES

    frame = measure_history(engine, "bm25", "nDCG@10", versions=["v2"], statuses=FINISHED_STATUSES)
    assert list(frame["status"]) == ["succeeded"] * 3 + ["failed"]
    failed = frame.iloc[-1]
    assert failed["measure"] == "nDCG@10" and pd.isna(failed["n"]) and pd.isna(failed["mean"])
    assert pd.isna(failed["ci_low"]) and pd.isna(failed["ci_high"])
    assert str(frame["n"].dtype) == "Int64" and frame["n"].iloc[0] == 50
    # by default only scored runs; a scored run without the measure is never a row
    assert list(measure_history(engine, "bm25", "nDCG@10", versions=["v2"])["status"]) == ["succeeded"] * 3
    assert measure_history(engine, "bm25", "P@5", statuses=FINISHED_STATUSES)["status"].eq("failed").all()


@pytest.mark.parametrize(
    "query, message",
    [
        ({"retriever": "bm52"}, "no run of retriever 'bm52' is stored in the warehouse; stored retrievers: bm25"),
        ({"retriever": "bm25", "dataset": "prod"},
         "no run of bm25 on dataset 'prod' is stored in the warehouse; stored datasets of bm25: gold, production"),
        ({"dataset": "prod"}, "no run on dataset 'prod' is stored in the warehouse; stored datasets: gold, production"),
        ({"retriever": "bm25", "dataset": "gold", "versions": ["v1", "v3"]},
         "no run of version(s) 'v3' of bm25 on dataset gold is stored; stored versions: v1, v2"),
        ({"retriever": "bm25", "dataset": "gold", "measure": "ndcg@10"},
         "measure 'ndcg@10' is not stored for bm25 on dataset gold; stored measures: P@5, nDCG@10"),
    ],
)
def test_check_history_query_names_what_is_stored(engine, history, query, message):
    from evalops.errors import InputError
    from evalops.warehouse import check_history_query

    with pytest.raises(InputError) as raised:
        check_history_query(engine, **query)
    assert str(raised.value) == message


def test_check_history_query_accepts_what_is_stored_and_an_empty_warehouse(engine, seed):
    from evalops.errors import InputError
    from evalops.warehouse import check_history_query

    check_history_query(engine, dataset="gold")  # no runs yet: an empty history, not an error
    with pytest.raises(InputError, match="stored retrievers: none"):
        check_history_query(engine, retriever="bm25")
    seed.run("v1", fingerprint=seed.fingerprint(), status="failed")
    check_history_query(engine, retriever="bm25", dataset="gold", versions=["v1"], measure="nDCG@10")


def test_the_plain_rows_are_the_frames_rows(seed, engine, history):
    """``evalops history`` prints the ``*_rows`` twins (no pandas): the same rows, values and order."""
    from evalops.warehouse import baseline_history, promote_baseline
    from evalops.warehouse.baselines import baseline_history_rows
    from evalops.warehouse.history import latest_run_rows, measure_history_rows
    from evalops.warehouse.models import FINISHED_STATUSES

    again = seed.run("v1", fingerprint=history[0], dag_run_id="manual__again", logical_date=DAYS[0])
    record_aggregates(engine, again.id, aggregate(float("nan")), ci_level=0.95, ci_method="t")
    promote_baseline(engine, again.id, by="alice", reason="first")

    def same(rows, frame):
        assert [list(r) for r in rows] == [list(frame.columns)] * len(frame)
        for row, (_, expected) in zip(rows, frame.iterrows(), strict=True):
            for column, value in row.items():
                want = expected[column]
                if pd.isna(want):
                    assert value is None or value != value, (column, value)
                else:
                    assert value == (want.to_pydatetime() if isinstance(want, pd.Timestamp) else want), column

    for kwargs in ({}, {"statuses": FINISHED_STATUSES}, {"include_superseded": True, "versions": ["v1"]},
                   {"since": DAYS[1], "fingerprint_hash": history[0].hash}):
        rows = measure_history_rows(engine, "bm25", "nDCG@10", **kwargs)
        assert rows, kwargs
        same(rows, measure_history(engine, "bm25", "nDCG@10", **kwargs))
    for kwargs in ({}, {"retriever": "bm25", "statuses": FINISHED_STATUSES}, {"dataset": "production"}):
        same(latest_run_rows(engine, **kwargs), latest_runs(engine, **kwargs))
    same(baseline_history_rows(engine, "bm25"), baseline_history(engine, "bm25"))
