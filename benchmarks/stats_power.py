"""Power benchmark: does the exact noncentral-t power predict how often planted drops are detected?

For planted drops of d_z = 0.2, 0.3, 0.5 at n = 50, 100, 300, 1000 queries, draw REPLICATES comparisons
whose per-query deltas are normal with mean -d_z and sd 1, run the paired t-test on all of them at once
(the vectorised kernel), and print the detection rate (p < alpha, drop direction) next to
``evalops.stats.paired_power``. They must agree within Monte Carlo error (|rate - power| <= 3 SE).

The last column is the share the full regression rule calls a regression (any severity) with a margin of
0.1 (in these units, a tenth of the deltas' sd): its interval must lie below 0, as the t-test's does, so it
tracks the t-test's one-sided power at alpha/2; ``benchmarks/stats_rule.py`` checks the rule's own power.

    python benchmarks/stats_power.py [--replicates 4000] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from evalops.stats import Policy, decide_deltas, paired_power, paired_t

EFFECTS = (0.2, 0.3, 0.5)
SIZES = (50, 100, 300, 1000)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, default=0.05)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    policy = Policy(alpha=args.alpha, min_delta=0.1)
    started = time.perf_counter()
    print(f"paired t-test, two-sided alpha = {args.alpha}, {args.replicates} replicates per cell")
    print(f"{'d_z':>5} {'n':>6} {'detected':>9} {'exact power':>12} {'MC SE':>7} {'agree':>6} {'rule (margin 0.1)':>18}")
    failures = 0
    for dz in EFFECTS:
        for n in SIZES:
            deltas = rng.normal(-dz, 1.0, (args.replicates, n))
            zeros = np.zeros_like(deltas)
            _, p = paired_t(zeros, deltas)
            mean = deltas.mean(axis=1)
            detected = float(np.mean((p < args.alpha) & (mean < 0)))
            power = float(paired_power(dz, n, args.alpha))
            se = float(np.sqrt(power * (1 - power) / args.replicates))
            agree = abs(detected - power) <= 3 * se + 1.0 / args.replicates
            failures += not agree
            rule = np.mean([decide_deltas(row, policy, size_hint=False).decision.label == "regression"
                            for row in deltas])
            print(f"{dz:>5} {n:>6} {detected:>9.4f} {power:>12.4f} {se:>7.4f} {'yes' if agree else 'NO':>6} "
                  f"{rule:>18.4f}")
    print(f"{time.perf_counter() - started:.1f} s; cells outside 3 MC standard errors: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
