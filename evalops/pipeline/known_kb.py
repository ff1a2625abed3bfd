"""The daily snapshot of an unchanged knowledge-base file: its bytes' SHA-256 names the snapshot it was.

The pipeline snapshots the same knowledge base every day, and reading a million documents, then encoding
and hashing each one (``evalops.knowledge``) costs seconds, against a fraction of a second to read and hash
the file's bytes. So the snapshot step hashes the file in one pass and looks the digest up in the work
storage (``<work_dir>/kb-snapshots/<digest>.json``: the snapshot id and the number of documents, no text).
Same bytes, same reader, same snapshot: the id is exact by construction. A digest seen for the first time
(or a record that cannot be read) reads the file as ever and records it, when the bytes did not change
while they were read.

A snapshot known this way carries no documents until a step needs them (a built-in retriever's corpus,
a gold set validated again, the judge's texts): then the file is read, refused if it no longer hashes to
the same snapshot, and kept as the run's prepared copy (:mod:`evalops.pipeline.prepared`) for its other
steps and workers. Only a knowledge base that is one local file (a BEIR ``corpus.jsonl``, or a folder
holding one) is known by its bytes; a folder of documents, a manifest or a SQL table is read as before.

Bytes seen for the first time are read and hashed document by document in this step, not later: the
snapshot id (a digest of every document's content hash, see :mod:`evalops.knowledge.snapshot`) is what
the run records in the warehouse, keys the remembered validation with and puts in every result's
fingerprint, and new bytes must pass the knowledge-base contract (on their documents) before anything is
scored; the manifest kept for tomorrow's diff holds the per-document hashes. Deferring them would move
that work within the run, not save it. Its floor at 1 M short documents is Arrow's JSON parse and one
SHA-256 call per document, each several times the one-pass hash of the file's bytes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.errors import InputError
from evalops import knowledge
from evalops.pipeline.prepared import kb_source_file, keep_snapshot
from evalops.pipeline.workdir import read_json_record, work_root, write_whole
from evalops.util.storage import file_digest

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalops.config import Config

__all__ = ["file_digest", "known_snapshot", "snapshot_of_file", "DeferredSnapshot"]

log = logging.getLogger(__name__)
# Names the reader and the hash conventions of evalops.knowledge whose snapshot a record holds: a change of
# what a file's bytes read as (a BEIR reader's rule, a content-hash convention) must change it, so that
# records of the old reading are not trusted.
RECORD_KIND = "evalops.kb-snapshot-of-bytes/1"


class DeferredSnapshot(knowledge.KnowledgeBaseSnapshot):
    """A snapshot whose id and size are known from its file's bytes; its documents are read on first use
    (and refused if the file no longer is that snapshot)."""

    def __init__(self, snapshot_id: str, documents: int, source: str, read: Callable[[], knowledge.KnowledgeBaseSnapshot]):
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "has_text", True)
        object.__setattr__(self, "_documents", documents)
        object.__setattr__(self, "_read", read)
        self.__dict__["snapshot_id"] = snapshot_id  # a cached property of the base class

    @cached_property
    def docs(self) -> pd.DataFrame:  # type: ignore[override]
        snapshot = self._read()
        if snapshot.snapshot_id != self.snapshot_id:
            raise InputError(
                f"{self.source}: the knowledge base changed during the run (snapshot {self.snapshot_id} became "
                f"{snapshot.snapshot_id}); the next run will evaluate the new one")
        return snapshot.docs

    @property
    def loaded(self) -> bool:
        """Whether the documents were read."""
        return "docs" in self.__dict__

    def __len__(self) -> int:
        return self._documents


def _single_file(source: Path) -> Path | None:
    source = kb_source_file(source)
    if not source.is_file() or source.suffix.lower() == ".json":  # a manifest is read as it is (ids and hashes)
        return None
    return source


def snapshot_of_file(source: str | Path, folder: Any,
                     keep: Callable[[knowledge.KnowledgeBaseSnapshot], None] | None = None
                     ) -> knowledge.KnowledgeBaseSnapshot:
    """``load_snapshot(source)``, or the snapshot recorded in ``folder`` for the same bytes (deferred; when its
    documents are read, ``keep`` is given the snapshot read, so that the run's other steps map a copy)."""
    path = _single_file(Path(source))
    if path is None:
        return knowledge.load_snapshot(source)
    digest = file_digest(path)
    record = folder / f"{digest}.json"
    known = _read_record(record, digest)
    if known is not None:
        def read() -> knowledge.KnowledgeBaseSnapshot:
            snapshot = knowledge.load_snapshot(source)
            if keep is not None and snapshot.snapshot_id == known["snapshot_id"]:
                keep(snapshot)
            return snapshot

        return DeferredSnapshot(known["snapshot_id"], known["documents"], str(path), read)
    snapshot = knowledge.load_snapshot(source)
    if file_digest(path) == digest:  # the bytes read are the bytes hashed
        _write_record(record, {"kind": RECORD_KIND, "sha256": digest, "snapshot_id": snapshot.snapshot_id,
                               "documents": len(snapshot)})
    return snapshot


def known_snapshot(cfg: Config) -> knowledge.KnowledgeBaseSnapshot:
    """The configured knowledge base's snapshot: :func:`snapshot_of_file` over the work storage."""
    return snapshot_of_file(cfg.knowledge_base_path(), work_root(cfg) / "kb-snapshots",
                            keep=lambda snapshot: keep_snapshot(cfg, snapshot))


def _read_record(record: Any, digest: str) -> dict[str, Any] | None:
    data = read_json_record(record, "the recorded snapshot", "reading the knowledge base")
    if (not isinstance(data, dict) or data.get("kind") != RECORD_KIND or data.get("sha256") != digest
            or not isinstance(data.get("snapshot_id"), str) or not isinstance(data.get("documents"), int)):
        return None
    return data


def _write_record(record: Any, data: dict[str, Any]) -> None:
    try:
        write_whole(record, lambda handle: handle.write(json.dumps(data).encode("utf-8")))  # never half a record
    except OSError as exc:  # the snapshot is right; only tomorrow's reuse is lost
        log.warning("%s: could not record the snapshot (%s)", record, exc)
