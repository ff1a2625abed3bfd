"""Column types that behave the same on PostgreSQL and SQLite.

* ``UTCDateTime``: stored as UTC; always read back timezone-aware in UTC. SQLite has no time zone and
  returns naive values, which are UTC by construction here. Naive input is refused rather than guessed.
* ``NaNFloat``: a double that keeps NaN. PostgreSQL's ``double precision`` stores NaN natively; SQLite
  turns a NaN parameter into NULL, so on SQLite NaN is written as the text ``'NaN'`` (a REAL column keeps
  text that is not a number literal as text) and decoded on the way out. NULL stays NULL on both.
  Infinity needs no encoding on either backend.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from sqlalchemy import DateTime, Double
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from evalops.util.utc import as_utc

__all__ = ["NaNFloat", "UTCDateTime", "SQLITE_NAN"]

SQLITE_NAN = "NaN"


class UTCDateTime(TypeDecorator[dt.datetime]):
    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        value = as_utc(value)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: dt.datetime | None, dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC)


class NaNFloat(TypeDecorator[float]):
    impl = Double
    cache_ok = True

    def bind_processor(self, dialect: Dialect) -> Any:
        if dialect.name != "sqlite":
            return super().bind_processor(dialect)

        # Replaces the whole chain on SQLite: the driver-level DOUBLE processor would turn 'NaN' back
        # into a float NaN, which sqlite3 then stores as NULL.
        def process(value: Any) -> Any:
            return self.process_bind_param(value, dialect)

        return process

    def result_processor(self, dialect: Dialect, coltype: Any) -> Any:
        # PostgreSQL's driver returns a double as a float (NaN included) or None: nothing to decode, and no
        # call per row and column (a year's trend page reads 1,825 rows of four of them).
        if dialect.name != "sqlite" and self.impl_instance.result_processor(dialect, coltype) is None:
            return None
        return super().result_processor(dialect, coltype)

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        value = float(value)
        if dialect.name == "sqlite" and math.isnan(value):
            return SQLITE_NAN
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> float | None:
        if value is None:
            return None
        return float(value)  # float("NaN") decodes the SQLite text encoding
