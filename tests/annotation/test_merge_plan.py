"""What a merge folds in and leaves out, and the lines it appends in each judgments format."""

from __future__ import annotations

import pytest

from evalops.annotation.merge import _lines, plan_merge
from evalops.annotation.queue import ItemState
from evalops.errors import InputError
from evalops.goldset import GoldSet

GOLD = GoldSet.from_records([{"query_id": "q1", "text": "one", "type": ""},
                             {"query_id": "q2", "text": "two", "type": ""}], [("q1", "d1", 2)])


def _item(item_id, source="hole", query_id="q1", doc_id="d9"):
    return {"item_id": item_id, "source": source, "query_id": query_id, "doc_id": doc_id}


def _state(item_id, state="agreed", grade=1):
    return ItemState(item_id, state, grade, {"ana": grade, "ben": grade})


def test_only_decided_items_on_gold_queries_and_new_pairs_are_added():
    items = {"a": _item("a"), "b": _item("b", doc_id="d1"), "c": _item("c", source="sampled_query", doc_id=None),
             "d": _item("d", source="generated", query_id=None), "e": _item("e", query_id="q2"),
             "f": _item("f", query_id="q2", doc_id="d3")}
    states = {"a": _state("a"), "b": _state("b"), "c": _state("c"), "d": _state("d"),
              "e": ItemState("e", "conflict", None, {"ana": 0, "ben": 2}), "f": _state("f", "adjudicated", 0)}
    plan = plan_merge(GOLD, items, states)
    assert [(r["query_id"], r["doc_id"], r["grade"], r["decided"]) for r in plan.added] == [
        ("q1", "d9", 1, "agreed"), ("q2", "d3", 0, "adjudicated")]
    assert dict(plan.left_out) == {"already judged in the gold set": 1, "without a document": 1,
                                   "whose query is not in the gold set": 1, "conflict (undecided)": 1}
    assert "2 judgments to add" in plan.describe()


def test_two_items_judging_one_pair_differently_stop_the_merge():
    items = {"a": _item("a"), "b": _item("b", source="generated")}
    with pytest.raises(InputError, match="adjudicate"):
        plan_merge(GOLD, items, {"a": _state("a", grade=1), "b": _state("b", grade=2)})
    same = plan_merge(GOLD, items, {"a": _state("a", grade=1), "b": _state("b", grade=1)})
    assert len(same.added) == 1


@pytest.mark.parametrize(("kind", "expected"), [
    ("tsv", "q1\td,9\t1\n"), ("trec", "q1 0 d,9 1\n"), ("csv", 'q1,"d,9",1\n'),
    ("jsonl", '{"query_id": "q1", "doc_id": "d,9", "grade": 1}\n')])
def test_lines_in_each_format(kind, expected):
    assert _lines([{"query_id": "q1", "doc_id": "d,9", "grade": 1}], kind) == expected
