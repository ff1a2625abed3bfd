"""A run checks its deployed run files before any work (``check_before_run``) and keeps the table it read for
scoring; it imports pyarrow anyway, so the check reads them in columns (Arrow) rather than line by line, the
exact parser being the small-file path of a process that has not loaded Arrow's readers."""

from __future__ import annotations

import pytest

from evalops.config import load_config
from evalops.formats import _table
from evalops.pipeline.registry import check_before_run


def test_the_run_files_are_checked_in_columns(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    run = tmp_path / "run.trec"
    run.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {100 - r}.5 tag\n" for q in range(60) for r in range(60)))
    assert _table.SMALL_FILE_ARROW_LOADED < run.stat().st_size < _table.SMALL_FILE
    (tmp_path / "retrievers.yaml").write_text(
        f"retrievers:\n  - {{name: bench, version: '1.0', adapter: run_file, deployed: true, owner: me, "
        f"params: {{path: {run}}}}}\n")
    (tmp_path / "evalops.yaml").write_text("registry: retrievers.yaml\nmeasures: [nDCG@10]\n")
    cfg = load_config(tmp_path, environ={})
    exact = []
    real = _table.read_table_exact
    monkeypatch.setattr(_table, "read_table_exact", lambda *a, **k: exact.append(a) or real(*a, **k))
    check_before_run(cfg)
    assert not exact
