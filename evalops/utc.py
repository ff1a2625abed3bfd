"""The one time-zone policy: every datetime evalops stores, compares or passes on is aware, in UTC.

:func:`as_utc` is the one helper. A naive datetime (no ``tzinfo``) is refused with the name of what it
was (its zone would be a guess), never read as local time or silently as UTC. Two edges read naive values
on purpose, each by its own documented rule: SQLite has no time zone, so the warehouse's column type
(:class:`evalops.warehouse.types.UTCDateTime`) reads back the UTC it stored; and a time a person types on
the command line without a zone (``--interval-start``) is UTC, as its help says.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from evalops.errors import ConfigError

__all__ = ["UTC", "as_utc"]

UTC = dt.timezone.utc


def as_utc(value: Any, what: str = "datetime") -> dt.datetime:
    """``value`` (an aware datetime) as a plain ``datetime.datetime`` in UTC (a pendulum ``DateTime`` from
    Airflow becomes a plain one: they serialise differently). Raises :class:`~evalops.errors.ConfigError`
    naming ``what`` for anything else, a naive datetime included."""
    if not isinstance(value, dt.datetime):
        raise ConfigError(f"{what} must be a timezone-aware datetime, got {type(value).__name__} {value!r}")
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise ConfigError(f"{what} must be a timezone-aware datetime: {value.isoformat()} has no time zone "
                          "(pass it in UTC)")
    v = value.astimezone(UTC)
    return dt.datetime(v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond, tzinfo=UTC)
