"""The daily loop against its own core: ``evalops run`` of a project with run-file versions, whole process,
against ``evalops evaluate`` of the same run files plus a bulk write of the same per-query rows.

    python benchmarks/pipeline_scale.py scifact [--versions 2]
    python benchmarks/pipeline_scale.py generated [--queries 20000|100000] [--versions 3] [--depth 100]
                                                  [--kb-docs 110000] [--postgres URL]
    python benchmarks/pipeline_scale.py kb [--docs 1000000]
    (any case: --no-breakdown skips the second, instrumented run; --profile FILE writes its cProfile)

``scifact``: a project over ``$EVALOPS_SHARED_DATA/scifact`` (gold set and knowledge base) whose versions are
the real BM25 run file ``runs/bm25.trec`` (every version reads it; the other run there covers 30 queries). ``generated``: a gold set of
``--queries`` queries (5 judgments each), a knowledge base of ``--kb-docs`` short documents and ``--versions``
run files of ``--depth`` results per query. The warehouse is SQLite in the project, or a scratch database on
the PostgreSQL server of ``--postgres`` (created and dropped).

Figures, each measured in this run on this machine:

* ``evalops run`` as one process: wall, CPU (user + system of the process and its children) and peak RSS;
* the peer: ``evalops evaluate QRELS RUN -m ... --per-query --format csv`` of every run file (whole
  processes, summed) plus a bulk write of the same number of per-query rows (``COPY`` on PostgreSQL, one
  ``executemany`` on SQLite) into a scratch table, timed in this process;
* ``evalops run`` twice: the first run of the project, and the next day's on the same inputs (which reuses
  the input contracts' outcomes, :mod:`evalops.pipeline.validated`: the daily case);
* the breakdown by stage: a third run (the day after) in a child process that calls ``run_local`` with a
  progress callback, each stage's wall and CPU seconds;
* the rows the first run stored per second of its whole process, against the peer's bulk write alone;
* ``kb``: the knowledge-base snapshot of ``--docs`` short documents against reading and hashing the file's
  bytes in one pass (SHA-256): a first snapshot of new bytes (``load_snapshot``), the snapshot step on new
  bytes, and the snapshot step on the same bytes the next day (:mod:`evalops.pipeline.known_kb`), each in a
  child process with its imports done before the clock starts; all three must give the same snapshot id.

Targets (issue "the daily loop at production scale"): SciFact with two versions <= 8 s CPU whole-process with
compiled bytecode; generated 20,000 x 3 x 100: run wall and CPU <= 2x the peer, peak RSS <= 1.5 GB; KB
snapshot <= 3x read+hash. Bytecode: when ``PYTHONDONTWRITEBYTECODE`` is set the children get a private
``PYTHONPYCACHEPREFIX`` (a warm-up process compiles first), so figures are those of a compiled environment.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
MEASURES = ("nDCG@10", "P@10", "R@100", "RR@10")
DAY, NEXT_DAY, BREAKDOWN_DAY = "2024-06-01", "2024-06-02", "2024-06-03"


# -- measuring a child process ---------------------------------------------------------------------


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if env.pop("PYTHONDONTWRITEBYTECODE", None) is not None and "PYTHONPYCACHEPREFIX" not in env:
        env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "evalops-bench-pycache")
    for key in [k for k in env if k.startswith("EVALOPS_") and k != "EVALOPS_SHARED_DATA"]:
        env.pop(key)
    return env


def measure(cmd: list[str], cwd: Path | None = None, stdout: int | None = subprocess.DEVNULL) -> dict:
    """Wall, CPU (user + system) and peak RSS of ``cmd`` run to completion (raises on a non-zero exit)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=child_env(), stdout=stdout, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 4):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{err[-3000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}


def evalops(*args: str) -> list[str]:
    return [PYTHON, "-c", "import sys; from evalops.cli import main; sys.exit(main())", *args]


# What a run imports (the pipeline's steps and the libraries they load on first use): importing them once
# before anything is measured compiles their bytecode when the environment does not have it yet, so no
# measured process pays for compiling (the `--help` of a warm-up would only compile the CLI).
WARM_UP = """
import great_expectations, pandas, pyarrow.parquet, scipy.stats, sqlalchemy, psycopg
import evalops.cli, evalops.contracts._gx, evalops.pipeline.local, evalops.reports, evalops.stats, evalops.warehouse
"""


def warm_up() -> None:
    measure([PYTHON, "-m", "compileall", "-q", str(ROOT / "evalops")])  # the modules steps import on first use
    measure([PYTHON, "-c", WARM_UP])
    measure(evalops("--help"))


# -- projects --------------------------------------------------------------------------------------


def write_project(root: Path, gold: Path, kb: Path, runs: list[Path], warehouse: str | None) -> None:
    entries = "".join(
        f"  - {{name: bench, version: '{i + 1}.0', adapter: run_file, deployed: true, owner: bench, "
        f"params: {{path: {p}}}}}\n" for i, p in enumerate(runs))
    (root / "retrievers.yaml").write_text("retrievers:\n" + entries)
    lines = [f"gold_set: {{path: {gold}}}", f"knowledge_base: {{path: {kb}}}", "registry: retrievers.yaml",
             f"measures: [{', '.join(MEASURES)}]", "log_sample_size: 0"]
    if warehouse:
        lines.append(f"warehouse_url: {warehouse}")
    (root / "evalops.yaml").write_text("\n".join(lines) + "\n")


def generate(root: Path, n_queries: int, n_versions: int, depth: int, kb_docs: int) -> tuple[Path, Path, list[Path]]:
    """A BEIR gold set, a corpus.jsonl and run files; every judged document is in the knowledge base."""
    rng = np.random.default_rng(27)
    gold, kb = root / "gold", root / "kb"
    gold.mkdir()
    kb.mkdir()
    docs = np.array([f"d{i}" for i in range(kb_docs)], dtype=object)
    with (kb / "corpus.jsonl").open("w") as out:
        for i, d in enumerate(docs.tolist()):
            out.write(json.dumps({"_id": d, "title": f"title {i}", "text": f"short document number {i} of the base"}))
            out.write("\n")
    qids = [f"q{i}" for i in range(n_queries)]
    with (gold / "queries.jsonl").open("w") as out:
        for i, q in enumerate(qids):
            out.write(json.dumps({"_id": q, "text": f"question {i} about things"}))
            out.write("\n")
    judged = rng.integers(0, kb_docs, size=(n_queries, 5))
    with (gold / "qrels.tsv").open("w") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        for q, row in zip(qids, judged.tolist()):
            for j, d in enumerate(dict.fromkeys(row)):  # the first judgment is relevant
                out.write(f"{q}\t{docs[d]}\t{int(rng.integers(1 if j == 0 else 0, 3))}\n")
    runs = []
    for v in range(n_versions):
        path = root / f"v{v + 1}.trec"
        picks = rng.integers(0, kb_docs, size=(n_queries, depth))
        picks[:, : 3] = judged[:, :3] if v % 2 == 0 else judged[:, 2:5]  # some hits, different per version
        scores = np.round(np.sort(rng.random((n_queries, depth)), axis=1)[:, ::-1] * 20, 4)
        with path.open("w") as out:
            for qi, q in enumerate(qids):
                ids = dict.fromkeys(picks[qi].tolist())
                out.write("".join(f"{q} Q0 {docs[d]} {r + 1} {s} v{v + 1}\n"
                                  for r, (d, s) in enumerate(zip(ids, scores[qi].tolist()))))
        runs.append(path)
    return gold / "qrels.tsv", kb, runs


# -- the peer --------------------------------------------------------------------------------------


def bulk_write(url: str | None, rows: int) -> dict:
    """Seconds (wall, CPU of this process) to write ``rows`` (query_id, measure, value) rows in bulk."""
    rng = np.random.default_rng(1)
    data = [(f"q{i // len(MEASURES)}", MEASURES[i % len(MEASURES)], float(v)) for i, v in enumerate(rng.random(rows))]
    cpu, start = time.process_time(), time.perf_counter()
    if url:
        import psycopg

        with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://", 1)) as conn:
            conn.execute("CREATE TEMP TABLE peer_scores (run_id int, query_id text, measure text, value float8)")
            with conn.cursor().copy("COPY peer_scores (run_id, query_id, measure, value) FROM STDIN") as copy:
                for q, m, v in data:
                    copy.write_row((1, q, m, v))
            conn.commit()
    else:
        import sqlite3

        with tempfile.TemporaryDirectory() as tmp:
            conn = sqlite3.connect(Path(tmp) / "peer.db")
            conn.execute("CREATE TABLE peer_scores (run_id int, query_id text, measure text, value real)")
            conn.executemany("INSERT INTO peer_scores VALUES (1, ?, ?, ?)", data)
            conn.commit()
            conn.close()
    return {"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu}


def peer(qrels: Path, runs: list[Path], url: str | None, n_queries: int) -> dict:
    total = {"wall": 0.0, "cpu": 0.0, "rss_mb": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        for i, run in enumerate(runs):
            out = Path(tmp) / f"per-query-{i}.csv"
            m = measure(evalops("evaluate", str(qrels), str(run), *[a for x in MEASURES for a in ("-m", x)],
                                "--per-query", "--format", "csv", "-o", str(out)))
            total["wall"] += m["wall"]
            total["cpu"] += m["cpu"]
            total["rss_mb"] = max(total["rss_mb"], m["rss_mb"])
    write = bulk_write(url, n_queries * len(MEASURES) * len(runs))
    return {**total, "write_wall": write["wall"], "write_cpu": write["cpu"],
            "wall": total["wall"] + write["wall"], "cpu": total["cpu"] + write["cpu"]}


# -- the breakdown ---------------------------------------------------------------------------------

STAGES = r"""
import json, sys, time
from evalops.config import load_config
from evalops.pipeline import RunContext, run_local
marks = []
def say(stage):
    marks.append((stage, time.perf_counter(), time.process_time()))
cfg = load_config(sys.argv[1], environ={})
say("start")
run_local(cfg, RunContext.for_day(sys.argv[2]), progress=say)
say("end")
out = {}
for (stage, w0, c0), (_, w1, c1) in zip(marks, marks[1:]):
    key = stage.split(" ")[0] if stage.startswith(("scoring", "comparing")) else stage
    wall, cpu = out.get(key, (0.0, 0.0))
    out[key] = (wall + w1 - w0, cpu + c1 - c0)
print(json.dumps(out))
"""


def breakdown(project: Path, day: str, profile: str | None) -> dict:
    cmd = [PYTHON] + (["-m", "cProfile", "-o", profile] if profile else []) + ["-c", STAGES, str(project), day]
    if profile:  # cProfile cannot run -c; go through a file
        script = project / "_stages.py"
        script.write_text(STAGES)
        cmd = [PYTHON, "-m", "cProfile", "-o", profile, str(script), str(project), day]
    out = subprocess.run(cmd, env=child_env(), capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(f"breakdown run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- cases -----------------------------------------------------------------------------------------


def say_now(label: str, run: dict) -> None:
    """A figure as soon as it is measured (stderr), so that a long case that is stopped still shows it."""
    print(f"  ({label}: wall {run['wall']:.2f} s, CPU {run['cpu']:.2f} s, peak RSS {run['rss_mb']:.0f} MB)",
          file=sys.stderr, flush=True)


def report_loop(name: str, project: Path, qrels: Path, runs: list[Path], url: str | None, n_queries: int,
                args: argparse.Namespace) -> int:
    warm_up()
    first = measure(evalops("run", "--project", str(project), "--date", DAY))
    stored = stored_scores(project)
    say_now("evalops run, first", first)
    daily = measure(evalops("run", "--project", str(project), "--date", NEXT_DAY))
    say_now("evalops run, next day", daily)
    base = peer(qrels, runs, url, n_queries)
    print(f"{name}: {n_queries:,} queries x {len(runs)} versions, warehouse {'PostgreSQL' if url else 'SQLite'}")
    for label, run in (("evalops run, first", first), ("evalops run, next day", daily)):
        print(f"  {label:<22} wall {run['wall']:7.2f} s  CPU {run['cpu']:7.2f} s  peak RSS {run['rss_mb']:7.0f} MB  "
              f"(x{run['wall'] / base['wall']:.2f} wall, x{run['cpu'] / base['cpu']:.2f} CPU)")
    print(f"  {'evaluate x' + str(len(runs)) + ' + write':<22} wall {base['wall']:7.2f} s  CPU {base['cpu']:7.2f} s  "
          f"peak RSS {base['rss_mb']:7.0f} MB  (write: {base['write_wall']:.2f} s wall, "
          f"{n_queries * len(MEASURES) * len(runs):,} rows)")
    print("  (the next day's run reuses the input contracts' outcomes: same content, rules and checks)")
    copy_rows = n_queries * len(MEASURES) * len(runs)
    print(f"  into the warehouse: {stored:,} per-query rows by the first run, {stored / first['wall']:,.0f} rows/s "
          f"over its whole process; the peer's {'COPY' if url else 'executemany'} alone "
          f"{copy_rows / base['write_wall']:,.0f} rows/s")
    if not args.no_breakdown:
        stages = breakdown(project, BREAKDOWN_DAY, args.profile)
        print("  by stage (a third run, the day after; wall / CPU seconds):")
        for stage, (wall, cpu) in stages.items():
            print(f"    {stage:<32} {wall:7.2f} {cpu:7.2f}")
    verdicts = []
    for label, run in (("first", first), ("next day", daily)):
        if name == "scifact":
            ok = run["cpu"] <= 8.0
            verdicts.append(ok)
            print(f"  target, {label} (<= 8 s CPU whole-process): {'met' if ok else 'NOT MET'}")
        else:
            ok = run["wall"] <= 2 * base["wall"] and run["cpu"] <= 2 * base["cpu"] and run["rss_mb"] <= 1536
            verdicts.append(ok)
            print(f"  target, {label} (<= 2x wall and CPU, peak RSS <= 1.5 GB): {'met' if ok else 'NOT MET'}")
    return 0 if all(verdicts) else 1


def stored_scores(project: Path) -> int:
    """Per-query score rows in the project's warehouse (every run so far)."""
    from sqlalchemy import create_engine, text

    sys.path.insert(0, str(ROOT))
    from evalops.config import load_config
    from evalops.warehouse.config import url_for

    engine = create_engine(url_for(load_config(project, environ={})))
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM query_scores")).scalar_one())
    finally:
        engine.dispose()


def scratch_database(server_url: str):
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    sys.path.insert(0, str(ROOT))
    from evalops.warehouse.config import normalise_url

    server = make_url(normalise_url(server_url))
    name = f"evalops_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return server.set(database=name).render_as_string(hide_password=False), drop


def case_loop(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project = root / "project"
        project.mkdir()
        if args.case == "scifact":
            data = Path(os.environ.get("EVALOPS_SHARED_DATA", ROOT.parent / "shared" / "data")) / "scifact"
            if not data.is_dir():
                data = Path("/work/shared/data/scifact")
            runs = [data / "runs" / "bm25.trec"] * args.versions
            qrels, gold, kb, n = data / "qrels.tsv", data, data, 300
        else:
            qrels, kb, runs = generate(root, args.queries, args.versions, args.depth, args.kb_docs)
            gold, n = qrels.parent, args.queries
        drop, url = None, None
        if args.postgres:
            url, drop = scratch_database(args.postgres)
        try:
            write_project(project, gold, kb, runs, url)
            return report_loop(args.case, project, qrels, runs, url, n, args)
        finally:
            if drop:
                drop()


KB_CHILD = r"""
import sys, time
from pathlib import Path
from evalops.knowledge import load_snapshot
from evalops.pipeline.known_kb import snapshot_of_file  # imported before the clock starts, as in a run
cpu, start = time.process_time(), time.perf_counter()
if len(sys.argv) > 2:  # the snapshot step's way: the file's bytes hashed, a snapshot of the same bytes reused
    snap = snapshot_of_file(sys.argv[1], Path(sys.argv[2]))
else:
    snap = load_snapshot(sys.argv[1])
print(time.perf_counter() - start, time.process_time() - cpu, snap.snapshot_id, len(snap))
"""


def case_kb(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        with corpus.open("w") as out:
            for i in range(args.docs):
                out.write(json.dumps({"_id": f"doc-{i}", "title": "", "text": f"a short document, number {i}"}) + "\n")
        start, cpu0 = time.perf_counter(), time.process_time()
        digest = hashlib.sha256()
        with corpus.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
        base, base_cpu = time.perf_counter() - start, time.process_time() - cpu0
        print(f"kb: {args.docs:,} documents, {corpus.stat().st_size / 1e6:.0f} MB (load average "
              f"{', '.join(f'{x:.1f}' for x in os.getloadavg())})")
        print(f"  read + SHA-256 of the bytes      {base:7.2f} s wall  {base_cpu:7.2f} s CPU")
        ids, met = set(), {}
        for label, extra in (("load_snapshot (new bytes)", []),
                             ("snapshot step, new bytes", [str(Path(tmp) / "known")]),
                             ("snapshot step, unchanged bytes", [str(Path(tmp) / "known")])):
            out = subprocess.run([PYTHON, "-c", KB_CHILD, str(corpus), *extra], env=child_env(), capture_output=True,
                                 text=True, check=True)
            wall, cpu, snapshot_id, n = out.stdout.split()
            ids.add((snapshot_id, int(n)))
            ratio = float(wall) / base
            met[label] = ratio <= 3
            print(f"  {label:31s} {float(wall):7.2f} s wall  {float(cpu):7.2f} s CPU  "
                  f"({ratio:.1f}x wall, {float(cpu) / max(base_cpu, 1e-9):.1f}x CPU): {'met' if met[label] else 'NOT MET'}")
        assert len(ids) == 1, f"the snapshots differ: {ids}"
        print(f"  the same snapshot each time: {ids.pop()[0]}; target (<= 3x): first snapshot "
              f"{'met' if met['load_snapshot (new bytes)'] else 'NOT MET'}, daily snapshot of unchanged bytes "
              f"{'met' if met['snapshot step, unchanged bytes'] else 'NOT MET'}")
        return 0 if all(met.values()) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", choices=["scifact", "generated", "kb"])
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--versions", type=int, default=None)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--kb-docs", type=int, default=110_000)
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--postgres", default=None, help="a PostgreSQL server URL (a scratch database is made)")
    parser.add_argument("--no-breakdown", action="store_true")
    parser.add_argument("--profile", default=None, help="write the breakdown run's cProfile here")
    args = parser.parse_args()
    if args.versions is None:
        args.versions = 2 if args.case == "scifact" else 3
    if args.case == "kb":
        return case_kb(args)
    return case_loop(args)


if __name__ == "__main__":
    raise SystemExit(main())
