"""Real data: scifact loads and validates as a gold set plus a knowledge-base snapshot, with stable hashes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evalops.contracts import GoldSetRules, validate_gold_set, validate_knowledge_base
from evalops.goldset import GoldSet, load_gold_set
from evalops.knowledge import KnowledgeBaseSnapshot, snapshot_from_beir

SCIFACT_RULES = GoldSetRules(min_queries=50, required_types=("semantic",), no_answer_share=(0.0, 0.3))


@pytest.fixture(scope="module")
def scifact(shared_data: Path) -> tuple[GoldSet, KnowledgeBaseSnapshot]:
    folder = shared_data / "scifact"
    return load_gold_set(folder, default_type="semantic", default_language="en"), snapshot_from_beir(folder)


def test_scifact_loads(scifact: tuple[GoldSet, KnowledgeBaseSnapshot]) -> None:
    gold, snap = scifact
    assert len(gold) == 300 and len(gold.judgments) == 339
    assert len(snap) == 5183
    assert gold.qrels.to_dict()["1"] == {"31715818": 1}


@pytest.mark.slow
def test_scifact_validates(scifact: tuple[GoldSet, KnowledgeBaseSnapshot]) -> None:
    gold, snap = scifact
    assert validate_knowledge_base(snap, docs_dir=None).ok
    report = validate_gold_set(gold, snap, SCIFACT_RULES, docs_dir=None)
    assert report.ok, report.summary()


def test_hashes_are_stable_across_loads_and_shuffles(shared_data: Path, scifact: tuple[GoldSet, KnowledgeBaseSnapshot]) -> None:
    gold, snap = scifact
    again = load_gold_set(shared_data / "scifact", default_type="semantic", default_language="en")
    assert again.version == gold.version
    assert snapshot_from_beir(shared_data / "scifact" / "corpus.jsonl").snapshot_id == snap.snapshot_id
    rng = np.random.default_rng(2024)
    for _ in range(3):
        shuffled = GoldSet.from_frames(
            gold.queries.sample(frac=1, random_state=rng), gold.judgments.sample(frac=1, random_state=rng)
        )
        assert shuffled.version == gold.version
        docs = snap.docs.sample(frac=1, random_state=rng)
        assert KnowledgeBaseSnapshot.from_frame(docs[["doc_id", "title", "text"]]).snapshot_id == snap.snapshot_id


@pytest.mark.slow
def test_a_removed_scifact_document_is_a_stale_judgment(scifact: tuple[GoldSet, KnowledgeBaseSnapshot]) -> None:
    gold, snap = scifact
    judged = gold.judgments["doc_id"].iloc[0]
    smaller = KnowledgeBaseSnapshot.from_frame(snap.docs[snap.docs["doc_id"] != judged][["doc_id", "title", "text"]])
    assert smaller.snapshot_id != snap.snapshot_id
    assert snap.diff(smaller).removed == [judged]
    report = validate_gold_set(gold, smaller, SCIFACT_RULES, docs_dir=None, raise_on_failure=False)
    assert len(report.failures) == 1 and report.failures[0].examples == [judged]


@pytest.mark.slow
@pytest.mark.parametrize("collection, grades", [("scifact", [1, 1]), ("nfcorpus-orig-test", [1, 2])])
def test_a_plain_collection_validates_under_the_default_rules(shared_data: Path, collection: str, grades: list,
                                                              tmp_path: Path) -> None:
    """No types, no flags: the type-dependent expectations are not applicable (named, never passed or
    failed), and the grade scale is the data's own, recorded."""
    from evalops.contracts.checks import TYPED_RULES

    folder = shared_data / collection
    gold = load_gold_set(folder)
    assert set(gold.queries["type"]) == {""}
    report = validate_gold_set(gold, snapshot_from_beir(folder), GoldSetRules(), docs_dir=tmp_path / "docs")
    assert report.ok, report.summary()
    assert [n["rule"] for n in report.not_applicable] == list(TYPED_RULES)
    assert {n["reason"] for n in report.not_applicable} == {"no query types"}
    assert "not applicable: each query type present (no query types)" in report.summary()
    assert report.rules["allowed_grades"] == "auto" and report.rules["observed_grades"] == grades
    assert report.rules["query_types"] == "none"
    pages = "".join(p.read_text(errors="replace") for p in (tmp_path / "docs").rglob("*.html"))
    assert "Not applicable to this data" in pages and "no query types" in pages


def test_explicit_grades_are_enforced(shared_data: Path) -> None:
    gold = load_gold_set(shared_data / "nfcorpus-orig-test")
    from evalops.contracts.checks import gold_set_tables

    tables = gold_set_tables(gold, None, None, GoldSetRules(allowed_grades=(0, 1)))
    check = next(c for t in tables for c in t.checks if c.rule == "grades in the allowed set")
    assert check.kwargs["value_set"] == [0, 1] and check.expected == "one of [0, 1]"


def test_a_partly_typed_gold_set_fails_known_types() -> None:
    from evalops.contracts.checks import gold_set_tables, is_untyped

    gold = GoldSet.from_records(
        [{"query_id": "a", "text": "x", "type": "semantic"}, {"query_id": "b", "text": "y", "type": ""}],
        [("a", "d", 1), ("b", "d", 1)])
    assert not is_untyped(gold)
    rules = [c.rule for t in gold_set_tables(gold, None, None, GoldSetRules(min_queries=1)) for c in t.checks]
    assert "known query types" in rules
