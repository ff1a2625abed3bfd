"""Scoring chunk runs: MaxP document runs and the span measures, each against a plain-Python peer.

    python benchmarks/chunking_scoring.py                 # SciFact windows (256/192) and a 1 M-row synthetic run
    python benchmarks/chunking_scoring.py --repeat 3

* ``document_run`` (MaxP) of a generated chunk run (10,000 queries x 100 chunks of 100,000 chunks) against a
  dictionary loop (the best score per (query, document)); both from the same ``Run`` in memory.
* ``span_scores`` (TokenRecall/Precision/IoU@10, characters) of the SciFact collection of
  ``tests/chunking/collection.py`` (5,183 abstracts cut in 256-character windows every 192, one judged
  sentence per judged pair, 300 claims) against the tests' set-based oracle (Python sets of (doc, unit)).

The fastest of ``--repeat`` runs is printed with the ratio, and the values of each pair are compared, so
speed is not bought with wrong numbers.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def best_of(repeat: int, fn):
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def maxp_loop(run, manifest):
    best: dict[str, dict[str, float]] = {}
    for q, c, s in zip(run.query_ids.tolist(), run.doc_ids.tolist(), run.scores.tolist(), strict=False):
        d = manifest.get(c).doc_id
        docs = best.setdefault(q, {})
        if s > docs.get(d, -np.inf):
            docs[d] = s
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "scifact")
    args = parser.parse_args()

    from evalops.chunking import ChunkManifest, SpanPolicy, document_run, span_scores
    from evalops.data import Run

    rng = np.random.default_rng(0)
    rows = [{"chunk_id": f"d{d}#{i}", "doc_id": f"d{d}", "start": i * 100, "end": i * 100 + 120}
            for d in range(20_000) for i in range(5)]
    manifest = ChunkManifest.of(rows)
    ids = np.array([r["chunk_id"] for r in rows], dtype=object)
    nq, k = 10_000, 100
    run = Run(np.repeat(np.array([f"q{i}" for i in range(nq)], dtype=object), k),
              np.concatenate([rng.choice(ids, k, replace=False) for _ in range(nq)]), rng.random(nq * k))
    ours, got = best_of(args.repeat, lambda: document_run(run, manifest, "maxp"))
    peer, want = best_of(args.repeat, lambda: maxp_loop(run, manifest))
    assert got.to_dict() == want
    print(f"document_run maxp, {len(run):,} rows: {ours:.2f} s vs loop {peer:.2f} s ({ours / peer:.2f}x)")

    from tests.chunking.collection import Collection
    from tests.chunking.test_chunking_scifact import _oracle

    col = Collection(args.data)
    name = "win256"
    ours, got = best_of(args.repeat, lambda: span_scores(col.judgments, col.manifests[name], col.runs[name],
                                                         col.sources, k=10, policy=SpanPolicy("chars")))
    peer, want = best_of(args.repeat, lambda: _oracle(col, name, 10, None, "chars"))
    expected = np.array([want[q] for q in got.query_ids])
    assert np.allclose(got.iou, expected[:, 2], rtol=0, atol=1e-12)
    print(f"span_scores @10 chars, SciFact {name} ({len(got.query_ids)} queries): {ours:.2f} s vs set-based "
          f"{peer:.2f} s ({ours / peer:.2f}x)")


if __name__ == "__main__":
    main()
