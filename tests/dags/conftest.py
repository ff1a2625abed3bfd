"""Helpers for the in-process DAG tests: a throw-away evalops home on the sample data in include/.

Each scenario runs the DAGs with ``dag.test()`` in a child process (its own AIRFLOW_HOME and SQLite
metadata database, see ``evalops.airflow.runner``) against a SQLite warehouse in the home.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INCLUDE = REPO / "include"
DAGS = REPO / "dags"

def make_home(root: Path, log_start: str = "2024-05-29", log_days: int = 4) -> dict[str, str]:
    """A home with generated query logs; returns the environment that points evalops at it."""
    root.mkdir(parents=True, exist_ok=True)
    logs = root / "logs"
    subprocess.run([sys.executable, str(INCLUDE / "generate_query_logs.py"), "--out", str(logs), "--start", log_start,
                    "--days", str(log_days)], check=True, capture_output=True)
    return {
        "EVALOPS_HOME": str(root),
        "EVALOPS_GOLD_SET": str(INCLUDE / "goldset"),
        "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"),
        "EVALOPS_REGISTRY": str(INCLUDE / "retrievers.yaml"),
        "EVALOPS_QUERY_LOGS": str(logs),
        "EVALOPS_RETRY_DELAY_SECONDS": "1",
    }


def copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst
