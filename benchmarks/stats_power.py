"""Power benchmark: does the exact noncentral-t power predict how often planted drops are detected?

For planted drops of d_z = 0.2, 0.3, 0.5 at n = 50, 100, 300, 1000 queries, draw REPLICATES comparisons
whose per-query deltas are normal with mean -d_z and sd 1, run the paired t-test on all of them at once
(the vectorised kernel), and print the detection rate (p < alpha, drop direction) next to
``evalops.stats.paired_power``. They must agree within Monte Carlo error (|rate - power| <= 3 SE).

The last column is the share the full regression rule calls a regression (any severity) with a margin of
0.1 (in these units, a tenth of the deltas' sd): its interval must lie below 0, as the t-test's does, so it
tracks the t-test's one-sided power at alpha/2; ``benchmarks/stats_rule.py`` checks the rule's own power.

**Planning from a pilot** (``--figures pilot``), on the real pools of ``stats_rule.py`` (per-query deltas of
three built-in retrievers against the shipped BM25 run of SciFact and NFCorpus): for the most skewed pool of
each measure and the widest (largest sd) pool of nDCG@10 and AP, the n the pool itself needs for 80 % power
(the default alert at a true delta of -2 x the measure's margin, ``pilot_sample_size`` on the whole pool,
4,000 simulations) is the truth; ``--pilots`` pilots of ``--pilot-size`` queries are drawn from the pool and
``pilot_sample_size_range`` (what ``evalops power --pilot FILE --measure M`` prints) gives each a range. The
share of pilots whose range covers the truth, with its SE (target >= 80 %), and the spread of the pilots' own
n (what a single number would have said).

**The inconclusive hint** (``--figures hint``): samples of ``--hint-n`` queries from every pool of nDCG@10,
AP and RR@10, re-centred (true delta 0); each the default rule calls ``underpowered`` quotes "about N queries
would decide it" (80 % power to call a drop of 1.5 x margin critical). A fresh sample of N queries from the
pool shifted to -1.5 x margin is decided by the default rule: the share called critical is the power the
hint delivers (target >= 80 %, SE printed), beside the hint computed from the sample's own sd (before).

    python benchmarks/stats_power.py [--replicates 4000] [--seed 0] [--figures t,pilot,hint] [--pilots 20]
        [--pilot-measures nDCG@10,AP]
        [--pilot-size 50] [--pilot-simulations 800] [--hint-samples 100] [--hint-n 100] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stats_rule import MEASURES, pools, se  # noqa: E402

from evalops.stats import Policy, decide_deltas, paired_power, paired_t  # noqa: E402
from evalops.stats.pilot import pilot_sample_size, pilot_sample_size_range  # noqa: E402
from evalops.stats.robust import MATERIAL_SHARE  # noqa: E402
from evalops.stats.rule import rule_sample_size  # noqa: E402

EFFECTS = (0.2, 0.3, 0.5)
SIZES = (50, 100, 300, 1000)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--figures", default="t,pilot,hint")
    parser.add_argument("--pilots", type=int, default=20, help="pilots per pool")
    parser.add_argument("--pilot-measures", default=",".join(MEASURES), help="the pilot figure's measures")
    parser.add_argument("--pilot-size", type=int, default=50)
    parser.add_argument("--pilot-simulations", type=int, default=800)
    parser.add_argument("--hint-samples", type=int, default=100, help="samples per pool")
    parser.add_argument("--hint-n", type=int, default=100)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    args = parser.parse_args(argv)
    figures = set(args.figures.split(","))
    failures = 0
    if "t" in figures:
        failures += t_test_figure(args)
    if figures & {"pilot", "hint"}:
        data = pools(args.data)
        if "pilot" in figures:
            failures += pilot_figure(args, data)
        if "hint" in figures:
            failures += hint_figure(args, data)
    return 1 if failures else 0


def t_test_figure(args: argparse.Namespace) -> int:
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
    return failures


def pilot_figure(args: argparse.Namespace, data: dict) -> int:
    """Does the range printed from a pilot cover the n the pool needs? (module docstring)"""
    policy, rng, started = Policy(alpha=args.alpha), np.random.default_rng(args.seed), time.perf_counter()
    chosen = [m for m in MEASURES if m in args.pilot_measures.split(",")]
    keys = [max((k for k in data if k[2] == m), key=lambda k: abs(stats.skew(data[k]))) for m in chosen]
    keys += [max((k for k in data if k[2] == m), key=lambda k: data[k].std()) for m in ("nDCG@10", "AP") if m in chosen]
    print(f"\nplanning from a pilot: {args.pilots} pilots of {args.pilot_size} queries per pool, n for 80 % at "
          f"-2 x margin; range = pilot_sample_size_range (90 %, 20 bootstrap pilots, {args.pilot_simulations} "
          "simulations per n)")
    print(f"{'pool':>44} {'needed':>6} {'covered':>7} {'SE':>6} {'pilots n min-max':>16} {'median range':>14} "
          f"{'failed':>6} {'no upper end':>12}")
    covered_all = total = 0
    for key in dict.fromkeys(keys):
        d, margin = data[key], policy.margin(key[2])
        needed, _ = pilot_sample_size(d, -2 * margin, margin, alpha=args.alpha, simulations=4000, seed=args.seed + 1)
        covered, points, lows, highs, failed, open_ended = 0, [], [], [], 0, 0
        for _ in range(args.pilots):
            pilot = d[rng.integers(0, len(d), args.pilot_size)]
            try:
                r = pilot_sample_size_range(pilot, -2 * margin, margin, alpha=args.alpha,
                                            simulations=args.pilot_simulations, seed=args.seed)
            except Exception as exc:  # a pilot the planner refuses (e.g. needs more than MAX_N queries) covers nothing
                failed += 1
                print(f"   refused: {exc}")
                continue
            high = math.inf if r.high is None else r.high
            covered += r.low <= needed <= high
            open_ended += r.note is not None  # too few changed queries: no upper end (it covers, and says why)
            points.append(r.n)
            lows.append(r.low)
            highs.append(high)
        share = covered / args.pilots
        covered_all += covered
        total += args.pilots
        print(f"{' '.join(key):>44} {needed:>6} {share:>7.3f} {se(share, args.pilots):>6.3f} "
              f"{min(points, default=0):>7}-{max(points, default=0):<8} "
              f"{np.median(lows) if lows else 0:>6.0f}-{np.median(highs) if highs else 0:<7.0f} {failed:>6} "
              f"{open_ended:>12}",
              flush=True)
    share = covered_all / total
    ok = share >= 0.8
    print(f"all pilots: the range covers the needed n in {share:.3f} (SE {se(share, total):.3f}; target 0.80: "
          f"{'met' if ok else 'NOT MET'}); {time.perf_counter() - started:.0f} s")
    return 0 if ok else 1


def hint_figure(args: argparse.Namespace, data: dict) -> int:
    """Does "about N queries would decide it" deliver its 80 %? (module docstring)"""
    policy, rng, started = Policy(alpha=args.alpha), np.random.default_rng(args.seed + 2), time.perf_counter()
    print(f"\nthe inconclusive hint: samples of {args.hint_n} re-centred queries, {args.hint_samples} per pool; "
          "the power at the hinted n to call a drop of 1.5 x margin critical (fresh samples)")
    print(f"{'pool':>44} {'hints':>5} {'median n':>8} {'power':>6} {'SE':>6} {'before: n':>9} {'power':>6}")
    hits, old_hits = [], []
    for key in sorted(k for k in data if k[2] in ("nDCG@10", "AP", "RR@10")):
        d, margin = data[key], policy.margin(key[2])
        null = d - d.mean()
        here, old_here, ns, old_ns = [], [], [], []
        for _ in range(args.hint_samples):
            sample = null[rng.integers(0, len(null), args.hint_n)]
            out = decide_deltas(sample, policy, measure=key[2])
            if out.decision.reason_code != "underpowered" or out.queries_needed is None:
                continue
            old = rule_sample_size(-1.5 * margin, float(sample.std(ddof=1)), margin,
                                   alpha=MATERIAL_SHARE * args.alpha, outcome="critical")
            for n, into, sizes in ((out.queries_needed, here, ns), (old, old_here, old_ns)):
                fresh = np.clip(null[rng.integers(0, len(null), n)] - 1.5 * margin, -1.0, 1.0)
                got = decide_deltas(fresh, policy, measure=key[2], size_hint=False).decision
                into.append(got.label == "regression" and got.severity == "critical")
                sizes.append(n)
        hits += here
        old_hits += old_here
        if here:
            print(f"{' '.join(key):>44} {len(here):>5} {np.median(ns):>8.0f} {np.mean(here):>6.3f} "
                  f"{se(float(np.mean(here)), len(here)):>6.3f} {np.median(old_ns):>9.0f} {np.mean(old_here):>6.3f}",
                  flush=True)
    power, old_power = float(np.mean(hits)), float(np.mean(old_hits))
    ok = power >= 0.8
    print(f"all hints: power delivered {power:.3f} (SE {se(power, len(hits)):.3f}, {len(hits)} hints; target 0.80: "
          f"{'met' if ok else 'NOT MET'}); from the sample's own sd (before): {old_power:.3f} (SE "
          f"{se(old_power, len(old_hits)):.3f}); {time.perf_counter() - started:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
