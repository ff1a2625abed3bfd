from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from evalops.pipeline.context import RunContext
from evalops.pipeline.planning import shard_bounds

UTC = dt.timezone.utc


def _airflow_context(logical, start, end, run_type="scheduled", run_after=None):
    dag_run = SimpleNamespace(run_id="scheduled__2024-06-02T03:00:00+00:00", dag_id="retrieval_eval",
                              logical_date=logical, run_after=run_after or logical,
                              run_type=SimpleNamespace(value=run_type))
    return {"dag_run": dag_run, "logical_date": logical, "data_interval_start": start, "data_interval_end": end}


def test_scheduled_run_uses_its_data_interval():
    logical = dt.datetime(2024, 6, 2, 3, tzinfo=UTC)
    ctx = RunContext.from_airflow(_airflow_context(logical, logical - dt.timedelta(days=1), logical))
    assert ctx.day == "2024-06-02"
    assert ctx.seed == 20240602
    assert (ctx.window_start, ctx.window_end) == (logical - dt.timedelta(days=1), logical)
    assert ctx.trigger == "schedule"
    assert ctx.label == "retrieval_eval/scheduled__2024-06-02T03:00:00+00:00"


def test_asset_triggered_run_without_logical_date_uses_run_after():
    after = dt.datetime(2024, 6, 5, 14, 30, tzinfo=UTC)
    ctx = RunContext.from_airflow(_airflow_context(None, None, None, "asset_triggered", run_after=after))
    assert ctx.day == "2024-06-05"
    assert ctx.window_start == dt.datetime(2024, 6, 4, tzinfo=UTC)  # the UTC day before, as logs are partitioned
    assert ctx.window_end == dt.datetime(2024, 6, 5, tzinfo=UTC)
    assert ctx.trigger == "asset"


def test_empty_interval_falls_back_to_the_day_before():
    logical = dt.datetime(2024, 6, 2, 3, tzinfo=UTC)
    ctx = RunContext.from_airflow(_airflow_context(logical, logical, logical, "manual"))
    assert ctx.window_start == dt.datetime(2024, 6, 1, tzinfo=UTC)
    assert ctx.window_end == dt.datetime(2024, 6, 2, tzinfo=UTC)


def test_naive_datetimes_are_refused_not_guessed():
    # Airflow's context datetimes are aware; a naive one would be a guess (evalops.util.utc, the one policy).
    from evalops.errors import ConfigError

    logical = dt.datetime(2024, 6, 2, 3)
    with pytest.raises(ConfigError, match="logical_date must be a timezone-aware datetime"):
        RunContext.from_airflow(_airflow_context(logical, None, None))


def test_datetime_subclasses_become_plain_datetimes():
    class Pendulumish(dt.datetime):
        pass

    logical = Pendulumish(2024, 6, 2, 3, tzinfo=UTC)
    ctx = RunContext.from_airflow(_airflow_context(logical, logical - dt.timedelta(days=1), logical))
    for value in (ctx.anchor, ctx.window_start, ctx.window_end):
        assert type(value) is dt.datetime and value.tzinfo == UTC


def test_for_day_is_stable():
    a, b = RunContext.for_day("2024-06-02"), RunContext.for_day(dt.date(2024, 6, 2))
    assert a == b and a.run_id == "cli__2024-06-02" and a.seed == 20240602


@pytest.mark.parametrize("n, shards", [(60, 1), (60, 7), (61, 8), (5, 5), (0, 1), (13, 4)])
def test_shards_partition_the_queries(n, shards):
    covered = []
    sizes = []
    for s in range(shards):
        start, stop = shard_bounds(n, shards, s)
        covered += list(range(start, stop))
        sizes.append(stop - start)
    assert covered == list(range(n))
    assert max(sizes) - min(sizes) <= 1
