"""Query-log fixtures: the sample generator from include/ and small hand-made windows."""

from __future__ import annotations

import importlib.util
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import ModuleType

import pytest

UTC = timezone.utc
DAY = datetime(2025, 3, 5, tzinfo=UTC)
VERSIONS = ("bm25-v1", "hybrid-rrf-v2")


@pytest.fixture(scope="session")
def generator(repo_root: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_query_logs", repo_root / "include" / "generate_query_logs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def log_dir(generator: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Ten days of generated logs (2000 rows on weekdays), 2025-03-01 .. 2025-03-10."""
    out = tmp_path_factory.mktemp("logs")
    generator.generate_query_logs(out, DAY.date() - timedelta(days=4), days=10, rows_per_day=2000)
    return out


def write_rows(folder: Path, day: str, rows: list[dict | str], name: str = "part-000.jsonl") -> Path:
    """Write rows (dicts as JSON, strings verbatim) into a date partition."""
    part = folder / f"date={day}"
    part.mkdir(parents=True, exist_ok=True)
    path = part / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def row(ts: str = "2025-03-05T10:00:00Z", query: object = "refund time", version: object = "bm25-v1",
        segment: object = "web", **extra: object) -> dict:
    return {"timestamp": ts, "query": query, "retriever_version": version, "segment": segment, **extra}


@pytest.fixture
def make_row():
    return row


@pytest.fixture
def put_rows():
    return write_rows
