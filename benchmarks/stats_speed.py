"""Speed benchmark: randomization test and bootstrap on 100,000 paired values, next to ranx.

The data: a synthetic collection of 100,000 queries (2 relevant documents each) and two runs of 10
documents per query, the candidate slightly worse. Per-query nDCG@10 of both runs (from ranx.evaluate)
are the 100,000 paired values. Timed on them:

* evalops: ``paired_randomization_test`` with 10,000 Monte Carlo sign vectors and
  ``paired_bootstrap_ci`` (BCa) with 10,000 resamples, each with its peak traced memory, on 1 and on 2
  threads (same numbers either way);
* ranx: ``fisher_randomization_test`` (the test ranx.compare runs) with 10,000 permutations on the same
  vectors, and ``ranx.compare`` end to end on the same qrels and runs (it evaluates both runs and runs
  the Fisher test once per ordered pair of runs, i.e. twice). Numba is warmed up first; ranx's memory
  is not traced (tracemalloc would slow its per-permutation allocations down too much to time it).

    python benchmarks/stats_speed.py [--n 100000] [--resamples 10000] [--skip-ranx]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

from evalops.stats import paired_bootstrap_ci, paired_randomization_test

DOCS_PER_QUERY = 10


def timed(fn: Callable[[], Any], trace: bool = True) -> tuple[Any, float, float, float | None]:
    """(result, wall seconds, CPU seconds of this process, peak traced MiB or None) of one call.

    CPU seconds are printed too because the machines are shared: wall time includes waiting for a core.
    ranx is timed with ``trace=False``: tracemalloc hooks every one of numba's small allocations (one per
    query per permutation) and would slow it down many times over.
    """
    if trace:
        tracemalloc.start()
    started, cpu = time.perf_counter(), time.process_time()
    result = fn()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    peak = None
    if trace:
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return result, seconds, cpu, peak


def synthetic_collection(n: int, seed: int):
    import pandas as pd
    from ranx import Qrels, Run

    rng = np.random.default_rng(seed)
    qids = np.char.add("q", np.arange(n).astype(str))
    qrels = pd.DataFrame({
        "q_id": np.repeat(qids, 2),
        "doc_id": np.tile(["rel0", "rel1"], n),
        "score": np.ones(2 * n, dtype=np.int64),
    }).astype({"q_id": object, "doc_id": object})  # ranx wants object ids; pandas 3 defaults to str

    def run(worse: float, name: str) -> Run:
        docs = np.tile(np.char.add("d", np.arange(DOCS_PER_QUERY).astype(str)), (n, 1)).astype(object)
        # each relevant document lands at a random rank (or is missed); the worse run misses more often
        for rel in ("rel0", "rel1"):
            rank = rng.integers(0, int(DOCS_PER_QUERY * (1.6 + worse)), n)
            hit = rank < DOCS_PER_QUERY
            docs[np.flatnonzero(hit), rank[hit]] = rel  # the second may overwrite the first: fine
        scores = np.tile(np.arange(DOCS_PER_QUERY, 0, -1, dtype=np.float64), (n, 1))
        frame = pd.DataFrame({"q_id": np.repeat(qids, DOCS_PER_QUERY), "doc_id": docs.ravel(),
                              "score": scores.ravel()})
        frame = frame.drop_duplicates(["q_id", "doc_id"]).astype({"q_id": object, "doc_id": object})
        return Run.from_df(frame, name=name)

    return Qrels.from_df(qrels), run(0.0, "baseline"), run(0.01, "candidate")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-ranx", action="store_true", help="time evalops only (ranx takes minutes)")
    args = parser.parse_args(argv)

    from ranx import compare, evaluate
    from ranx.statistical_tests import fisher_randomization_test

    qrels, run_a, run_b = synthetic_collection(args.n, args.seed)
    a = np.asarray(evaluate(qrels, run_a, "ndcg@10", return_mean=False), dtype=np.float64)
    b = np.asarray(evaluate(qrels, run_b, "ndcg@10", return_mean=False), dtype=np.float64)
    print(f"{len(a):,} paired nDCG@10 values; baseline {a.mean():.4f}, candidate {b.mean():.4f}; "
          f"{args.resamples:,} resamples", flush=True)

    rows = []
    for workers in (1, 2):
        test, t_run, c_run, m_test = timed(lambda: paired_randomization_test(
            a, b, n_resamples=args.resamples, method="monte_carlo", rng=args.seed, workers=workers))
        ci, t_ci, c_ci, m_boot = timed(lambda: paired_bootstrap_ci(
            a, b, n_resamples=args.resamples, rng=args.seed, workers=workers))
        rows += [
            (f"evalops randomization, {workers} thread(s)", t_run, c_run, m_test, f"p = {test.p_value:.4g}"),
            (f"evalops bootstrap BCa, {workers} thread(s)", t_ci, c_ci, m_boot, f"[{ci.low:.5f}, {ci.high:.5f}]"),
        ]
        if workers == 1:
            t_test, t_boot = t_run, t_ci
    if not args.skip_ranx:
        fisher_randomization_test(a[:100], b[:100], 10, 0.01, 42)  # numba compile, not timed
        compare(qrels, [run_a, run_b], "ndcg@10", stat_test="fisher", n_permutations=10)
        print("timing ranx (about a minute per 10,000 permutations) ...", flush=True)
        (p_ranx, _), t_fisher, c_fisher, m_fisher = timed(
            lambda: fisher_randomization_test(a, b, args.resamples, 0.01, args.seed), trace=False)
        _, t_eval, _, _ = timed(
            lambda: (evaluate(qrels, run_a, "ndcg@10"), evaluate(qrels, run_b, "ndcg@10")), trace=False)
        _, t_compare, c_compare, m_compare = timed(lambda: compare(
            qrels, [run_a, run_b], "ndcg@10", stat_test="fisher", n_permutations=args.resamples), trace=False)
        rows += [
            ("ranx fisher_randomization_test", t_fisher, c_fisher, m_fisher, f"p = {p_ranx:.4g}"),
            ("ranx.compare (2 runs, fisher)", t_compare, c_compare, m_compare,
             f"of which evaluation {t_eval:.2f} s"),
        ]
    print(f"{'':38} {'wall s':>7} {'CPU s':>7} {'peak MiB':>9}  result")
    for name, seconds, cpu, peak, note in rows:
        shown = "n/a" if peak is None else f"{peak:.1f}"
        print(f"{name:38} {seconds:>7.2f} {cpu:>7.2f} {shown:>9}  {note}")
    print(f"load average while running: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if not args.skip_ranx:
        print(f"ratio ranx fisher_randomization_test / evalops randomization (1 thread): {t_fisher / t_test:.1f}x")
        print(f"ratio ranx.compare / evalops randomization + bootstrap (1 thread): "
              f"{t_compare / (t_test + t_boot):.1f}x")
    print(f"process max RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
