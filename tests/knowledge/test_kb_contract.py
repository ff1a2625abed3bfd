"""The knowledge-base contract: unique ids, text present and not blank, not empty."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from evalops.errors import InputError
from evalops.contracts import KnowledgeBaseRules, validate_knowledge_base
from evalops.knowledge import KnowledgeBaseSnapshot

pytestmark = pytest.mark.slow


def snap(ids: list[str], texts: list[str | None]) -> KnowledgeBaseSnapshot:
    return KnowledgeBaseSnapshot.from_frame(pd.DataFrame({"doc_id": ids, "title": [""] * len(ids), "text": texts}))


def test_valid_kb_passes() -> None:
    assert validate_knowledge_base(snap(["a", "b"], ["x", "y"]), docs_dir=None).ok


@pytest.mark.parametrize(
    ("ids", "texts", "rule", "failing_rows", "example"),
    [
        (["a", "b", "a"], ["x", "y", "z"], "unique document ids", 2, "a"),  # both rows of the duplicated id
        (["a", "b"], ["x", None], "document text present", 1, None),
        (["a", "b"], ["x", " \n\t"], "non-empty document text", 1, " \n\t"),
    ],
    ids=["duplicate id", "null text", "blank text"],
)
def test_each_broken_expectation_fails_under_its_name(ids, texts, rule, failing_rows, example) -> None:
    report = validate_knowledge_base(snap(ids, texts), docs_dir=None, raise_on_failure=False)
    assert report.failed_rules == [rule], report.summary()
    assert report.failures[0].unexpected_count == failing_rows
    if example is not None:
        assert report.failures[0].examples[0] == example


def test_too_few_documents() -> None:
    report = validate_knowledge_base(snap(["a"], ["x"]), KnowledgeBaseRules(min_documents=2), docs_dir=None, raise_on_failure=False)
    assert report.failed_rules == ["minimum number of documents"]


def test_manifest_cannot_be_validated(tmp_path: Path) -> None:
    path = snap(["a"], ["x"]).save_manifest(tmp_path / "m.json")
    with pytest.raises(InputError, match="no document text"):
        validate_knowledge_base(KnowledgeBaseSnapshot.from_manifest(path), docs_dir=None)


def test_a_few_empty_documents_are_a_warning_with_their_ids():
    texts = ["text"] * 199 + [""]
    ids = [f"d{i}" for i in range(200)]
    report = validate_knowledge_base(snap(ids, texts), docs_dir=None, raise_on_failure=False)
    assert report.ok
    assert report.warnings and "'d199'" in report.warnings[0] and "1 of 200 documents have no text" in report.warnings[0]
    assert "warning: 1 of 200" in report.summary()


def test_too_many_empty_documents_fail():
    texts = ["text"] * 190 + [""] * 10
    ids = [f"d{i}" for i in range(200)]
    report = validate_knowledge_base(snap(ids, texts), KnowledgeBaseRules(max_empty_share=0.01), docs_dir=None,
                                     raise_on_failure=False)
    assert "non-empty document text" in report.failed_rules
    lenient = validate_knowledge_base(snap(ids, texts), KnowledgeBaseRules(max_empty_share=0.1), docs_dir=None,
                                      raise_on_failure=False)
    assert lenient.ok and lenient.warnings
