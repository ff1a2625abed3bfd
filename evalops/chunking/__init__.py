"""Comparing chunkings on one gold set: relevance anchored to the source text.

* :mod:`~evalops.chunking.sources`: the source text spans point into;
* :mod:`~evalops.chunking.judgments`: text-anchored judgments (doc id, character span, excerpt, grade) and
  their file format;
* :mod:`~evalops.chunking.manifest`: chunk manifests (chunk id -> source span), read or located;
* :mod:`~evalops.chunking.measures`: token recall, precision and IoU (Chroma's span measures);
* :mod:`~evalops.chunking.aggregate`: MaxP / FirstP document runs and chunk judgments from span overlap;
* :mod:`~evalops.chunking.migrate`: chunk-id judgments to text-anchored ones and back;
* :mod:`~evalops.chunking.conditions`: the fingerprint rule (source text vs chunking);
* :mod:`~evalops.chunking.scoring`: one chunk run scored every way, as per-query vectors.

Pure: files are read only by the ``read_*`` functions.
"""

from __future__ import annotations

from evalops.chunking.aggregate import (
    AGGREGATIONS,
    DEFAULT_OVERLAP_THRESHOLD,
    ChunkQrels,
    chunk_qrels,
    document_run,
)
from evalops.chunking.conditions import (
    JUDGMENT_KINDS,
    chunking_fingerprint,
    chunking_policies,
    kb_component,
    version_conditions,
)
from evalops.chunking.judgments import (
    AnchoredJudgment,
    AnchoredJudgments,
    read_anchored_judgments,
    write_anchored_judgments,
)
from evalops.chunking.manifest import (
    Chunk,
    ChunkManifest,
    LocateReport,
    locate_chunks,
    read_chunk_manifest,
    write_chunk_manifest,
)
from evalops.chunking.measures import (
    OVERLAP_COUNTING,
    SpanPolicy,
    SpanScores,
    ranked_chunks,
    span_scores,
)
from evalops.chunking.migrate import Migration, anchor_judgments, chunk_judgments
from evalops.chunking.scoring import ChunkRunScores, compare_chunkings, score_chunk_run
from evalops.chunking.sources import SourceTexts
from evalops.chunking.spans import UNITS, SpanUnits

__all__ = [
    "AGGREGATIONS",
    "DEFAULT_OVERLAP_THRESHOLD",
    "JUDGMENT_KINDS",
    "OVERLAP_COUNTING",
    "UNITS",
    "AnchoredJudgment",
    "AnchoredJudgments",
    "Chunk",
    "ChunkManifest",
    "ChunkQrels",
    "ChunkRunScores",
    "LocateReport",
    "Migration",
    "SourceTexts",
    "SpanPolicy",
    "SpanScores",
    "SpanUnits",
    "anchor_judgments",
    "chunk_judgments",
    "chunk_qrels",
    "chunking_fingerprint",
    "chunking_policies",
    "compare_chunkings",
    "document_run",
    "kb_component",
    "locate_chunks",
    "ranked_chunks",
    "read_anchored_judgments",
    "read_chunk_manifest",
    "score_chunk_run",
    "span_scores",
    "version_conditions",
    "write_anchored_judgments",
    "write_chunk_manifest",
]
