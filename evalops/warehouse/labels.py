"""People's labels of the annotation queue and the gold-set versions made from them: repository functions over
``annotation_labels``, ``annotation_adjudications`` and ``gold_set_merges``.

A label is one annotator's answer to one queue item (a grade, or a skip: ``grade`` None), upserted on (item,
annotator): answering again replaces the earlier answer. An adjudication is the grade settled for an item whose
labels disagree, upserted on the item. A merge row records one gold-set version that ``evalops gold merge``
wrote, numbered within its gold set's history; :func:`record_gold_set_merge` takes the next number in the
transaction that inserts it, so two merges at once cannot both become version *n*.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from evalops.errors import InputError
from evalops.util.utc import as_utc
from evalops.warehouse._db import advisory_lock, insert_for, now_utc, transaction
from evalops.warehouse.tables import (
    LABEL_SOURCES,
    annotation_adjudications as adjudications_table,
    annotation_labels as labels_table,
    gold_set_merges as merges_table,
)

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Connection, Engine

__all__ = ["Adjudication", "GoldSetMerge", "Label", "MAX_ANNOTATOR_LENGTH", "load_adjudications",
           "load_gold_set_merges", "load_labels", "person_name", "record_adjudication", "record_gold_set_merge",
           "record_label"]

MAX_ANNOTATOR_LENGTH = 200
MAX_COMMENT_LENGTH = 10_000


@dataclass(frozen=True)
class Label:
    item_id: str
    source: str
    query_id: str | None
    doc_id: str | None
    annotator: str
    grade: int | None  # None: skipped
    comment: str | None
    created_at: dt.datetime


@dataclass(frozen=True)
class Adjudication:
    item_id: str
    query_id: str | None
    doc_id: str | None
    grade: int
    adjudicator: str
    comment: str | None
    created_at: dt.datetime


@dataclass(frozen=True)
class GoldSetMerge:
    gold_set: str
    number: int
    version: str
    parent_version: str | None
    path: str
    merged_by: str
    n_added: int
    provenance: dict[str, Any] = field(default_factory=dict)
    created_at: dt.datetime | None = None


def person_name(value: str, what: str = "the annotator") -> str:
    """``value`` stripped, or an ``InputError``: a name is 1 to 200 printable characters."""
    name = (value or "").strip()
    if not name or len(name) > MAX_ANNOTATOR_LENGTH or any(ord(c) < 32 for c in name):
        raise InputError(f"{what} must be a name of 1 to {MAX_ANNOTATOR_LENGTH} printable characters, got {value!r}")
    return name


def _comment(value: str | None) -> str | None:
    text = (value or "").strip()
    if len(text) > MAX_COMMENT_LENGTH:
        raise InputError(f"a comment holds at most {MAX_COMMENT_LENGTH} characters, got {len(text)}")
    return text or None


def _item(item: Mapping[str, Any]) -> dict[str, Any]:
    if item.get("source") not in LABEL_SOURCES:
        raise InputError(f"an annotation item's source must be one of {', '.join(LABEL_SOURCES)}, "
                         f"got {item.get('source')!r}")
    return {"item_id": str(item["item_id"]), "source": item["source"], "query_id": item.get("query_id"),
            "doc_id": item.get("doc_id")}


def record_label(engine: Engine | Connection, item: Mapping[str, Any], *, annotator: str, grade: int | None,
                 comment: str | None = None, recorded_at: dt.datetime | None = None) -> Label:
    """Store ``annotator``'s answer to queue ``item`` (a queue row: ``item_id``, ``source``, ``query_id``,
    ``doc_id``); ``grade`` None is a skip. Replaces the annotator's earlier answer to the item."""
    row = {**_item(item), "annotator": person_name(annotator, "the annotator"),
           "grade": None if grade is None else int(grade), "comment": _comment(comment),
           "created_at": as_utc(recorded_at) if recorded_at else now_utc()}
    with transaction(engine, f"recording a label of item {row['item_id']!r}") as conn:
        stmt = insert_for(conn, labels_table).values(row)
        conn.execute(stmt.on_conflict_do_update(
            index_elements=["item_id", "annotator"],
            set_={k: stmt.excluded[k] for k in ("grade", "comment", "created_at", "source", "query_id", "doc_id")}))
    return Label(**row)


