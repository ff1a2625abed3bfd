"""Labels, adjudications and gold-set merges round-trip through the warehouse on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt

import pytest

from evalops.errors import InputError
from evalops.warehouse.labels import (
    load_adjudications,
    load_gold_set_merges,
    load_labels,
    record_adjudication,
    record_gold_set_merge,
    record_label,
)

ITEM = {"item_id": "0abe95de9309767b", "source": "hole", "query_id": "PLAIN-102", "doc_id": "MED-3954"}
WHEN = dt.datetime(2026, 12, 7, 9, 0, tzinfo=dt.timezone.utc)


def test_labels_adjudications_and_merges_round_trip(engine):
    record_label(engine, ITEM, annotator="ana", grade=2, comment="<script>x</script>", recorded_at=WHEN)
    record_label(engine, ITEM, annotator="ben", grade=None, recorded_at=WHEN)  # a skip
    record_label(engine, ITEM, annotator="ben", grade=0, comment="off topic", recorded_at=WHEN)  # replaces it
    labels = load_labels(engine)
    assert [(lab.annotator, lab.grade, lab.comment) for lab in labels] == [
        ("ana", 2, "<script>x</script>"), ("ben", 0, "off topic")]
    assert labels[0].created_at == WHEN and labels[0].created_at.tzinfo is not None
    assert (labels[0].query_id, labels[0].doc_id, labels[0].source) == ("PLAIN-102", "MED-3954", "hole")

    record_adjudication(engine, ITEM, adjudicator="carol", grade=1, recorded_at=WHEN)
    record_adjudication(engine, ITEM, adjudicator="dan", grade=0, comment="settled", recorded_at=WHEN)
    [(item_id, adjudication)] = load_adjudications(engine).items()
    assert (item_id, adjudication.grade, adjudication.adjudicator, adjudication.comment) == (
        ITEM["item_id"], 0, "dan", "settled")

    provenance = {"judgments": [{"query_id": "PLAIN-102", "doc_id": "MED-3954", "grade": 0,
                                 "labels": {"ana": 2, "ben": 0}, "adjudicator": "dan"}]}
    merged = record_gold_set_merge(engine, gold_set="gold", version="b" * 16, parent_version="a" * 16,
                                   path="/gold/qrels/test.tsv", merged_by="erin", n_added=1, provenance=provenance,
                                   recorded_at=WHEN)
    assert merged.number == 2
    again = record_gold_set_merge(engine, gold_set="gold", version="c" * 16, parent_version="b" * 16,
                                  path="/gold/qrels/test.tsv", merged_by="erin", n_added=0, provenance={})
    assert again.number == 3
    history = load_gold_set_merges(engine, "gold")
    assert [(m.number, m.version, m.parent_version) for m in history] == [
        (1, "a" * 16, None), (2, "b" * 16, "a" * 16), (3, "c" * 16, "b" * 16)]
    assert history[1].provenance == provenance and history[1].created_at == WHEN
    assert load_gold_set_merges(engine, "other") == []


def test_bad_names_and_sources_are_refused(engine):
    with pytest.raises(InputError, match="annotator"):
        record_label(engine, ITEM, annotator="  ", grade=1)
    with pytest.raises(InputError, match="source"):
        record_label(engine, {**ITEM, "source": "elsewhere"}, annotator="ana", grade=1)
    assert load_labels(engine) == []
