"""Write and read back 100,000 per-query scores of one run, on SQLite and PostgreSQL.

    python benchmarks/warehouse_io.py [--rows 100000] [--repeat 3] [--postgres URL]

The warehouse path is ``record_run(..., scores=frame)`` (run upsert + delete + bulk insert in one
transaction: binary COPY on PostgreSQL, one executemany on SQLite) and ``load_scores``. The peer, in the
same process on the same database, is a plain ``DataFrame.to_sql`` of the same frame and ``pandas.read_sql``
of it back. The ratio printed is peer seconds / warehouse seconds (above 1 means the warehouse is faster).
Target: under 5 s each way on PostgreSQL. PostgreSQL runs when ``--postgres`` or
``EVALOPS_TEST_POSTGRES_URL`` names a server; a scratch database is created there and dropped afterwards
(``--schema``: a scratch schema in the URL's database instead, for a server where the benchmark may not
create databases).

On PostgreSQL the write is also measured against the floor of its own kind: psycopg's binary ``COPY`` of
the same rows (run id, measure id, query id, value), already encoded and in primary-key order, into a table
made ``LIKE query_scores`` with its primary key, as a plain script would send them. Target: the warehouse's
write (validation, run row, delete, ordering, ``COPY``, commit) at >= 50 % of that ``COPY``'s rows/s
(``--rows 600000``: one version of 100,000 queries x 6 measures). The write and the ``COPY`` are taken in
turn (at least 5 pairs), each write a new run's first, and the share is the median of the pairs'.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalops.fingerprint import EvalFingerprint  # noqa: E402
from evalops.warehouse import (  # noqa: E402
    RunKey,
    create_warehouse_engine,
    load_scores,
    record_gold_set_version,
    record_kb_snapshot,
    record_run,
    upgrade,
)

MEASURES = ("AP@100", "P@10", "P@5", "R@10", "R@100", "R-Prec", "RR@10", "Success@10", "nDCG@10", "nDCG@100")
TARGET_S = 5.0
T0 = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)


def score_frame(rows: int, rng: np.random.Generator) -> pd.DataFrame:
    n_queries = rows // len(MEASURES)
    queries = np.array([f"query-{i:06d}" for i in range(n_queries)], dtype=object)
    values = rng.random(n_queries * len(MEASURES))
    values[rng.random(values.size) < 0.001] = np.nan  # a few undefined scores must survive the trip
    return pd.DataFrame(
        {
            "query_id": np.tile(queries, len(MEASURES)),
            "measure": np.repeat(np.array(MEASURES, dtype=object), n_queries),
            "value": values,
        }
    )


def best_of(repeat: int, action: Callable[[], object]) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = action()
        best = min(best, time.perf_counter() - start)
    return best, result


def bench(name: str, url: str, frame: pd.DataFrame, repeat: int) -> list[dict]:
    from sqlalchemy import create_engine

    engine = create_warehouse_engine(url)
    upgrade(engine)
    record_gold_set_version(engine, "bench-gold", name="bench", n_queries=len(frame) // len(MEASURES), n_judgments=0)
    record_kb_snapshot(engine, "bench-kb", n_documents=0, content_hash="none")
    fp = EvalFingerprint.of("bench-gold", "bench-kb", MEASURES, {"ties": "trec_eval"})
    key = RunKey("bench", "run-1", "bm25", "v1")

    def write():
        return record_run(engine, key, fingerprint=fp, logical_date=T0, status="succeeded", started_at=T0,
                          n_queries=len(frame) // len(MEASURES), scores=frame)

    write_s, run = best_of(repeat, write)
    read_s, loaded = best_of(repeat, lambda: load_scores(engine, run.id))
    expected = frame.sort_values(["measure", "query_id"], ignore_index=True)
    same = len(loaded) == len(frame) and np.array_equal(
        loaded["value"].to_numpy(), expected["value"].to_numpy(), equal_nan=True
    )
    pairs = _copy_pairs(engine, url, frame, fp, max(repeat, 5)) if engine.dialect.name == "postgresql" else None
    engine.dispose()

    peer = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    peer_write_s, _ = best_of(repeat, lambda: frame.to_sql("peer_scores", peer, if_exists="replace", index=False))
    peer_read_s, peer_loaded = best_of(repeat, lambda: pd.read_sql("SELECT * FROM peer_scores", peer))
    peer_nan = int(peer_loaded["value"].isna().sum())
    peer.dispose()
    rows = len(frame)
    floor = []
    if pairs is not None:
        new_write_s, copy_s, share = pairs
        floor = [{"backend": name, "op": "COPY", "s": copy_s, "rows/s": rows / copy_s, "peer s": new_write_s,
                  "ratio": share, "round trip": "a new run's write vs COPY, in turn: the write's rows/s as a "
                                                "share of COPY's, median of the pairs (target >= 0.5)"}]
    return [
        {"backend": name, "op": "write", "s": write_s, "rows/s": rows / write_s, "peer s": peer_write_s,
         "ratio": peer_write_s / write_s, "round trip": "exact (NaN kept)" if same else "MISMATCH"},
        {"backend": name, "op": "read", "s": read_s, "rows/s": rows / read_s, "peer s": peer_read_s,
         "ratio": peer_read_s / read_s, "round trip": f"peer: {peer_nan} NaN/NULL back"},
        *floor,
    ]


def _copy_pairs(engine, url: str, frame: pd.DataFrame, fp: EvalFingerprint, repeat: int) -> tuple[float, float, float]:
    """(median write seconds, median COPY seconds, median share) over ``repeat`` pairs taken in turn: a new
    run's ``record_run`` with the scores (its first write, as the pipeline makes it), then psycopg's binary
    COPY of the same rows, encoded beforehand and in primary-key order, into a table ``LIKE query_scores``
    (its primary key included) emptied before each (not timed), and its commit. The share is the write's
    rows/s over the COPY's, pair by pair (the machine's load moves both)."""
    import statistics

    import psycopg
    from sqlalchemy.engine import make_url

    from evalops.warehouse.config import normalise_url

    conninfo = make_url(normalise_url(url)).set(drivername="postgresql").render_as_string(hide_password=False)
    names = sorted(set(frame["measure"]))
    mids = frame["measure"].map({m: i + 1 for i, m in enumerate(names)}).to_numpy()
    qids = frame["query_id"].to_numpy(dtype=object)
    order = np.lexsort((qids, mids))
    rows = list(zip([1] * len(frame), mids[order].tolist(), qids[order].tolist(),
                    frame["value"].to_numpy()[order].tolist(), strict=False))
    writes, copies = [], []
    with psycopg.connect(conninfo) as conn:
        conn.execute("DROP TABLE IF EXISTS peer_copy_scores")
        conn.execute("CREATE TABLE peer_copy_scores (LIKE query_scores INCLUDING ALL)")
        conn.commit()
        for i in range(repeat):
            start = time.perf_counter()
            record_run(engine, RunKey("bench", f"copy-pair-{i}", "bm25", "v1"), fingerprint=fp, logical_date=T0,
                       status="succeeded", started_at=T0, n_queries=len(frame) // len(MEASURES), scores=frame)
            writes.append(time.perf_counter() - start)
            conn.execute("TRUNCATE peer_copy_scores")
            conn.commit()
            start = time.perf_counter()
            with conn.cursor() as cursor:
                sql = "COPY peer_copy_scores (run_id, measure_id, query_id, value) FROM STDIN (FORMAT BINARY)"
                with cursor.copy(sql) as writer:
                    writer.set_types(["int4", "int4", "text", "float8"])
                    for row in rows:
                        writer.write_row(row)
            conn.commit()
            copies.append(time.perf_counter() - start)
        conn.execute("DROP TABLE peer_copy_scores")
        conn.commit()
    shares = [c / w for w, c in zip(writes, copies, strict=False)]
    return statistics.median(writes), statistics.median(copies), statistics.median(shares)


def _in_schema(url: str, frame: pd.DataFrame, repeat: int) -> list[dict]:
    """:func:`bench` on PostgreSQL in a scratch schema of the URL's database, dropped afterwards."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from evalops.warehouse.config import normalise_url

    server = make_url(normalise_url(url))
    schema = f"evalops_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        scoped = server.update_query_dict({"options": f"-csearch_path={schema}"})
        return bench("postgresql", scoped.render_as_string(hide_password=False), frame, repeat)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="best of N (default 3)")
    parser.add_argument("--postgres", default=os.environ.get("EVALOPS_TEST_POSTGRES_URL"))
    parser.add_argument("--schema", action="store_true",
                        help="a scratch schema in the URL's database (dropped afterwards), not a scratch database")
    parser.add_argument("--skip-sqlite", action="store_true")
    args = parser.parse_args()
    frame = score_frame(args.rows, np.random.default_rng(20240501))
    print(f"{len(frame):,} per-query scores ({len(frame) // len(MEASURES):,} queries x {len(MEASURES)} measures), "
          f"best of {args.repeat}")

    results: list[dict] = []
    if not args.skip_sqlite:
        with tempfile.TemporaryDirectory() as tmp:
            results += bench("sqlite", f"sqlite:///{Path(tmp) / 'bench.db'}", frame, args.repeat)
    if args.postgres and args.schema:
        results += _in_schema(args.postgres, frame, args.repeat)
    elif args.postgres:
        from sqlalchemy import create_engine, text
        from sqlalchemy.engine import make_url

        from evalops.warehouse.config import normalise_url

        server = make_url(normalise_url(args.postgres))
        name = f"evalops_bench_{uuid.uuid4().hex[:8]}"
        admin = create_engine(server, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            results += bench("postgresql", server.set(database=name).render_as_string(hide_password=False), frame,
                             args.repeat)
        finally:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()
    else:
        print("PostgreSQL skipped: pass --postgres URL or set EVALOPS_TEST_POSTGRES_URL")

    print(f"{'backend':<11}{'op':<6}{'seconds':>9}{'rows/s':>12}{'peer s':>9}{'ratio':>8}  round trip")
    for r in results:
        print(f"{r['backend']:<11}{r['op']:<6}{r['s']:>9.3f}{r['rows/s']:>12,.0f}{r['peer s']:>9.3f}"
              f"{r['ratio']:>7.1f}x  {r['round trip']}")
    failures = [r for r in results if r["backend"] == "postgresql" and r["s"] >= TARGET_S]
    failures += [r for r in results if r["round trip"] == "MISMATCH"]
    if any(r["backend"] == "postgresql" for r in results):
        print(f"target (< {TARGET_S:.0f} s each way on PostgreSQL): {'FAILED' if failures else 'met'}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
