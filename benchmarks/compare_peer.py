"""The peer of ``evalops compare`` in ``benchmarks/compare_scale.py``: a plain script that computes what a
team would compute by hand for a paired A/B test of two run files.

    python benchmarks/compare_peer.py QRELS BASELINE_RUN CANDIDATE_RUN [--measure nDCG@10] [--resamples 10000]

* per-query scores: ``evalops.metrics.evaluate`` on runs read by ``evalops.formats.read_run_table`` (the
  library's own columnar reader and scorer, the quickest per-query scores available here; pytrec_eval
  builds a dict per query and is several times slower on 20,000 queries), a judged query a run did not
  answer scoring 0 (trec_eval -c);
* the paired t-test and the Wilcoxon signed-rank test: ``scipy.stats.ttest_rel``, ``scipy.stats.wilcoxon``;
* a 95 % percentile bootstrap interval of the mean delta: numpy, ``--resamples`` resamples drawn in blocks
  of 100 (as a careful script would, to keep memory flat).

Prints one JSON line: n, the means, the delta, both p-values and the interval.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from scipy import stats

from evalops.formats import read_qrels
from evalops.formats.trec import read_run_table
from evalops.metrics import Policy, evaluate, parse_measures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("qrels")
    parser.add_argument("baseline")
    parser.add_argument("candidate")
    parser.add_argument("--measure", default="nDCG@10")
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    gold = read_qrels(args.qrels)
    measures = parse_measures([args.measure])
    policy = Policy(no_answer="exclude")
    scores = []
    for path in (args.baseline, args.candidate):
        result = evaluate(gold, read_run_table(path), measures, policy)
        scores.append(dict(zip(result.query_ids.tolist(), next(iter(result.per_query.values())).tolist())))
    queries = sorted(set(scores[0]) & set(scores[1]))
    b = np.array([scores[0][q] for q in queries])
    c = np.array([scores[1][q] for q in queries])
    keep = ~(np.isnan(b) | np.isnan(c))
    b, c = b[keep], c[keep]
    d = c - b

    t_p = float(stats.ttest_rel(c, b).pvalue)
    w_p = float(stats.wilcoxon(d).pvalue)
    rng = np.random.default_rng(args.seed)
    means = np.empty(args.resamples)
    for start in range(0, args.resamples, 100):
        rows = min(100, args.resamples - start)
        means[start : start + rows] = d[rng.integers(0, len(d), size=(rows, len(d)))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    print(json.dumps({"n": int(len(d)), "baseline_mean": float(b.mean()), "candidate_mean": float(c.mean()),
                      "delta": float(d.mean()), "t_p": t_p, "wilcoxon_p": w_p,
                      "bootstrap_95": [float(low), float(high)]}))


if __name__ == "__main__":
    main()
