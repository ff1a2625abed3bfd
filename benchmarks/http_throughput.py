"""Throughput of the HTTP retriever adapter against a local service that answers in 50 ms.

Target (issue 6): 1,000 queries at a concurrency of 16 in under 5 s. The ideal is 1000 / 16 x 50 ms = 3.1 s.
Printed next to it:

* serial (concurrency 1) through the same adapter, on ``--serial-queries`` queries (default 100) and
  scaled to 1,000 (pass ``--serial-queries 1000`` to time all of them, about 55 s);
* a peer design: asyncio + a semaphore on ``httpx.AsyncClient`` (no retries, no validation), to show what
  the adapter's thread pool costs against it.

Run: ``python benchmarks/http_throughput.py [--queries 1000] [--concurrency 16] [--latency 0.05]``.
Exit code 1 when the 5 s target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

import httpx

from evalops.retrievers import HttpRetriever, LocalService, Query, retrieve_run

TARGET_SECONDS = 5.0


def make_handler(latency: float):
    def handle(body, headers):
        time.sleep(latency)
        qid = body["query_id"]
        return 200, {"query_id": qid, "results": [{"doc_id": f"{qid}-{r}", "score": 10.0 - r} for r in range(body["k"])]}

    return handle


def time_adapter(url: str, queries: list[Query], concurrency: int, k: int) -> float:
    with HttpRetriever(url, concurrency=concurrency, timeout=10) as retriever:
        start = time.perf_counter()
        result = retrieve_run(retriever, queries, k, failure_budget=0.0, batch_size=max(64, 4 * concurrency))
        elapsed = time.perf_counter() - start
    if len(result.run) != len(queries) * k:
        raise SystemExit(f"the adapter returned {len(result.run)} rows, expected {len(queries) * k}")
    return elapsed


async def _async_peer(url: str, queries: list[Query], concurrency: int, k: int) -> int:
    sem = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=10, limits=limits) as client:

        async def one(q: Query) -> int:
            async with sem:
                resp = await client.post(url, json={"query_id": q.id, "query": q.text, "k": k})
                return len(resp.json()["results"])

        return sum(await asyncio.gather(*(one(q) for q in queries)))


def time_async_peer(url: str, queries: list[Query], concurrency: int, k: int) -> float:
    start = time.perf_counter()
    rows = asyncio.run(_async_peer(url, queries, concurrency, k))
    elapsed = time.perf_counter() - start
    if rows != len(queries) * k:
        raise SystemExit(f"the asyncio peer got {rows} rows, expected {len(queries) * k}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.05, help="service answer time in seconds")
    ap.add_argument("--serial-queries", type=int, default=100)
    ap.add_argument("-k", type=int, default=10)
    args = ap.parse_args(argv)

    queries = [Query(f"q{i}", f"benchmark query {i}") for i in range(args.queries)]
    with LocalService(make_handler(args.latency)) as svc:
        time_adapter(svc.url, queries[:32], args.concurrency, args.k)  # warm-up: threads, connections
        concurrent = time_adapter(svc.url, queries, args.concurrency, args.k)
        peer = time_async_peer(svc.url, queries, args.concurrency, args.k)
        n_serial = min(args.serial_queries, args.queries)
        serial_part = time_adapter(svc.url, queries[:n_serial], 1, args.k)
    serial = serial_part * args.queries / n_serial
    ideal = args.queries / args.concurrency * args.latency
    scaled = "" if n_serial == args.queries else f" (measured on {n_serial} queries, scaled)"
    print(f"{args.queries} queries, service latency {args.latency * 1000:.0f} ms, k={args.k}")
    print(f"  adapter, concurrency {args.concurrency:>3}: {concurrent:6.2f} s  ({args.queries / concurrent:6.0f} q/s; ideal {ideal:.2f} s)")
    print(f"  adapter, serial          : {serial:6.2f} s  ({args.queries / serial:6.0f} q/s){scaled}")
    print(f"  asyncio+semaphore peer   : {peer:6.2f} s  ({args.queries / peer:6.0f} q/s)")
    print(f"  ratio serial / concurrent: {serial / concurrent:.1f}x")
    print(f"  ratio adapter / asyncio  : {concurrent / peer:.2f}")
    ok = concurrent < TARGET_SECONDS
    print(f"  target < {TARGET_SECONDS:.0f} s: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
