"""Server time and payload size of each dashboard page on a year of history.

    python benchmarks/dashboard_pages.py [--days 365] [--versions 10] [--queries 300] [--repeat 7]
                                         [--db PATH] [--postgres URL] [--clients 200] [--seconds 30]

The warehouse is filled through the warehouse API (``record_run`` with per-query scores and aggregates,
``record_ab_tests``, ``promote_baseline``, ``record_alert``, ``record_run_timing``): ``--days`` daily runs of
``--versions`` versions, 5 measures, ``--queries`` per-query scores per run and measure, a knowledge-base
snapshot change every 120 days (a new fingerprint, re-promoted), a gold-set change at mid-year, and a
regression alert every 30 days. ``--db PATH`` keeps the SQLite file, so a second run skips the fill.

Each page is requested in-process (FastAPI's TestClient, no network, the page cache off) ``--repeat`` times;
the table prints
the median server time, the payload size and, where the warehouse has one, the peer: the same data read
through the warehouse's existing pandas functions (``measure_history``, ``latest_runs`` +
``load_aggregates``, ``load_ab_tests`` + ``load_paired_scores``), without any rendering. The ratio is
page / peer. Target: every page ≤ 300 ms at the median.

Then the load: the app served by uvicorn in its own process on 127.0.0.1, ``--clients`` concurrent clients
(one asyncio process, each client waiting for its answer before it asks again) for ``--seconds``, over the
pages above with the comparison pages of the 20 newest comparisons (each asked once before the clock
starts), once with the page cache off
(``cache_seconds=0``: the peer) and once on (the default). It prints p50, p95 and max latency of each, and
the ratio of the p95s. Target: p95 ≤ 500 ms with the cache. ``--clients 0`` skips the load.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalops.fingerprint import EvalFingerprint  # noqa: E402
from evalops.stats import Comparison  # noqa: E402
from evalops.warehouse import (  # noqa: E402
    ABTestResult,
    RunKey,
    create_warehouse_engine,
    latest_runs,
    load_ab_tests,
    load_aggregates,
    load_paired_scores,
    measure_history,
    promote_baseline,
    record_ab_tests,
    record_alert,
    record_gold_set_version,
    record_kb_snapshot,
    record_run,
    upgrade,
)
from evalops.warehouse.dashboard import record_run_timing  # noqa: E402

MEASURES = ("nDCG@10", "RR@10", "R@100", "P@5", "AP@100")
RETRIEVER = "handbook-search"
TARGET_MS = 300.0
LOAD_TARGET_P95_MS = 500.0
T0 = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
POLICIES = {"ties": "score desc, docid desc", "no_answer": "exclude", "k": 100}


def fill(engine, days: int, versions: int, queries: int, rng: np.random.Generator) -> None:
    upgrade(engine)
    qids = np.array([f"q{i:04d}" for i in range(queries)], dtype=object)
    skill = np.linspace(0.45, 0.60, versions)
    fingerprints: dict[tuple[str, str], EvalFingerprint] = {}
    baseline_ids: dict[str, int] = {}
    for day in range(days):
        at = T0 + dt.timedelta(days=day)
        kb, gold = f"kb-{day // 120}", f"gold-{int(day >= days // 2)}"
        if (kb, gold) not in fingerprints:
            record_kb_snapshot(engine, kb, n_documents=5000, content_hash=kb * 4, recorded_at=at)
            record_gold_set_version(engine, gold, name="gold", n_queries=queries, n_judgments=queries * 3,
                                    recorded_at=at)
            fingerprints[(kb, gold)] = EvalFingerprint.of(gold, kb, MEASURES, POLICIES)
        fp = fingerprints[(kb, gold)]
        difficulty = rng.random(queries)
        run_ids = []
        for v in range(versions):
            version = f"v{v}"
            values = np.clip(skill[v] + 0.35 * (difficulty - 0.5) + rng.normal(0, 0.15, (len(MEASURES), queries)), 0, 1)
            if v == versions - 1 and day % 30 == 29:
                values = values * 0.6  # a planted regression every 30 days
            frame = pd.DataFrame({"query_id": np.tile(qids, len(MEASURES)),
                                  "measure": np.repeat(np.array(MEASURES, dtype=object), queries),
                                  "value": values.ravel()})
            means = values.mean(axis=1)
            half = 1.96 * values.std(axis=1, ddof=1) / np.sqrt(queries)
            aggregates = pd.DataFrame({"measure": MEASURES, "n": queries, "mean": means,
                                       "ci_low": means - half, "ci_high": means + half})
            run = record_run(engine, RunKey("retrieval_eval", f"scheduled__{at:%Y-%m-%d}", RETRIEVER, version),
                             fingerprint=fp, logical_date=at, status="succeeded", started_at=at,
                             finished_at=at + dt.timedelta(minutes=3), n_queries=queries, scores=frame,
                             aggregates=aggregates, ci_level=0.95, ci_method="student-t")
            record_run_timing(engine, run.id, latency_p50_ms=float(rng.normal(40 + 5 * v, 3)),
                              latency_p95_ms=float(rng.normal(90 + 8 * v, 6)), wall_seconds=12.0, n_failed=0)
            run_ids.append((run.id, values))
        if fp.hash not in baseline_ids:
            promote_baseline(engine, run_ids[0][0], by="benchmark", reason=f"baseline under {kb}/{gold}")
            baseline_ids[fp.hash] = run_ids[0][0]
        base_id = baseline_ids[fp.hash]
        base_values = run_ids[0][1] if base_id == run_ids[0][0] else None
        results = []
        for run_id, values in run_ids[1:]:
            reference = base_values if base_values is not None else run_ids[0][1]
            for m, measure in enumerate(MEASURES):
                d = values[m] - reference[m]
                delta, sd = float(d.mean()), float(d.std(ddof=1))
                decision = "regression" if delta < -0.05 else "improvement" if delta > 0.05 else "no_change"
                results.append(ABTestResult(Comparison.from_record({
                    "measure": measure, "baseline_name": f"{RETRIEVER}@base", "candidate_name": f"{RETRIEVER}@cand",
                    "n": queries, "baseline_mean": float(reference[m].mean()),
                    "candidate_mean": float(values[m].mean()),
                    "delta": delta, "delta_ci_low": delta - 1.96 * sd / np.sqrt(queries),
                    "delta_ci_high": delta + 1.96 * sd / np.sqrt(queries), "relative_change": None, "test": "t",
                    "test_method": "paired t-test", "statistic": None, "p_value": 0.01, "p_adjusted": 0.02,
                    "effect_size_dz": delta / sd, "effect_size_ci": [delta / sd - 0.1, delta / sd + 0.1],
                    "effect_size_gz": None, "wins": int((d > 0).sum()), "ties": int((d == 0).sum()),
                    "losses": int((d < 0).sum()), "decision": decision, "reasons": [], "worst_queries": [],
                    "policy": {"alpha": 0.05, "test": "t"}}), baseline_run_id=base_id, candidate_run_id=run_id))
        stored = record_ab_tests(engine, results)
        for result in stored:
            if result.comparison.decision == "regression" and result.comparison.measure == "nDCG@10":
                record_alert(engine, kind="regression", retriever=RETRIEVER, day=at.date(), severity="critical",
                             message=f"Regression: {RETRIEVER} on nDCG@10 ({result.comparison.delta:+.3f})",
                             version=f"v{versions - 1}", measure="nDCG@10", fingerprint_hash=fp.hash,
                             run_id=result.candidate_run_id, ab_test_id=result.id)


def median_ms(repeat: int, action: Callable[[], object]) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = action()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--versions", type=int, default=10)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--db", type=Path, default=None, help="keep the SQLite warehouse here (reused if filled)")
    parser.add_argument("--postgres", default=None, help="a PostgreSQL URL instead of SQLite (filled each time, in "
                        "a schema of its own, dropped after)")
    parser.add_argument("--clients", type=int, default=200, help="concurrent clients of the load (0: no load)")
    parser.add_argument("--seconds", type=float, default=30.0, help="how long each load runs")
    parser.add_argument("--serve", default=None, help=argparse.SUPPRESS)  # the load's server process
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--cache-seconds", type=float, default=5.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve, args.port, args.cache_seconds)
    scratch = tempfile.TemporaryDirectory()
    path = args.db or Path(scratch.name) / "warehouse.db"
    if args.postgres:
        with postgres_schema(args.postgres) as url:
            return measure(args, url, path, scratch)
    return measure(args, f"sqlite:///{path}", path, scratch)


@contextlib.contextmanager
def postgres_schema(base: str) -> Iterator[str]:
    """The URL of a new schema of its own on the PostgreSQL server ``base`` (its ``search_path``), dropped
    after, so the benchmark never touches the database's other tables."""
    import uuid

    import sqlalchemy as sa

    schema = f"dashbench_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(base)
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield f"{base}{'&' if '?' in base else '?'}options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def measure(args: argparse.Namespace, url: str, path: Path, scratch: tempfile.TemporaryDirectory[str]) -> int:
    from fastapi.testclient import TestClient

    from evalops.dashboard import DashboardSettings, create_app

    engine = create_warehouse_engine(url)
    filled = args.postgres is None and path.exists() and path.stat().st_size > 0 and _has_runs(engine)
    if not filled:
        start = time.perf_counter()
        fill(engine, args.days, args.versions, args.queries, np.random.default_rng(20250101))
        print(f"filled {args.days} days x {args.versions} versions x {len(MEASURES)} measures x {args.queries} "
              f"queries in {time.perf_counter() - start:.0f} s ({url.split(':')[0]})")
    # the render itself: no page cache (the load below compares it with the cache)
    client = TestClient(create_app(engine, settings=DashboardSettings(alert_measures=("nDCG@10",),
                                                                      measures=MEASURES, cache_seconds=0)))
    ab = load_ab_tests(engine)
    planted = ab[(ab["decision"] == "regression") & (ab["measure"] == "nDCG@10")]
    regression = (planted if len(planted) else ab).iloc[-1]
    newest = latest_runs(engine)

    def peer_overview():
        runs = latest_runs(engine)
        return [load_aggregates(engine, int(r)) for r in runs["run_id"]]

    def peer_trend(days: int):
        since = newest["logical_date"].max().to_pydatetime() - dt.timedelta(days=days) if days else None
        return measure_history(engine, RETRIEVER, "nDCG@10", since=since)

    def peer_ab():
        load_ab_tests(engine, candidate_run_id=int(regression["candidate_run_id"]))
        return load_paired_scores(engine, int(regression["baseline_run_id"]), int(regression["candidate_run_id"]),
                                  "nDCG@10")

    pages = [
        ("overview", "/", peer_overview),
        ("trend, 90 days", f"/trends?retriever={RETRIEVER}&measure=nDCG%4010&days=90", lambda: peer_trend(90)),
        ("trend, 365 days", f"/trends?retriever={RETRIEVER}&measure=nDCG%4010&days=365", lambda: peer_trend(365)),
        ("trend, all", f"/trends?retriever={RETRIEVER}&measure=nDCG%4010&days=0", lambda: peer_trend(0)),
        ("A/B detail", f"/ab/{int(regression['id'])}", peer_ab),
        ("runs (500 newest)", "/runs", None),
        ("alerts", "/alerts", None),
    ]
    print(f"\n{'page':<20} {'median ms':>10} {'KiB':>8} {'peer ms':>9} {'ratio':>6}  target ≤ {TARGET_MS:.0f} ms")
    worst = 0.0
    for name, url_path, peer in pages:
        client.get(url_path)  # warm
        ms, reply = median_ms(args.repeat, lambda: client.get(url_path))
        assert reply.status_code == 200, (url_path, reply.status_code)
        peer_ms = median_ms(args.repeat, peer)[0] if peer else None
        worst = max(worst, ms)
        print(f"{name:<20} {ms:>10.1f} {len(reply.content) / 1024:>8.1f} "
              f"{(f'{peer_ms:.1f}' if peer_ms is not None else '–'):>9} "
              f"{(f'{ms / peer_ms:.2f}' if peer_ms else '–'):>6}  {'ok' if ms <= TARGET_MS else 'OVER'}")
    print(f"\nslowest page median {worst:.1f} ms ({'within' if worst <= TARGET_MS else 'over'} the target)")
    if args.clients > 0:
        ab_paths = [f"/ab/{int(i)}" for i in ab.sort_values("id")["id"].tail(20)]
        mix = [url_path for _, url_path, _ in pages] + ab_paths
        engine.dispose()
        print(f"\nload: {args.clients} clients for {args.seconds:g} s over {len(mix)} pages (uvicorn, one process)")
        print(f"{'cache':<22} {'requests':>9} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'errors':>7}")
        p95s = {}
        for name, seconds in (("off (peer)", 0.0), ("on", 5.0)):
            latencies, errors = run_load(url, mix, args.clients, args.seconds, seconds)
            p95s[name] = _quantile(latencies, 0.95)
            print(f"{name:<22} {len(latencies):>9} {len(latencies) / args.seconds:>7.0f} "
                  f"{_quantile(latencies, 0.5):>8.0f} {p95s[name]:>8.0f} {max(latencies, default=0):>8.0f} "
                  f"{errors:>7}")
        on = p95s["on"]
        print(f"\np95 with the cache {on:.0f} ms ({'within' if on <= LOAD_TARGET_P95_MS else 'over'} the target of "
              f"{LOAD_TARGET_P95_MS:.0f} ms); p95 ratio on / off {on / max(p95s['off (peer)'], 1e-9):.2f}")
    engine.dispose()
    scratch.cleanup()
    return 0


