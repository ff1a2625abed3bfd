"""The run's inputs prepared once: the knowledge-base snapshot and the gold sets, read, hashed and validated
by the first steps of a run, then mapped by every later step (planning, every shard, comparing, the facts).

Each prepared input is a Parquet copy in the work storage (``<work_dir>/prepared/``), shared by the tasks
of one run on any executor, and the last one read is also kept in the process (the local executor and a
worker that runs several tasks read it once). A copy is named by a **stamp** of its source files (path,
size, modification time and inode of each): when a source file changes during the run its stamp changes,
the copy is not used, and the caller reads the source again, so a changed knowledge base is still refused
(``inputs.current_snapshot``) and a changed gold set still changes its version. Sources that are not local
files (none today) are read every time.

The copies hold the gold queries' and documents' text as the user's files have it (retrievers are asked the
real text), so they live only while a run needs them: the run's last step (``publish_report``) discards
them (:func:`discard_prepared`), and no copy of unscrubbed text stays in the work folder after a run. A
run whose copy is gone reads its source again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from evalops.fingerprint import content_digest
from evalops.pipeline.workdir import safe_name, work_root, write_whole

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config
    from evalops.goldset import GoldSet
    from evalops.knowledge import KnowledgeBaseSnapshot
    from evalops.pipeline.workdir import WorkFolder

__all__ = ["source_stamp", "prepared_snapshot", "keep_snapshot", "prepared_gold_set", "keep_gold_set",
           "discard_prepared"]

log = logging.getLogger(__name__)
T = TypeVar("T")
_memo: dict[str, tuple[str, Any]] = {}  # kind -> (key, object): the last one of each kind


def source_stamp(*paths: Path | None) -> str | None:
    """A digest of (path, size, mtime, inode) of every file at ``paths`` (a folder: every file under it);
    None when a path does not exist."""
    rows = []
    for path in paths:
        if path is None:
            continue
        if not path.exists():
            return None
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for f in files:
            st = f.stat()
            rows.append([str(f.resolve()), st.st_size, st.st_mtime_ns, st.st_ino])
    return content_digest(rows)


def _folder(work: WorkFolder) -> Any:
    return work_root(work) / "prepared"


def _remember(kind: str, key: str, value: T) -> T:
    _memo[kind] = (key, value)
    return value


def _recall(kind: str, key: str) -> Any:
    held = _memo.get(kind)
    return held[1] if held is not None and held[0] == key else None


def _write_parquet(path: Any, frame: Any, metadata: dict[str, str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **{k.encode(): v.encode()
                                                                               for k, v in metadata.items()}})
    write_whole(path, lambda handle: pq.write_table(table, handle))


def _read_parquet(path: Any) -> Any:
    """The frame as it was written: strings as Python objects (None kept), numbers as numpy columns."""
    import pandas as pd
    import pyarrow.parquet as pq

    with path.open("rb") as handle:
        table = pq.read_table(handle)
    columns = {c: table.column(c).to_numpy(zero_copy_only=False) for c in table.column_names}
    return pd.DataFrame({c: pd.Series(v, dtype=object if v.dtype == object else v.dtype) for c, v in columns.items()})


# -- the knowledge-base snapshot ---------------------------------------------------------------------


def kb_source_file(path: Path) -> Path:
    """The file a knowledge base is read from: a folder's ``corpus.jsonl`` when it holds one, else ``path``."""
    if path.is_dir() and (path / "corpus.jsonl").is_file():
        return path / "corpus.jsonl"
    return path


def _kb_stamp(cfg: Config) -> str | None:
    return source_stamp(kb_source_file(cfg.knowledge_base_path()))


def _kb_file(cfg: Config, snapshot_id: str, stamp: str) -> Any:
    return _folder(cfg) / f"kb-{safe_name(snapshot_id)}-{stamp}.parquet"


