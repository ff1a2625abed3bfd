"""``evalops evaluate --memory-budget`` as a bound on the whole process: peak RSS against the floor plus the
budget, on a generated gzip run of ``--queries`` queries x 100 documents (2 judgments a query).

    python benchmarks/memory_budget.py [--queries 200000] [--budgets 256MB,512MB] [--workdir DIR]

The data come from ``benchmarks/ingest_vs_peers.py``'s generator (run grouped by query, gzip level 1; never
committed). Each budget is one whole ``evalops evaluate`` process: its peak RSS from ``wait4``, the floor
and the shares it prints on stderr (``memory budget ... above a floor of ...``), or the refusal when the
judgments alone exceed the budget. Target (issue "the daily loop at production scale"): peak RSS <= the
budget plus the printed floor.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from ingest_vs_peers import generated  # noqa: E402  (the shared generator of large runs)

EVALOPS = [sys.executable, "-c", "import sys; from evalops.cli import main; sys.argv[0] = 'evalops'; main()"]
CHILD_ENV = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
MB = 1 << 20


def run(cmd: list[str]) -> tuple[int, float, float, float, str]:
    """(exit code, wall s, CPU s, peak RSS MB, stderr) of one whole process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO, env=CHILD_ENV)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    return (os.waitstatus_to_exitcode(status), time.perf_counter() - start, usage.ru_utime + usage.ru_stime,
            usage.ru_maxrss / 1024, err)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=200_000)
    parser.add_argument("--budgets", default="256MB,512MB")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/evalops-memory-budget-bench"))
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")
    t = time.perf_counter()
    run_path, qrels = generated(args.workdir, args.queries, gz=True, judged=2)
    print(f"data: {args.queries:,} queries x 100 documents, gzip {run_path.stat().st_size / 1e6:.0f} MB, "
          f"{2 * args.queries:,} judgments (ready in {time.perf_counter() - t:.0f} s)")
    for budget in args.budgets.split(","):
        cmd = EVALOPS + ["evaluate", str(qrels), str(run_path), "-m", "nDCG@10", "-m", "AP", "--format", "json",
                         "--memory-budget", budget]
        code, wall, cpu, peak, err = run(cmd)
        lines = [line for line in err.splitlines() if "memory budget" in line]
        note = lines[-1] if lines else err.strip()[-300:]
        if code == 0 and "above a floor of " in note:
            floor = float(note.split("above a floor of ")[1].split(" MB")[0])
            size = float(budget.upper().rstrip("B").rstrip("M").rstrip("G")) * (1024 if budget.upper().endswith("GB") else 1)
            verdict = "met" if peak <= floor + size else "NOT MET"
            print(f"--memory-budget {budget}: peak {peak:.0f} MB, floor {floor:.0f} MB: peak <= floor + budget "
                  f"({floor + size:.0f} MB): {verdict}; {wall:.0f} s wall, {cpu:.0f} s CPU")
        else:
            print(f"--memory-budget {budget}: exit {code}, peak {peak:.0f} MB, {wall:.0f} s wall")
        print(f"    {note}")


if __name__ == "__main__":
    main()
