"""Transaction and upsert plumbing shared by the repository modules."""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from sqlalchemy import Table, select, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from evalops.errors import EvalopsError, WarehouseError
from evalops.util import utc
from evalops.warehouse.direct import connect_timeout_hint, describe_error as direct_error
from evalops.warehouse.tables import measures as measures_table

__all__ = [
    "advisory_lock",
    "describe_error",
    "insert_for",
    "measure_ids",
    "now_utc",
    "transaction",
    "upsert_immutable",
]


def now_utc() -> dt.datetime:
    """The time a row records: :func:`evalops.util.utc.now`, the one clock."""
    return utc.now()


@contextlib.contextmanager
def transaction(engine: Engine | Connection, what: str, *, read_only: bool = False) -> Iterator[Connection]:
    """One database transaction: committed when the block ends, rolled back on any exception.

    ``read_only``: a reader's transaction, which takes no write lock: a deferred ``BEGIN`` on SQLite (a
    writer's is ``BEGIN IMMEDIATE``, :func:`evalops.warehouse.config.make_engine`; in WAL mode a reader
    then waits on no writer and no other reader), ``READ ONLY`` on PostgreSQL.

    Database errors become ``WarehouseError`` naming ``what`` failed; evalops errors pass through. That
    includes errors from the driver's own cursor (the bulk paths use it directly, bypassing SQLAlchemy).

    Given a ``Connection`` instead of an engine (a reader that makes several reads as one, such as a
    dashboard page: one connection checkout and one transaction instead of one per read), the block runs in
    that connection's transaction, which its owner ends.
    """
    driver_error = getattr(engine.dialect.loaded_dbapi, "Error", SQLAlchemyError)
    try:
        if isinstance(engine, Connection):
            yield engine
            return
        if not read_only:
            with engine.begin() as connection:
                yield connection
            return
        with engine.connect() as connection:
            connection.execution_options(evalops_read_only=True)  # read by the SQLite engine's BEGIN
            with connection.begin():
                if connection.dialect.name == "postgresql":
                    connection.exec_driver_sql("SET TRANSACTION READ ONLY")
                yield connection
    except EvalopsError:
        raise
    except (SQLAlchemyError, driver_error) as exc:
        detail = describe_error(exc, engine)
        if type(getattr(exc, "orig", exc)).__name__ == "ConnectionTimeout":  # psycopg's message names neither
            detail += connect_timeout_hint(engine.engine.url.host, engine.engine.url.port)
        raise WarehouseError(f"{what} failed and was rolled back: {detail}") from exc


def describe_error(exc: BaseException, engine: Any = None) -> str:
    """:func:`evalops.warehouse.direct.describe_error` (the driver's first line and its hints), the SQLite
    file named when ``engine`` is a SQLite one."""
    url = getattr(getattr(engine, "engine", engine), "url", None)
    return direct_error(exc, url.database if url is not None and url.get_backend_name() == "sqlite" else None)


def insert_for(connection: Connection, table: Table):
    """The dialect's INSERT construct, which has ``on_conflict_do_nothing`` / ``on_conflict_do_update``."""
    name = connection.dialect.name
    if name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    elif name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    else:  # config.normalise_url refuses other backends; this guards engines built elsewhere
        raise WarehouseError(f"the warehouse supports PostgreSQL and SQLite, not {name!r}")
    return insert(table)


def advisory_lock(connection: Connection, *key: str) -> None:
    """Serialise transactions that share ``key`` until commit (PostgreSQL advisory lock).

    SQLite needs nothing: every warehouse transaction starts with BEGIN IMMEDIATE, which already
    serialises writers.
    """
    if connection.dialect.name != "postgresql":
        return
    digest = hashlib.sha256("\x1f".join(key).encode("utf-8")).digest()
    lock_id = int.from_bytes(digest[:8], "big", signed=True)
    connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": lock_id})


def measure_ids(connection: Connection, names: Iterable[str]) -> dict[str, int]:
    """Ids of the given measure names, inserting the new ones.

    Names are inserted in sorted order so that two concurrent writers take row locks in the same order
    (no deadlock); ``ON CONFLICT DO NOTHING`` makes a concurrent insert of the same name harmless.
    """
    wanted = sorted(set(names))
    if not wanted:
        return {}
    stmt = insert_for(connection, measures_table).on_conflict_do_nothing(index_elements=["name"])
    connection.execute(stmt, [{"name": n} for n in wanted])
    rows = connection.execute(
        select(measures_table.c.name, measures_table.c.id).where(measures_table.c.name.in_(wanted))
    )
    return {name: id_ for name, id_ in rows}


def upsert_immutable(
    connection: Connection, table: Table, key: str, values: Mapping[str, Any], compare: Sequence[str], what: str
) -> Mapping[str, Any]:
    """Insert a content-addressed row once; a second write must agree on the ``compare`` columns.

    Returns the stored row. A different value under the same key means the key is not a content hash
    of what was written (or two writers disagree), which is an error, not something to overwrite.
    """
    connection.execute(insert_for(connection, table).on_conflict_do_nothing(index_elements=[key]), [dict(values)])
    stored = connection.execute(select(table).where(table.c[key] == values[key])).mappings().one()
    mismatched = [c for c in compare if stored[c] != values[c]]
    if mismatched:
        detail = ", ".join(f"{c}: stored {stored[c]!r}, new {values[c]!r}" for c in mismatched)
        raise WarehouseError(f"{what} {values[key]!r} is already recorded with different values ({detail})")
    return stored
