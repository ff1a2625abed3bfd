"""Acceptance figures of the daily production looks (``evalops.stats.sequence.pooled_decision``) on real deltas.

Pools are ``stats_rule.py``'s (real per-query deltas of three built-in retrievers against the shipped BM25 run
of SciFact and of NFCorpus, five measures). Each history is ``--days`` days of ``--daily`` queries drawn with
replacement from a pool's re-centred deltas (true mean exactly 0, the real skew and sparsity), read at the
end of every day as the pipeline reads it, with the per-side error of a family of one (``tail = alpha / 2``)
and the measure's default margin M (``evalops.stats.margins``):

* ``A/A``: the re-centred deltas and their mirror image; the share of histories decided a regression or an
  improvement by the last day (bound: alpha; alpha + 3 SE for the Monte Carlo error);
* ``2M from day 40``: the same deltas shifted by -2 M from day 40 on; the share decided a regression by the
  last day (target >= 80 %);
* ``1M from day 20``: shifted by -M from day 20 on (target >= 50 %).

A history is decided as ``pooled_decision`` decides it: a regression when the change detector shows a drop
below -M or below 0 at any look (a drop once shown is never taken back), an improvement likewise on the
mirror; the vectorised reading is checked against ``pooled_decision`` itself on the first histories of every
cell. ``since restart`` is, for reference, the share in which the betting test over every query since the
restart (the wealth the detector replaces) shows the drop at any look: the dilution by the quiet days.

    python benchmarks/stats_looks.py [--histories 2000] [--days 60] [--daily 50,200] [--seed 0]
        [--measures nDCG@10,AP] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stats_rule import MEASURES, pools, se  # noqa: E402

from evalops.stats import Policy  # noqa: E402
from evalops.stats.sequence import (  # noqa: E402
    change_log_wealth,
    day_log_factors,
    pooled_decision,
    sequence_log_wealth,
)

CHUNK = 250  # histories at a time (memory: CHUNK x days x daily deltas, ten gamblers)
CHECKED = 3  # histories per cell decided again by pooled_decision itself


def detected(D: np.ndarray, m: float, tail: float) -> np.ndarray:
    """Whether the change detector against m reaches 1/tail at any look, per history (D: histories x days x
    queries)."""
    return (change_log_wealth(day_log_factors(D, m)) >= math.log(1.0 / tail)).any(axis=-1)


def since_restart(D: np.ndarray, m: float, tail: float) -> np.ndarray:
    """Whether the betting test over every query since the restart reaches 1/tail at any look."""
    flat = D.reshape(D.shape[0], -1)
    ends = np.arange(D.shape[2], flat.shape[1] + 1, D.shape[2]) - 1
    return (sequence_log_wealth(flat, m, at=ends) >= math.log(1.0 / tail)).any(axis=-1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=2000)
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--daily", default="50,200", help="queries a day, e.g. 50,200")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--measures", default=",".join(MEASURES))
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    args = parser.parse_args(argv)
    sims, days = args.histories, args.days
    rng = np.random.default_rng(args.seed)
    policy = Policy()
    alpha = policy.alpha
    tail = alpha / 2.0
    started = time.perf_counter()
    data = pools(args.data)
    measures = [m for m in MEASURES if m in args.measures.split(",")]
    aa_bound = alpha + 3 * se(alpha, sims)
    print(f"{sims} histories per cell, {days} days; tail {tail} per side (a family of one, two-sided alpha "
          f"{alpha}); A/A bound alpha + 3 SE = {aa_bound:.4f}; targets: 2M from day 40 >= 0.80, 1M from day 20 "
          ">= 0.50")
    print(f"{'pool':>40} {'M':>5} {'n/day':>5} {'A/A':>7} {'SE':>6} {'2M@40':>7} {'SE':>6} {'restart':>7} "
          f"{'1M@20':>7} {'SE':>6} {'restart':>7}")
    failures = mismatches = 0
    worst = {"aa": 0.0, "late": 1.0, "small": 1.0}
    for daily in (int(x) for x in args.daily.split(",")):
        for (folder, cand, meas), d in sorted(data.items()):
            if meas not in measures:
                continue
            margin = policy.margin(meas)
            null = d - d.mean()
            if np.abs(null).max() > 1.0:  # a shape outside [-1, 1] is shrunk (stats_rule.shapes)
                null = null / np.abs(null).max()
            look = np.arange(1, days + 1)[None, :, None]
            counts = {k: 0 for k in ("aa", "late", "late0", "small", "small0")}
            for first in range(0, sims, CHUNK):
                rows = min(CHUNK, sims - first)
                D = null[rng.integers(0, len(null), (rows, days, daily))]
                sign = np.where(rng.random(rows) < 0.5, 1.0, -1.0)[:, None, None]  # the shape and its mirror
                D = sign * D
                aa = detected(D, -margin, tail) | detected(D, 0.0, tail)
                aa |= detected(-D, -margin, tail) | detected(-D, 0.0, tail)
                late = np.clip(D - np.where(look >= 40, 2 * margin, 0.0), -1.0, 1.0)
                small = np.clip(D - np.where(look >= 20, margin, 0.0), -1.0, 1.0)
                late_hit = detected(late, -margin, tail) | detected(late, 0.0, tail)
                small_hit = detected(small, -margin, tail) | detected(small, 0.0, tail)
                counts["aa"] += int(aa.sum())
                counts["late"] += int(late_hit.sum())
                counts["small"] += int(small_hit.sum())
                counts["late0"] += int((since_restart(late, -margin, tail) | since_restart(late, 0.0, tail)).sum())
                counts["small0"] += int((since_restart(small, -margin, tail) | since_restart(small, 0.0, tail)).sum())
                if first == 0:  # the vectorised reading is pooled_decision's
                    for i in range(min(CHECKED, rows)):
                        for hist, hit in ((D, aa), (late, late_hit), (small, small_hit)):
                            got = pooled_decision(list(hist[i]), tail, margin, bounds=False).decision
                            mismatches += (got in ("regression", "improvement")) != bool(hit[i])
            rate = {k: v / sims for k, v in counts.items()}
            failures += (rate["aa"] > aa_bound) + (rate["late"] < 0.8) + (rate["small"] < 0.5)
            worst["aa"] = max(worst["aa"], rate["aa"])
            worst["late"] = min(worst["late"], rate["late"])
            worst["small"] = min(worst["small"], rate["small"])
            print(f"{folder + ' ' + cand + ' ' + meas:>40} {margin:>5g} {daily:>5} {rate['aa']:>7.4f} "
                  f"{se(max(rate['aa'], alpha), sims):>6.4f} {rate['late']:>7.4f} {se(rate['late'], sims):>6.4f} "
                  f"{rate['late0']:>7.4f} {rate['small']:>7.4f} {se(rate['small'], sims):>6.4f} "
                  f"{rate['small0']:>7.4f}", flush=True)
    failures += mismatches
    print(f"worst cells: A/A {worst['aa']:.4f} (bound {aa_bound:.4f}), 2M from day 40 {worst['late']:.4f} "
          f"(target 0.80), 1M from day 20 {worst['small']:.4f} (target 0.50); pooled_decision cross-check: "
          f"{mismatches} disagreements")
    print(f"{time.perf_counter() - started:.0f} s; figures outside their bound or target: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
