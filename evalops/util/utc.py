"""The one time-zone policy: every datetime evalops stores, compares or passes on is aware, in UTC.

:func:`as_utc` is the one helper. A naive datetime (no ``tzinfo``) is refused with the name of what it
was (its zone would be a guess), never read as local time or silently as UTC. Two edges read naive values
on purpose, each by its own documented rule: SQLite has no time zone, so the warehouse's column type
(:class:`evalops.warehouse.types.UTCDateTime`) reads back the UTC it stored; and a time a person types on
the command line without a zone (``--interval-start``) is UTC, as its help says.

:func:`now` is the one clock: every "now" evalops records or compares reads it (a test checks that no other
module calls ``datetime.now``), so a test can set the time of a whole run with :func:`using_clock`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from evalops.errors import ConfigError

__all__ = ["UTC", "as_utc", "now", "using_clock"]

UTC = dt.UTC


def _system_clock() -> dt.datetime:
    return dt.datetime.now(UTC)


_clock: Callable[[], dt.datetime] = _system_clock


def now() -> dt.datetime:
    """The current time, aware, in UTC (from the clock :func:`using_clock` installs, else the system's)."""
    return as_utc(_clock(), "the clock's time")


@contextmanager
def using_clock(clock: Callable[[], dt.datetime] | dt.datetime) -> Iterator[None]:
    """Within the block, :func:`now` reads ``clock`` (a function, or a fixed aware datetime); the previous
    clock comes back afterwards."""
    global _clock
    previous = _clock
    if isinstance(clock, dt.datetime):
        at = as_utc(clock, "the fixed clock's time")

        def fixed() -> dt.datetime:
            return at

        _clock = fixed
    else:
        _clock = clock
    try:
        yield
    finally:
        _clock = previous


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
