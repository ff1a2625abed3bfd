"""Vector against hybrid against rerank, on real collections, with the decisions evalops makes between them.

For BEIR SciFact and NFCorpus (test split, graded qrels) in ``../shared/data``, every retriever below is
built with ``evalops.retrievers.build_retriever`` over the collection's corpus (title + text) and asked for
the top 100 of every test query:

* ``bm25``         the built-in BM25 (k1 0.9, b 0.4), the baseline of every comparison;
* ``dense``        the built-in dense retriever over wordllama's shipped static embeddings (256 dimensions),
                   exhaustive cosine;
* ``dense-64``     the same model truncated to its first 64 dimensions (matryoshka);
* ``hybrid-rrf``   BM25 and dense fused by reciprocal rank (k = 60, depth 100);
* ``hybrid-linear`` BM25 and dense fused by min-max-normalised scores (depth 100);
* ``rerank``       BM25's top 100 re-scored by the dense retriever's cosine.

Each is scored with ``evalops.metrics.evaluate`` (nDCG@10, R@100; an unanswered query scores 0) and compared
with BM25 by ``evalops.abtest.compare_evaluations`` under the default policy (the rule of ``evalops
compare``; one family per collection). Times: ``embed`` is building the retriever (for dense: encoding every
document; no cache), ``search`` is ``retrieve_run`` over the queries.

**Independent check.** ``independent_dense_ndcg10`` re-does the dense figure with nothing of evalops: numpy,
``tokenizers`` and ``safetensors`` over the same files (the mean of each text's token vectors, normalised,
cosine, top 10 by ``argsort``, trec_eval's nDCG@10 with gain = grade). The benchmark fails when evalops's
SciFact dense nDCG@10 is more than 0.01 from it.

``--write-docs`` replaces the generated table in ``docs/retrievers.md``.

    python benchmarks/retrievers_dense.py [--data ../shared/data] [--write-docs]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

BEGIN, END = "<!-- retrievers_dense.py: begin -->", "<!-- retrievers_dense.py: end -->"
COLLECTIONS = (("scifact", "SciFact"), ("nfcorpus-orig-test", "NFCorpus"))
DENSE = {"kind": "dense", "model": "wordllama"}
VERSIONS = {
    "bm25": {"kind": "bm25"},
    "dense": DENSE,
    "dense-64": {"kind": "dense", "model": "wordllama", "dim": 64},
    "hybrid-rrf": {"kind": "hybrid", "retrievers": [{"kind": "bm25"}, DENSE]},
    "hybrid-linear": {"kind": "hybrid", "method": "linear", "retrievers": [{"kind": "bm25"}, DENSE]},
    "rerank": {"kind": "rerank", "first": {"kind": "bm25"}, "reranker": {"retriever": DENSE}, "depth": 100},
}
MEASURES = ["nDCG@10", "R@100"]
TOLERANCE = 0.01


def independent_dense_ndcg10(folder: Path) -> float:
    """SciFact-style dense nDCG@10 from the raw files, without evalops (see the module docstring)."""
    import importlib.util

    import numpy as np
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    root = Path(next(iter(importlib.util.find_spec("wordllama").submodule_search_locations)))
    table = load_file(str(root / "weights" / "l2_supercat_256.safetensors"))["embedding.weight"].astype(np.float32)
    tok = Tokenizer.from_file(str(root / "tokenizers" / "l2_supercat_tokenizer_config.json"))
    tok.no_padding()
    tok.no_truncation()

    def embed(texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
        for i, enc in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
            if enc.ids:
                v = table[np.clip(enc.ids, 0, len(table) - 1)].mean(axis=0)
                out[i] = v / np.linalg.norm(v)
        return out

    docs = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8")]
    doc_ids = [str(d["_id"]) for d in docs]
    texts = [(f"{d.get('title') or ''} {d.get('text') or ''}" if d.get("title") else d.get("text") or "") for d in docs]
    qrels: dict[str, dict[str, int]] = {}
    for line in (folder / "qrels.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        q, d, g = line.split("\t")
        qrels.setdefault(q, {})[d] = int(g)
    queries = {str(q["_id"]): q["text"] for q in map(json.loads, (folder / "queries.jsonl").open(encoding="utf-8"))}
    qids = sorted(qrels)
    scores = embed([queries[q] for q in qids]) @ embed(texts).T
    total = 0.0
    for q, row in zip(qids, scores):
        top = np.argsort(-row, kind="stable")[:10]
        dcg = sum(qrels[q].get(doc_ids[i], 0) / math.log2(r + 2) for r, i in enumerate(top))
        ideal = sorted((g for g in qrels[q].values() if g > 0), reverse=True)[:10]
        idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
        total += dcg / idcg if idcg > 0 else 0.0
    return total / len(qids)


def run_collection(folder: Path) -> tuple[dict[str, dict], list]:
    from evalops.abtest import compare_evaluations
    from evalops.formats import load_beir
    from evalops.metrics import evaluate
    from evalops.retrievers import build_retriever, retrieve_run
    from evalops.retrievers.registry import RetrieverEntry
    from evalops.stats import Policy

    data = load_beir(folder)
    queries = {q: data.queries[q] for q in data.qrels.queries.tolist()}
    rows: dict[str, dict] = {}
    evaluations = {}
    for name, params in VERSIONS.items():
        started = time.perf_counter()
        retriever = build_retriever(RetrieverEntry(name, "1", "builtin", params, False, "bench"), corpus=data.corpus)
        built = time.perf_counter()
        result = retrieve_run(retriever, queries, k=100, name=name)
        searched = time.perf_counter()
        evaluation = evaluate(data.qrels, result.run, MEASURES)
        evaluations[name] = evaluation
        rows[name] = {m: float(evaluation.aggregates[m].mean) for m in MEASURES}
        rows[name].update(embed_s=built - started, search_s=searched - built, failed=len(result.failed))
    names = [n for n in VERSIONS if n != "bm25"]
    decided = compare_evaluations(evaluations["bm25"], [evaluations[n] for n in names], Policy(),
                                  baseline_name="bm25", candidate_names=names)
    return rows, decided


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    if not args.data.is_dir():
        print(f"no data folder at {args.data}; pass --data", file=sys.stderr)
        return 2
    from evalops.formats import load_beir  # noqa: F401  (imported once before timing anything)
    from evalops.retrievers.encoders import wordllama_encoder

    started = time.perf_counter()
    wordllama_encoder(256), wordllama_encoder(64)  # read the table once, outside the timed builds
    load_s = time.perf_counter() - started
    failures = 0
    sections = []
    for sub, label in COLLECTIONS:
        folder = args.data / sub
        rows, decided = run_collection(folder)
        n_docs = len(load_beir(folder).corpus)
        n_queries = len(load_beir(folder).qrels.queries)
        print(f"\n{label}: {n_docs} documents, {n_queries} test queries")
        print(f"{'version':<14} {'nDCG@10':>8} {'R@100':>7} {'embed s':>8} {'search s':>9}")
        for name, r in rows.items():
            print(f"{name:<14} {r['nDCG@10']:>8.4f} {r['R@100']:>7.4f} {r['embed_s']:>8.2f} {r['search_s']:>9.2f}")
        print("against bm25 (default policy, one family):")
        for c in decided:
            print(f"  {c.candidate_name:<14} {c.measure:<8} delta {c.delta:+.4f} "
                  f"[{c.interval_low:+.4f}, {c.interval_high:+.4f}] {c.decision}"
                  f"{' (' + c.severity + ')' if c.severity else ''}")
        check = None
        if sub == "scifact":
            check = independent_dense_ndcg10(folder)
            gap = abs(check - rows["dense"]["nDCG@10"])
            ok = gap <= TOLERANCE
            failures += not ok
            print(f"independent script: dense nDCG@10 {check:.4f}; evalops {rows['dense']['nDCG@10']:.4f}; "
                  f"gap {gap:.4f} ({'ok' if ok else 'OVER'} the tolerance {TOLERANCE})")
        sections.append((label, n_docs, n_queries, rows, decided, check))
    print(f"\nreading the model's files: {load_s:.2f} s; figures outside their bound: {failures}")
    if args.write_docs:
        write_docs(sections)
    return 1 if failures else 0


def write_docs(sections: list) -> None:
    lines = [BEGIN, ""]
    for label, n_docs, n_queries, rows, decided, check in sections:
        by = {(c.candidate_name, c.measure): c for c in decided}
        lines += [f"**{label}** ({n_docs:,} documents, {n_queries} test queries):", "",
                  "| version | nDCG@10 | vs bm25 | R@100 | vs bm25 | embed (s) | search (s) |",
                  "|---|---:|---|---:|---|---:|---:|"]
        for name, r in rows.items():
            cells = []
            for m in MEASURES:
                c = by.get((name, m))
                word = "baseline" if c is None else (
                    f"{c.delta:+.4f}, {c.decision}{' (' + c.severity + ')' if c.severity else ''}")
                cells += [f"{r[m]:.4f}", word]
            lines.append(f"| `{name}` | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} | {r['embed_s']:.1f} | "
                         f"{r['search_s']:.1f} |")
        if check is not None:
            lines += ["", f"An independent script (numpy, tokenizers and safetensors over the same files, no evalops "
                          f"code) gives dense nDCG@10 {check:.4f} on {label}."]
        lines.append("")
    lines.append(END)
    path = Path(__file__).resolve().parents[1] / "docs" / "retrievers.md"
    text = path.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + "\n".join(lines) + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
    path.write_text(text, encoding="utf-8")
    print(f"wrote the table into {path}")


if __name__ == "__main__":
    sys.exit(main())
