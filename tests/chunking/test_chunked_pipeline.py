"""Versions that differ only in chunking, through the whole pipeline (``run_local``) on the sample knowledge
base: chunk runs scored as document runs against the gold set, compared, the chunkings named in the
report; re-chunking keeps the baseline comparable, a change of source text makes it stale."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from evalops.chunking import (
    ChunkManifest,
    SourceTexts,
    document_run,
    write_chunk_manifest,
)
from evalops.knowledge import snapshot_from_beir

REGISTRY = """\
retrievers:
  - {name: kb, version: w200, adapter: builtin, deployed: true, owner: s, chunking: chunks/w200.jsonl,
     params: {kind: bm25}}
  - {name: kb, version: w400, adapter: builtin, deployed: true, owner: s, chunking: chunks/w400.jsonl,
     params: {kind: bm25}}
"""


def _windows(sources: SourceTexts, size: int, stride: int) -> ChunkManifest:
    rows = []
    for did, text in sources.texts.items():
        for i, start in enumerate(range(0, max(1, len(text) - size + stride), stride)):
            rows.append({"chunk_id": f"{did}~{i}", "doc_id": did, "start": start, "end": min(len(text), start + size)})
    return ChunkManifest.of(rows, name=f"w{size}", sources=sources)


@pytest.fixture
def project(tmp_path, repo_root):
    from evalops.config import load_config

    kb = tmp_path / "kb"
    kb.mkdir()
    shutil.copy(repo_root / "include" / "knowledge_base" / "corpus.jsonl", kb / "corpus.jsonl")
    sources = SourceTexts.of(snapshot_from_beir(kb / "corpus.jsonl"))
    (tmp_path / "chunks").mkdir()
    write_chunk_manifest(_windows(sources, 200, 150), tmp_path / "chunks" / "w200.jsonl")
    write_chunk_manifest(_windows(sources, 400, 400), tmp_path / "chunks" / "w400.jsonl")
    (tmp_path / "retrievers.yaml").write_text(REGISTRY)
    (tmp_path / "evalops.yaml").write_text(
        f"gold_set: {{path: {repo_root / 'include' / 'goldset'}}}\nknowledge_base: {{path: {kb}}}\n"
        "registry: retrievers.yaml\nmeasures: [nDCG@10, R@10]\nlog_sample_size: 0\n")
    return load_config(tmp_path, environ={}), tmp_path, sources


def _day(cfg, day):
    from evalops.pipeline import RunContext, run_local

    run = RunContext.for_day(day)
    return run, run_local(cfg, run)


def test_chunkings_compared_through_the_pipeline(project):
    from evalops.metrics import evaluate
    from evalops.pipeline.chunkings import chunk_corpus
    from evalops.pipeline.promotion import promote
    from evalops.pipeline.queries import gold_queries
    from evalops.pipeline.registry import fingerprint_for
    from evalops.pipeline.store import engine_for
    from evalops.retrievers import build_retriever, load_registry, retrieve_run
    from evalops.warehouse import get_run, load_scores

    cfg, folder, sources = project
    _day(cfg, "2024-06-01")
    promote(cfg, retriever="kb", version="w200", promoted_by="test", reason="first chunking")
    _, result = _day(cfg, "2024-06-02")
    specs = {s["version"]: s for s in result["versions"] if s["retriever"] == "kb"}
    assert specs["w400"]["role"] == "candidate" and specs["w200"]["role"] == "baseline"
    assert specs["w400"]["baseline_run_id"] is not None and not specs["w200"].get("rescore_reason")
    fp = fingerprint_for(cfg, specs["w200"]["query_set_version"], specs["w200"]["snapshot_id"])
    assert fp.policies["chunking"]["aggregation"] == "maxp" and fp.hash == specs["w400"]["fingerprint"]

    # the stored per-query nDCG@10 of w400 is its chunk run (BM25 over the chunks) aggregated by MaxP
    entry = load_registry(folder / "retrievers.yaml").get("kb", "w400")
    snapshot = snapshot_from_beir(folder / "kb" / "corpus.jsonl")
    queries = gold_queries(cfg)
    chunk_run = retrieve_run(build_retriever(entry, corpus=chunk_corpus(entry, snapshot)), queries.texts, k=cfg.k,
                             name="kb@w400").run
    assert set(chunk_run.doc_ids.tolist()) <= {c.chunk_id for c in _windows(sources, 400, 400).chunks}
    want = evaluate(queries.qrels, document_run(chunk_run, _windows(sources, 400, 400), "maxp"), ["nDCG@10"])
    stored = load_scores(engine_for(cfg), specs["w400"]["run_id"], ["nDCG@10"]).set_index("query_id")["value"]
    np.testing.assert_allclose(stored.loc[want.query_ids].to_numpy(), want.per_query["nDCG@10"], rtol=0, atol=1e-12)
    assert 0 < want.mean("nDCG@10") < 1

    for version, size, stride in (("w400", 400, 400), ("w200", 200, 150)):  # each run records its chunking
        recorded = get_run(engine_for(cfg), specs[version]["run_id"]).contracts["chunking"]
        assert recorded == {**_windows(sources, size, stride).describe(), "manifest": f"chunks/{version}.jsonl",
                            "name": version, "source_snapshot_id": specs[version]["snapshot_id"]}

    report = result["report"]
    text = "\n".join(p.read_text() for p in Path(report).parent.glob("*.md"))
    assert "kb@w400 retrieves from chunking w400" in text and "kb@w200 retrieves from chunking w200" in text
    assert 'chunking "chunks/w200.jsonl" → "chunks/w400.jsonl"' in text


def test_rechunking_keeps_the_baseline_a_source_edit_makes_it_stale(project):
    from evalops.pipeline.promotion import promote

    cfg, folder, sources = project
    _day(cfg, "2024-06-01")
    promote(cfg, retriever="kb", version="w200", promoted_by="test", reason="first chunking")
    # only the chunking of the baseline version changes: the fingerprint holds, the baseline is current
    write_chunk_manifest(_windows(sources, 250, 200), folder / "chunks" / "w200.jsonl")
    _, result = _day(cfg, "2024-06-02")
    specs = {s["version"]: s for s in result["versions"] if s["retriever"] == "kb"}
    assert specs["w400"]["baseline_run_id"] is not None and not specs["w200"].get("rescore_reason")
    # the source text changes (a document added): a new snapshot, a new fingerprint, the baseline is stale
    corpus = folder / "kb" / "corpus.jsonl"
    corpus.write_text(corpus.read_text() + json.dumps({"_id": "new-doc", "title": "", "text": "Fresh text."}) + "\n")
    _, result = _day(cfg, "2024-06-03")
    specs = {s["version"]: s for s in result["versions"] if s["retriever"] == "kb"}
    assert "stale" in (specs["w200"].get("rescore_reason") or "")
