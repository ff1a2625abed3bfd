"""evalops.metrics against pytrec_eval and ranx on synthetic runs (speed and peak memory).

    python benchmarks/metrics_vs_peers.py                 # 10,000 and 100,000 queries x 100 docs
    python benchmarks/metrics_vs_peers.py --sizes 10000   # a quicker look
    python benchmarks/metrics_vs_peers.py --shuffled      # rows not pre-sorted by score

Every query has 100 retrieved documents with distinct random scores (dict insertion / row order is rank
order, as a retriever emits them, unless --shuffled) and 1-10 judged relevant documents with grades 1-3,
about 70% of which were retrieved. All tools compute nDCG@10, P@10, R@100, AP@100, RR and Success@10 per
query plus the means.

Each (tool, input shape, size) runs in its own subprocess that builds the same seeded data, resets the
kernel's peak-RSS mark (/proc/self/clear_refs), then converts and computes. "peak MB" is the peak resident
memory above the memory held by the input data, so it charges each tool for its own copies and temporaries.
Each measurement is repeated (--repeat, default 3) and the fastest run is reported, because other work on a
shared machine only ever adds time; peak memory is the largest seen.

* ``conversion``: input -> the tool's own structures (evalops: qrels -> coded judgments, and for a
  DataFrame the run's validation, query codes and duplicate check; pytrec_eval: RelevanceEvaluator(qrels),
  plus DataFrame -> dicts when given a DataFrame; ranx: Qrels/Run, after a warm-up call has compiled its
  numba kernels).
* ``compute``: ranking, joins and the measures, per query and mean (pytrec_eval: evaluate(run) + means).
* ``total``: end to end, measured around the whole call sequence once.

evalops and pytrec_eval per-query values are compared (max abs difference) so speed is not bought with
wrong numbers.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # measure this checkout's evalops, not whatever is installed

DEPTH = 100
CORPUS = 1_000_000
MEASURES = ["nDCG@10", "P@10", "R@100", "AP@100", "RR", "Success@10"]
PYTREC = {"nDCG@10": "ndcg_cut_10", "P@10": "P_10", "R@100": "recall_100", "AP@100": "map_cut_100", "RR": "recip_rank", "Success@10": "success_10"}  # fmt: skip
RANX = ["ndcg@10", "precision@10", "recall@100", "map@100", "mrr", "hit_rate@10"]
TOOLS = ["evalops-dict", "evalops-frame", "pytrec_eval-dict", "pytrec_eval-frame", "ranx-dict", "ranx-frame"]


# -- data ------------------------------------------------------------------------------------------


def make_data(n_queries: int, seed: int, shuffled: bool) -> tuple[dict, dict]:
    """Seeded synthetic qrels and run as {qid: {docid: value}} dicts."""
    rng = np.random.default_rng(seed)
    offsets = rng.integers(0, CORPUS, n_queries)
    steps = rng.integers(1, CORPUS // DEPTH, n_queries)
    doc_num = (offsets[:, None] + np.arange(DEPTH)[None, :] * steps[:, None]) % CORPUS  # 100 distinct per row
    scores = -np.sort(-rng.random((n_queries, DEPTH)), axis=1)
    if shuffled:
        perm = rng.permuted(np.tile(np.arange(DEPTH), (n_queries, 1)), axis=1)
        doc_num = np.take_along_axis(doc_num, perm, axis=1)
        scores = np.take_along_axis(scores, perm, axis=1)
    n_rel = rng.integers(1, 11, n_queries)
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    doc_ids = doc_num.astype(str)
    for i in range(n_queries):
        qid = f"q{i}"
        docs = ["d" + d for d in doc_ids[i].tolist()]
        run[qid] = dict(zip(docs, scores[i].tolist()))
        k = int(n_rel[i])
        retrieved = rng.random(k) < 0.7
        picks = rng.choice(DEPTH, size=k, replace=False)
        judged = [docs[p] if hit else f"x{i}-{j}" for j, (p, hit) in enumerate(zip(picks.tolist(), retrieved.tolist()))]
        qrels[qid] = dict(zip(judged, rng.integers(1, 4, k).tolist()))
    return qrels, run


def as_frames(qrels: dict, run: dict):
    import pandas as pd

    def frame(nested: dict, value: str):
        lengths = [len(d) for d in nested.values()]
        return pd.DataFrame(
            {
                "query_id": np.repeat(np.array(list(nested), dtype=object), lengths),
                "doc_id": [d for docs in nested.values() for d in docs],
                value: [v for docs in nested.values() for v in docs.values()],
            }
        )

    return frame(qrels, "grade"), frame(run, "score")


def frame_to_dict(frame, value: str) -> dict:
    """The usual way to feed a DataFrame to pytrec_eval: one dict per query."""
    q = frame["query_id"].to_numpy(dtype=object)
    d = frame["doc_id"].to_numpy(dtype=object).tolist()
    v = frame[value].tolist()
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]]).tolist() + [len(q)]
    return {q[a]: dict(zip(d[a:b], v[a:b])) for a, b in zip(starts[:-1], starts[1:])}


# -- one measurement (runs in a subprocess) --------------------------------------------------------


def _memory_mb(key: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    return float("nan")


def _reset_peak() -> float:
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    return _memory_mb("VmRSS")


def measure(tool: str, n_queries: int, seed: int, shuffled: bool) -> dict:
    qrels, run = make_data(n_queries, seed, shuffled)
    shape = tool.split("-")[1]
    if shape == "frame":
        qrels, run = as_frames(qrels, run)
    if tool.startswith("ranx"):
        import ranx

        if shape == "frame":  # ranx insists on object columns; pandas 3 makes str columns
            qrels = qrels.astype({"query_id": object, "doc_id": object})
            run = run.astype({"query_id": object, "doc_id": object})

        tiny_q, tiny_r = make_data(20, seed + 1, False)
        ranx.evaluate(ranx.Qrels(tiny_q), ranx.Run(tiny_r), RANX)  # numba JIT warm-up, not timed
    if tool.startswith("evalops"):
        import pandas  # noqa: F401  imports are not what we time
        import pyarrow  # noqa: F401
        import scipy.stats  # noqa: F401

        import evalops.metrics  # noqa: F401
    if tool.startswith("pytrec"):
        import pandas  # noqa: F401
        import pytrec_eval  # noqa: F401

    base = _reset_peak()
    c0 = time.process_time()
    t0 = time.perf_counter()
    per_query: dict[str, dict[str, float]] = {}
    if tool.startswith("evalops"):
        from evalops.metrics.compute import per_query_values
        from evalops.metrics.frame_input import run_columns
        from evalops.metrics.gold import Gold, as_qrels
        from evalops.metrics.parse import parse_measures
        from evalops.metrics.hits import locate_hits
        from evalops.metrics.ranking import hits_from_columns
        from evalops.metrics.result import summarize

        # the same steps evaluate() takes, timed separately
        measures = parse_measures(MEASURES)
        gold = Gold.from_qrels(as_qrels(qrels))
        columns = run_columns(run) if shape == "frame" else None  # validation, query codes, duplicate check
        t1 = time.perf_counter()
        hits = hits_from_columns(gold, *columns) if columns else locate_hits(gold, run)
        values = per_query_values(measures, gold, hits)
        means = {str(m): summarize(v).mean for m, v in values.items()}
        t2, c2 = time.perf_counter(), time.process_time()
        ids = gold.query_ids.tolist()
        per_query = {str(m): dict(zip(ids, v.tolist())) for m, v in values.items()}
    elif tool.startswith("pytrec"):
        import pytrec_eval

        if shape == "frame":
            qrels, run = frame_to_dict(qrels, "grade"), frame_to_dict(run, "score")
        names = {".".join(v.rsplit("_", 1)) if v[-1].isdigit() else v for v in PYTREC.values()}
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, names)
        t1 = time.perf_counter()
        raw = evaluator.evaluate(run)
        means = {m: float(np.mean([r[key] for r in raw.values()])) for m, key in PYTREC.items()}
        t2, c2 = time.perf_counter(), time.process_time()
        per_query = {m: {q: r[key] for q, r in raw.items()} for m, key in PYTREC.items()}
    else:
        import ranx

        if shape == "frame":
            q_obj = ranx.Qrels.from_df(qrels, q_id_col="query_id", doc_id_col="doc_id", score_col="grade")
            r_obj = ranx.Run.from_df(run, q_id_col="query_id", doc_id_col="doc_id", score_col="score")
        else:
            q_obj, r_obj = ranx.Qrels(qrels), ranx.Run(run)
        t1 = time.perf_counter()
        means = ranx.evaluate(q_obj, r_obj, RANX)
        t2, c2 = time.perf_counter(), time.process_time()
    cpu = c2 - c0
    peak = _memory_mb("VmHWM") - base
    out = {"tool": tool, "queries": n_queries, "conversion": t1 - t0, "compute": t2 - t1, "total": t2 - t0}
    out["cpu"] = cpu
    out |= {"peak_mb": peak, "means": {k: float(v) for k, v in means.items()}}
    if per_query and n_queries <= 100_000:
        out["per_query"] = per_query
    return out


# -- driver ----------------------------------------------------------------------------------------


def run_one(tool: str, n_queries: int, seed: int, shuffled: bool, repeat: int) -> dict:
    """Best of ``repeat`` fresh subprocesses (the fastest run is the least disturbed by other load)."""
    cmd = [sys.executable, __file__, "--child", tool, "--sizes", str(n_queries), "--seed", str(seed)]
    if shuffled:
        cmd.append("--shuffled")
    runs = []
    for _ in range(repeat):
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
        if done.returncode != 0:
            raise SystemExit(f"{tool} failed:\n{done.stderr}")
        runs.append(json.loads(done.stdout))
    best = min(runs, key=lambda r: r["total"])
    best["peak_mb"] = max(r["peak_mb"] for r in runs)  # memory: report the worst
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated numbers of queries")
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shuffled", action="store_true", help="rows not in rank order")
    parser.add_argument("--repeat", type=int, default=3, help="subprocess runs per measurement; the fastest counts")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.child:
        print(json.dumps(measure(args.child, sizes[0], args.seed, args.shuffled)))
        return

    print(f"{'tool':<18} {'queries':>8} {'conversion s':>12} {'compute s':>10} {'total s':>8} {'cpu s':>7} {'peak MB':>8}")
    for n in sizes:
        results = {}
        for tool in args.tools.split(","):
            r = run_one(tool, n, args.seed, args.shuffled, args.repeat)
            results[tool] = r
            print(
                f"{tool:<18} {n:>8} {r['conversion']:>12.3f} {r['compute']:>10.3f} {r['total']:>8.3f} {r['cpu']:>7.3f} {r['peak_mb']:>8.0f}",
                flush=True,
            )
        for shape in ("dict", "frame"):
            ours, peer = results.get(f"evalops-{shape}"), results.get(f"pytrec_eval-{shape}")
            if not ours or not peer:
                continue
            diff = max(
                abs(ours["per_query"][m][q] - peer["per_query"][m][q]) for m in MEASURES for q in peer["per_query"][m]
            )
            speed = peer["total"] / ours["total"]
            memory = ours["peak_mb"] / max(peer["peak_mb"], 1e-9)
            line = f"  {shape}: evalops is {speed:.2f}x faster than pytrec_eval end to end"
            line += f" ({peer['cpu'] / ours['cpu']:.2f}x in CPU time, compute step alone {peer['compute'] / ours['compute']:.2f}x)"
            line += f", peak memory {memory:.2f}x of pytrec_eval's"
            ranx_r = results.get(f"ranx-{shape}")
            if ranx_r:
                line += f"; {ranx_r['total'] / ours['total']:.2f}x faster than ranx"
            print(line + f"; max |evalops - pytrec_eval| = {diff:.1e}")


if __name__ == "__main__":
    main()
