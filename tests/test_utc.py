"""The one time-zone policy (evalops.utc): aware datetimes become plain UTC ones; a naive one is refused."""

from __future__ import annotations

import datetime as dt

import pytest

from evalops.errors import ConfigError
from evalops.utc import UTC, as_utc


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
