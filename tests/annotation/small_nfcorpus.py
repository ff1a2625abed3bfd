"""A small copy of NFCorpus in a temporary folder, with a planted comparison whose holes decide it.

* the gold set: the first ``n_queries`` NFCorpus test queries and their judgments (BEIR layout);
* the knowledge base: every document they judge plus the shared BM25 run's top 20 of each, a few of them
  with hostile text (``<script>``, an ``onerror`` attribute) prepended;
* ``1.0`` (the baseline, a run file): each query's judged documents first, in BM25 order, so its top 10 has no
  hole;
* ``2.0`` (the candidate, a run file): the baseline with two unjudged documents at ranks 9 and 10 of every
  query: the judged documents alone (condensed lists) cannot tell it from the baseline, the two bounds
  disagree, so the run ends ``inconclusive (unjudged_documents)`` until the holes are judged.
"""

from __future__ import annotations

import json
from pathlib import Path

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)> '


def _ranked(data: Path) -> dict[str, list[str]]:
    ranked: dict[str, list[tuple[int, str]]] = {}
    for line in (data / "runs" / "bm25.trec").read_text().splitlines():
        q, _, d, rank, *_ = line.split()
        ranked.setdefault(q, []).append((int(rank), d))
    return {q: [d for _, d in sorted(rows)] for q, rows in ranked.items()}


def build(data: Path, root: Path, *, n_queries: int = 30, per_query: int = 2, at: int = 8) -> dict:
    queries = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines() if line.strip()]
    qrels: dict[str, dict[str, int]] = {}
    for line in (data / "qrels.tsv").read_text().splitlines()[1:]:
        q, d, g = line.split("\t")
        qrels.setdefault(q, {})[d] = int(g)
    bm25 = _ranked(data)
    chosen = [q for q in queries if len(qrels.get(q["_id"], ())) >= 10 and q["_id"] in bm25][:n_queries]
    ids = [q["_id"] for q in chosen]
    docs = {d for q in ids for d in qrels[q]} | {d for q in ids for d in bm25[q][:20]}
    gold = root / "gold"
    (gold / "qrels").mkdir(parents=True)
    (gold / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in chosen))
    (gold / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{g}\n" for q in ids for d, g in sorted(qrels[q].items())))
    (gold / "guidelines.md").write_text("Grade 2: the document answers the question. Grade 1: it is on the topic. "
                                        "Grade 0: it does not help. <b>Not bold</b>\n")

    holes: dict[tuple[str, str], int] = {}  # (query, unjudged document the candidate ranks) -> 0-based rank
    baseline: dict[str, list[str]] = {}
    candidate: dict[str, list[str]] = {}
    for i, q in enumerate(ids):
        judged = [d for d in bm25[q] if d in qrels[q]] + sorted(set(qrels[q]) - set(bm25[q]))
        rest = [d for d in bm25[q][:20] if d not in qrels[q]]
        baseline[q] = judged + rest
        new = rest[:per_query]
        holes.update({(q, d): at + r for r, d in enumerate(new)})
        kept = [d for d in baseline[q] if d not in new]
        candidate[q] = kept[:at] + new + kept[at:]
    hostile = {d for _, d in list(holes)[:3]}
    kb = root / "corpus.jsonl"
    with kb.open("w") as out:
        for line in (data / "corpus.jsonl").read_text().splitlines():
            doc = json.loads(line)
            if doc["_id"] in docs:
                if doc["_id"] in hostile:
                    doc["text"] = HOSTILE + doc["text"]
                out.write(json.dumps(doc) + "\n")
    runs = {}
    for name, ranked in (("baseline", baseline), ("candidate", candidate)):
        runs[name] = root / f"{name}.trec"
        runs[name].write_text("".join(f"{q} Q0 {d} {r + 1} {100 - r} {name}\n"
                                      for q in ids for r, d in enumerate(ranked[q][:20])))
    return {"gold": gold, "kb": kb, "runs": runs, "holes": holes, "hostile": hostile, "queries": ids}


def write_project(home: Path, planted: dict, *, versions: tuple[str, ...] = ("1.0",)) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "evalops.yaml").write_text(
        f"gold_set: {{path: '{planted['gold']}', rules: {{min_queries: 10}}}}\n"
        f"knowledge_base: {{path: '{planted['kb']}'}}\nregistry: retrievers.yaml\nmeasures: [nDCG@10]\n"
        f"log_sample_size: 0\nlabels_per_item: 2\nwarehouse_url: 'sqlite:///{home / 'warehouse.db'}'\n")
    files = {"1.0": planted["runs"]["baseline"], "2.0": planted["runs"]["candidate"]}
    (home / "retrievers.yaml").write_text("retrievers:\n" + "".join(
        f"  - {{name: search, version: '{v}', deployed: true, owner: me, adapter: run_file, "
        f"params: {{path: '{files[v]}', missing: empty}}}}\n" for v in versions))
