"""A text-anchored gold set as the daily gold set (``evalops.pipeline.spans``), through the whole pipeline
(``run_local``) on the sample knowledge base: two chunkings of it scored on span measures, the stored
per-query values equal to ``score_chunk_run`` computed apart, compared with a decision the gate reads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from evalops.chunking import (
    AnchoredJudgment,
    AnchoredJudgments,
    ChunkManifest,
    SourceTexts,
    span_scores,
    write_anchored_judgments,
    write_chunk_manifest,
)
from evalops.knowledge import snapshot_from_beir
from tests.chunking.test_chunked_pipeline import REGISTRY, _windows

# the two chunkings, and the whole documents (no chunking) scored on the same spans
REGISTRY_WITH_DOCUMENTS = REGISTRY + """\
  - {name: kb, version: docs, adapter: builtin, deployed: true, owner: s, params: {kind: bm25}}
"""

MEASURES = ["TokenIoU@10", "TokenRecall@10", "TokenPrecision@10", "TokenIoU(budget=400)"]


@pytest.fixture
def project(tmp_path, repo_root):
    from evalops.config import load_config
    from evalops.formats import read_qrels

    kb = tmp_path / "kb"
    kb.mkdir()
    shutil.copy(repo_root / "include" / "knowledge_base" / "corpus.jsonl", kb / "corpus.jsonl")
    sources = SourceTexts.of(snapshot_from_beir(kb / "corpus.jsonl"))
    qrels = read_qrels(repo_root / "include" / "goldset" / "qrels" / "test.tsv")
    rows = []  # judgments made once on the source text: the judged document's words 40..160
    for q, d, g in zip(qrels.query_ids, qrels.doc_ids, qrels.grades, strict=False):
        text = sources.text(str(d))
        s, e = min(40, len(text) // 3), min(len(text), 160)
        rows.append(AnchoredJudgment(str(q), str(d), s, e, text[s:e], int(g)))
    gold = AnchoredJudgments.of(rows, sources, source="spans")
    write_anchored_judgments(gold, tmp_path / "spans.jsonl")
    (tmp_path / "chunks").mkdir()
    write_chunk_manifest(_windows(sources, 200, 150), tmp_path / "chunks" / "w200.jsonl")
    write_chunk_manifest(_windows(sources, 400, 400), tmp_path / "chunks" / "w400.jsonl")
    (tmp_path / "retrievers.yaml").write_text(REGISTRY_WITH_DOCUMENTS)
    (tmp_path / "evalops.yaml").write_text(
        f"gold_set: {{path: spans.jsonl, queries: {repo_root / 'include' / 'goldset' / 'queries.jsonl'}}}\n"
        f"knowledge_base: {{path: {kb}}}\nregistry: retrievers.yaml\nmeasures: [nDCG@10, R@10]\n"
        "span_measures: [TokenIoU@10, TokenRecall@10, TokenPrecision@10, TokenIoU@budget=400]\n"
        "chunk_measures: [nDCG@10]\n"
        "alert_measures: [nDCG@10, TokenIoU@10]\nlog_sample_size: 0\n")
    return load_config(tmp_path, environ={}), tmp_path, sources, gold


def test_span_measures_scored_compared_and_gated(project):
    from evalops.chunking import score_chunk_run
    from evalops.gate import cases_for_run
    from evalops.pipeline import RunContext, run_local
    from evalops.pipeline.chunkings import chunk_corpus
    from evalops.pipeline.promotion import promote
    from evalops.pipeline.queries import gold_queries
    from evalops.pipeline.registry import fingerprint_for
    from evalops.pipeline.store import engine_for
    from evalops.retrievers import build_retriever, load_registry, retrieve_run
    from evalops.warehouse import load_scores

    cfg, folder, sources, gold = project
    run_local(cfg, RunContext.for_day("2024-06-01"))
    promote(cfg, retriever="kb", version="w200", promoted_by="test", reason="first chunking")
    run = RunContext.for_day("2024-06-02")
    result = run_local(cfg, run)
    specs = {s["version"]: s for s in result["versions"] if s["retriever"] == "kb"}
    assert specs["w400"]["role"] == "candidate" and specs["w400"]["baseline_run_id"] is not None

    # the fingerprint records the span policy and the span judgments' hash
    fp = fingerprint_for(cfg, specs["w200"]["query_set_version"], specs["w200"]["snapshot_id"])
    assert fp.policies["spans"]["judgments"] == {"gold": gold.version}
    assert fp.policies["spans"]["units"] == "chars" and "TokenIoU(budget=400)" in fp.measures
    assert fp.hash == specs["w400"]["fingerprint"]

    # stored per-query span values = score_chunk_run of the same chunk run, computed apart
    registry = load_registry(folder / "retrievers.yaml")
    snapshot = snapshot_from_beir(folder / "kb" / "corpus.jsonl")
    queries = gold_queries(cfg)
    engine = engine_for(cfg)
    for version, size, stride in (("w400", 400, 400), ("w200", 200, 150)):
        entry = registry.get("kb", version)
        chunk_run = retrieve_run(build_retriever(entry, corpus=chunk_corpus(entry, snapshot)), queries.texts,
                                 k=cfg.k, name=f"kb@{version}").run
        want = score_chunk_run(gold, _windows(sources, size, stride), chunk_run, sources, measures=("nDCG@10",),
                               cutoffs=(10,), budgets=(400,))
        stored = load_scores(engine, specs[version]["run_id"], [*MEASURES, "chunk/nDCG@10"])
        for measure, theirs in (("TokenIoU@10", "TokenIoU@10"), ("TokenRecall@10", "TokenRecall@10"),
                                ("TokenPrecision@10", "TokenPrecision@10"),
                                ("TokenIoU(budget=400)", "TokenIoU@budget=400"), ("chunk/nDCG@10", "chunk/nDCG@10")):
            got = stored[stored["measure"] == measure].set_index("query_id")["value"]
            assert sorted(got.index) == want.query_ids.tolist()
            np.testing.assert_allclose(got.loc[want.query_ids].to_numpy(), want.values[theirs], rtol=0, atol=1e-12)
        assert 0 < want.means()["TokenIoU@10"] < 1 and 0 < want.means()["chunk/nDCG@10"] < 1

    # an unchunked version: its documents are the chunks (each one its whole text), a hand-built manifest
    entry = registry.get("kb", "docs")
    doc_run = retrieve_run(build_retriever(entry, corpus=snapshot.corpus), queries.texts, k=cfg.k, name="kb@docs").run
    whole = ChunkManifest.of([{"chunk_id": d, "doc_id": d, "start": 0, "end": len(t)}
                              for d, t in sources.texts.items()])
    want = span_scores(gold, whole, doc_run, sources, k=10)
    got = load_scores(engine, specs["docs"]["run_id"], ["TokenIoU@10"]).set_index("query_id")["value"]
    np.testing.assert_allclose(got.loc[want.query_ids].to_numpy(), want.iou, rtol=0, atol=1e-12)
    assert len(got) == len(want.query_ids)

    report = "\n".join(p.read_text() for p in Path(result["report"]).parent.glob("*.md"))
    assert "TokenIoU@10" in report and "TokenIoU(budget=400)" in report

    # compared with a decision, and the gate has a case for it
    cases = {(c.version, c.measure): c for c in cases_for_run(cfg, run, result)}
    case = cases[("w400", "TokenIoU@10")]
    assert case.decision in ("improvement", "regression", "no_change", "inconclusive", "equivalent")
    assert case.outcome in ("passed", "failure", "skipped") and case.baseline_version == "w200"
    stored = {v: load_scores(engine, specs[v]["run_id"], ["TokenIoU@10"]).set_index("query_id")["value"]
              for v in ("w400", "w200")}
    assert case.comparison.delta == pytest.approx(float((stored["w400"] - stored["w200"]).mean()), abs=1e-12)
    assert ("w400", "TokenIoU(budget=400)") in cases  # every span measure is a case


@pytest.mark.parametrize("line, says", [
    ("span_measures: [TokenIoU@ten]\n", "span_measures"),
    ("span_measures: [nDCG@10]\n", "span_measures"),
    ("span_measures: [TokenIoU@10]\nalert_measures: [TokenRecall@10]\n", "alert_measures"),
    ("chunk_measures: [Tokens@10]\n", "chunk_measures"),
    ("chunk_measures: [nDCG@10]\nalert_measures: [chunk/nDCG@10]\n", "alert_measures"),
])
def test_span_measures_are_checked_with_the_settings(tmp_path, line, says):
    from evalops.config import load_config
    from evalops.errors import ConfigError

    (tmp_path / "evalops.yaml").write_text("measures: [nDCG@10]\n" + line)
    with pytest.raises(ConfigError, match=says):
        load_config(tmp_path, environ={})


def test_span_measures_need_a_text_anchored_gold_set(tmp_path, repo_root):
    from evalops.config import load_config
    from evalops.errors import ConfigError
    from evalops.pipeline.registry import fingerprint_for

    (tmp_path / "evalops.yaml").write_text(
        f"gold_set: {{path: {repo_root / 'include' / 'goldset'}}}\n"
        f"knowledge_base: {{path: {repo_root / 'include' / 'knowledge_base'}}}\n"
        "span_measures: [TokenIoU@10]\n")
    (tmp_path / "retrievers.yaml").write_text(REGISTRY_WITH_DOCUMENTS.split("\n  - {name: kb, version: w200")[0]
                                              + "\n  - {name: kb, version: docs, adapter: builtin, deployed: true, "
                                              "owner: s, params: {kind: bm25}}\n")
    cfg = load_config(tmp_path, environ={})
    with pytest.raises(ConfigError, match="text-anchored"):
        fingerprint_for(cfg, "v", "s")


def test_a_bad_excerpt_is_refused_with_file_and_line(project):
    from evalops.errors import FormatError
    from evalops.pipeline.inputs import load_gold_set_for

    cfg, folder, _, _ = project
    path = folder / "spans.jsonl"
    lines = path.read_text().splitlines()
    row = json.loads(lines[1])
    lines[1] = json.dumps({**row, "excerpt": "not in the text " + row["excerpt"]})
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(FormatError, match=r"spans.jsonl:2: excerpt does not match"):
        load_gold_set_for(cfg)


def test_a_span_regression_the_document_measures_cannot_see_fails_the_gate(project):
    """Two run files on one chunking that rank the same documents in the same order, one with the chunk that
    holds each excerpt, the other with a chunk of the same document past it: MaxP nDCG@10 is the same, the
    span measures regress, and the gate fails on the alerting one."""
    from evalops.config import load_config
    from evalops.gate import cases_for_run, gate_exit_code
    from evalops.pipeline import RunContext, run_local
    from evalops.pipeline.promotion import promote

    cfg, folder, sources, gold = project
    manifest = _windows(sources, 200, 150)
    chunks_of: dict[str, list[str]] = {}
    for c in sorted(manifest.chunks, key=lambda c: (c.doc_id, c.start)):
        chunks_of.setdefault(c.doc_id, []).append(c.chunk_id)
    relevant: dict[str, list[str]] = {}  # every judged document of a query, the relevant ones first
    for j in sorted(gold, key=lambda j: (j.grade <= 0, j.query_id, j.doc_id)):
        if j.doc_id not in relevant.setdefault(j.query_id, []):
            relevant[j.query_id].append(j.doc_id)
    for name, pick in (("held", lambda ids: ids[0]), ("past", lambda ids: ids[-1])):
        lines = [f"{q} Q0 {pick(chunks_of[d])} {r + 1} {10.0 - r} {name}"
                 for q, docs in sorted(relevant.items()) for r, d in enumerate(docs)]
        (folder / f"{name}.trec").write_text("\n".join(lines) + "\n")
    (folder / "retrievers.yaml").write_text("retrievers:\n" + "".join(
        f"  - {{name: kb, version: {v}, adapter: run_file, deployed: true, owner: s, chunking: chunks/w200.jsonl, "
        f"params: {{path: {v}.trec}}}}\n" for v in ("held", "past")))
    text = (folder / "evalops.yaml").read_text().replace("alert_measures: [nDCG@10, TokenIoU@10]",
                                                         "alert_measures: [TokenIoU@10]")
    (folder / "evalops.yaml").write_text(text)
    cfg = load_config(folder, environ={})
    run_local(cfg, RunContext.for_day("2024-06-01"))
    promote(cfg, retriever="kb", version="held", promoted_by="test", reason="the excerpts' chunks")
    run = RunContext.for_day("2024-06-02")
    result = run_local(cfg, run)
    cases = {(c.version, c.measure): c for c in cases_for_run(cfg, run, result)}
    assert cases[("past", "nDCG@10")].comparison.delta == 0.0  # the same documents, the same order
    iou = cases[("past", "TokenIoU@10")]
    assert iou.decision == "regression" and iou.outcome == "failure" and iou.kind == "regression"
    assert cases[("past", "TokenRecall@10")].decision == "regression"
    assert cases[("past", "TokenRecall@10")].outcome != "failure"  # descriptive: not an alert measure
    assert int(gate_exit_code(cases.values())) != 0
    # the chunk judgments derived by overlap see it too (descriptive: they never alert)
    chunked = cases[("past", "chunk/nDCG@10")]
    assert chunked.decision == "regression" and chunked.outcome != "failure"
