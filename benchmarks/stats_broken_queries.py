"""The rule's second question, *did the candidate break queries?*, on real per-query deltas.

Pools and null shapes are ``stats_rule.py``'s (real paired deltas of three built-in retrievers against the
shipped BM25 runs of SciFact and NFCorpus; five measures). Per cell, ``--simulations`` samples of n queries:

* **Planted broken queries**: a share of the n queries each loses between ``query_drop`` (0.3) and 1.0
  (uniform); the others *unchanged* (the commonest real regression: a few queries broken outright), and, as a
  harder variant, drawn from the pool under the symmetric (sign-flip) null (unchanged on average, with the
  pool's real noise: a candidate that also reshuffles many queries). The detection is the share of samples
  the whole rule (``evalops.stats.decide_deltas``, default policy, a family of one) decides a regression,
  and of those by the broken-queries question; the paired t-test's detection beside it (two-sided 5 %).
* **A/A on identical behaviour** (sign-flip: every delta's sign random, the change symmetric about 0): the
  rate at which the broken-queries question alerts (bound: alpha/2 + 3 SE), and the whole rule's.
* **Equal-mean skewed nulls** (re-centred, pos- and neg-scaled and their mirrors: a mean of exactly 0 with
  the pool's real skew): the broken-queries question's rate, printed, not bounded: a candidate that loses
  large on a few queries and gains little on many *does* break queries.

    python benchmarks/stats_broken_queries.py [--simulations 2000] [--seed 0] [--data ../shared/data]
        [--sizes 50,100,225] [--shares 0.05,0.1,0.3]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stats_rule import MEASURES, draw, pools, shapes  # noqa: E402

from evalops.stats import Policy, decide_deltas  # noqa: E402
from evalops.stats.margins import table_margin  # noqa: E402


def se(p: float, sims: int) -> float:
    return math.sqrt(max(p * (1.0 - p), 1e-12) / sims)


def outcome(d: np.ndarray, policy: Policy, measure: str) -> tuple[bool, bool]:
    """(the rule decides a regression, it is the broken-queries question's)."""
    out = decide_deltas(d, policy, measure=measure, size_hint=False).decision
    return out.label == "regression", out.criterion == "broken_queries"


def planted(pool: dict, measures: list[str], sizes: list[int], shares: list[float], rest: str, policy: Policy,
            sims: int, rng: np.random.Generator) -> int:
    """Figure 1 for one kind of ``rest`` (``unchanged`` or ``noise``); returns the cells under 80 % (the
    acceptance applies to ``unchanged``, the issue's planted regression)."""
    print(f"\n1. planted broken queries (each losing U(0.3, 1.0); the rest {rest}); the worst pool of each measure")
    print(f"{'measure':<10} {'n':>4} {'share':>6} {'rule':>14} {'of which broken':>16} {'paired t':>9}")
    under = 0
    for measure in measures:
        keys = [k for k in pool if k[2] == measure] if rest == "noise" else [k for k in pool if k[2] == measure][:1]
        for n in sizes:
            for share in shares:
                broken = max(1, round(share * n))
                worst = None
                for key in keys:
                    d = pool[key]
                    found = by_broken = t_found = 0
                    for _ in range(sims):
                        x = draw(d, None, 1, n, rng)[0] if rest == "noise" else np.zeros(n)
                        x[:broken] = -rng.uniform(policy.query_drop, 1.0, broken)
                        hit, why = outcome(x, policy, measure)
                        found += hit
                        by_broken += hit and why
                        t_found += stats.ttest_1samp(x, 0.0).pvalue < policy.alpha and x.mean() < 0
                    cell = (found / sims, by_broken / sims, t_found / sims, key)
                    worst = cell if worst is None or cell[0] < worst[0] else worst
                rate, via, t_rate, key = worst
                if rest == "unchanged" and rate < 0.8:
                    under += 1
                print(f"{measure:<10} {n:>4} {share:>6.0%} {rate:>8.1%} ±{se(rate, sims):.1%} {via:>16.1%} "
                      f"{t_rate:>9.1%}   ({key[0]}, {key[1]})")
    return under


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--sizes", default="50,100,225")
    parser.add_argument("--shares", default="0.05,0.1,0.3")
    parser.add_argument("--measures", default="nDCG@10,P@10,AP")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"no data at {args.data}; pass --data", file=sys.stderr)
        return 2
    policy = Policy()
    sims, rng = args.simulations, np.random.default_rng(args.seed)
    sizes = [int(x) for x in args.sizes.split(",")]
    shares = [float(x) for x in args.shares.split(",")]
    measures = [m for m in args.measures.split(",") if m in MEASURES]
    pool = pools(args.data)
    bound = policy.alpha / 2
    print(f"{sims} simulations per cell; default policy (two-sided alpha {policy.alpha}, query_drop "
          f"{policy.query_drop}); the worst pool of each measure")
    under = planted(pool, measures, sizes, shares, "unchanged", policy, sims, rng)
    planted(pool, measures, sizes, shares, "noise", policy, sims, rng)
    failed = 0
    print(f"\n2. A/A of the broken-queries question (bound {bound:.1%} + 3 SE on identical behaviour)")
    print(f"{'measure':<10} {'n':>4} {'identical (sign-flip)':>22} {'whole rule':>11} {'skewed equal-mean (worst)':>27}")
    for measure in measures:
        keys = [k for k in pool if k[2] == measure]
        for n in sizes:
            worst_sym = worst_rule = worst_skew = (0.0, None)
            for key in keys:
                for name, shape in shapes(pool[key]).items():
                    samples = draw(pool[key], shape, sims, n, rng)
                    hits = [outcome(x, policy, measure) for x in samples]
                    broken = sum(why for _, why in hits) / sims
                    alarms = sum(hit for hit, _ in hits) / sims
                    if shape is None:
                        worst_sym = max(worst_sym, (broken, key), key=lambda c: c[0])
                        worst_rule = max(worst_rule, (alarms, key), key=lambda c: c[0])
                    else:
                        worst_skew = max(worst_skew, (broken, (key, name)), key=lambda c: c[0])
            over = worst_sym[0] > bound + 3 * se(bound, sims)
            failed += over
            print(f"{measure:<10} {n:>4} {worst_sym[0]:>15.2%} ±{se(worst_sym[0], sims):.2%}{' OVER' if over else ''} "
                  f"{worst_rule[0]:>10.2%} {worst_skew[0]:>20.2%}   {worst_skew[1]}")
    print(f"\nmargins: {', '.join(f'{m} {table_margin(m, policy.default_margins):g}' for m in measures)}")
    print(f"planted cells (rest unchanged) under 80 %: {under} (with 5 broken queries or fewer no exact test reaches "
          f"{bound:.1%}: 2^-5 = 3.1 %); A/A cells over the bound: {failed}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
