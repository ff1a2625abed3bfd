"""A run file whose in-memory reading takes more than a share of the memory budget is checked and scored by
streamed query blocks (``evalops.pipeline.streamed``) and never kept whole: the warehouse holds the same rows as
when the file is read in memory (per-query values, failed queries and their reasons, the kept ranking of judged
and unjudged documents), with a query absent from the file failed (``missing: fail``) or answered with nothing
(``missing: empty``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, inspect, text

from evalops.cli import main
from evalops.judged.unjudged import read_unjudged
from evalops.retrievers import runfile

pytestmark = pytest.mark.slow

SKIPPED = ("_at", "seconds", "lease", "contracts")  # times, and the contracts' record of when they ran


def _project(home: Path, scifact: Path, files: dict[str, tuple[Path, str]], budget: str) -> None:
    entries = "".join(f"  - {{name: search, version: '{v}', adapter: run_file, deployed: true, owner: me, "
                      f"params: {{path: '{p}', missing: {missing}}}}}\n" for v, (p, missing) in files.items())
    (home / "retrievers.yaml").write_text("retrievers:\n" + entries)
    (home / "evalops.yaml").write_text(
        f"gold_set:\n  path: '{scifact}'\nknowledge_base: {{path: '{scifact / 'corpus.jsonl'}'}}\n"
        f"registry: retrievers.yaml\nmeasures: [nDCG@10, R@100, Judged@10]\nlog_sample_size: 0\n"
        f"memory_budget: {budget}\nwarehouse_url: 'sqlite:///{home / 'warehouse.db'}'\n")


def _rows(home: Path) -> dict[str, list[tuple]]:
    engine = create_engine(f"sqlite:///{home / 'warehouse.db'}")
    try:
        out = {}
        with engine.connect() as conn:
            for table in ("eval_runs", "query_scores", "run_rankings", "run_aggregates", "source_shares"):
                names = [c["name"] for c in inspect(engine).get_columns(table)
                         if not any(s in c["name"] for s in SKIPPED)]
                rows = conn.execute(text(f"SELECT {', '.join(names)} FROM {table}")).all()
                out[table] = sorted(tuple(str(v) for v in row) for row in rows)
        return out
    finally:
        engine.dispose()


def _shard_files(home: Path) -> dict[str, object]:
    """The shards' scores (bytes) and their unjudged and judged documents (each query's (document, rank) rows;
    a shard scored by blocks keeps the file's query order, the whole table's is query id order)."""
    folder = home / ".evalops" / "work" / "runs"
    out: dict[str, object] = {}
    for path in sorted(folder.rglob("shard-*.parquet")):
        name = str(path.relative_to(folder))
        docs = read_unjudged(path) if name.endswith(("unjudged.parquet", ".judged.parquet")) else None
        out[name] = path.read_bytes() if docs is None else {q: docs[q] for q in sorted(docs)}
    return out


def _run(home: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--project", str(home), "--date", "2024-06-01"], catch_exceptions=False)
    assert result.exit_code in (0, 4), result.output


def test_a_large_run_file_scored_by_blocks_stores_what_the_whole_table_gives(shared_data, tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    scifact = shared_data / "scifact"
    bm25 = scifact / "runs" / "bm25.trec"
    lines = bm25.read_text().splitlines()
    queries = sorted({line.split()[0] for line in lines})
    dropped = set(queries[5:8])  # three queries absent: 1 % of the judged ones, within the failure budget
    partial = tmp_path / "partial.trec"
    partial.write_text("".join(f"{line}\n" for line in lines if line.split()[0] not in dropped))
    files = {"1.0": (bm25, "fail"), "2.0": (partial, "fail"), "3.0": (partial, "empty")}

    whole, blocks = tmp_path / "whole", tmp_path / "blocks"
    for home, budget in ((whole, "64MB"), (blocks, "16MB")):  # (16 MB: blocks of 350 KB, a few per file)
        home.mkdir()
        _project(home, scifact, files, budget)
    assert not runfile.scored_by_blocks(bm25, 64 << 20)  # 1.4 MB: read whole within a 64 MB budget
    _run(whole)

    scored: list[str] = []
    monkeypatch.setattr(runfile, "WHOLE_TABLE_SHARE", 0.01)  # every file is then large for the budget
    import evalops.pipeline.streamed as streamed

    real = streamed.score_streamed
    monkeypatch.setattr("evalops.pipeline.scoring.score_streamed",
                        lambda entry, path, *a, **k: scored.append(entry.version) or real(entry, path, *a, **k))
    readings: list[str] = []
    read_blocks = runfile.whole_query_blocks
    monkeypatch.setattr(runfile, "whole_query_blocks", lambda source, *a, **k: readings.append(source.name) or
                        read_blocks(source, *a, **k))
    runfile._TABLES.clear()
    runfile._CHECKED.clear()
    _run(blocks)
    assert sorted(scored) == ["1.0", "2.0", "3.0"]
    # each distinct file checked once (the preflight; planning finds it checked), then each version scored
    assert sorted(readings) == sorted([str(bm25), str(partial)] + [str(bm25), str(partial), str(partial)])
    assert not runfile._TABLES  # the check kept no table of a file scored by blocks

    before, after = _rows(whole), _rows(blocks)
    assert len(before["query_scores"]) > 2000
    assert sum(all(q in str(row) for q in dropped) for row in before["eval_runs"]) == 1  # 2.0 failed them
    assert before == after
    shards = _shard_files(whole)
    assert len(shards) == 9 and shards == _shard_files(blocks)


def test_a_large_run_file_whose_bytes_passed_is_not_read_again_for_the_check(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    from evalops.config import load_config
    from evalops.errors import ConfigError
    from evalops.pipeline.registry import check_deployed

    run = tmp_path / "run.trec"
    run.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {100 - r}.5 tag\n" for q in range(40) for r in range(40)))
    (tmp_path / "retrievers.yaml").write_text(
        f"retrievers:\n  - {{name: bench, version: '1.0', adapter: run_file, deployed: true, owner: me, "
        f"params: {{path: {run}}}}}\n")
    (tmp_path / "evalops.yaml").write_text("registry: retrievers.yaml\nmeasures: [nDCG@10]\n")
    cfg = load_config(tmp_path, environ={})
    monkeypatch.setattr(runfile, "WHOLE_TABLE_SHARE", 0.0)
    readings: list[str] = []
    read_blocks = runfile.whole_query_blocks
    monkeypatch.setattr(runfile, "whole_query_blocks", lambda source, *a, **k: readings.append(source.name) or
                        read_blocks(source, *a, **k))
    runfile._CHECKED.clear()
    check_deployed(cfg)
    assert readings == [str(run)]
    runfile._CHECKED.clear()  # the next day: another process
    check_deployed(cfg)
    assert readings == [str(run)]  # its bytes passed: not read again
    run.write_text(run.read_text().replace("q3 Q0 d3-1 2 99.5 tag", "q3 Q0 d3-0 2 99.5 tag"))  # a repeated document
    runfile._CHECKED.clear()
    with pytest.raises(ConfigError, match="d3-0"):
        check_deployed(cfg)
    assert readings == [str(run), str(run)]
