"""What parsing an evalops DAG file costs, next to parsing Airflow's own TaskFlow tutorial DAG.

    python benchmarks/dag_parse.py             # target: each evalops file under 0.5 s over `import airflow.sdk`
    python benchmarks/dag_parse.py --repeat 5

Each file is imported in a fresh interpreter that has already imported ``airflow.sdk`` (which every DAG
file needs), so only the file's own cost is timed. The fastest of ``--repeat`` runs is reported (other
work on a shared machine only adds time). The DAG-integrity test checks *what* a DAG file imports; this
benchmark measures how long it takes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 0.5

CODE = """
import importlib.util, json, sys, time
import airflow.sdk
start = time.perf_counter()
spec = importlib.util.spec_from_file_location("dag_under_test", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps({"seconds": time.perf_counter() - start}))
"""


def parse_seconds(path: Path, repeat: int, env: dict[str, str]) -> float:
    best = float("inf")
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", CODE, str(path)], capture_output=True, text=True, env=env,
                             check=True)
        best = min(best, json.loads(out.stdout.strip().splitlines()[-1])["seconds"])
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import airflow.example_dags as examples

    peer = Path(examples.__file__).parent / "tutorial_taskflow_api.py"
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "AIRFLOW_HOME": home, "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
               "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
        peer_s = parse_seconds(peer, args.repeat, env)
        print(f"{'airflow tutorial_taskflow_api.py':40s} {peer_s:6.3f} s")
        worst = 0.0
        for dag_file in sorted((REPO / "dags").glob("*.py")):
            seconds = parse_seconds(dag_file, args.repeat, env)
            worst = max(worst, seconds)
            print(f"{'evalops ' + dag_file.name:40s} {seconds:6.3f} s   ratio to the tutorial {seconds / peer_s:5.1f}")
    print(f"slowest evalops DAG file: {worst:.3f} s (target {TARGET_S} s)")
    return 0 if worst < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
