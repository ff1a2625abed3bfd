"""Content-addressed inputs: gold-set versions, knowledge-base snapshots and eval fingerprints.

Each is written once under its natural key. Writing the same key again is a no-op when the content
agrees and a ``WarehouseError`` when it does not (a version id must name one content).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from typing import Any, TypeVar

from sqlalchemy import Table, select
from sqlalchemy.engine import Connection, Engine

from evalops.errors import WarehouseError
from evalops.fingerprint import EvalFingerprint
from evalops.util.utc import as_utc
from evalops.warehouse._db import now_utc, transaction, upsert_immutable
from evalops.warehouse.direct import check_fingerprint_prefix, one_fingerprint
from evalops.warehouse.domain import GoldSetVersion, KBSnapshot
from evalops.warehouse.tables import fingerprints, gold_sets, kb_snapshots

__all__ = [
    "find_fingerprint_hash",
    "get_fingerprint",
    "get_gold_set_version",
    "get_kb_snapshot",
    "record_gold_set_version",
    "record_kb_snapshot",
]

_Input = TypeVar("_Input", GoldSetVersion, KBSnapshot)


def record_gold_set_version(
    engine: Engine,
    version: str,
    *,
    name: str,
    n_queries: int,
    n_judgments: int,
    source: str | None = None,
    meta: Mapping[str, Any] | None = None,
    recorded_at: dt.datetime | None = None,
) -> GoldSetVersion:
    """Record a gold-set version (``version`` is its content hash). Idempotent."""
    own = {"version": version, "name": name, "n_queries": int(n_queries), "n_judgments": int(n_judgments)}
    return _record(engine, GoldSetVersion, own, source, meta, recorded_at)


def record_kb_snapshot(
    engine: Engine,
    snapshot_id: str,
    *,
    n_documents: int,
    content_hash: str,
    source: str | None = None,
    meta: Mapping[str, Any] | None = None,
    recorded_at: dt.datetime | None = None,
) -> KBSnapshot:
    """Record a knowledge-base snapshot. Idempotent."""
    own = {"snapshot_id": snapshot_id, "n_documents": int(n_documents), "content_hash": content_hash}
    return _record(engine, KBSnapshot, own, source, meta, recorded_at)


def get_gold_set_version(engine: Engine, version: str) -> GoldSetVersion | None:
    return _get(engine, GoldSetVersion, version)


def get_kb_snapshot(engine: Engine, snapshot_id: str) -> KBSnapshot | None:
    return _get(engine, KBSnapshot, snapshot_id)


# A recorded input's table, key column, the columns a second write must agree on, and its name in messages;
# the dataclass's fields are the table's columns.
_INPUTS: dict[type, tuple[Table, str, tuple[str, ...], str]] = {
    GoldSetVersion: (gold_sets, "version", ("n_queries", "n_judgments"), "gold-set version"),
    KBSnapshot: (kb_snapshots, "snapshot_id", ("n_documents", "content_hash"), "knowledge-base snapshot"),
}


def _record(engine: Engine, cls: type[_Input], own: Mapping[str, Any], source: str | None,
            meta: Mapping[str, Any] | None, recorded_at: dt.datetime | None) -> _Input:
    """Record one input (its ``own`` columns, where it came from, its metadata, when), once under its key."""
    table, key, compare, what = _INPUTS[cls]
    values = {**own, "source": source, "meta": dict(meta or {}),
              "created_at": as_utc(recorded_at) if recorded_at else now_utc()}
    with transaction(engine, f"recording {what} {values[key]!r}") as conn:
        row = upsert_immutable(conn, table, key, values, compare, what)
    return _of(cls, row)


def _get(engine: Engine, cls: type[_Input], value: str) -> _Input | None:
    table, key, _, what = _INPUTS[cls]
    with transaction(engine, f"reading a {what}") as conn:
        row = conn.execute(select(table).where(table.c[key] == value)).mappings().first()
    return _of(cls, row) if row else None


def _of(cls: type[_Input], row: Mapping[str, Any]) -> _Input:
    return cls(**{field.name: row[field.name] for field in dataclasses.fields(cls)})


def get_fingerprint(engine: Engine, fingerprint_hash: str) -> EvalFingerprint | None:
    with transaction(engine, "reading a fingerprint") as conn:
        row = conn.execute(select(fingerprints).where(fingerprints.c.hash == fingerprint_hash)).mappings().first()
    return fingerprint_from_row(row) if row else None


def find_fingerprint_hash(engine: Engine, prefix: str) -> str:
    """The full stored hash that starts with ``prefix`` (reports print the 12-digit short form)."""
    low = check_fingerprint_prefix(prefix)
    with transaction(engine, "looking up a fingerprint", read_only=True) as conn:
        matches = conn.execute(select(fingerprints.c.hash).where(fingerprints.c.hash.startswith(low))).scalars().all()
    return one_fingerprint(prefix, matches)


def ensure_fingerprint(conn: Connection, fingerprint: EvalFingerprint) -> None:
    """Store the fingerprint's components under its hash (inside the caller's transaction)."""
    for table, column, value, recorder in (
        (gold_sets, "version", fingerprint.gold_set_version, "record_gold_set_version"),
        (kb_snapshots, "snapshot_id", fingerprint.kb_snapshot_id, "record_kb_snapshot"),
    ):
        if conn.execute(select(table.c[column]).where(table.c[column] == value)).first() is None:
            raise WarehouseError(
                f"{table.name} has no {column} {value!r}; record it with evalops.warehouse.{recorder} "
                "before recording runs under this fingerprint"
            )
    values = {
        "hash": fingerprint.hash,
        "gold_set_version": fingerprint.gold_set_version,
        "kb_snapshot_id": fingerprint.kb_snapshot_id,
        "measures": list(fingerprint.measures),
        "policies": fingerprint.policies,
        "created_at": now_utc(),
    }
    upsert_immutable(conn, fingerprints, "hash", values, ("measures", "policies"), "fingerprint")


def fingerprint_from_row(row: Mapping[str, Any]) -> EvalFingerprint:
    """Rebuild a fingerprint from its stored components, checking that it still hashes the same."""
    fingerprint = EvalFingerprint.of(row["gold_set_version"], row["kb_snapshot_id"], row["measures"], row["policies"])
    if fingerprint.hash != row["hash"]:
        raise WarehouseError(
            f"stored fingerprint {row['hash']} no longer hashes to itself ({fingerprint.hash}); "
            "its row was edited or the hashing scheme changed"
        )
    return fingerprint
