"""The one time-zone policy (evalops.util.utc): aware datetimes become plain UTC ones; a naive one is refused."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from evalops.errors import ConfigError
from evalops.util.utc import UTC, as_utc, now, using_clock


class Pendulumish(dt.datetime):
    """A datetime subclass, as Airflow hands out."""


def test_an_aware_datetime_in_any_zone_becomes_a_plain_utc_datetime():
    plus2 = dt.timezone(dt.timedelta(hours=2))
    value = as_utc(Pendulumish(2025, 3, 1, 2, 30, tzinfo=plus2))
    assert value == dt.datetime(2025, 3, 1, 0, 30, tzinfo=UTC) and type(value) is dt.datetime
    assert value.tzinfo is UTC


@pytest.mark.parametrize("value", [dt.datetime(2025, 3, 1), "2025-03-01T00:00:00+00:00", dt.date(2025, 3, 1), None])
def test_anything_else_is_refused_naming_what_it_was(value):
    with pytest.raises(ConfigError, match="logical date must be a timezone-aware datetime"):
        as_utc(value, "logical date")


def test_now_is_aware_utc_and_follows_the_system_clock():
    before = dt.datetime.now(dt.UTC)
    value = now()
    after = dt.datetime.now(dt.UTC)
    assert before <= value <= after and value.tzinfo is UTC and type(value) is dt.datetime


def test_using_clock_sets_the_time_everything_records_then_restores_it():
    from evalops.warehouse._db import now_utc

    at = dt.datetime(2025, 3, 1, 2, 30, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    with using_clock(at):
        assert now() == now_utc() == dt.datetime(2025, 3, 1, 0, 30, tzinfo=UTC)
        assert now().tzinfo is UTC
    ticks = iter([dt.datetime(2025, 1, 1, tzinfo=UTC), dt.datetime(2025, 1, 2, tzinfo=UTC)])
    with using_clock(lambda: next(ticks)):
        assert [now().day, now().day] == [1, 2]
    assert abs(now() - dt.datetime.now(dt.UTC)) < dt.timedelta(minutes=5)


def test_a_clock_giving_naive_times_is_refused():
    with pytest.raises(ConfigError, match="the fixed clock's time must be a timezone-aware datetime"):
        with using_clock(dt.datetime(2025, 3, 1)):
            pass
    with using_clock(lambda: dt.datetime(2025, 3, 1)), pytest.raises(ConfigError, match="the clock's time"):
        now()


def test_no_module_but_evalops_utc_reads_the_system_clock():
    """One clock: ``datetime.now`` / ``utcnow`` / ``date.today`` appear only in evalops/util/utc.py."""
    import evalops

    root = Path(evalops.__file__).parent
    pattern = re.compile(r"\b(datetime\.now|\.utcnow|date\.today)\(")
    found = [f"{path.relative_to(root)}:{n}" for path in sorted(root.rglob("*.py")) if path.name != "utc.py"
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if pattern.search(line)]
    assert found == [], f"read the time with evalops.util.utc.now(): {found}"


def test_one_spelling_of_the_utc_zone():
    """The zone is ``datetime.UTC`` (``evalops.util.utc.UTC`` is the same object); ``timezone.utc`` is not spelt."""
    import evalops

    root = Path(evalops.__file__).parent
    pattern = re.compile(r"\btimezone\.utc\b")
    found = [f"{path.relative_to(root)}:{n}" for path in sorted(root.rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if pattern.search(line)]
    assert found == [], f"write datetime.UTC: {found}"
    assert UTC is dt.UTC
