"""The reader fuzzing suite with a long profile: many more generated inputs than `make test` runs.

    python benchmarks/fuzz_long.py              # 3,000 examples per property
    python benchmarks/fuzz_long.py --examples 20000

Runs the property tests of every reader (TREC runs and qrels, BEIR folders, JSONL and CSV gold sets, query
logs: tests/formats/test_input_boundary.py; the registry: tests/retrievers/test_registry_fuzz.py) with
``FUZZ_EXAMPLES`` raised, and prints how many inputs were tried, how long it took and whether every input
gave a result or an ``InputError``. The test suite runs the same properties with a fixed seed and 150-200
examples. An input that breaks a reader belongs in tests/formats/corpus/ afterwards.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SUITES = ["tests/formats/test_input_boundary.py", "tests/retrievers/test_registry_fuzz.py"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=3000)
    args = parser.parse_args()
    env = {**os.environ, "FUZZ_EXAMPLES": str(args.examples)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "give", *SUITES],
                          cwd=REPO, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    summary = [line for line in done.stdout.splitlines() if " passed" in line or " failed" in line]
    print(f"{args.examples} examples per property, {seconds:.0f} s: {summary[-1] if summary else done.stdout[-500:]}")
    if done.returncode != 0:
        print(done.stdout[-4000:])
        raise SystemExit(1)


if __name__ == "__main__":
    main()
