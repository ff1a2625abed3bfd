"""A text-anchored gold set in the daily run: span measures per version, scored and compared like the others.

A gold set whose judgments file is in the span format of :mod:`evalops.chunking.judgments` (``query_id``,
``doc_id``, ``start``, ``end``, ``excerpt``, ``grade``; JSON Lines or CSV with a header), configured as a TREC
layout (``path``: the judgments file, ``queries``: the queries file), is read against the knowledge base's
source text (every excerpt checked; a bad row refused with the file and line). Then:

* its **document judgments** (each judged document with the best grade of its excerpts,
  ``AnchoredJudgments.document_qrels``) are the gold set's qrels: every configured measure applies, to an
  unchunked version's run and to a chunked version's MaxP document run alike (:mod:`evalops.pipeline.chunkings`);
* the **span measures** named in ``span_measures`` (``TokenIoU@10``, ``TokenRecall(budget=400)``, ...;
  :mod:`evalops.chunking.names`) are computed per answered query by
  :func:`evalops.chunking.measures.span_scores` from the version's own run: a chunked version's chunk run
  against its chunk manifest, an unchunked version's document run against the **whole-document chunking**
  (each document one chunk, its whole text), so versions pair query by query whatever they retrieve;
* the **chunk measures** named in ``chunk_measures`` (IR measures, stored as ``chunk/nDCG@10``) score the
  same run against chunk judgments derived by span overlap (:func:`evalops.chunking.aggregate.chunk_qrels`,
  threshold :data:`~evalops.chunking.aggregate.DEFAULT_OVERLAP_THRESHOLD` of the shorter of chunk and
  excerpt); a query whose excerpts no chunk takes scores 0. They are descriptive (they never alert);
* the span policy (units, overlap counting, the overlap threshold) and the span judgments' content hash
  are in the fingerprint (:func:`span_policy`): the document qrels alone would not change when only a
  span moves.

A query whose excerpts are all graded 0 has no span value (left out of the span measures, as
``span_scores`` says); a query the version did not answer has none either (failed queries are never scored).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.chunking import (
    AnchoredJudgments,
    ChunkManifest,
    SourceTexts,
    SpanPolicy,
    chunk_qrels,
    read_anchored_judgments,
    read_chunk_manifest,
    span_scores,
)
from evalops.chunking.aggregate import DEFAULT_OVERLAP_THRESHOLD
from evalops.chunking.names import parse_span_measures, span_cut
from evalops.chunking.scoring import _aligned
from evalops.config import DEFAULT_GOLD_SET
from evalops.data import RunTable
from evalops.errors import ConfigError, InputError
from evalops.goldset import GoldSet
from evalops.goldset.io import _read_queries
from evalops.knowledge import load_snapshot
from evalops.metrics import Policy, evaluate, parse_measures

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalops.chunking import AnchoredJudgments, ChunkManifest, SourceTexts
    from evalops.config import Config
    from evalops.goldset import GoldSet
    from evalops.knowledge import KnowledgeBaseSnapshot

__all__ = ["SPAN_POLICY", "anchored_judgments_for", "is_anchored_file", "load_anchored_gold_set", "span_frame",
           "span_policy", "whole_documents"]

# the span counting the pipeline uses (Chroma's: characters, overlap paid once per chunk); recorded in the
# fingerprint by span_policy
SPAN_POLICY = {"units": "chars", "overlap": "repeat"}

_SPAN_COLUMNS = {"start", "end"}
_cache: dict[tuple[Any, ...], Any] = {}  # the last anchored judgments and whole-document chunking read


def is_anchored_file(path: Path | None) -> bool:
    """Whether ``path`` is a text-anchored judgments file: a ``.jsonl`` whose first record, or a ``.csv``
    whose header, has ``start`` and ``end``."""
    if path is None or not path.is_file() or path.suffix.lower() not in (".jsonl", ".csv"):
        return False
    with path.open(encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            if path.suffix.lower() == ".csv":
                return _SPAN_COLUMNS <= {c.strip() for c in line.rstrip("\r\n").split(",")}
            try:
                record = json.loads(line)
            except ValueError:
                return False
            return isinstance(record, dict) and _SPAN_COLUMNS <= set(record)
    return False


def _sources(cfg: Config, snapshot: KnowledgeBaseSnapshot | None = None) -> SourceTexts:
    return _snapshot_sources(snapshot if snapshot is not None else load_snapshot(cfg.knowledge_base_path()))


def _snapshot_sources(snapshot: KnowledgeBaseSnapshot) -> SourceTexts:
    key = ("sources", snapshot.snapshot_id)
    if key not in _cache:
        _cache.clear()
        _cache[key] = SourceTexts.of(snapshot)
    return _cache[key]


def _stamp(path: Path) -> tuple[Any, ...]:
    st = path.stat()
    return (str(path.resolve()), st.st_size, st.st_mtime_ns)


def anchored_judgments_for(cfg: Config, name: str = DEFAULT_GOLD_SET,
                           snapshot: KnowledgeBaseSnapshot | None = None) -> AnchoredJudgments | None:
    """The text-anchored judgments of gold set ``name`` (checked against the knowledge base's text, or
    ``snapshot``'s), or None when its judgments are not in the span format."""

    spec = cfg.gold_set_named(name)
    path = spec.path
    if spec.queries is None or path is None or not is_anchored_file(path):
        return None
    sources = _sources(cfg, snapshot)
    key = ("judgments", _stamp(path), sources.snapshot_id)
    if key not in _cache:
        _cache[key] = read_anchored_judgments(path, sources)
    return _cache[key]


def load_anchored_gold_set(cfg: Config, name: str, options: dict[str, Any]) -> GoldSet:
    """Gold set ``name`` from a span judgments file: its queries, and the document judgments of its excerpts."""

    spec = cfg.gold_set_named(name)
    judgments = anchored_judgments_for(cfg, name)
    if judgments is None or spec.queries is None:
        raise InputError(f"{spec.path}: not a text-anchored judgments file (no start and end) with its queries")
    queries = _read_queries(Path(spec.queries), options.get("default_type"), options.get("default_language"))
    return GoldSet.from_frames(queries, judgments.document_qrels().to_frame(), source=str(spec.path))


def span_policy(cfg: Config) -> dict[str, Any] | None:
    """The fingerprint's ``spans`` policy when span measures are configured: how they count, and the content
    hash of every span-format gold set's judgments (None without span measures)."""
    if not cfg.span_measures and not cfg.chunk_measures:
        return None

    versions = {}
    for name in sorted(cfg.gold_sets):
        judgments = anchored_judgments_for(cfg, name)
        if judgments is not None:
            versions[name] = judgments.version
    if not versions:
        raise ConfigError(f"{cfg.source}: span_measures / chunk_measures "
                          f"{list(cfg.span_measures) + list(cfg.chunk_measures)} need a gold set whose judgments "
                          "file is text-anchored (query_id, doc_id, start, end, excerpt, grade; with `queries` "
                          "beside it); no gold set is. Remove them or point a gold set's path at such a file")
    return {**SpanPolicy(**SPAN_POLICY).to_dict(), "cut": "rank order at k, or the budget's first units",
            "unchunked_versions": "each document one chunk", "judgments": versions,
            "chunk_judgments": {"overlap_threshold": DEFAULT_OVERLAP_THRESHOLD, "of": "the shorter of chunk and "
                                "excerpt", "grade": "highest overlapping", "lost_queries": "score 0"}}


def whole_documents(sources: SourceTexts) -> ChunkManifest:
    """The chunking an unchunked version retrieves from: each document one chunk (its id), its whole text."""

    key = ("documents", sources.snapshot_id)
    if key not in _cache:
        _cache[key] = ChunkManifest.of(({"chunk_id": d, "doc_id": d, "start": 0, "end": len(t)}
                                        for d, t in sources.texts.items()), name="whole documents", sources=sources)
    return _cache[key]


def span_frame(judgments: AnchoredJudgments | None, entry: Any, snapshot: KnowledgeBaseSnapshot, run: Any,
               answered: list[str], measures: list[str], metrics_policy: Policy) -> pd.DataFrame:
    """The long frame (``query_id, measure, value``) of ``measures`` for the ``answered`` queries of ``run``
    (the version's own run: chunk ids for a chunked version, document ids otherwise). Empty when the query
    set has no text-anchored ``judgments`` (None: a production sample, a chunk-id gold set;
    :func:`anchored_judgments_for`). ``metrics_policy``: the metric conformance policy the chunk measures are
    computed under (the run's)."""
    import pandas as pd

    empty = pd.DataFrame({"query_id": pd.Series([], dtype=str), "measure": pd.Series([], dtype=str),
                          "value": pd.Series([], dtype=float)})
    if judgments is None or not measures:
        return empty
    sources = _snapshot_sources(snapshot)
    keep = set(answered)
    asked = AnchoredJudgments(tuple(j for j in judgments if j.query_id in keep), judgments.source)
    manifest = (whole_documents(sources) if entry.chunking_path is None
                else read_chunk_manifest(entry.chunking_path, sources=sources))
    run = run.to_run() if isinstance(run, RunTable) else run
    policy = SpanPolicy(**SPAN_POLICY)
    frames = []
    chunk = [m.removeprefix("chunk/") for m in measures if m.startswith("chunk/")]
    if chunk:
        frames.append(_chunk_frame(asked, manifest, run, chunk, metrics_policy))
    by_cut: dict[tuple[tuple[str, int], ...], Any] = {}
    for measure in parse_span_measures([m for m in measures if not m.startswith("chunk/")]):
        cut = span_cut(measure)
        key = tuple(sorted(cut.items()))
        if key not in by_cut:
            by_cut[key] = span_scores(asked, manifest, run, sources, policy=policy, **cut)
        scores = by_cut[key]
        values = {"TokenRecall": scores.recall, "TokenPrecision": scores.precision, "TokenIoU": scores.iou}
        frames.append(pd.DataFrame({"query_id": scores.query_ids.astype(str), "measure": str(measure),
                                    "value": values[measure.NAME].astype(float)}))
    return pd.concat(frames, ignore_index=True) if frames else empty


def _chunk_frame(judgments: AnchoredJudgments, manifest: ChunkManifest, run: Any, measures: list[str],
                 policy: Policy) -> pd.DataFrame:
    """``chunk/<measure>`` per query with a relevant excerpt: the run against the chunk judgments derived by
    span overlap (:func:`evalops.chunking.aggregate.chunk_qrels`); a query whose excerpts no chunk takes
    scores 0 (as in :func:`evalops.chunking.scoring.score_chunk_run`)."""
    import numpy as np
    import pandas as pd


    relevant = sorted({j.query_id for j in judgments if j.grade > 0})
    names = [str(m) for m in parse_measures(measures)]
    derived = chunk_qrels(judgments, manifest, DEFAULT_OVERLAP_THRESHOLD)
    if len(derived.qrels) == 0:  # no chunk takes any excerpt: every query lost
        values = {m: np.zeros(len(relevant)) for m in names}
    else:
        result = evaluate(derived.qrels, run, names, policy)
        values = {m: _aligned(result, m, relevant) for m in names}
    return pd.DataFrame({"query_id": [q for _ in names for q in relevant],
                         "measure": [f"chunk/{m}" for m in names for _ in relevant],
                         "value": [float(v) for m in names for v in values[m]]})
