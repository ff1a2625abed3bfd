"""The annotation queue as annotators work it: items in priority order, and each item's state.

**Order.** Holes first, by the priority ``evalops.pipeline.holes`` wrote into their ``origin`` ("priority
0.500": how much judging the document could move the comparisons, :func:`evalops.judged.holes.prioritise_holes`),
then sampled production queries, then generated questions; within a source the older item first, then by
item id. A hole without a readable priority sorts after the holes that have one.

**State.** An item needs ``labels_per_item`` grades (a skip is no grade). It is

* ``open`` while it has fewer grades than that and they agree;
* ``agreed`` when it has that many and they all agree: its grade is decided;
* ``conflict`` when two of its grades differ: it waits for an adjudicator;
* ``adjudicated`` once an adjudicator has settled it: the adjudicator's grade is decided, whatever the labels.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalops.judges.generate import QUEUE_SOURCES

__all__ = ["ITEM_STATES", "ItemState", "item_states", "ordered_items", "priority_of"]

ITEM_STATES = ("open", "agreed", "conflict", "adjudicated")
SOURCE_ORDER = {"hole": 0, "sampled_query": 1, "generated": 2}
_PRIORITY = re.compile(r"(?:^|;\s*)priority ([0-9]+(?:\.[0-9]+)?)(?:;|$)")


def priority_of(row: Mapping[str, Any]) -> float | None:
    """The hole priority written in ``row``'s origin, or None."""
    found = _PRIORITY.search(str(row.get("origin") or ""))
    return float(found.group(1)) if found else None


def ordered_items(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The queue rows in working order (module docstring), each with its ``priority`` added."""
    out = [dict(r, priority=priority_of(r)) for r in rows]
    out.sort(key=lambda r: (SOURCE_ORDER.get(r["source"], len(QUEUE_SOURCES)), r["priority"] is None,
                            -(r["priority"] or 0.0), str(r.get("created_at") or ""), r["item_id"]))
    return out


@dataclass(frozen=True)
class ItemState:
    item_id: str
    state: str
    grade: int | None  # the decided grade (agreed or adjudicated), else None
    labels: dict[str, int | None] = field(default_factory=dict)  # annotator -> grade (None: skipped)
    comments: dict[str, str] = field(default_factory=dict)
    adjudicator: str | None = None

    @property
    def grades(self) -> list[int]:
        return [g for g in self.labels.values() if g is not None]


def item_states(item_ids: Sequence[str], labels: Iterable[Any], adjudications: Mapping[str, Any],
                labels_per_item: int) -> dict[str, ItemState]:
    """Each item's state (module docstring) from the stored labels (``Label``) and adjudications (by item)."""
    if labels_per_item < 1:
        raise ValueError(f"labels_per_item must be at least 1, got {labels_per_item}")
    by_item: dict[str, dict[str, Any]] = {}
    for label in labels:
        by_item.setdefault(label.item_id, {})[label.annotator] = label
    out = {}
    for item_id in dict.fromkeys([*item_ids, *by_item, *adjudications]):
        mine = by_item.get(item_id, {})
        grades = {a: lab.grade for a, lab in sorted(mine.items())}
        comments = {a: lab.comment for a, lab in sorted(mine.items()) if lab.comment}
        given = [g for g in grades.values() if g is not None]
        adjudication = adjudications.get(item_id)
        if adjudication is not None:
            state, grade = "adjudicated", int(adjudication.grade)
        elif len(set(given)) > 1:
            state, grade = "conflict", None
        elif len(given) >= labels_per_item:
            state, grade = "agreed", given[0]
        else:
            state, grade = "open", None
        out[item_id] = ItemState(item_id, state, grade, grades, comments,
                                 None if adjudication is None else adjudication.adjudicator)
    return out