def record_adjudication(engine: Engine | Connection, item: Mapping[str, Any], *, adjudicator: str, grade: int,
                        comment: str | None = None, recorded_at: dt.datetime | None = None) -> Adjudication:
    """Settle queue ``item``'s grade (replaces an earlier adjudication of it)."""
    base = _item(item)
    row = {"item_id": base["item_id"], "query_id": base["query_id"], "doc_id": base["doc_id"], "grade": int(grade),
           "adjudicator": person_name(adjudicator, "the adjudicator"), "comment": _comment(comment),
           "created_at": as_utc(recorded_at) if recorded_at else now_utc()}
    with transaction(engine, f"recording the adjudication of item {row['item_id']!r}") as conn:
        stmt = insert_for(conn, adjudications_table).values(row)
        conn.execute(stmt.on_conflict_do_update(
            index_elements=["item_id"],
            set_={k: stmt.excluded[k] for k in ("query_id", "doc_id", "grade", "adjudicator", "comment",
                                                 "created_at")}))
    return Adjudication(**row)


def load_labels(engine: Engine | Connection) -> list[Label]:
    """Every label, oldest first."""
    with transaction(engine, "reading the annotation labels") as conn:
        rows = conn.execute(select(labels_table).order_by(labels_table.c.created_at, labels_table.c.id)).mappings()
        return [Label(**{k: v for k, v in r.items() if k != "id"} | {"created_at": as_utc(r["created_at"])})
                for r in rows]


def load_adjudications(engine: Engine | Connection) -> dict[str, Adjudication]:
    """The adjudications by item id."""
    with transaction(engine, "reading the adjudications") as conn:
        rows = conn.execute(select(adjudications_table).order_by(adjudications_table.c.item_id)).mappings()
        return {r["item_id"]: Adjudication(**dict(r) | {"created_at": as_utc(r["created_at"])}) for r in rows}


def record_gold_set_merge(engine: Engine | Connection, *, gold_set: str, version: str, parent_version: str | None,
                          path: str, merged_by: str, n_added: int, provenance: Mapping[str, Any],
                          recorded_at: dt.datetime | None = None) -> GoldSetMerge:
    """Record a merged gold-set version as the next number of ``gold_set``'s history. With no earlier merge,
    the parent is recorded first as number 1 (the version people labelled against), so the first merge is
    number 2."""
    when = as_utc(recorded_at) if recorded_at else now_utc()
    who = person_name(merged_by, "merged_by")
    with transaction(engine, f"recording a merged version of gold set {gold_set!r}") as conn:
        advisory_lock(conn, "gold_set_merges", gold_set)
        last = conn.execute(select(func.max(merges_table.c.number)).where(merges_table.c.gold_set == gold_set)
                            ).scalar_one_or_none()
        if last is None:
            conn.execute(merges_table.insert().values(
                gold_set=gold_set, number=1, version=parent_version or "", parent_version=None, path=path,
                merged_by=who, n_added=0, provenance={"note": "the version labelled against, before the first merge"},
                created_at=when))
            last = 1
        row = {"gold_set": gold_set, "number": int(last) + 1, "version": version, "parent_version": parent_version,
               "path": path, "merged_by": who, "n_added": int(n_added), "provenance": dict(provenance),
               "created_at": when}
        conn.execute(merges_table.insert().values(row))
    return GoldSetMerge(**row)


def load_gold_set_merges(engine: Engine | Connection, gold_set: str | None = None) -> list[GoldSetMerge]:
    """The recorded versions of ``gold_set`` (every gold set when None), by gold set and number."""
    query = select(merges_table).order_by(merges_table.c.gold_set, merges_table.c.number)
    if gold_set is not None:
        query = query.where(merges_table.c.gold_set == gold_set)
    with transaction(engine, "reading the gold-set merges") as conn:
        return [GoldSetMerge(**{k: v for k, v in r.items() if k != "id"} | {"created_at": as_utc(r["created_at"])})
                for r in conn.execute(query).mappings()]