def keep_snapshot(cfg: Config, snapshot: KnowledgeBaseSnapshot) -> None:
    """Keep ``snapshot`` (just read from the configured source) for the run's later steps."""
    stamp = _kb_stamp(cfg)
    if stamp is None:
        return
    path = _kb_file(cfg, snapshot.snapshot_id, stamp)
    # a snapshot known by its file's bytes (``known_kb``) whose documents no step read yet is held, not copied
    if getattr(snapshot, "loaded", True) and not path.exists():
        _write_parquet(path, snapshot.docs, {"evalops.has_text": str(snapshot.has_text)})
    _remember("kb", str(path), snapshot)


def prepared_snapshot(cfg: Config, snapshot_id: str) -> KnowledgeBaseSnapshot | None:
    """The snapshot ``snapshot_id`` as prepared by this run, when the source is unchanged; else None."""
    from evalops.knowledge import KnowledgeBaseSnapshot

    stamp = _kb_stamp(cfg)
    if stamp is None:
        return None
    path = _kb_file(cfg, snapshot_id, stamp)
    held = _recall("kb", str(path))
    if held is not None:
        return held
    if not path.exists():
        return None
    import pyarrow.parquet as pq

    with path.open("rb") as handle:
        has_text = (pq.read_schema(handle).metadata or {}).get(b"evalops.has_text", b"True") == b"True"
    snapshot = KnowledgeBaseSnapshot(_read_parquet(path), str(cfg.knowledge_base_path()), has_text=has_text)
    snapshot.__dict__["snapshot_id"] = snapshot_id  # the copy was written under this id (a cached property)
    return _remember("kb", str(path), snapshot)


# -- gold sets -----------------------------------------------------------------------------------------


def _gold_stamp(cfg: Config, name: str) -> str | None:
    spec = cfg.gold_set_named(name)
    return source_stamp(spec.path, spec.queries)


def _gold_files(cfg: Config, name: str, stamp: str) -> tuple[Any, Any]:
    base = f"gold-{safe_name(name)}-{stamp}"
    return _folder(cfg) / f"{base}-queries.parquet", _folder(cfg) / f"{base}-judgments.parquet"


def keep_gold_set(cfg: Config, name: str, gold: GoldSet) -> None:
    """Keep gold set ``name`` (just read from its source and validated) for the run's later steps."""
    stamp = _gold_stamp(cfg, name)
    if stamp is None:
        return
    queries, judgments = _gold_files(cfg, name, stamp)
    if not judgments.exists():
        frame = gold.queries.copy()
        frame["tags"] = [list(t) for t in frame["tags"]]
        _write_parquet(queries, frame, {})
        _write_parquet(judgments, gold.judgments, {})
    _remember(f"gold:{name}", str(judgments), gold)


def prepared_gold_set(cfg: Config, name: str, read: Callable[[], GoldSet]) -> GoldSet:
    """Gold set ``name`` as prepared by this run when its source is unchanged, else ``read()``."""
    from evalops.goldset import GoldSet

    stamp = _gold_stamp(cfg, name)
    if stamp is None:
        return read()
    queries, judgments = _gold_files(cfg, name, stamp)
    held = _recall(f"gold:{name}", str(judgments))
    if held is not None:
        return held
    if not judgments.exists() or not queries.exists():
        return read()
    q = _read_parquet(queries)
    q["tags"] = [tuple(t) for t in q["tags"]]
    j = _read_parquet(judgments)
    gold = GoldSet(q, j, str(cfg.gold_set_named(name).path))
    return _remember(f"gold:{name}", str(judgments), gold)


def discard_prepared(work: WorkFolder) -> int:
    """Remove every prepared copy (at the end of a run: they hold unscrubbed text); returns how many.
    A copy another run still uses is read from its source again by that run."""
    folder = _folder(work)
    removed = 0
    try:
        if not folder.exists():
            return 0
        for path in list(folder.iterdir()):
            try:
                path.unlink()
                removed += 1
            except (FileNotFoundError, IsADirectoryError):
                continue
    except OSError as exc:  # the report is written; a copy left behind is logged, not fatal
        log.warning("could not remove the prepared inputs in %s: %s", folder, exc)
    _memo.clear()
    return removed
