"""Chunked versions in the pipeline: a registry entry's ``chunking:`` (the chunk manifest it retrieves from).

* the report names each version's chunking with the manifest's ``chunking_id``, so versions that differ
  only in chunking read as such (:func:`chunking_notes`), and each version's run records it in the
  warehouse (the run's ``contracts["chunking"]``, :func:`chunking_record`);
* a chunked version's run of chunk ids is scored as the document run of its chunks
  (:func:`documents_of_chunks`, below), against the gold set's judgments of the source documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.errors import ConfigError, InputError

if TYPE_CHECKING:  # pragma: no cover
    from evalops.chunking import ChunkManifest, SourceTexts
    from evalops.config import Config
    from evalops.knowledge import KnowledgeBaseSnapshot
    from evalops.pipeline.specs import VersionSpec
    from evalops.retrievers import Registry, RetrieverEntry

__all__ = ["CHUNK_AGGREGATION", "chunk_corpus", "chunking_notes", "chunking_policy", "chunking_record",
           "describe_chunkings", "documents_of_chunks"]


def describe_chunkings(registry: Registry, keys: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``name@version`` -> a line naming its chunking, for each of ``keys`` whose entry declares one (a
    manifest that cannot be read is said so, never a failure of the report)."""
    from evalops.chunking import read_chunk_manifest

    out: dict[str, str] = {}
    for retriever, version in keys:
        try:
            entry = registry.get(retriever, version)
        except ConfigError:  # no longer registered: nothing to say about its chunking
            continue
        path = entry.chunking_path
        if path is None:
            continue
        try:
            manifest = read_chunk_manifest(path)
        except InputError as exc:
            out[entry.key] = f"{entry.key}: chunking {entry.chunking} could not be read ({exc})"
            continue
        d = manifest.describe()
        out[entry.key] = (f"{entry.key} retrieves from chunking {d['name']} ({d['chunking_id']}: {d['chunks']} chunks "
                          f"of {d['documents']} documents, median {d['median_chars']} characters)")
    return out


def chunking_record(entry: RetrieverEntry, snapshot_id: str) -> dict[str, Any] | None:
    """What a version's run records about its chunking (the run's ``contracts["chunking"]`` in the
    warehouse): the manifest's path as declared and its description (``chunking_id``, counts, and the
    knowledge-base snapshot it cuts), or None for a version without one."""
    if entry.chunking_path is None:
        return None
    return {"manifest": entry.chunking, **_manifest(entry.chunking_path).describe(), "source_snapshot_id": snapshot_id}


def chunking_notes(registry: Registry, versions: Sequence[VersionSpec]) -> list[str]:
    """The report's lines on chunkings: one per scored version (and stored baseline) that declares one in the
    run's ``registry``."""
    keys: list[tuple[str, str]] = []
    for spec in versions:
        for version in (spec.version, spec.baseline_version):
            if version is not None and (spec.retriever, version) not in keys:
                keys.append((spec.retriever, version))
    return list(describe_chunkings(registry, keys).values())


# -- scoring a chunked version ----------------------------------------------------------------------------
# A version that declares ``chunking:`` retrieves chunk ids. The gold set judges the source documents (the
# knowledge base is the unchunked corpus), so the chunk run is aggregated to a document run before it is
# scored: every measure, comparison and gate applies, and a chunked version pairs query by query with an
# unchunked one or with another chunking. The aggregation is a policy of the fingerprint
# (:func:`chunking_policy`); the chunking itself is what the version is (its registry entry), so changing
# only the chunking keeps the fingerprint and the baselines comparable, while changing the source text
# changes the snapshot id as before.
CHUNK_AGGREGATION = "maxp"


def chunking_policy(cfg: Config) -> dict[str, str] | None:
    """The fingerprint's ``chunking`` policy: set once a registered version declares a chunking (adding the
    first chunked version therefore re-scores the baselines once under the new rule), None before."""
    from evalops.retrievers import load_registry

    # a settings object with no registry file (a fingerprint asked outside a project) declares no chunking;
    # a run whose registry is missing fails where it loads its versions, with the file named
    files = [f for f in cfg.registry_files() if f.exists()]
    if not files or not any(entry.chunking for entry in load_registry(*files)):
        return None
    return {"aggregation": CHUNK_AGGREGATION, "judged": "source documents", "chunk_ids": "chunk manifest"}


def _manifest(path: Path, sources: SourceTexts | None = None) -> ChunkManifest:
    from evalops.chunking import read_chunk_manifest

    return read_chunk_manifest(path, sources=sources)


def chunk_corpus(entry: RetrieverEntry, snapshot: KnowledgeBaseSnapshot) -> Any:
    """The corpus a built-in retriever of a chunked version indexes: one row per chunk (``doc_id`` = chunk
    id, no title, the chunk's text cut from the snapshot), as a function the builder calls when it needs it."""

    def corpus() -> Any:
        import pandas as pd

        from evalops.chunking import SourceTexts

        sources = SourceTexts.of(snapshot)
        texts = _manifest(entry.chunking_path, sources).texts(sources)  # type: ignore[arg-type]
        return pd.DataFrame({"doc_id": list(texts), "title": [""] * len(texts), "text": list(texts.values())})

    return corpus


def documents_of_chunks(entry: RetrieverEntry, result: Any, snapshot: KnowledgeBaseSnapshot) -> Any:
    """``result`` (a :class:`evalops.retrievers.scoring.RetrievalResult` of chunk ids) with its run aggregated
    to the source documents (:data:`CHUNK_AGGREGATION`). A chunk the manifest does not list, or a manifest
    whose spans do not fit the current source text, is an ``InputError`` naming the file."""
    import dataclasses

    from evalops.chunking import SourceTexts, document_run
    from evalops.data import RunTable

    path = entry.chunking_path
    sources = SourceTexts.of(snapshot) if snapshot.has_text else None
    manifest = _manifest(path, sources)  # type: ignore[arg-type]
    run = result.run.to_run() if isinstance(result.run, RunTable) else result.run
    return dataclasses.replace(result, run=document_run(run, manifest, CHUNK_AGGREGATION))
