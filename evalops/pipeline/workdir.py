"""Where a run keeps its intermediate files (under ``Config.work_dir``), one folder per DAG run.

The warehouse holds results; the work folder holds what tasks hand to each other without putting data in
XCom: the day's log sample, the per-shard scores of each version, and the comparison records. Every path
is a pure function of the run and the ids in a task's spec, so a retried task finds (and overwrites) its
own files. With tasks on several machines the work folder must be shared storage.
"""

from __future__ import annotations

import re
from pathlib import Path

from evalops.config import Config
from evalops.pipeline.context import RunContext

__all__ = ["run_folder", "log_sample_folder", "shard_file", "shard_folder", "comparison_file", "manifest_file",
           "safe_name"]


def safe_name(text: str) -> str:
    """A file-system-safe rendering of an id (run ids contain ``:`` and ``+``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "_"


def run_folder(cfg: Config, run: RunContext) -> Path:
    return cfg.work_dir / "runs" / safe_name(run.dag_id) / safe_name(run.run_id)


def log_sample_folder(cfg: Config, run: RunContext) -> Path:
    return run_folder(cfg, run) / "log_sample"


def shard_folder(cfg: Config, run: RunContext, run_id: int) -> Path:
    return run_folder(cfg, run) / "scores" / f"run-{run_id}"


def shard_file(cfg: Config, run: RunContext, run_id: int, shard: int) -> Path:
    """The shard's scores (``.parquet``); its outcome sits beside it with the suffix ``.json``."""
    return shard_folder(cfg, run, run_id) / f"shard-{shard:05d}.parquet"


def comparison_file(cfg: Config, run: RunContext, run_id: int) -> Path:
    return run_folder(cfg, run) / "comparisons" / f"run-{run_id}.json"


def manifest_file(cfg: Config, snapshot_id: str) -> Path:
    """The knowledge-base manifest (doc ids and content hashes) of a snapshot, kept to diff against later."""
    return cfg.work_dir / "snapshots" / f"{safe_name(snapshot_id)}.json"
