"""Throughput of the OpenAI-compatible judge against a local fake server that answers in 50 ms, and the cache.

Target: at a concurrency of 16 the judge labels items at least 10x faster than serially (concurrency 1)
through the same adapter; the ideal ratio is 16. Printed next to it:

* a peer design: asyncio + a semaphore on ``httpx.AsyncClient`` posting the same bodies (no retries, no
  parsing, no budget), to show what the adapter's thread pool, transport (deadline, retries) and strict parsing cost;
* the judgment cache: the same items judged again through ``CachedJudge`` over a SQLite warehouse, the
  requests it sends (0) and its time.

Run: ``python benchmarks/judge_throughput.py [--items 160] [--concurrency 16] [--latency 0.05]``.
Exit code 1 when the ratio misses 10x, or the re-run sends a request, or a label is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import httpx

from evalops.judges import JudgeItem, OpenAIJudge, OpenAISettings
from evalops.judges.cache import CachedJudge
from evalops.judges.fakeserver import FakeChatServer

TARGET_RATIO = 10.0


def items(n: int) -> list[JudgeItem]:
    return [JudgeItem("context_relevance", f"vitamin d question {i}", context=f"Vitamin D passage {i} on bone.")
            for i in range(n)]


def time_judge(url: str, batch: list[JudgeItem], concurrency: int) -> tuple[float, int]:
    settings = OpenAISettings(base_url=url, model="fake-judge", max_concurrency=concurrency, request_timeout=10)
    with OpenAIJudge(settings, api_key="bench") as judge:
        start = time.perf_counter()
        out = judge.judge(batch)
        seconds = time.perf_counter() - start
    return seconds, sum(not j.ok for j in out)


def time_peer(url: str, batch: list[JudgeItem], concurrency: int) -> float:
    settings = OpenAISettings(base_url=url, model="fake-judge")
    with OpenAIJudge(settings, api_key="bench") as judge:
        bodies = [judge.body(item) for item in batch]

    async def run() -> float:
        sem = asyncio.Semaphore(concurrency)
        limits = httpx.Limits(max_connections=concurrency)
        async with httpx.AsyncClient(base_url=url + "/", limits=limits, timeout=10) as client:
            async def one(body):
                async with sem:
                    response = await client.post("chat/completions", json=body)
                    response.raise_for_status()

            start = time.perf_counter()
            await asyncio.gather(*(one(b) for b in bodies))
            return time.perf_counter() - start

    return asyncio.run(run())


def time_cache(url: str, batch: list[JudgeItem], concurrency: int, server: FakeChatServer) -> dict[str, float]:
    from evalops.warehouse import create_warehouse_engine, upgrade
    from evalops.warehouse.judgments import WarehouseJudgmentStore

    settings = OpenAISettings(base_url=url, model="fake-judge", max_concurrency=concurrency, request_timeout=10)
    with tempfile.TemporaryDirectory() as folder:
        engine = create_warehouse_engine(f"sqlite:///{Path(folder) / 'warehouse.db'}")
        upgrade(engine)
        out = {}
        for label in ("first run", "re-run"):
            before = server.requests
            with OpenAIJudge(settings, api_key="bench") as inner:
                judge = CachedJudge(inner, WarehouseJudgmentStore(engine))
                start = time.perf_counter()
                judge.judge(batch)
                out[label] = time.perf_counter() - start
            out[f"{label} requests"] = server.requests - before
        engine.dispose()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=160)
    parser.add_argument("--serial-items", type=int, default=32, help="items timed serially (scaled to --items)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    batch = items(args.items)
    with FakeChatServer(latency=args.latency) as server:
        serial, serial_missing = time_judge(server.url, batch[: args.serial_items], 1)
        serial_scaled = serial * args.items / args.serial_items
        concurrent, missing = time_judge(server.url, batch, args.concurrency)
        peer = time_peer(server.url, batch, args.concurrency)
        cache = time_cache(server.url, batch, args.concurrency, server)
    ratio = serial_scaled / concurrent
    ideal = args.items * args.latency / args.concurrency
    rows = [
        ("serial (concurrency 1), scaled", serial_scaled, args.items / serial_scaled),
        (f"evalops judge, concurrency {args.concurrency}", concurrent, args.items / concurrent),
        (f"peer: asyncio + semaphore, {args.concurrency}", peer, args.items / peer),
        ("cache: first run (SQLite warehouse)", cache["first run"], args.items / cache["first run"]),
        ("cache: re-run", cache["re-run"], args.items / cache["re-run"]),
    ]
    print(f"{args.items} items, {args.latency * 1000:.0f} ms per answer; ideal at concurrency {args.concurrency}: "
          f"{ideal:.2f} s")
    print(f"{'':44} {'seconds':>9} {'items/s':>9}")
    for name, seconds, rate in rows:
        print(f"{name:44} {seconds:9.2f} {rate:9.1f}")
    print(f"speed-up over serial: {ratio:.1f}x (target >= {TARGET_RATIO:.0f}x); evalops / peer time: "
          f"{concurrent / peer:.2f}")
    print(f"requests: first run {cache['first run requests']}, re-run {cache['re-run requests']}; "
          f"re-run / first run time: {cache['re-run'] / cache['first run']:.3f}")
    failed = []
    if ratio < TARGET_RATIO:
        failed.append(f"speed-up {ratio:.1f}x < {TARGET_RATIO:.0f}x")
    if cache["re-run requests"]:
        failed.append(f"the re-run sent {cache['re-run requests']} requests")
    if missing or serial_missing:
        failed.append(f"{missing + serial_missing} labels missing")
    if failed:
        print("FAIL: " + "; ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
