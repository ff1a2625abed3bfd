"""Daily production looks at scale: one candidate run's production family decided by the pooled test over
``--days`` earlier days of ``--queries`` queries and ``--measures`` measures.

    python benchmarks/production_looks.py [--sqlite PATH | --postgres URL] [--days 60] [--queries 2000]
                                          [--measures 5] [--repeat 3]

The warehouse is made by the migrations and filled through the warehouse API as the pipeline fills it: each
day a baseline run (1.0) and a candidate run (2.0) of retriever ``search`` on that day's production sample
(its own query-set version), their per-query scores (values in [0, 1], seeded) and the day's comparisons in
``ab_tests`` (family ``production``). A database or file that already holds the shape is reused.

Figures (median of ``--repeat``, warm):

* ``read``: the earlier days of every measure of the family (``evalops.warehouse.looks``);
* ``decide``: the pooled decisions with their bounds (``evalops.stats.sequence.pooled_decision``), all
  measures, over every query since the restart;
* ``family``: the whole production family of the candidate run (``decide_production_run``), as the decide
  step calls it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

MEASURES = ("P@10", "nDCG@10", "R@100", "RR", "AP", "Success@10", "R@10", "nDCG@5")
T0 = dt.datetime(2026, 9, 1, tzinfo=dt.timezone.utc)


def _fill(engine, days: int, queries: int, measures: tuple[str, ...]) -> tuple[int, int]:
    """Fill the warehouse (or reuse it); returns today's (candidate run id, baseline run id), not yet compared."""
    from sqlalchemy import text

    from evalops.config import PRODUCTION
    from evalops.fingerprint import EvalFingerprint
    from evalops.stats import Policy, align, compare
    from evalops.warehouse import (
        ABTestResult,
        RunKey,
        record_ab_tests,
        record_gold_set_version,
        record_kb_snapshot,
        record_run,
    )

    def run(day: int, version: str, values: dict[str, np.ndarray], fp: EvalFingerprint):
        when = T0 + dt.timedelta(days=day)
        ids = [f"q{day}-{i:05d}" for i in range(queries)]
        scores = pd.DataFrame({"query_id": ids * len(measures), "measure": np.repeat(measures, queries),
                               "value": np.concatenate([values[m] for m in measures])})
        return record_run(engine, RunKey("retrieval_eval", f"scheduled__{when:%Y-%m-%d}", "search", version,
                                         PRODUCTION), fingerprint=fp, logical_date=when, status="succeeded",
                          started_at=when, finished_at=when, n_queries=queries, scores=scores)

    with engine.connect() as conn:
        done = conn.execute(text("SELECT count(*) FROM eval_runs")).scalar()
    if done == 2 * (days + 1):
        with engine.connect() as conn:
            ids = conn.execute(text("SELECT id, version FROM eval_runs ORDER BY logical_date DESC, id DESC "
                                    "LIMIT 2")).all()
        by = {v: i for i, v in ids}
        return by["2.0"], by["1.0"]
    if done:
        raise SystemExit("the warehouse holds another shape; name an empty one")
    rng = np.random.default_rng(0)
    record_kb_snapshot(engine, "kb-1", n_documents=100, content_hash="sha-kb-1")
    policy = Policy(alpha=0.05)
    for day in range(days + 1):
        sample = f"sample-{day}"
        record_gold_set_version(engine, sample, name=PRODUCTION, n_queries=queries, n_judgments=0)
        fp = EvalFingerprint.of(sample, "kb-1", list(measures), {"labels": "implicit-feedback"})
        base = {m: rng.random(queries) for m in measures}
        cand = {m: np.clip(base[m] + rng.normal(-0.005, 0.2, queries), 0.0, 1.0) for m in measures}
        b, c = run(day, "1.0", base, fp), run(day, "2.0", cand, fp)
        if day == days:
            return c.id, b.id
        ids = [f"q{day}-{i:05d}" for i in range(queries)]
        comps = [compare(align((ids, base[m].tolist()), (ids, cand[m].tolist())), measure=m, policy=policy,
                         baseline_name="search@1.0", candidate_name="search@2.0", rng=0) for m in measures]
        record_ab_tests(engine, [ABTestResult(x, baseline_run_id=b.id, candidate_run_id=c.id, family="production")
                                 for x in comps])
    raise AssertionError("unreachable")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--postgres", help="a PostgreSQL database URL (filled when empty)")
    where.add_argument("--sqlite", type=Path, help="a SQLite file (filled when missing)")
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--measures", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from evalops.pipeline.pooling import decide_production_run
    from evalops.stats import Policy, align, compare
    from evalops.stats.sequence import pooled_decision
    from evalops.warehouse import connect, load_score_vectors, upgrade
    from evalops.warehouse import looks as looks_module

    measures = MEASURES[: args.measures]
    url = args.postgres or f"sqlite:///{args.sqlite or Path('/tmp/evalops_production_looks.db')}"
    engine = connect(url)
    upgrade(engine)
    t = time.perf_counter()
    cand_id, base_id = _fill(engine, args.days, args.queries, measures)
    print(f"warehouse: {args.days} earlier days x {args.queries:,} queries x {len(measures)} measures "
          f"({engine.dialect.name}), ready in {time.perf_counter() - t:.1f} s")

    policy = Policy(alpha=0.05)
    b, c = load_score_vectors(engine, base_id, list(measures)), load_score_vectors(engine, cand_id, list(measures))
    comps = [compare(align((b.query_ids.tolist(), b.values[m].tolist()), (c.query_ids.tolist(), c.values[m].tolist())),
                     measure=m, policy=policy, baseline_name="search@1.0", candidate_name="search@2.0", rng=0)
             for m in measures]
    reader = getattr(looks_module, "earlier_looks_of", None)

    def read():
        if reader is not None:
            return reader(engine, cand_id, base_id, list(measures), policy.to_dict())
        return {m: looks_module.earlier_looks(engine, cand_id, base_id, m, policy.to_dict()) for m in measures}

    def timed(fn, repeat: int) -> tuple[float, object]:
        times, out = [], None
        for _ in range(repeat):
            t = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t)
        return statistics.median(times), out

    read_s, before = timed(read, args.repeat)
    looks = next(iter(before.values())).looks
    tail = 0.05 / len(measures)
    days_of = {m: [x.deltas for x in before[m].looks] + [np.asarray(comp.deltas)] for m, comp in zip(measures, comps)}
    decide_s, decided = timed(lambda: [pooled_decision(days_of[m], tail, 0.01) for m in measures], args.repeat)
    family_s, family = timed(lambda: decide_production_run(engine, comps, candidate_run_id=cand_id,
                                                           baseline_run_id=base_id), args.repeat)
    n = decided[0].queries
    print(f"read    {read_s:7.3f} s  the earlier days of {len(measures)} measures ({len(looks)} days pooled each)")
    print(f"decide  {decide_s:7.3f} s  {len(measures)} pooled decisions with bounds over {n:,} queries each")
    print(f"family  {family_s:7.3f} s  decide_production_run, {len(measures)} members")
    for m, d in zip(measures, decided):
        print(f"  {m:10s} {d.decision:12s} looks {d.looks} queries {d.queries:,} "
              f"bounds [{d.lower:+.6f}, {d.upper:+.6f}]")
    assert [x.pooled["queries"] for x in family] == [n] * len(measures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
