"""``evalops compare`` as a whole process: its CPU and peak memory against ``evalops evaluate`` of the two
runs (SciFact) and against a plain script computing the same per-query scores, t-test, Wilcoxon test and
bootstrap interval (``benchmarks/compare_peer.py``) on 20,000 generated query pairs.

    python benchmarks/compare_scale.py [--queries 20000] [--repeat 3] [--workdir /tmp/evalops-compare-bench]

Figures (user + system CPU seconds and peak RSS of each child from ``wait4``; the median of ``--repeat`` runs,
children with compiled bytecode):

* SciFact (``$EVALOPS_SHARED_DATA`` or ``../shared/data``): ``evalops compare qrels bm25.trec
  itsumida-te3large-zerank1-top15.trec -m nDCG@10`` against ``evalops evaluate`` of each run file (each
  alone, and the two summed), and which of scipy, pandas and pyarrow the comparison imported.
* generated: ``--queries`` queries (5 judgments each, grades 0-2), two runs of 100 documents per query
  (the candidate re-scores the baseline's pool with noise), compare (default rule and ``--test wilcoxon``)
  against the peer script.

Targets (issue "the daily loop at production scale"): SciFact compare CPU <= 1.5x evaluate of the two runs;
generated compare within 1.3x the peer's CPU and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
EVALOPS = [PYTHON, "-c", "import sys; from evalops.cli import main; sys.argv[0] = 'evalops'; main()"]
DATA = Path(os.environ.get("EVALOPS_SHARED_DATA", REPO.parent / "shared" / "data"))
CHILD_ENV = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
CHILD_ENV.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled bytecode, as an installed tool runs


def run(cmd: list[str]) -> tuple[float, float, str]:
    """(CPU seconds, peak RSS MB, stdout) of one whole process, from its own ``wait4`` usage."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, env=CHILD_ENV)
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 4):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err.decode()[-2000:]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.decode()


def median_of(cmd: list[str], repeat: int) -> tuple[float, float, str]:
    runs = [run(cmd) for _ in range(repeat)]
    return (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs), runs[-1][2])


def generate(folder: Path, n_queries: int, depth: int = 100, pool: int = 150, seed: int = 11) -> tuple[Path, Path, Path]:
    """qrels (5 judgments a query) and two runs of ``depth`` documents a query out of a pool of ``pool``."""
    qrels, base, cand = folder / f"qrels-{n_queries}.txt", folder / f"base-{n_queries}.trec", folder / f"cand-{n_queries}.trec"
    if qrels.exists() and base.exists() and cand.exists():
        return qrels, base, cand
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    latent = rng.random((n_queries, pool))
    with qrels.open("w") as fq:
        for q in range(n_queries):
            docs = rng.choice(pool, 5, replace=False)
            grades = rng.integers(0, 3, 5)
            fq.write("".join(f"q{q} 0 d{q}-{j} {g}\n" for j, g in zip(docs.tolist(), grades.tolist())))
    for path, noise in ((base, 0.0), (cand, 0.3)):
        scores = latent + noise * rng.random((n_queries, pool))
        top = np.argsort(-scores, axis=1)[:, :depth]
        with path.open("w") as fr:
            for q in range(n_queries):
                row = scores[q]
                fr.write("".join(f"q{q} Q0 d{q}-{j} {r} {row[j]:.6f} {path.stem}\n"
                                 for r, j in enumerate(top[q].tolist(), start=1)))
    return qrels, base, cand


IMPORTS = (
    "import sys; sys.argv = ['evalops'] + sys.argv[1:]\n"
    "from evalops.cli import main\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
    "print(sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'pandas', 'pyarrow'}), file=sys.stderr)\n"
)


def case_scifact(repeat: int) -> None:
    root = DATA / "scifact"
    qrels, bm25, other = root / "qrels.tsv", root / "runs" / "bm25.trec", root / "runs" / "itsumida-te3large-zerank1-top15.trec"
    if not qrels.exists():
        print(f"SciFact: {root} not found (set EVALOPS_SHARED_DATA)")
        return
    compare = EVALOPS + ["compare", str(qrels), str(bm25), str(other), "-m", "nDCG@10", "--format", "json"]
    run(compare)  # warm-up: bytecode
    c_cpu, c_rss, _ = median_of(compare, repeat)
    e1_cpu, e1_rss, _ = median_of(EVALOPS + ["evaluate", str(qrels), str(bm25), "-m", "nDCG@10", "--format", "json"], repeat)
    e2_cpu, e2_rss, _ = median_of(EVALOPS + ["evaluate", str(qrels), str(other), "-m", "nDCG@10", "--format", "json"], repeat)
    probe = subprocess.run([PYTHON, "-c", IMPORTS] + compare[3:], capture_output=True, text=True, cwd=REPO, env=CHILD_ENV)
    imported = probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else "?"
    print("## SciFact: evalops compare (bm25 vs itsumida, nDCG@10) against evalops evaluate")
    print(f"  compare                       {c_cpu:6.2f} s CPU  {c_rss:6.0f} MB peak  (imports of scipy/pandas/pyarrow: {imported})")
    print(f"  evaluate bm25.trec            {e1_cpu:6.2f} s CPU  {e1_rss:6.0f} MB peak")
    print(f"  evaluate itsumida...trec      {e2_cpu:6.2f} s CPU  {e2_rss:6.0f} MB peak")
    print(f"  compare / (evaluate + evaluate) CPU: {c_cpu / (e1_cpu + e2_cpu):.2f}x; compare / one evaluate: "
          f"{c_cpu / e1_cpu:.2f}x (target <= 1.5x)")


def case_generated(n_queries: int, repeat: int, workdir: Path) -> None:
    t = time.perf_counter()
    qrels, base, cand = generate(workdir, n_queries)
    print(f"\n## generated: {n_queries:,} query pairs x 100 documents ({base.stat().st_size / 1e6:.0f} MB a run; "
          f"ready in {time.perf_counter() - t:.0f} s)")
    peer = [PYTHON, str(REPO / "benchmarks" / "compare_peer.py"), str(qrels), str(base), str(cand)]
    compare = EVALOPS + ["compare", str(qrels), str(base), str(cand), "-m", "nDCG@10", "--format", "json"]
    run(peer)
    run(compare)
    p_cpu, p_rss, p_out = median_of(peer, repeat)
    rows = [("peer (evalops.metrics + scipy t, Wilcoxon + numpy bootstrap)", p_cpu, p_rss)]
    for label, extra in (("compare (default rule)", []), ("compare --test wilcoxon", ["--test", "wilcoxon"])):
        c_cpu, c_rss, c_out = median_of(compare + extra, repeat)
        rows.append((label, c_cpu, c_rss))
        ours = json.loads(c_out)["comparisons"][0]
        theirs = json.loads(p_out)
        assert abs(ours["delta"] - theirs["delta"]) < 1e-9, (ours["delta"], theirs["delta"])
    for label, cpu, rss in rows:
        print(f"  {label:62s} {cpu:6.2f} s CPU  {rss:6.0f} MB peak  "
              f"({cpu / p_cpu:.2f}x CPU, {rss / p_rss:.2f}x memory of the peer)")
    print("  target: compare within 1.3x the peer's CPU and memory")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/evalops-compare-bench"))
    parser.add_argument("--skip-scifact", action="store_true")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")
    if not args.skip_scifact:
        case_scifact(args.repeat)
    case_generated(args.queries, args.repeat, args.workdir)


if __name__ == "__main__":
    main()
