"""The base install (numpy, scipy, click, rich, pyyaml, markupsafe): ``evaluate``, ``compare`` and ``power`` run
without the libraries of the ``fast``, ``pipeline`` and ``dashboard`` extras and print exactly what they print
with them; every other command, and what needs pyarrow, says in one line which extra to install.

Each command runs in a child process in which those libraries cannot be imported (``sys.modules[name] = None``,
so an import of any of them fails as it does when it is not installed); tests/packaging/test_clean_install.py
does the same on the built wheel in a venv without them."""

from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from evalops.util.extras import LIBRARIES

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
BLOCK = "import sys\nfor m in {names!r}:\n    sys.modules[m] = None\nfrom evalops.cli import main\nmain()\n"


def _evalops(args, cwd: Path, blocked=tuple(LIBRARIES)) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALOPS_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-c", BLOCK.format(names=tuple(blocked)), *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def _same_without_the_extras(args, cwd: Path) -> str:
    base = _evalops(args, cwd)
    full = _evalops(args, cwd, blocked=())
    assert full.returncode == 0, full.stderr[-3000:]
    assert base.returncode == 0, base.stderr[-3000:]
    assert "Traceback" not in base.stderr
    assert base.stdout == full.stdout, args
    return base.stdout


@pytest.fixture(scope="module")
def large_run(shared_data, tmp_path_factory) -> Path:
    """SciFact's BM25 run with 400 more documents a query (about 6 MB): over the size the exact parser alone
    takes, so with pyarrow it is read by Arrow's CSV reader."""
    rng = random.Random(7)
    lines = (shared_data / "scifact" / "runs" / "bm25.trec").read_text().splitlines()
    queries = sorted({line.split()[0] for line in lines})
    extra = [f"{q} Q0 noise{q}x{i} 0 {rng.uniform(-5, 5):.6f} bm25\n" for q in queries for i in range(400)]
    path = tmp_path_factory.mktemp("runs") / "large.trec"
    path.write_text("\n".join(lines) + "\n" + "".join(extra))
    assert path.stat().st_size > 4 << 20
    return path


def test_evaluate_compare_and_power_print_the_same_without_the_extras(shared_data, large_run, tmp_path):
    scifact = shared_data / "scifact"
    qrels, bm25 = scifact / "qrels.tsv", scifact / "runs" / "bm25.trec"
    other = scifact / "runs" / "itsumida-te3large-zerank1-top15.trec"
    gz = tmp_path / "large.trec.gz"
    gz.write_bytes(gzip.compress(large_run.read_bytes()))
    measures = ("-m", "nDCG@10", "-m", "R@100", "-m", "AP", "-m", "P@5", "-m", "RR")
    out = json.loads(_same_without_the_extras(("evaluate", qrels, bm25, *measures, "--per-query", "--format", "json"),
                                              tmp_path))
    assert round(out["measures"]["nDCG@10"]["mean"], 4) == 0.6762  # BM25 on SciFact (docs/retrievers.md)
    for run in (large_run, gz):  # Arrow's CSV reader with pyarrow; the exact parser (and gzip) without it
        _same_without_the_extras(("evaluate", qrels, run, *measures, "--per-query", "--format", "json"), tmp_path)
    _same_without_the_extras(("evaluate", qrels, bm25, "-m", "nDCG@10"), tmp_path)
    _same_without_the_extras(("compare", qrels, bm25, other, large_run, "-m", "nDCG@10", "-m", "R@100",
                              "--format", "json"), tmp_path)
    _same_without_the_extras(("compare", qrels, bm25, other, "-m", "nDCG@10"), tmp_path)
    pilot = tmp_path / "pilot.txt"
    pilot.write_text("\n".join(str(v) for v in (0.01, -0.02, 0.03, 0.0, -0.01, 0.02, -0.03, 0.01, 0.0, -0.05)))
    for args in (("--effect", "0.2", "--n", "100"), ("--effect", "0.3"), ("--n", "50", "--power", "0.9"),
                 ("--pilot", pilot, "--delta", "-0.02", "--n", "40", "--simulations", "200")):
        _same_without_the_extras(("power", *args, "--format", "json"), tmp_path)


def _names_the_extra(done: subprocess.CompletedProcess, message: str) -> None:
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr[-2000:])
    assert message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_every_other_command_and_what_needs_pyarrow_name_the_extra_to_install(shared_data, large_run, tmp_path):
    for args in (("init", "proj"), ("run", "--date", "2024-06-01"), ("db", "upgrade"), ("dashboard", "--export", "x"),
                 ("validate", "--help")):
        _names_the_extra(_evalops(args, tmp_path), f"install `evalops-rag[pipeline]` to run `evalops {args[0]}`")
    assert not (tmp_path / "proj").exists()
    # the pipeline installed, the dashboard's app not: serving says so, before it opens a warehouse
    _names_the_extra(_evalops(("dashboard",), tmp_path, blocked=("fastapi", "uvicorn")),
                     "install `evalops-rag[dashboard]` to serve the dashboard")

    import pyarrow as pa

    qrels = shared_data / "scifact" / "qrels.tsv"
    zst = tmp_path / "run.trec.zst"
    with pa.output_stream(str(zst), compression="zstd") as out:
        out.write((shared_data / "scifact" / "runs" / "bm25.trec").read_bytes())
    _names_the_extra(_evalops(("evaluate", qrels, zst, "-m", "nDCG@10"), tmp_path),
                     f"install `evalops-rag[fast]` to read zstd-compressed files ({zst})")
    # a run that does not fit the memory budget in memory is streamed, which needs Arrow's reader
    done = _evalops(("evaluate", qrels, large_run, "-m", "nDCG@10", "--memory-budget", "20MB"), tmp_path)
    _names_the_extra(done, f"install `evalops-rag[fast]` to stream {large_run} by query blocks")
    full = _evalops(("evaluate", qrels, large_run, "-m", "nDCG@10", "--memory-budget", "20MB"), tmp_path, ())
    assert full.returncode == 0, full.stderr[-2000:]
