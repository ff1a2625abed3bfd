"""GoldSet: construction, the qrels view, and a version that depends on content only."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalops.data import Qrels
from evalops.errors import FormatError, InputError
from evalops.goldset import GoldSet, Query


def test_qrels_view_and_query_ids(gold: GoldSet) -> None:
    qrels = gold.qrels
    assert isinstance(qrels, Qrels)
    assert len(qrels) == 13
    assert qrels.to_dict()["q8"] == {"d9": 2, "d10": 0}
    assert gold.query_ids[0] == "q1" and len(gold.query_ids) == 10
    assert qrels.source == "tiny"


def test_version_ignores_row_order(make_frames) -> None:
    q, j = make_frames()
    base = GoldSet.from_frames(q, j).version
    rng = np.random.default_rng(7)
    for _ in range(5):
        shuffled = GoldSet.from_frames(q.sample(frac=1, random_state=rng), j.sample(frac=1, random_state=rng))
        assert shuffled.version == base


def test_version_ignores_tag_order_and_source(make_frames) -> None:
    q, j = make_frames()
    q2 = q.copy()
    q2["tags"] = [("b", "a")] * len(q2)
    q3 = q.copy()
    q3["tags"] = [("a", "b")] * len(q3)
    assert GoldSet.from_frames(q2, j, source="x").version == GoldSet.from_frames(q3, j, source="y").version


@pytest.mark.parametrize(
    "change",
    [
        lambda q, j: (q.assign(text=q.text.where(q.query_id != "q1", "other text")), j),
        lambda q, j: (q.assign(type=q.type.where(q.query_id != "q2", "keyword")), j),
        lambda q, j: (q.assign(language=q.language.where(q.query_id != "q2", "de")), j),
        lambda q, j: (q, j.assign(grade=j.grade.where(j.doc_id != "d1", 1))),
        lambda q, j: (q, j.iloc[1:]),
        lambda q, j: (q.iloc[1:], j),
        lambda q, j: (q.assign(reference_answer=["Hotels cost 150 a night."] + [""] * (len(q) - 1)), j),
    ],
    ids=["text", "type", "language", "grade", "judgment removed", "query removed", "reference answer"],
)
def test_version_changes_with_content(make_frames, change) -> None:
    q, j = make_frames()
    assert GoldSet.from_frames(*change(q.copy(), j.copy())).version != GoldSet.from_frames(q, j).version


def test_a_gold_set_without_reference_answers_keeps_the_version_it_had_before_the_field(make_frames) -> None:
    q, j = make_frames()
    assert "reference_answer" not in q.columns
    gold = GoldSet.from_frames(q, j)
    assert gold.queries["reference_answer"].tolist() == [""] * len(q)
    assert GoldSet.from_frames(q.assign(reference_answer=""), j).version == gold.version
    # The digest of the rows as they were hashed before reference answers existed.
    from evalops.goldset.model import content_digest

    rows = sorted([r.query_id, r.text, r.type, r.language, sorted(r.tags)] for r in q.itertuples())
    judged = sorted([r.query_id, r.doc_id, int(r.grade)] for r in j.itertuples())
    assert gold.version == content_digest({"queries": rows, "judgments": judged})


def test_from_records_matches_from_frames(make_frames) -> None:
    q, j = make_frames()
    queries = [Query(r.query_id, r.text, r.type, r.language, r.tags) for r in q.itertuples()]
    gold = GoldSet.from_records(queries, list(j.itertuples(index=False, name=None)))
    assert gold.version == GoldSet.from_frames(q, j).version


def test_relevant_counts_and_describe(gold: GoldSet) -> None:
    counts = dict(zip(gold.queries["query_id"], gold.relevant_counts()))
    assert counts["q1"] == 2 and counts["q8"] == 1 and counts["q10"] == 0
    info = gold.describe()
    assert info["types"] == {"keyword": 3, "no_answer": 1, "semantic": 6}
    assert info["languages"] == {"en": 9, "zh": 1}
    assert info["version"] == gold.version


def test_missing_columns_and_non_integer_grades_are_input_errors(make_frames) -> None:
    q, j = make_frames()
    with pytest.raises(InputError, match="queries lack column"):
        GoldSet.from_frames(q.drop(columns="type"), j)
    with pytest.raises(InputError, match=r"judgment row 2 has grade 1\.5"):
        GoldSet.from_frames(q, j.assign(grade=[2, 1.5] + [1] * (len(j) - 2)))


def test_duplicate_pairs_are_representable_but_qrels_refuse_them(make_frames) -> None:
    q, j = make_frames()
    gold = GoldSet.from_frames(q, pd.concat([j, j.iloc[:1]]))
    assert len(gold.judgments) == 14  # kept for the validation suite to report
    with pytest.raises(FormatError, match="more than once"):
        _ = gold.qrels


def test_missing_language_is_undetermined(make_frames) -> None:
    q, j = make_frames()
    gold = GoldSet.from_frames(q.drop(columns=["language", "tags"]), j)
    assert set(gold.queries["language"]) == {"und"}
    assert set(map(tuple, gold.queries["tags"])) == {()}
