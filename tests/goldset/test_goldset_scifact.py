"""Real data: scifact loads and validates as a gold set plus a knowledge-base snapshot, with stable hashes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evalops.goldset import GoldSet, GoldSetRules, load_gold_set, validate_gold_set, validate_knowledge_base
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
