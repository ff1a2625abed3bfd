"""Acceptance figures of the regression rule under skewed and sparse nulls, from real per-query deltas.

**Pools.** Real paired deltas of real system pairs, per query, computed with ``evalops.metrics`` on the
shared collections in ``../shared/data`` (an unanswered query scores 0): the shipped BM25 run of SciFact and
of NFCorpus is the baseline, and three built-in retrievers over the same corpus are the candidates
(BM25 k1=1.2 b=0.75, BM25 k1=0.5 b=0.2, TF-IDF). Measures: sparse P@10, RR@10, Success@10; dense nDCG@10, AP.

**Null shapes**, each with a true mean of exactly 0 (queries are drawn with replacement from the pool):

* ``sign-flip``: each drawn delta with a random sign (symmetric);
* ``re-centred``: delta - mean (the real skew; zero deltas become -mean);
* ``pos-scaled`` / ``neg-scaled``: the positive (negative) deltas scaled until the mean is 0 (zeros stay
  zero: the real sparsity, strong skew);
* ``... mirror``: the same with every sign flipped (a two-sided rule alarms on the side of the long tail's
  opposite, so both mirror images are needed).

Figures (default policy: two-sided alpha = 0.05, each measure's default margin, alert_on warning;
``--simulations`` per cell, Monte Carlo SE printed with each rate):

1. A/A: per measure and n, the worst cell over every pair and shape, for the rule of ``interval="t"``
   (the rule before the robust interval) and the default robust rule, with the count of cells over the
   bound alpha/2 + 3 SE; the removed modes (``alert_on: either``, ``alert_on_query_drops``) measured on
   the same samples. The robust rule's decisions are cross-checked against ``evalops.stats.decide_deltas``.
2. The effect-size route (``alert_on: critical``): A/A and at a true delta of exactly -margin.
3. Power cost on symmetric data: sign-flipped deltas shifted so that the t-interval detects 80 % at n =
   300; the robust rule's detection and the difference (bound: 10 points).
4. Families: 3 measures x 3 candidates at n = 30 and 100, each member at alpha / 18, under the skewed global
   null (re-centred deltas of the same drawn queries) and under identical behaviour (each drawn query's
   versions swapped at random, the same swap for every measure of a candidate): the family-wise rate of the
   mean question's drop alerts (bound alpha/2 + 3 SE, the union of 9 sides at alpha/18) and of the whole
   alert, either question (on identical behaviour bound alpha + 3 SE: 18 one-sided tests at alpha/18).
5. Daily looks: 60 days of skewed A/A production samples of 200 queries, and a sustained drop of 0.02 from
   day 20, under alpha spent over the looks (``spending_tail``, one day per look) and under the pooled
   betting sequence as the pipeline decides production looks (``evalops.stats.sequence.pooled_decision``,
   every query since the restart, read at day 60; bound alpha + 3 SE on the histories decided a
   regression, or an improvement; target: the drop decided a regression in >= 50 %).

6. Power from a pilot: the most skewed pool of each measure is the pilot; ``pilot_sample_size`` gives the n
   for 80 % (the default alert) at a true delta of -2 x margin; the detection on fresh draws from the pool
   shifted there, by this script's own rule, against the pilot's power at n and against 80 % - 3 SE.

7. Uniform shift: re-centred real deltas moved by -2 x margin at n = 20, 50, 100 (every query loses the same),
   the t rule's alert against the default rule's (both questions); target at n = 50: within 15 points.

8. Held-out cells: runs no constant of the rule was chosen on (SciFact's third-party dense + reranker run on
   the 30 queries it answers; a wordllama dense retriever on NFCorpus), each against the shipped BM25, the
   same null shapes, A/A bounded by alpha/2 + 3 SE.

Figure 1 also prints the rule's second question, broken queries (the exact sign test of losses of
``query_drop`` or more against gains that large): its worst A/A on identical behaviour (sign-flip, bounded
like the mean) and, beside it, its rate on the skewed equal-mean shapes, where a candidate that loses big on
more queries than it gains big is what the question asks about. The cross-check against ``decide_deltas``
compares the whole alert (either question).

``--strict-share`` and ``--strict-wealth`` run the figures with another calibration of the strict t-interval
(its share of the per-side error and the wealth its bets must reach), to measure the trade-off between the
uniform shift (figure 7) and the A/A cells (figures 1 and 8); ``--write-docs`` refuses them.

``--write-docs`` replaces the generated table in ``docs/statistics.md`` (only from a run of every figure,
measure and size). ``--figures``, ``--measures`` and ``--sizes`` compute a part, to try a change of the rule
on the cells it touches (the balanced-tails route, for example, only decides from 200 non-zero deltas:
``--figures 1,2,3 --sizes 300,1000``).

    python benchmarks/stats_rule.py [--simulations 2000] [--seed 0] [--data ../shared/data] [--write-docs]
        [--figures 1,2,3,4,5,6,7,8] [--measures P@10,AP] [--sizes 300,1000] [--skip-looks]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

from evalops.stats import Policy, decide_deltas, robust
from evalops.stats.pilot import pilot_power, pilot_sample_size
from evalops.stats.robust import read_robust
from evalops.stats.rule import spending_tail
from evalops.stats.sequence import pooled_decision

MEASURES = ("P@10", "RR@10", "Success@10", "nDCG@10", "AP")
SIZES = (10, 20, 30, 50, 100, 300, 1000)
CANDIDATES = {"bm25 k1=1.2 b=0.75": {"k1": 1.2, "b": 0.75}, "bm25 k1=0.5 b=0.2": {"k1": 0.5, "b": 0.2},
              "tfidf": None}
DAYS, DAILY_N, DROP_FROM, DROP = 60, 200, 20, 0.02
QUERY_DROP = 0.3  # Policy().query_drop
SHIFT_SIZES = (20, 50, 100)
BEGIN, END = "<!-- stats_rule.py: begin -->", "<!-- stats_rule.py: end -->"


def pools(data: Path) -> dict[tuple[str, str, str], np.ndarray]:
    """Per-query deltas (candidate - shipped BM25) per (collection, candidate, measure)."""
    import pandas as pd

    from evalops.formats import read_qrels, read_run
    from evalops.metrics import evaluate
    from evalops.retrievers.bm25 import BM25Retriever
    from evalops.retrievers.scoring import retrieve_run
    from evalops.retrievers.tfidf import TfidfRetriever

    out = {}
    for folder in ("scifact", "nfcorpus-orig-test"):
        qrels = read_qrels(data / folder / "qrels.tsv")
        corpus = pd.read_json(data / folder / "corpus.jsonl", lines=True, dtype={"_id": str})
        corpus = corpus.rename(columns={"_id": "doc_id"})
        judged = set(qrels.queries.tolist())
        queries = {}
        with open(data / folder / "queries.jsonl", encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                if str(row["_id"]) in judged:
                    queries[str(row["_id"])] = row["text"]
        base = evaluate(qrels, read_run(data / folder / "runs" / "bm25.trec"), list(MEASURES)).per_query
        for name, params in CANDIDATES.items():
            retriever = TfidfRetriever(corpus) if params is None else BM25Retriever(corpus, **params)
            run = retrieve_run(retriever, queries, k=100, name=name).run
            values = evaluate(qrels, run, list(MEASURES)).per_query
            for m in MEASURES:
                out[(folder, name, m)] = np.nan_to_num(values[m]) - np.nan_to_num(base[m])
    return out


def held_out_pools(data: Path) -> dict[tuple[str, str, str], np.ndarray]:
    """Pools from runs no constant of the rule was chosen on: SciFact's third-party dense + reranker run
    against the shipped BM25 on the queries it answers (30), and a dense retriever (the wordllama encoder
    that ships with evalops) against the shipped BM25 on NFCorpus."""
    import pandas as pd

    from evalops.formats import read_qrels, read_run
    from evalops.metrics import evaluate
    from evalops.retrievers.dense import DenseRetriever
    from evalops.retrievers.encoders import wordllama_encoder
    from evalops.retrievers.scoring import retrieve_run

    def per_query(qrels, run) -> dict[str, dict[str, float]]:
        r = evaluate(qrels, run, list(MEASURES))
        return {m: dict(zip(r.query_ids, np.nan_to_num(r.per_query[m]))) for m in MEASURES}

    out = {}
    folder = data / "scifact"
    qrels = read_qrels(folder / "qrels.tsv")
    third = read_run(folder / "runs" / "itsumida-te3large-zerank1-top15.trec")
    answered = set(third.queries.tolist())
    base, cand = per_query(qrels, read_run(folder / "runs" / "bm25.trec")), per_query(qrels, third)
    for m in MEASURES:
        ids = sorted(q for q in base[m] if q in answered)
        out[("scifact", "te3-large + zerank-1 (30 answered)", m)] = np.array([cand[m][q] - base[m][q] for q in ids])
    folder = data / "nfcorpus-orig-test"
    qrels = read_qrels(folder / "qrels.tsv")
    corpus = pd.read_json(folder / "corpus.jsonl", lines=True, dtype={"_id": str}).rename(columns={"_id": "doc_id"})
    judged = set(qrels.queries.tolist())
    queries = {}
    with open(folder / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if str(row["_id"]) in judged:
                queries[str(row["_id"])] = row["text"]
    base = per_query(qrels, read_run(folder / "runs" / "bm25.trec"))
    dense = per_query(qrels, retrieve_run(DenseRetriever(corpus, wordllama_encoder()), queries, k=100, name="dense").run)
    for m in MEASURES:
        ids = sorted(base[m])
        out[("nfcorpus-orig-test", "dense wordllama", m)] = np.array([dense[m].get(q, 0.0) - base[m][q] for q in ids])
    return out


def shapes(d: np.ndarray) -> dict[str, np.ndarray | None]:
    """The null shapes of one pool (``None``: sign-flip, drawn with random signs)."""
    out: dict[str, np.ndarray | None] = {"sign-flip": None, "re-centred": d - d.mean(), "re-centred mirror": d.mean() - d}
    pos, neg = d[d > 0].sum(), -d[d < 0].sum()
    if pos > 0 and neg > 0:
        a = d.copy()
        a[a > 0] *= neg / pos
        b = d.copy()
        b[b < 0] *= pos / neg
        out.update({"pos-scaled": a, "pos-scaled mirror": -a, "neg-scaled": b, "neg-scaled mirror": -b})
    # a measure in [0, 1] has deltas in [-1, 1]; a shape that leaves it (re-centred +-1 deltas of Success@10,
    # scaled sides) is shrunk by a constant, which keeps its mean 0, its skew and its sparsity. Left outside,
    # a sample is read by the betting interval only when it drew none of the out-of-range deltas (otherwise
    # inconclusive, unbounded): a selection no real measure makes, measured at 3.5-4.8 % on Success@10 n = 1000
    return {k: v if v is None or np.abs(v).max() <= 1.0 else v / np.abs(v).max() for k, v in out.items()}


def draw(d: np.ndarray, shape: np.ndarray | None, sims: int, n: int, rng: np.random.Generator) -> np.ndarray:
    if shape is None:
        return d[rng.integers(0, len(d), (sims, n))] * rng.choice([-1.0, 1.0], (sims, n))
    return shape[rng.integers(0, len(shape), (sims, n))]


def rule(D: np.ndarray, tail: float, margin: float, interval: str) -> dict[str, np.ndarray]:
    """The rule's outcome for each row of D, vectorised (two-sided): ``warning`` and ``critical`` alerts,
    ``inconclusive``; ``interval="t"`` is the rule before the robust interval."""
    n = D.shape[1]
    t_crit = float(stats.t.ppf(1.0 - tail, n - 1))
    points = (-margin, 0.0, margin)
    if interval == "robust":
        r = read_robust(D, tail, points, t_crit=t_crit, material=margin)
        below, above = r.below, r.above
        material_below, material_above = r.material_below, r.material_above
        mean = D.mean(axis=1)
        constant = r.method == 1
        zero = ~(D != 0).any(axis=1)  # every delta 0: no_change
        equivalent = np.where(constant, np.abs(mean) < margin, above[0] & below[2]) | zero
        undecidable = np.isin(r.method, (0, 4)) & ~zero
    else:
        mean, sd = D.mean(axis=1), D.std(axis=1, ddof=1)
        constant = (D.max(axis=1) - D.min(axis=1)) <= 1e-12
        half = np.where(constant, 0.0, t_crit * sd / math.sqrt(n))
        lo, hi = mean - half, mean + half
        below = tuple(hi < p for p in points)
        above = tuple(lo > p for p in points)
        equivalent = above[0] & below[2]
        undecidable = constant & (2.0**-n >= tail) & ~(np.abs(mean) <= 1e-12)
        material_below, material_above = below[0], above[2]
    critical = material_below & ~undecidable
    gain_critical = material_above & ~undecidable
    decided_eq = equivalent & ~critical & ~gain_critical & ~undecidable
    warning = below[1] & ~critical & ~gain_critical & ~decided_eq & ~undecidable
    gain_warning = above[1] & ~critical & ~gain_critical & ~decided_eq & ~undecidable
    inconclusive = ~(critical | gain_critical | decided_eq | warning | gain_warning)
    # the removed modes, on the t rule: the point estimate past -margin (either); the sign test of lost queries
    either = warning | critical | (inconclusive & (mean <= -margin))
    # the rule's second question (evalops.stats.decision._broken_queries): the exact one-sided sign test of the
    # queries that lost query_drop or more against those that gained that much, at the per-side error
    edge = QUERY_DROP - 1e-12
    lost, gained = (D <= -edge).sum(axis=1), (D >= edge).sum(axis=1)
    broken = (lost > 0) & (stats.binom.sf(lost - 1, lost + gained, 0.5) < tail) & ~(warning | critical)
    return {"warning": warning | critical, "critical": critical, "inconclusive": inconclusive, "either": either,
            "significant": below[1] & ~undecidable, "broken": broken}


def ceiling(pool: np.ndarray, n: int, tail: float) -> float:
    """The most any drop test valid for every distribution on [-1, 1] (one-sided error ``tail`` at a mean of 0)
    can detect on ``n`` draws from ``pool``, whose mean mu is below 0: ``tail (1 - mu)^n``.

    The null Q = (1 - p) pool + p (a delta of +1), with p = -mu / (1 - mu), has mean exactly 0, and each sample of
    Q^n that drew no +1 (probability (1 - p)^n = (1 - mu)^-n) is a sample of the pool: for any test phi,
    tail >= E_Q phi >= (1 - mu)^-n E_pool phi. A rule that detects more on the pool than this is not valid for
    every distribution on [-1, 1] (it trusts the pool not to hide such a gain)."""
    mu = float(np.mean(pool))
    return 1.0 if mu >= 0 else min(1.0, tail * (1.0 - mu) ** n)


def query_drops(D: np.ndarray, tail: float, drop: float = 0.5) -> np.ndarray:
    lost, gained = (D < -drop).sum(axis=1), (D > drop).sum(axis=1)
    p = np.where(lost + gained > 0, stats.binom.sf(lost - 1, lost + gained, 0.5), 1.0)
    return p < 2.0 * tail


def se(p: float, sims: int) -> float:
    return math.sqrt(max(p * (1.0 - p), 1e-12) / sims)


def crosscheck(D: np.ndarray, out: dict[str, np.ndarray], tail: float, policy: Policy, rows: int) -> int:
    """Rows where the vectorised robust rule and ``decide_deltas`` disagree on the alert."""
    bad = 0
    for i in range(min(rows, len(D))):
        got = decide_deltas(D[i], policy, size_hint=False)
        bad += bool(got.alert) != bool(out["warning"][i] | out["broken"][i])
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--skip-looks", action="store_true", help="leave out figure 5 (the slowest)")
    parser.add_argument("--figures", default="1,2,3,4,5,6,7,8", help="the figures to compute, e.g. 1,2 (default: all)")
    parser.add_argument("--measures", default=",".join(MEASURES), help="figure 1's measures (default: all)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="figure 1's n (default: all)")
    parser.add_argument("--strict-share", type=float, help="a trial STRICT_SHARE (the strict t-interval's share of "
                        "the per-side error; evalops.stats.robust), to measure a calibration; not with --write-docs")
    parser.add_argument("--strict-wealth", type=float, help="a trial STRICT_WEALTH (the wealth the bets must reach "
                        "before the strict t-interval may decide); not with --write-docs")
    args = parser.parse_args(argv)
    figures = set(args.figures.split(","))
    if args.skip_looks:
        figures.discard("5")
    measures = tuple(m for m in MEASURES if m in args.measures.split(","))
    sizes = tuple(int(x) for x in args.sizes.split(","))
    if args.write_docs and (figures != set("12345678") or measures != MEASURES or sizes != SIZES):
        parser.error("--write-docs needs every figure, measure and size (the table is the whole benchmark)")
    trial = {"STRICT_SHARE": args.strict_share, "STRICT_WEALTH": args.strict_wealth}
    if args.write_docs and any(v is not None for v in trial.values()):
        parser.error("--write-docs documents the default rule: leave out --strict-share and --strict-wealth")
    for name, value in trial.items():
        if value is not None:  # read by evalops.stats.robust at each call (strict_t, read_robust, robust_interval)
            print(f"trial: {name} = {value} (the default rule has {getattr(robust, name)})")
            setattr(robust, name, value)
    sims, rng = args.simulations, np.random.default_rng(args.seed)
    started = time.perf_counter()
    policy = Policy()
    alpha = policy.alpha
    tail = alpha / 2.0
    side_bound = tail + 3 * se(tail, sims)
    failures = 0
    data = pools(args.data)
    print(f"pools: {len(data)} (collection, candidate, measure) delta vectors from "
          f"{', '.join(sorted({k[0] for k in data}))}; candidates {', '.join(CANDIDATES)} against the shipped BM25")
    for key, d in sorted(data.items()):
        print(f"  {key[0]:>18} {key[1]:>18} {key[2]:>10}: n {len(d)}, zero {np.mean(d == 0):.2f}, "
              f"mean {d.mean():+.4f}, sd {d.std(ddof=1):.3f}, skew {stats.skew(d):+.2f}")
    print(f"\n{sims} simulations per cell; per-side bound alpha/2 + 3 SE = {side_bound:.4f}")

    if '1' in figures:
        # 1. A/A
        print("\n1. A/A: worst cell over every pair and null shape (share alerting; MC SE of that cell)")
        header = (f"{'measure':>10} {'n':>5} {'t rule':>8} {'robust':>8} {'SE':>7} {'cells>bound t':>13} "
                  f"{'robust':>6} {'inconcl.':>8} {'either':>7} {'q-drops':>7} {'critical':>8} {'broken sym':>10} "
                  f"{'broken skew':>11}")
        print(header)
        table = []
        mismatches = 0
        for m in measures:
            for n in sizes:
                margin = policy.margin(m)
                worst_t = worst_r = worst_either = worst_drops = worst_crit = broken_sym = broken_skew = 0.0
                over_t = over_r = over_broken = 0
                inconclusive = []
                for (folder, cand, meas), d in sorted(data.items()):
                    if meas != m:
                        continue
                    for shape_name, shape in shapes(d).items():
                        D = draw(d, shape, sims, n, rng)
                        old = rule(D, tail, margin, "t")
                        new = rule(D, tail, margin, "robust")
                        a_t, a_r = float(old["warning"].mean()), float(new["warning"].mean())
                        worst_t, worst_r = max(worst_t, a_t), max(worst_r, a_r)
                        worst_crit = max(worst_crit, float(new["critical"].mean()))
                        worst_either = max(worst_either, float(old["either"].mean()))
                        worst_drops = max(worst_drops, float((old["warning"] | query_drops(D, tail)).mean()))
                        over_t += a_t > side_bound
                        over_r += a_r > side_bound
                        inconclusive.append(float(new["inconclusive"].mean()))
                        # the broken-queries question on identical behaviour (sign-flip: large losses and gains
                        # equally likely) is held to the bound; on the skewed equal-mean shapes it answers its own
                        # question (a candidate that loses big on more queries than it gains big), printed beside
                        b = float(new["broken"].mean())
                        if shape is None:
                            broken_sym = max(broken_sym, b)
                            over_broken += b > side_bound
                        else:
                            broken_skew = max(broken_skew, b)
                        if n in (20, 100) and shape_name in ("re-centred", "pos-scaled"):
                            mismatches += crosscheck(D, new, tail, policy, 10)
                if n >= 20:
                    failures += over_r + over_broken
                line = (f"{m:>10} {n:>5} {worst_t:>8.4f} {worst_r:>8.4f} {se(max(worst_r, tail), sims):>7.4f} "
                        f"{over_t:>13} {over_r:>6} {np.mean(inconclusive):>8.2f} {worst_either:>7.4f} {worst_drops:>7.4f} "
                        f"{worst_crit:>8.4f} {broken_sym:>10.4f} {broken_skew:>11.4f}")
                print(line)
                table.append((m, n, worst_t, worst_r, over_t, over_r, float(np.mean(inconclusive)), worst_either,
                              worst_drops, worst_crit, broken_sym, broken_skew))
        failures += mismatches
        print(f"cross-check against decide_deltas: {mismatches} disagreements")

    worst_at_margin = float("nan")
    if '2' in figures:
        # 2. the effect-size route at exactly the margin
        print(f"\n2. alert_on critical (effect-size route): true delta exactly -margin (nDCG@10 "
              f"{policy.margin('nDCG@10')}, AP {policy.margin('AP')}; A/A deltas shifted)")
        worst_at_margin = 0.0
        for (folder, cand, meas), d in sorted(data.items()):
            if meas not in ("nDCG@10", "AP"):
                continue
            margin = policy.margin(meas)
            for n in (30, 300, 1000):
                D = draw(d, d - d.mean(), sims, n, rng) - margin
                rate = float(rule(np.clip(D, -1, 1), tail, margin, "robust")["critical"].mean())
                worst_at_margin = max(worst_at_margin, rate)
        ok = worst_at_margin <= side_bound
        failures += not ok
        print(f"   worst critical rate over dense pools, n = 30, 300, 1000: {worst_at_margin:.4f} (SE "
              f"{se(max(worst_at_margin, tail), sims):.4f}; bound {side_bound:.4f}: {'yes' if ok else 'NO'})")

    worst_cost = float("nan")
    if '3' in figures:
        # 3. power cost on symmetric data at n = 300
        print("\n3. power on symmetric data (sign-flipped real deltas + a shift giving the t rule 80 %), n = 300: the "
              "share whose interval lies below 0 (the p-value route)")
        costs = []
        for (folder, cand, meas), d in sorted(data.items()):
            if meas not in ("nDCG@10", "AP", "RR@10"):
                continue
            n = 300
            sd = float(np.sqrt(np.mean(d**2)))  # the sd of the sign-flipped deltas
            shift = -(stats.norm.ppf(1 - tail) + stats.norm.ppf(0.8)) * sd / math.sqrt(n)
            D = np.clip(draw(d, None, sims, n, rng) + shift, -1.0, 1.0)
            p_t = float(rule(D, tail, policy.margin(meas), "t")["significant"].mean())
            p_r = float(rule(D, tail, policy.margin(meas), "robust")["significant"].mean())
            costs.append(p_t - p_r)
            print(f"   {folder:>18} {cand:>18} {meas:>8}: shift {shift:+.4f}; t {p_t:.3f}, robust {p_r:.3f}, "
                  f"cost {100 * (p_t - p_r):+.1f} points (SE {100 * math.sqrt(2) * se(0.8, sims):.1f})")
        worst_cost = max(costs)
        ok = worst_cost <= 0.10
        failures += not ok
        print(f"   largest cost {100 * worst_cost:.1f} points (bound 10: {'yes' if ok else 'NO'})")

    family_rates: list[tuple] = []
    if '4' in figures:
        # 4. families: each member read at the family's per-side error alpha / 2m (Bonferroni, as adjust_and_decide
        # reads a Holm family under the robust interval); the mean question's drop alerts are bounded by alpha / 2
        # (the union of m sides of alpha / 2m), the whole alert (either question) on identical behaviour by alpha
        # (2m one-sided tests at alpha / 2m each)
        mean_bound = tail + 3 * se(tail, sims)
        fam_alpha_bound = alpha + 3 * se(alpha, sims)
        print(f"\n4. families: 3 measures (P@10, RR@10, nDCG@10) x 3 candidates, each member at alpha/18; the mean "
              f"question's drop alerts (bound alpha/2 + 3 SE = {mean_bound:.4f}) and the whole alert, either question "
              f"(on identical behaviour, sign-flip: bound alpha + 3 SE = {fam_alpha_bound:.4f}; on the skewed "
              "re-centred null the broken-queries question alerts by design, printed)")
        family_rates = []
        for folder in ("scifact", "nfcorpus-orig-test"):
            for n in (30, 100):
                members = [(c, m) for c in CANDIDATES for m in ("P@10", "RR@10", "nDCG@10")]
                size = len(data[(folder, members[0][0], members[0][1])])
                idx = rng.integers(0, size, (sims, n))
                signs = {c: rng.choice([-1.0, 1.0], (sims, n)) for c in CANDIDATES}  # a query's versions swapped
                ftail = alpha / (2 * len(members))
                rates = {}
                for shape_name in ("re-centred", "sign-flip"):
                    any_t = np.zeros(sims, bool)
                    any_r = np.zeros(sims, bool)
                    any_all = np.zeros(sims, bool)
                    for c, m in members:
                        d = data[(folder, c, m)]
                        D = (d - d.mean())[idx] if shape_name == "re-centred" else d[idx] * signs[c]
                        any_t |= rule(D, ftail, policy.margin(m), "t")["warning"]
                        out = rule(D, ftail, policy.margin(m), "robust")
                        any_r |= out["warning"]
                        any_all |= out["warning"] | out["broken"]
                    rates[shape_name] = (float(any_t.mean()), float(any_r.mean()), float(any_all.mean()))
                ok = max(rates["re-centred"][1], rates["sign-flip"][1]) <= mean_bound
                ok &= rates["sign-flip"][2] <= fam_alpha_bound
                failures += not ok
                family_rates.append((folder, n, rates))
                for shape_name, (t_rate, r_rate, all_rate) in rates.items():
                    print(f"   {folder:>18} n {n:>4} {shape_name:>10}: family-wise drop alerts, t rule {t_rate:.4f}, "
                          f"robust {r_rate:.4f}; either question {all_rate:.4f}{'' if ok else ' (OVER)'}")

    # 5. daily looks: the spending rule (one day per look) and the pooled betting sequence
    looks: dict[str, tuple[float, float]] = {}
    if "5" in figures:
        d = data[("scifact", "tfidf", "RR@10")]
        margin = policy.margin("RR@10")
        null = d - d.mean()
        print(f"\n5. daily looks: {DAYS} days x {DAILY_N} queries, re-centred scifact tfidf RR@10 deltas "
              f"(sd {null.std(ddof=1):.3f}, skew {stats.skew(null):+.2f}); look k at alpha 6 / (pi^2 k^2)")
        aa = np.zeros(sims, bool)
        hit = np.zeros(sims, bool)
        for k in range(1, DAYS + 1):
            ltail = tail * spending_tail(1.0, k, "one-sided")
            D = null[rng.integers(0, len(null), (sims, DAILY_N))]
            aa |= rule(D, ltail, margin, "robust")["warning"]
            shifted = np.clip(D - (DROP if k >= DROP_FROM else 0.0), -1.0, 1.0)
            hit |= rule(shifted, ltail, margin, "robust")["warning"]
        print(f"   spending rule, one day per look: A/A histories with an alert {aa.mean():.4f} (SE "
              f"{se(alpha, sims):.4f}); a drop of {DROP} from day {DROP_FROM} detected by day {DAYS}: {hit.mean():.4f}")
        looks["spending"] = (float(aa.mean()), float(hit.mean()))
        # the pooled betting sequence: the pipeline's production look (evalops.stats.sequence.pooled_decision,
        # as evalops.pipeline.pooling calls it) on every query since the restart, decided at day 60; a drop
        # shown at any earlier look stays shown, so "decided a regression at day 60" is "detected by day 60"
        aa_seq = np.zeros(sims, bool)
        aa_mirror = np.zeros(sims, bool)
        hit_seq = np.zeros(sims, bool)
        shift = np.where(np.arange(1, DAYS + 1) >= DROP_FROM, DROP, 0.0)
        for i in range(sims):
            D = null[rng.integers(0, len(null), (DAYS, DAILY_N))]
            aa = pooled_decision(list(D), tail, margin, policy.alternative, bounds=False).decision
            aa_seq[i], aa_mirror[i] = aa == "regression", aa == "improvement"
            dropped = np.clip(D - shift[:, None], -1.0, 1.0)
            hit = pooled_decision(list(dropped), tail, margin, policy.alternative, bounds=False).decision
            hit_seq[i] = hit == "regression"
        worst_aa = max(aa_seq.mean(), aa_mirror.mean())
        ok = worst_aa <= alpha + 3 * se(alpha, sims)
        failures += not ok
        met = hit_seq.mean() >= 0.5
        failures += not met
        print(f"   pooled betting sequence (the pipeline's production looks, pooled_decision): A/A histories decided "
              f"a regression {aa_seq.mean():.4f}, an improvement {aa_mirror.mean():.4f} (bound "
              f"{alpha + 3 * se(alpha, sims):.4f}; {'ok' if ok else 'OVER'}); the drop decided a regression by day "
              f"{DAYS}: {hit_seq.mean():.4f} (target 0.50: {'met' if met else 'NOT MET'})")
        looks["sequence"] = (float(worst_aa), float(hit_seq.mean()))

    pilots: list[tuple] = []
    if "6" in figures:
        # 6. power from a pilot: the n pilot_sample_size gives for 80 % at -2 margin, measured on fresh draws
        print("\n6. power from a pilot: the most skewed pool of each measure is the pilot; pilot_sample_size gives n "
              "for 80 % (the default alert) at a true delta of -2 x margin; fresh draws from the pool shifted there")
        for m in MEASURES:
            key = max((k for k in data if k[2] == m), key=lambda k: abs(stats.skew(data[k])))
            d, margin = data[key], policy.margin(m)
            n, planned = pilot_sample_size(d, -2.0 * margin, margin, simulations=sims, seed=args.seed)
            before = pilot_power(d, -2.0 * margin, n - 1, margin, simulations=sims, seed=args.seed).power
            shaped = d - d.mean() - 2.0 * margin
            D = np.clip(shaped[rng.integers(0, len(shaped), (sims, n))], -1.0, 1.0)
            got = float(rule(D, tail, margin, "robust")["warning"].mean())
            # the n reaches 80 % (within 3 SE), and the pilot's power at n is what fresh draws measure; where the
            # power climbs past 80 % within one query (a cliff), "within 3 SE of 80 %" cannot hold at any n
            close = abs(got - planned.power) <= 3 * math.sqrt(se(got, sims) ** 2 + planned.mc_se**2)
            ok = close and got >= 0.8 - 3 * se(0.8, sims)
            failures += not ok
            pilots.append((key, float(stats.skew(d)), margin, n, before, planned.power, got))
            print(f"   {key[0]:>18} {key[1]:>18} {m:>10} (skew {stats.skew(d):+.2f}): margin {margin}, n {n} (pilot: "
                  f"{before:.3f} at n - 1, {planned.power:.3f} at n); measured at n {got:.4f} (SE {se(got, sims):.4f}; "
                  f"80 % - 3 SE = {0.8 - 3 * se(0.8, sims):.4f}; {'ok' if ok else 'OFF'}"
                  f"{'' if abs(got - 0.8) <= 3 * se(0.8, sims) else ', more than 3 SE above 80 %: a cliff'})")

    shift_gaps: list[tuple] = []
    if "7" in figures:
        # 7. a uniform shift of -2 x margin: the paired t-test's detection against the rule's alert (both questions)
        print("\n7. uniform shift: re-centred real deltas moved by -2 x margin (every query loses the same), the t rule's "
              "alert against the default rule's (target at n = 50: within 15 points)")
        for n in SHIFT_SIZES:
            gaps = []
            for (folder, cand, meas), d in sorted(data.items()):
                if meas not in ("P@10", "RR@10", "nDCG@10", "AP"):
                    continue
                margin = policy.margin(meas)
                D = np.clip(draw(d, d - d.mean(), sims, n, rng) - 2.0 * margin, -1.0, 1.0)
                p_t = float(rule(D, tail, margin, "t")["warning"].mean())
                out = rule(D, tail, margin, "robust")
                p_r = float((out["warning"] | out["broken"]).mean())
                gaps.append((p_t - p_r, p_t, p_r, f"{folder} {cand} {meas}",
                             ceiling(np.clip(d - d.mean() - 2.0 * margin, -1.0, 1.0), n, tail)))
            worst = max(gaps)
            ok = n != 50 or worst[0] <= 0.15
            failures += not ok
            gap_se = math.sqrt(se(worst[1], sims) ** 2 + se(worst[2], sims) ** 2)
            top = max(g[4] for g in gaps)
            shift_gaps.append((n, worst[0], float(np.median([g[0] for g in gaps])), worst[3], worst[1], worst[2],
                               gap_se, worst[4], top, float(np.median([g[1] - g[4] for g in gaps]))))
            print(f"   n {n:>4}: largest gap {100 * worst[0]:+.1f} points (SE {100 * gap_se:.1f}; {worst[3]}: t "
                  f"{worst[1]:.3f}, rule {worst[2]:.3f}, no test valid for every distribution on [-1, 1] above "
                  f"{worst[4]:.3f}), median {100 * np.median([g[0] for g in gaps]):+.1f}; the distribution-free "
                  f"ceiling over the pools at most {top:.3f}, median t above it "
                  f"{100 * np.median([g[1] - g[4] for g in gaps]):+.1f} points"
                  f"{'' if n != 50 else (' (target 15: ' + ('met' if ok else 'NOT MET') + ')')}")

    held: list[tuple] = []
    if "8" in figures:
        # 8. held-out cells: runs no constant of the rule was chosen on, the same null shapes
        extra = held_out_pools(args.data)
        print(f"\n8. held-out cells: {', '.join(sorted({k[0] + ' ' + k[1] for k in extra}))}; worst A/A over the null "
              f"shapes (bound {side_bound:.4f})")
        for m in MEASURES:
            for n in (20, 30, 50, 100, 300):
                worst, where = 0.0, ""
                for (folder, cand, meas), d in sorted(extra.items()):
                    if meas != m or np.count_nonzero(d) < 2:
                        continue
                    for shape_name, shape in shapes(d).items():
                        out = rule(draw(d, shape, sims, n, rng), tail, policy.margin(m), "robust")
                        a = float(out["warning"].mean())
                        if a > worst:
                            worst, where = a, f"{folder} {cand} {shape_name}"
                ok = worst <= side_bound
                failures += not ok
                held.append((m, n, worst, where))
                print(f"   {m:>10} n {n:>4}: {worst:.4f} (SE {se(max(worst, tail), sims):.4f}){'' if ok else ' OVER'} "
                      f"({where})")

    print(f"\n{time.perf_counter() - started:.0f} s; figures outside their bound: {failures}")
    if args.write_docs:
        write_docs(table, family_rates, worst_cost, worst_at_margin, sims, side_bound, looks, pilots, shift_gaps, held)
    return 1 if failures else 0


def write_docs(table: list[tuple], family_rates: list[tuple], worst_cost: float, at_margin: float, sims: int,
               bound: float, looks: dict[str, tuple[float, float]], pilots: list[tuple], shift_gaps: list[tuple],
               held: list[tuple]) -> None:
    lines = [BEGIN, "",
             f"Worst A/A cell per measure and n over 3 system pairs x 2 collections x up to 7 null shapes, {sims} "
             f"simulations per cell; a drop alert is bounded by alpha/2 + 3 SE = {bound:.4f}. \"t rule\" is "
             "`interval: t`, \"robust\" the default; *either* and *query drops* are the removed modes, measured on "
             "the t rule; *critical* is the effect-size route (`alert_on: critical`) of the robust rule.", "",
             "| measure | n | t rule | robust | SE (robust) | cells over (t) | cells over (robust) | "
             "robust inconclusive | either | query drops | critical | broken queries, symmetric | "
             "broken queries, skewed |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for m, n, t, r, ot, orr, inc, either, drops, crit, bsym, bskew in table:
        lines.append(f"| {m} | {n} | {t:.4f} | {r:.4f} | {se(max(r, 0.025), sims):.4f} | {ot} | {orr} | {inc:.2f} | "
                     f"{either:.4f} | {drops:.4f} | {crit:.4f} | {bsym:.4f} | {bskew:.4f} |")
    family_note = ("Family of 3 measures x 3 candidates under a global null, each member at alpha/18: the mean "
                   f"question's drop alerts (bound alpha/2 + 3 SE = {bound:.4f}) and the whole alert, either question "
                   f"(on identical behaviour bound alpha + 3 SE = {0.05 + 3 * se(0.05, sims):.4f}; on the skewed null "
                   "the broken-queries question alerts by design):")
    lines += ["", family_note, "",
              "| collection | n | null | t rule (drops) | robust (drops) | SE | robust (either question) | SE |",
              "|---|---:|---|---:|---:|---:|---:|---:|"]
    for folder, n, rates in family_rates:
        for shape_name, (t, r, a) in rates.items():
            lines.append(f"| {folder} | {n} | {shape_name} | {t:.4f} | {r:.4f} | {se(max(r, 0.025), sims):.4f} | "
                         f"{a:.4f} | {se(max(a, 0.05), sims):.4f} |")
    lines += ["", f"Largest power cost on symmetric data at n = 300 (robust against t, at the t rule's 80 %): "
                  f"{100 * worst_cost:.1f} points (SE {100 * math.sqrt(2) * se(0.8, sims):.1f}). Worst `critical` "
                  f"rate at a true delta of exactly -margin: {at_margin:.4f} "
                  f"(SE {se(max(at_margin, 0.025), sims):.4f}).",
              ""]
    if looks:
        lines += [f"Daily looks, {DAYS} days x {DAILY_N} queries of skewed A/A production samples, and a drop of {DROP} "
                  f"from day {DROP_FROM}:", "", "| daily looks | A/A histories alerting | drop detected by day "
                  f"{DAYS} | SE (A/A at alpha) | SE (drop) |", "|---|---:|---:|---:|---:|"]
        names = {"spending": "alpha spent over the looks, one day per look",
                 "sequence": "pooled betting sequence (every query since the restart)"}
        for key, (aa, hit) in looks.items():
            lines.append(f"| {names[key]} | {aa:.4f} | {hit:.4f} | {se(0.05, sims):.4f} | {se(hit, sims):.4f} |")
        lines.append("")
    if pilots:
        lines += [f"Power from a pilot: the most skewed pool of each measure as the pilot, n from `pilot_sample_size` "
                  f"for 80 % (the default alert) at a true delta of -2 x margin, detection measured on {sims} fresh "
                  "draws from the pool shifted there by the benchmark's own rule (3 SE of 80 % = "
                  f"{3 * se(0.8, sims):.4f}):", "",
                  "| pilot (pool) | skew | margin | n | pilot's power at n - 1 | at n | measured at n | SE |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for (folder, cand, m), skew, margin, n, before, planned, got in pilots:
            lines.append(f"| {folder} {cand} {m} | {skew:+.2f} | {margin:g} | {n} | {before:.4f} | {planned:.4f} | "
                         f"{got:.4f} | {se(got, sims):.4f} |")
        lines.append("")
    if shift_gaps:
        lines += ["Uniform shift of -2 x margin (every query loses the same): the paired t rule's alert against the "
                  "default rule's, over the pools of P@10, RR@10, nDCG@10 and AP (SE of the gap beside it); "
                  "*ceiling*: the most any drop test valid for every distribution on [-1, 1] can detect on that pool, "
                  "tail (1 - mu)^n for the shifted pool's mean mu (a null that adds a rare +1 to the pool has mean 0 "
                  "and draws none of it in (1 - mu)^-n of its samples), and the largest over the pools:", "",
                  "| n | largest gap (points) | SE | pool | t | rule | ceiling (pool) | median gap | largest ceiling | "
                  "median t above the ceiling |", "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
        for n, gap, median, where, p_t, p_r, gap_se, ceil, top, above in shift_gaps:
            lines.append(f"| {n} | {100 * gap:+.1f} | {100 * gap_se:.1f} | {where} | {p_t:.3f} | {p_r:.3f} | "
                         f"{ceil:.3f} | {100 * median:+.1f} | {top:.3f} | {100 * above:+.1f} |")
        lines.append("")
    if held:
        lines += ["Held-out cells (runs no constant was chosen on), worst A/A over the null shapes:", "",
                  "| measure | n | worst A/A | SE | cell |", "|---|---:|---:|---:|---|"]
        for m, n, worst, where in held:
            lines.append(f"| {m} | {n} | {worst:.4f} | {se(max(worst, 0.025), sims):.4f} | {where} |")
        lines.append("")
    lines.append(END)
    path = Path(__file__).resolve().parents[1] / "docs" / "statistics.md"
    text = path.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + "\n".join(lines) + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
    path.write_text(text, encoding="utf-8")
    print(f"wrote the table into {path}")


if __name__ == "__main__":
    sys.exit(main())