def _quantile(values: list[float], q: float) -> float:
    return float(np.quantile(values, q)) if values else float("nan")


def serve(url: str, port: int, cache_seconds: float) -> int:
    """The load's server: the dashboard app on 127.0.0.1:``port`` (uvicorn), until it is terminated."""
    import uvicorn

    from evalops.dashboard import DashboardSettings, create_app

    app = create_app(create_warehouse_engine(url), settings=DashboardSettings(
        alert_measures=("nDCG@10",), measures=MEASURES, cache_seconds=cache_seconds))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", backlog=4096)
    return 0


def run_load(url: str, paths: list[str], clients: int, seconds: float, cache_seconds: float) -> tuple[list[float], int]:
    """Latencies (ms) of every answer of ``clients`` closed-loop clients over ``paths`` for ``seconds``."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, __file__, "--serve", url, "--port", str(port),
                               "--cache-seconds", str(cache_seconds)],
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    try:
        return asyncio.run(_load(f"http://127.0.0.1:{port}", paths, clients, seconds))
    finally:
        server.terminate()
        server.wait(timeout=30)


async def _get(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, path: str) -> int:
    """One GET on a kept-alive HTTP/1.1 connection; returns the status once the whole body is read. A
    client this small costs the measuring process little CPU on a 2-core machine (httpx cost more per
    request than the cached pages it measured)."""
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
    if "content-length" in fields:
        await reader.readexactly(int(fields["content-length"]))
    else:  # chunked
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    return int(lines[0].split()[1])


async def _load(base: str, paths: list[str], clients: int, seconds: float) -> tuple[list[float], int]:
    host, port = base.removeprefix("http://").split(":")
    for _ in range(600):  # the server is up when it answers
        try:
            reader, writer = await asyncio.open_connection(host, int(port))
            await _get(reader, writer, "/healthz")
            writer.close()
            break
        except OSError:
            await asyncio.sleep(0.1)
    reader, writer = await asyncio.open_connection(host, int(port), limit=2**22)
    for path in paths:  # each page once before the clock starts, as the table above warms each page
        await _get(reader, writer, path)
    writer.close()
    latencies: list[float] = []
    errors = 0
    stop = time.perf_counter() + seconds

    async def one(n: int) -> None:
        nonlocal errors
        reader, writer = await asyncio.open_connection(host, int(port), limit=2**22)
        i = n
        while time.perf_counter() < stop:
            start = time.perf_counter()
            status = await _get(reader, writer, paths[i % len(paths)])
            latencies.append((time.perf_counter() - start) * 1000.0)
            errors += status != 200
            i += 1
        writer.close()

    await asyncio.gather(*(one(n) for n in range(clients)))
    return latencies, errors


def _has_runs(engine) -> bool:
    from sqlalchemy import inspect, text

    if "eval_runs" not in inspect(engine).get_table_names():
        return False
    with engine.connect() as conn:
        return bool(conn.execute(text("SELECT count(*) FROM eval_runs")).scalar())


if __name__ == "__main__":
    sys.exit(main())
