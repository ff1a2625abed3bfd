"""Knowledge-base snapshots: document ids with content hashes, a snapshot id, and diffs."""

from __future__ import annotations

from evalops.knowledge.snapshot import KnowledgeBaseSnapshot, SnapshotDiff, content_hash
from evalops.knowledge.sources import (
    DOCUMENT_SUFFIXES,
    load_snapshot,
    snapshot_from_beir,
    snapshot_from_directory,
    snapshot_from_sql,
)

__all__ = [
    "KnowledgeBaseSnapshot",
    "SnapshotDiff",
    "content_hash",
    "load_snapshot",
    "snapshot_from_beir",
    "snapshot_from_directory",
    "snapshot_from_sql",
    "DOCUMENT_SUFFIXES",
]
