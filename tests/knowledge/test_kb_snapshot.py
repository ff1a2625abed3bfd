"""Snapshots: content hashes, an order-independent id, diffs and manifests."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from evalops.errors import FormatError, InputError
from evalops.knowledge import KnowledgeBaseSnapshot, content_hash


def snap(rows: list[tuple[str, str, str]]) -> KnowledgeBaseSnapshot:
    return KnowledgeBaseSnapshot.from_frame(pd.DataFrame(rows, columns=["doc_id", "title", "text"]))


BASE = [("a", "A", "alpha text"), ("b", "B", "beta text"), ("c", "", "gamma text")]


def test_content_hash_covers_title_and_text() -> None:
    assert content_hash("A", "x") != content_hash("B", "x")
    assert content_hash("A", "x") != content_hash("A", "y")
    assert content_hash("", "ab") != content_hash("a", "b")  # no ambiguity from concatenation
    assert len(content_hash("A", "x")) == 16


def test_snapshot_id_ignores_row_order_but_not_content() -> None:
    base = snap(BASE)
    assert snap(list(reversed(BASE))).snapshot_id == base.snapshot_id
    assert snap(BASE[:2]).snapshot_id != base.snapshot_id
    assert snap([*BASE[:2], ("c", "", "gamma text!")]).snapshot_id != base.snapshot_id
    assert snap([*BASE[:2], ("c2", "", "gamma text")]).snapshot_id != base.snapshot_id


def test_diff_names_added_removed_and_changed() -> None:
    old = snap(BASE)
    new = snap([("a", "A", "alpha text"), ("b", "B2", "beta text"), ("d", "", "delta")])
    diff = old.diff(new)
    assert (diff.added, diff.removed, diff.changed, diff.unchanged) == (["d"], ["c"], ["b"], 1)
    assert not diff.empty
    assert diff.summary().endswith("1 added (d), 1 removed (c), 1 changed (b), 1 unchanged")
    assert old.diff(snap(BASE)).empty


def test_diff_refuses_duplicate_ids() -> None:
    dup = snap([*BASE, ("a", "A", "again")])
    assert dup.duplicate_ids() == ["a"]
    with pytest.raises(InputError, match=r"\['a'\] appear more than once"):
        dup.diff(snap(BASE))


def test_contains_and_corpus() -> None:
    base = snap(BASE)
    assert base.contains(["a", "x", "c"]).tolist() == [True, False, True]
    assert base.corpus().columns.tolist() == ["doc_id", "title", "text"]


def test_manifest_round_trip_diff_and_tamper_detection(tmp_path: Path) -> None:
    base = snap(BASE)
    path = base.save_manifest(tmp_path / "kb.json")
    loaded = KnowledgeBaseSnapshot.from_manifest(path)
    assert loaded.snapshot_id == base.snapshot_id and not loaded.has_text
    assert loaded.diff(snap(BASE[:2])).removed == ["c"]
    with pytest.raises(InputError, match="no document text"):
        loaded.corpus()
    payload = json.loads(path.read_text())
    payload["docs"] = payload["docs"][:2]
    path.write_text(json.dumps(payload))
    with pytest.raises(FormatError, match="edited or truncated"):
        KnowledgeBaseSnapshot.from_manifest(path)
    path.write_text('{"kind": "something else"}')
    with pytest.raises(FormatError, match="not a knowledge-base manifest"):
        KnowledgeBaseSnapshot.from_manifest(path)


def test_missing_columns_are_input_errors() -> None:
    with pytest.raises(InputError, match="missing column"):
        KnowledgeBaseSnapshot.from_frame(pd.DataFrame({"id": ["a"], "text": ["x"]}))
