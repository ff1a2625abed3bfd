"""Acceptance figures of the regression rule, on real per-query nDCG@10.

Pools (per-query nDCG@10 computed with ``evalops.metrics`` from the real runs in ``../shared/data``; every
judged query counts, an unanswered one scores 0):

* ``scifact-bm25``: SciFact, the BM25 run (300 queries);
* ``scifact-rerank``: SciFact, the second run, which covers only 30 queries;
* ``nfcorpus-bm25``: the NFCorpus split with graded qrels, the BM25 run.

**The A/A candidate** is an exchangeable perturbation of the baseline: for each of n queries drawn with
replacement from a pool (score s), the baseline scores ``clip(s + e1)`` and the candidate ``clip(s + e2)``
with e1, e2 independent N(0, NOISE^2) and clip to [0, 1] (two noisy re-measurements of the same query: the
pair is exchangeable, so the true mean delta is exactly 0). Clipping leaves many deltas at exactly 0 and
makes their distribution far from normal, as real IR deltas are.

**Planted changes** add a constant ``delta`` to every A/A delta (scores are not re-clipped, so the true mean
delta is exactly ``delta``); the deltas' sd, which ``rule_power`` and ``rule_sample_size`` need, is the sd of
the A/A generator, estimated once from 2,000,000 draws.

Figures (default policy: margin 0.01, two-sided alpha = 0.05, t-intervals, alert_on warning):

1. A/A: the share of comparisons that alert (critical or warning) at n = 30, 100, 300 for each pool, in a
   family of 1 and of 3; must be <= alpha + 3 Monte Carlo SE. ``alert_on: either`` is printed, not bounded.
2. Power: a true delta of -1.5 x margin at the n ``rule_sample_size`` gives for 80% ``critical``: the
   measured ``critical`` rate must equal ``rule_power`` within 3 MC SE.
3. Below the margin: a true delta of -0.5 x margin at that n raises ``critical`` in <= alpha.
4. Equivalence: a true delta of 0 at that n is ``no_change`` in >= 80%.
5. Daily looks: 60 days of fresh A/A production samples (200 queries a day), each day's comparison spending
   its error (look k at alpha 6 / (pi^2 k^2)): the share of histories with any alert must be <= alpha.
   The same histories tested at a fixed alpha every day are printed for contrast.

    python benchmarks/stats_rule.py [--simulations 2000] [--seed 0] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

from evalops.stats import Policy, decide_deltas, rule_power, rule_sample_size

NOISE = 0.05
SIZES = (30, 100, 300)
DAYS = 60
DAILY_N = 200


def per_query_ndcg(data: Path) -> dict[str, np.ndarray]:
    from evalops.formats import read_qrels, read_run
    from evalops.metrics import evaluate

    pools = {}
    for name, folder, run in (("scifact-bm25", "scifact", "bm25.trec"),
                              ("scifact-rerank", "scifact", "itsumida-te3large-zerank1-top15.trec"),
                              ("nfcorpus-bm25", "nfcorpus-orig-test", "bm25.trec")):
        qrels = read_qrels(data / folder / "qrels.tsv")
        ranking = read_run(data / folder / "runs" / run)
        if name == "scifact-rerank":  # the run covers 30 queries: its pool is those queries
            qrels = qrels.restrict(sorted(set(qrels.queries.tolist()) & set(ranking.queries.tolist())))
        values = evaluate(qrels, ranking, ["nDCG@10"]).per_query["nDCG@10"]
        pools[name] = values[~np.isnan(values)]
    return pools


def aa_deltas(pool: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    s = pool[rng.integers(0, len(pool), n)]
    b = np.clip(s + rng.normal(0.0, NOISE, n), 0.0, 1.0)
    c = np.clip(s + rng.normal(0.0, NOISE, n), 0.0, 1.0)
    return c - b


def se(p: float, sims: int) -> float:
    return math.sqrt(max(p * (1 - p), 1e-12) / sims)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    args = parser.parse_args(argv)
    sims = args.simulations
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    pools = per_query_ndcg(args.data)
    policy = Policy()
    either = Policy(alert_on="either")
    alpha, margin = policy.alpha, policy.min_delta
    bound = alpha + 3 * se(alpha, sims)
    failures = 0
    print("pools (per-query nDCG@10, evalops.metrics): " + ", ".join(
        f"{k} {len(v)} queries, mean {v.mean():.4f}" for k, v in pools.items()))
    print(f"policy: margin {margin}, two-sided alpha {alpha}, t-intervals, Holm family (Bonferroni intervals); "
          f"{sims} simulations per cell; A/A perturbation noise sd {NOISE}")

    print(f"\n1. A/A: share alerting (critical or warning), bound alpha + 3 SE = {bound:.4f}")
    print(f"{'pool':>15} {'n':>4} {'m':>2} {'alert':>7} {'MC SE':>7} {'ok':>3} {'critical':>8} "
          f"{'either (not bounded)':>21} {'no_change':>9} {'inconclusive':>12}")
    for name, pool in pools.items():
        for n in SIZES:
            for m in (1, 3):
                samples = [aa_deltas(pool, n, rng) for _ in range(sims)]
                outs = [decide_deltas(d, policy, measure="nDCG@10", family_size=m, size_hint=False) for d in samples]
                alert = np.mean([o.alert for o in outs])
                crit = np.mean([o.decision.severity == "critical" and o.decision.label == "regression" for o in outs])
                same = np.mean([o.decision.label == "no_change" for o in outs])
                unsure = np.mean([o.decision.label == "inconclusive" for o in outs])
                early = np.mean([decide_deltas(d, either, measure="nDCG@10", family_size=m, size_hint=False).alert
                                 for d in samples])  # the same samples
                ok = alert <= bound
                failures += not ok
                print(f"{name:>15} {n:>4} {m:>2} {alert:>7.4f} {se(alert, sims):>7.4f} {'yes' if ok else 'NO':>3} "
                      f"{crit:>8.4f} {early:>21.4f} {same:>9.4f} {unsure:>12.4f}")

    pool = pools["scifact-bm25"]
    sd = float(np.std(aa_deltas(pool, 2_000_000, np.random.default_rng(12345)), ddof=1))
    n_star = rule_sample_size(-1.5 * margin, sd, margin, power=0.8, alpha=alpha)
    print(f"\nplanted changes on scifact-bm25: sd of the A/A deltas {sd:.5f}; rule_sample_size for 80% critical "
          f"at delta = -1.5 x margin: n = {n_star}")

    def rates(delta: float, n: int) -> tuple[float, float]:
        outs = [decide_deltas(aa_deltas(pool, n, rng) + delta, policy, measure="nDCG@10", size_hint=False)
                for _ in range(sims)]
        crit = float(np.mean([o.decision.label == "regression" and o.decision.severity == "critical" for o in outs]))
        same = float(np.mean([o.decision.label == "no_change" for o in outs]))
        return crit, same

    crit, _ = rates(-1.5 * margin, n_star)
    expected = rule_power(-1.5 * margin, sd, n_star, margin, alpha=alpha).power
    ok = abs(crit - expected) <= 3 * se(expected, sims)
    failures += not ok
    print(f"2. power: critical at delta = {-1.5 * margin:+.3f}, n = {n_star}: measured {crit:.4f}, rule_power "
          f"{expected:.4f}, MC SE {se(expected, sims):.4f}: {'agree' if ok else 'DISAGREE'} (3 SE)")
    crit, _ = rates(-0.5 * margin, n_star)
    ok = crit <= alpha
    failures += not ok
    print(f"3. below the margin: critical at delta = {-0.5 * margin:+.3f}, n = {n_star}: {crit:.4f} "
          f"(<= alpha {alpha}: {'yes' if ok else 'NO'}; rule_power "
          f"{rule_power(-0.5 * margin, sd, n_star, margin, alpha=alpha).power:.2e})")
    _, same = rates(0.0, n_star)
    ok = same >= 0.8
    failures += not ok
    print(f"4. equivalence: no_change at delta = 0, n = {n_star}: {same:.4f} (>= 0.80: {'yes' if ok else 'NO'}; "
          f"rule_power {rule_power(0.0, sd, n_star, margin, alpha=alpha, outcome='no_change').power:.4f})")

    spent = fixed = 0
    for _ in range(sims):
        days = [aa_deltas(pool, DAILY_N, rng) for _ in range(DAYS)]
        spent += any(decide_deltas(d, policy, measure="nDCG@10", look=k, size_hint=False).alert
                     for k, d in enumerate(days, start=1))
        fixed += any(decide_deltas(d, policy, measure="nDCG@10", size_hint=False).alert for d in days)
    ok = spent / sims <= alpha
    failures += not ok
    print(f"5. daily looks: {DAYS} days of A/A production samples ({DAILY_N} queries a day), {sims} histories: "
          f"any alert in {spent / sims:.4f} with alpha spent over the looks (<= alpha: {'yes' if ok else 'NO'}); "
          f"{fixed / sims:.4f} at a fixed alpha every day")
    print(f"\n{time.perf_counter() - started:.0f} s; figures outside their bound: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
