"""The sample data in include/: what the issue asks of it, and that it matches its build script."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evalops.contracts import GoldSetRules, validate_gold_set
from evalops.goldset import load_gold_set
from evalops.knowledge import snapshot_from_beir

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def include(repo_root: Path) -> Path:
    return repo_root / "include"


def test_knowledge_base_is_big_mixed_and_covers_the_handbook(include: Path) -> None:
    snap = snapshot_from_beir(include / "knowledge_base" / "corpus.jsonl")
    assert len(snap) >= 200
    texts = snap.docs["title"] + " " + snap.docs["text"]
    chinese = texts.map(lambda t: bool(CJK.search(t)))
    assert 0.15 < chinese.mean() < 0.5
    ids = set(snap.docs["doc_id"])
    for prefix in ("travel-", "refund-", "support-", "err-ORDER-2024", "manual-AX-350-"):
        assert any(i.startswith(prefix) for i in ids), prefix
    assert texts.str.contains("ORDER-2024").any()


def test_gold_set_has_every_kind_of_query(include: Path) -> None:
    gold = load_gold_set(include / "goldset")
    assert len(gold) >= 60
    types = gold.type_counts()
    assert set(types) == {"semantic", "keyword", "no_answer"}
    assert gold.queries["language"].eq("zh").sum() >= 10
    relevant = gold.relevant_counts()
    assert (relevant >= 2).sum() >= 15  # several relevant chunks
    assert set(gold.judgments["grade"]) == {0, 1, 2}
    keyword = gold.queries[gold.queries["type"] == "keyword"]["text"]
    assert keyword.str.contains(r"[A-Z]{2,}-\d").sum() >= 10  # codes and model numbers


@pytest.mark.slow
def test_sample_gold_set_validates_against_sample_kb(include: Path) -> None:
    gold = load_gold_set(include / "goldset")
    snap = snapshot_from_beir(include / "goldset")  # the symlinked corpus.jsonl
    assert validate_gold_set(gold, snap, GoldSetRules(), docs_dir=None).ok


def test_committed_files_match_the_build_script(include: Path) -> None:
    out = subprocess.run([sys.executable, str(include / "sample_data" / "build.py"), "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_committed_chunkings_match_their_script_and_cover_every_character(include: Path) -> None:
    """include/chunks (the demo's two chunkings): as include/sample_data/chunks.py writes them, and each a
    valid manifest of the knowledge base whose windows together hold every character of every text."""
    from evalops.chunking import SourceTexts, read_chunk_manifest

    script = include / "sample_data" / "chunks.py"
    out = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    sources = SourceTexts.of(snapshot_from_beir(include / "knowledge_base" / "corpus.jsonl"))
    for name, width in (("win96", 96), ("win192", 192)):
        manifest = read_chunk_manifest(include / "chunks" / f"{name}.jsonl", sources=sources)
        covered: dict[str, set[int]] = {}
        for chunk in manifest.chunks:
            assert 0 < chunk.end - chunk.start <= width
            covered.setdefault(chunk.doc_id, set()).update(range(chunk.start, chunk.end))
        assert covered == {d: set(range(len(t))) for d, t in sources.texts.items()}


def test_the_chunked_versions_have_a_registry_of_their_own_beside_their_manifests(include: Path,
                                                                                  tmp_path: Path) -> None:
    """include/retrievers.yaml declares no chunking, so a copy of it alone (what many tests make) is a whole
    registry; include/chunks/retrievers.yaml declares the demo's chunked versions, their manifests beside it."""
    import shutil

    from evalops.retrievers import load_registry

    shutil.copy(include / "retrievers.yaml", tmp_path / "retrievers.yaml")
    alone = load_registry(tmp_path / "retrievers.yaml")
    for entry in alone:
        assert entry.chunking is None, entry.key
        entry.check_files()
    chunked = load_registry(include / "chunks" / "retrievers.yaml")
    assert {(e.key, e.deployed, e.chunking_path) for e in chunked} == {
        ("handbook-chunks@win96", True, include / "chunks" / "win96.jsonl"),
        ("handbook-chunks@win192", False, include / "chunks" / "win192.jsonl")}
    for entry in chunked:
        entry.check_files()


@pytest.mark.slow
def test_bm25_scores_well_but_not_perfectly_and_breaks_visibly(include: Path) -> None:
    """A plain BM25 must find most answers, not all; a whitespace tokenizer and a half index must hurt."""
    import bm25s
    import jieba
    import pytrec_eval

    docs = [json.loads(line) for line in open(include / "knowledge_base" / "corpus.jsonl", encoding="utf-8")]
    gold = load_gold_set(include / "goldset")
    qrels = gold.qrels.to_dict()
    answerable = [q for q, t in zip(gold.queries["query_id"], gold.queries["type"]) if t != "no_answer"]

    def tokenize(text: str) -> list[str]:
        out = []
        for token in re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*|[\u4e00-\u9fff]+", text.lower()):
            out += [w for w in jieba.lcut(token) if w.strip()] if CJK.match(token) else [token, *token.split("-")]
        return out

    def ndcg(tok, n_docs: int) -> float:
        corpus = docs[:n_docs]
        index = bm25s.BM25()
        index.index([tok(d["title"] + " " + d["text"]) for d in corpus], show_progress=False)
        run = {}
        for qid, text in zip(gold.queries["query_id"], gold.queries["text"]):
            words = [w for w in tok(text) if w in index.vocab_dict]
            if not words:
                continue
            hits, scores = index.retrieve([words], k=10, show_progress=False)
            run[qid] = {corpus[i]["_id"]: float(s) for i, s in zip(hits[0], scores[0])}
        per_query = pytrec_eval.RelevanceEvaluator({q: qrels[q] for q in answerable}, {"ndcg_cut.10"}).evaluate(run)
        return sum(per_query.get(q, {"ndcg_cut_10": 0.0})["ndcg_cut_10"] for q in answerable) / len(answerable)

    good = ndcg(tokenize, len(docs))
    assert 0.55 < good < 0.95
    assert ndcg(lambda t: t.lower().split(), len(docs)) < good - 0.1
    assert ndcg(tokenize, len(docs) // 2) < good - 0.2
