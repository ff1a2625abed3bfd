"""The context-efficiency measures on SciFact: 300 queries x top 10 of the BM25 run, vs a naive peer.

    python benchmarks/context_measures.py               # target: evalops under 2 s
    python benchmarks/context_measures.py --repeat 5

Both compute Tokens@10, Redundancy@10 (5-grams), NearDuplicates@10 (5-token shingles, Jaccard >= 0.8),
QueryCoverage@10 and RelevantTokenShare@10 for every judged query, from the corpus text (title + text) of
the run's top 10 documents. Timed from texts in memory to per-query values: loading the files and
ranking the run are outside the timing, and the same for both.

* ``evalops``: :func:`evalops.context.context_values` (each text tokenized once and coded as integers;
  n-grams compared as byte strings in numpy).
* ``naive``: ``tests/context/naive.py``, a pure-Python implementation written from the formulas (tuples,
  sets; every text tokenized again for every measure and query), which is also the tests' oracle.

The fastest of ``--repeat`` runs is reported (other work on a shared machine only adds time), and the
per-query values of the two are compared, so speed is not bought with wrong numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's evalops (and its tests' naive implementation)

MEASURES = ["Tokens@10", "Redundancy@10", "NearDuplicates@10", "QueryCoverage@10", "RelevantTokenShare@10"]
TARGET_S = 2.0


def load(folder: Path):
    from evalops.formats import read_qrels, read_run
    from evalops.formats.beir import read_beir_corpus, read_beir_queries
    from evalops.metrics.topk import top_k

    corpus = read_beir_corpus(folder / "corpus.jsonl")
    texts = dict(zip(corpus.doc_id, (corpus.title + "\n" + corpus.text).tolist()))
    qrels = read_qrels(folder).to_dict()
    queries = {q: t for q, t in read_beir_queries(folder / "queries.jsonl").items() if q in qrels}
    ranked = top_k(read_run(folder / "runs" / "bm25.trec"), 10)
    return queries, ranked, texts, qrels


def best_of(repeat: int, fn):
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(os.environ.get("EVALOPS_SHARED_DATA", REPO.parent / "shared" / "data")) / "scifact"
    parser.add_argument("--data", type=Path, default=default, help="a BEIR folder with runs/bm25.trec")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from evalops.context import context_values
    from tests.context.naive import naive_all

    queries, ranked, texts, qrels = load(args.data)
    contexts = sum(min(10, len(ranked.get(q, []))) for q in queries)
    words = sum(len(texts[d].split()) for q in queries for d in ranked.get(q, [])[:10])
    print(f"{args.data.name}: {len(queries)} queries, {contexts} contexts in their top 10, {words:,} words")

    ours_s, ours = best_of(args.repeat, lambda: context_values(MEASURES, queries, ranked, texts, qrels))
    naive_s, naive = best_of(args.repeat, lambda: naive_all(queries, ranked, texts, qrels))

    worst = 0.0
    for m in MEASURES:
        theirs = np.array([naive[m][q] for q in ours.query_ids.tolist()])
        worst = max(worst, float(np.max(np.abs(ours.per_query[m] - theirs))))
    print(f"{'implementation':<16}{'seconds':>10}")
    print(f"{'evalops':<16}{ours_s:>10.3f}")
    print(f"{'naive Python':<16}{naive_s:>10.3f}")
    print(f"ratio naive / evalops: {naive_s / ours_s:.2f}x; max |difference| of per-query values: {worst:.2g}")
    for m in MEASURES:
        direction = "higher is better" if ours.measures[MEASURES.index(m)].higher_is_better else "lower is better"
        print(f"  mean {m:<24}{float(np.mean(ours.per_query[m])):>12.4f}  ({direction})")
    print(f"target evalops < {TARGET_S} s: {'met' if ours_s < TARGET_S else 'NOT met'}")
    equal = worst <= 1e-12
    print(f"equal per-query values: {'yes' if equal else 'NO'}")
    return 0 if equal else 1  # a wrong value fails the run; a slow machine does not


if __name__ == "__main__":
    raise SystemExit(main())
