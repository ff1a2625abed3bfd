"""A chunking test collection built from SciFact: one source corpus, three chunkings, judgments on spans.

* source: the SciFact abstracts (``text``; titles are not chunked);
* judgments (made once, on the source text): for each judged (claim, abstract) pair of the qrels, the
  abstract's sentence that shares the most words with the claim (first such sentence), grade 1;
* chunkings: ``win256`` (256-character windows every 192 characters: 64 of overlap), ``sent3`` (runs of up
  to three sentences, located in the source from their text only) and ``win512`` (512-character windows, no
  overlap);
* runs: for each claim, the chunks of the BM25 run's top 20 abstracts, each scored by the abstract's BM25
  score plus the share of the claim's words the chunk holds (a real ranking that differs per chunking).
"""

from __future__ import annotations

import re
from pathlib import Path

from evalops.chunking import (
    AnchoredJudgment,
    AnchoredJudgments,
    ChunkManifest,
    SourceTexts,
    locate_chunks,
)
from evalops.data import Run
from evalops.formats import read_beir_qrels, read_trec_run
from evalops.knowledge import snapshot_from_beir

WORD = re.compile(r"\w+")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
TOP_DOCS = 20


def words(text: str) -> set[str]:
    return {w.lower() for w in WORD.findall(text)}


def sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans: cut after ., ! or ? followed by white space (the space goes to no sentence)."""
    spans, start = [], 0
    for m in SENTENCE_END.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return [(s, e) for s, e in spans if e > s]


def windows(sources: SourceTexts, size: int, stride: int, tag: str) -> ChunkManifest:
    rows = []
    for did, text in sources.texts.items():
        start, i = 0, 0
        while True:
            end = min(start + size, len(text))
            if end > start:
                rows.append({"chunk_id": f"{did}#{tag}{i}", "doc_id": did, "start": start, "end": end})
            if end >= len(text):
                break
            start, i = start + stride, i + 1
    return ChunkManifest.of(rows, name=tag, sources=sources)


def sentence_chunks(sources: SourceTexts, per_chunk: int = 3) -> list[dict[str, str]]:
    """Chunk texts only (no spans): what a sentence splitter hands over."""
    rows = []
    for did, text in sources.texts.items():
        spans = sentences(text)
        for i in range(0, len(spans), per_chunk):
            group = spans[i:i + per_chunk]
            rows.append({"chunk_id": f"{did}#s{i // per_chunk}", "doc_id": did,
                         "text": text[group[0][0]:group[-1][1]]})
    return rows


def judgments_on_spans(sources: SourceTexts, qrels, queries: dict[str, str]) -> AnchoredJudgments:
    rows = []
    for q, d, g in zip(qrels.query_ids, qrels.doc_ids, qrels.grades, strict=False):
        text = sources.text(d)
        claim = words(queries[q])
        best = max(sentences(text), key=lambda s: (len(words(text[s[0]:s[1]]) & claim), -s[0]))
        rows.append(AnchoredJudgment(q, d, best[0], best[1], text[best[0]:best[1]], int(g)))
    return AnchoredJudgments.of(rows, sources, source="scifact-spans")


def chunk_run(manifest: ChunkManifest, sources: SourceTexts, doc_run: Run, queries: dict[str, str],
              name: str) -> Run:
    by_doc = manifest.by_document()
    texts = manifest.texts(sources)
    ranked: dict[str, list[tuple[str, float]]] = {}
    order: dict[str, list[tuple[float, str]]] = {}
    for q, d, s in zip(doc_run.query_ids, doc_run.doc_ids, doc_run.scores, strict=False):
        order.setdefault(q, []).append((-s, d))
    run: dict[str, dict[str, float]] = {}
    for q, docs in order.items():
        claim = words(queries[q])
        for neg, d in sorted(docs)[:TOP_DOCS]:
            for c in by_doc.get(d, []):
                share = len(words(texts[c.chunk_id]) & claim) / max(1, len(claim))
                run.setdefault(q, {})[c.chunk_id] = round(-neg + share, 6)
    del ranked
    return Run.from_dict(run, name=name)


class Collection:
    def __init__(self, folder: Path):
        self.folder = folder
        snapshot = snapshot_from_beir(folder / "corpus.jsonl")
        self.sources = SourceTexts.of(snapshot)
        import json

        self.queries = {}
        for line in (folder / "queries.jsonl").read_text().splitlines():
            record = json.loads(line)
            self.queries[record["_id"]] = record["text"]
        self.qrels = read_beir_qrels(folder / "qrels.tsv")
        self.doc_run = read_trec_run(folder / "runs" / "bm25.trec")
        self.judgments = judgments_on_spans(self.sources, self.qrels, self.queries)
        self.manifests = {"win256": windows(self.sources, 256, 192, "w"),
                          "win512": windows(self.sources, 512, 512, "W")}
        self.sent3, self.locate_report = locate_chunks(sentence_chunks(self.sources), self.sources, name="sent3")
        self.manifests["sent3"] = self.sent3
        self.runs = {name: chunk_run(m, self.sources, self.doc_run, self.queries, name)
                     for name, m in self.manifests.items()}
