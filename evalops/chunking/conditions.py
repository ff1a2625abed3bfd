"""When chunk runs are comparable: the fingerprint rule for chunkings.

The eval fingerprint (:class:`evalops.fingerprint.EvalFingerprint`) holds a knowledge-base component. What
it must name depends on what the judgments point at:

* **Chunk-id judgments** (TREC / BEIR qrels of chunks) depend on the chunking: the component is the
  snapshot id of the *chunked* corpus, as before. Re-chunking changes it, and stored baselines are stale.
* **Text-anchored judgments** (:mod:`evalops.chunking.judgments`) depend on the source text only: the
  component is the snapshot id of the *source* documents (the knowledge base the pipeline reads, when the
  knowledge base is the unchunked corpus). A knowledge-base update that
  changes only the chunking leaves it, so baselines stay comparable and versions that differ only in
  chunking are compared on the same judgments; an update that changes the source text (a document added,
  removed or edited, a title included) changes it, and baselines are stale as before.

The chunking is what a version *is* (like its embedding model): :func:`version_conditions` records each
version's ``chunking_id`` with its run, never in the fingerprint. The scoring policies (span units and
overlap counting, aggregation, overlap threshold) are in the fingerprint's ``chunking`` policy
(:func:`chunking_policies`): a change of policy makes baselines stale.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evalops.chunking.aggregate import AGGREGATIONS, DEFAULT_OVERLAP_THRESHOLD
from evalops.chunking.manifest import ChunkManifest
from evalops.chunking.measures import SpanPolicy
from evalops.errors import InputError
from evalops.fingerprint import EvalFingerprint

__all__ = ["JUDGMENT_KINDS", "chunking_fingerprint", "chunking_policies", "kb_component", "version_conditions"]

JUDGMENT_KINDS: tuple[str, ...] = ("chunk-id", "text-anchored")


def kb_component(judgments: str, *, source_snapshot_id: str, chunked_snapshot_id: str | None = None) -> str:
    """The fingerprint's knowledge-base component for judgments of kind ``judgments`` (module docstring)."""
    if judgments == "text-anchored":
        return source_snapshot_id
    if judgments == "chunk-id":
        if not chunked_snapshot_id:
            raise InputError("chunk-id judgments depend on the chunked corpus: give its snapshot id")
        return chunked_snapshot_id
    raise InputError(f"judgment kind {judgments!r} is not known; use one of {list(JUDGMENT_KINDS)}")


def chunking_policies(span: SpanPolicy | None = None, aggregation: str = "maxp",
                      overlap_threshold: float = DEFAULT_OVERLAP_THRESHOLD,
                      judgments: str = "text-anchored") -> dict[str, Any]:
    """The ``chunking`` policy of the fingerprint: every rule that changes a chunk run's numbers."""
    if aggregation not in AGGREGATIONS:
        raise InputError(f"aggregation {aggregation!r} is not known; use one of {list(AGGREGATIONS)}")
    if judgments not in JUDGMENT_KINDS:
        raise InputError(f"judgment kind {judgments!r} is not known; use one of {list(JUDGMENT_KINDS)}")
    return {"judgments": judgments, "span": (span or SpanPolicy()).to_dict(), "aggregation": aggregation,
            "overlap_threshold": float(overlap_threshold), "overlap_basis": "shorter"}


def chunking_fingerprint(gold_set_version: str, measures: Iterable[object], policies: Mapping[str, Any], *,
                         judgments: str, source_snapshot_id: str, chunked_snapshot_id: str | None = None,
                         chunking: Mapping[str, Any] | None = None) -> EvalFingerprint:
    """The eval fingerprint of chunk runs: :func:`kb_component` as the knowledge-base component, and the
    ``chunking`` policy (default :func:`chunking_policies`) beside the other ``policies``."""
    kb = kb_component(judgments, source_snapshot_id=source_snapshot_id, chunked_snapshot_id=chunked_snapshot_id)
    return EvalFingerprint.of(gold_set_version, kb, measures,
                              {**policies, "chunking": dict(chunking or chunking_policies(judgments=judgments))})


def version_conditions(manifest: ChunkManifest, source_snapshot_id: str) -> dict[str, Any]:
    """What a version's run records about its chunking (reports print it). Refuses a manifest made on other
    source text than the judgments' (its spans would point at other characters)."""
    if manifest.source_snapshot_id and manifest.source_snapshot_id != source_snapshot_id:
        raise InputError(f"chunking {manifest.name!r} was made on source snapshot {manifest.source_snapshot_id}, "
                         f"not {source_snapshot_id}; re-locate its chunks in the current source text")
    return {**manifest.describe(), "source_snapshot_id": source_snapshot_id}
