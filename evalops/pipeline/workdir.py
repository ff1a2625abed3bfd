"""Where a run keeps its intermediate files (under ``Config.work_dir``), one folder per DAG run.

The warehouse holds results; the work folder holds what tasks hand to each other without putting data in
XCom: the day's log sample, the per-shard scores of each version, and the comparison records. Every path
is a pure function of the run and the ids in a task's spec, so a retried task finds (and overwrites) its
own files. With tasks on several machines the work folder must be shared storage.

**Storage.** ``work_dir`` is a local folder (the default, ``.evalops/work``) or an fsspec URL
(``s3://bucket/evalops``, ``gs://...``, ``memory://...`` in tests; the filesystem's package, such as
``s3fs``, must be installed). The functions here return a ``upath.UPath`` (a ``pathlib.Path`` for a local
folder), so the callers' ``/``, ``exists``, ``read_text``, ``write_text`` and ``mkdir`` work on either.
Data frames go through :func:`write_frame` / :func:`read_frame`; readers that need a real local folder
(the log sample, knowledge-base manifests) get one from :func:`local_copy`, and a local folder is put in
place with :func:`upload`. In a DAG the same setting may be an Airflow ``ObjectStoragePath`` URL with a
connection (``s3://aws_default@bucket/evalops``): :func:`work_root` then builds an ``ObjectStoragePath``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from evalops.config import Config
from evalops.pipeline.context import RunContext
from evalops.reports import report_dir_for
from evalops.util.secrets import connection_path
from evalops.util.storage import write_atomic

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["WorkFolder", "embedding_cache_for", "report_file", "report_location", "run_folder", "log_sample_folder",
           "shard_file", "shard_folder", "unjudged_file", "comparison_file", "manifest_file", "safe_name", "work_root",
           "is_local", "write_whole", "read_json_record", "write_frame", "read_frame", "local_copy", "upload"]


log = logging.getLogger(__name__)


class WorkFolder(Protocol):
    """What the paths here read of the settings: the work folder (a :class:`~evalops.config.Config`, or the
    run's :class:`~evalops.pipeline.env.RunEnv`)."""

    @property
    def work_dir(self) -> str | Path: ...


def safe_name(text: str) -> str:
    """A file-system-safe rendering of an id (run ids contain ``:`` and ``+``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "_"


def work_root(work: WorkFolder) -> Any:
    """The work folder as a path object: ``pathlib.Path`` locally, else a ``UPath`` over fsspec (an
    Airflow ``ObjectStoragePath`` when the URL names a connection, ``scheme://conn_id@bucket/...``)."""
    url = work.work_dir
    if isinstance(url, Path) or "://" not in str(url):
        return Path(url)
    if "@" in str(url).split("://", 1)[1].split("/", 1)[0]:
        return connection_path(str(url), what="work_dir")
    from upath import UPath

    return UPath(str(url))


def is_local(path: Any) -> bool:
    return isinstance(path, Path) and type(path).__module__.startswith(("pathlib", "upath.implementations.local"))


def run_folder(work: WorkFolder, run: RunContext) -> Any:
    return work_root(work) / "runs" / safe_name(run.dag_id) / safe_name(run.run_id)


def embedding_cache_for(work: WorkFolder, snapshot_id: str) -> Any:
    """The dense document vectors of knowledge-base snapshot ``snapshot_id``, kept across runs under
    ``embeddings/`` (:class:`evalops.retrievers.embedcache.EmbeddingCache`, keyed by the encoder's identity)."""
    from evalops.retrievers.embedcache import EmbeddingCache

    return EmbeddingCache(work_root(work) / "embeddings", snapshot_id)


def log_sample_folder(work: WorkFolder, run: RunContext) -> Any:
    return run_folder(work, run) / "log_sample"


def shard_folder(work: WorkFolder, run: RunContext, run_id: int) -> Any:
    return run_folder(work, run) / "scores" / f"run-{run_id}"


def shard_file(work: WorkFolder, run: RunContext, run_id: int, shard: int) -> Any:
    """The shard's scores (``.parquet``); its outcome sits beside it with the suffix ``.json``."""
    return shard_folder(work, run, run_id) / f"shard-{shard:05d}.parquet"


def unjudged_file(shard: Any) -> Any:
    """The unjudged top-k documents of a shard (``shard_file``), as Parquet columns beside its scores."""
    return shard.with_suffix(".unjudged.parquet")


def judged_file(shard: Any) -> Any:
    """The judged documents of a shard's rankings (``shard_file``), as Parquet columns beside its scores:
    with the unjudged ones, the ranking the bounds of a comparison read (``evalops.judged.bounds``)."""
    return shard.with_suffix(".judged.parquet")


def comparison_file(work: WorkFolder, run: RunContext, run_id: int) -> Any:
    return run_folder(work, run) / "comparisons" / f"run-{run_id}.json"


def report_location(cfg: Config, run: RunContext) -> str:
    """Where the run's HTML report is written (``cfg.report_dir``, one folder per run): :func:`report_file`."""
    return report_file(cfg.report_dir, run)


def report_file(report_dir: Path, run: RunContext) -> str:
    """Where the run's HTML report is written under ``report_dir`` (one folder per run): the link alerts carry."""
    return str(report_dir_for(report_dir, run.label) / "report.html")


def manifest_file(work: WorkFolder, snapshot_id: str) -> Any:
    """The knowledge-base manifest (doc ids and content hashes) of a snapshot, kept to diff against later."""
    return work_root(work) / "snapshots" / f"{safe_name(snapshot_id)}.json"


def write_whole(path: Any, write: Callable[[Any], None]) -> None:
    """``write(handle)`` into ``path`` (local or fsspec), creating its folder, so that a reader never sees half
    of it: locally into a temporary file put in place with ``os.replace``; object storage writes an object whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not is_local(path):
        with path.open("wb") as handle:
            write(handle)
        return
    write_atomic(path, write)


def read_json_record(path: Any, what: str, instead: str) -> Any:
    """The JSON a run left at ``path`` (local or fsspec), or None when there is none or it cannot be read:
    then a warning ``<path>: <what> cannot be read (<why>); <instead>`` says what the caller does instead."""
    try:
        if not path.exists():
            return None
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        log.warning("%s: %s cannot be read (%s); %s", path, what, exc, instead)
        return None


def write_frame(path: Any, frame: pd.DataFrame) -> None:
    """Write ``frame`` as Parquet to ``path`` (local or fsspec), creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if is_local(path):
        frame.to_parquet(path, index=False)
        return
    with path.open("wb") as handle:
        frame.to_parquet(handle, index=False)


def read_frame(path: Any) -> pd.DataFrame:
    import pandas as pd

    if is_local(path):
        return pd.read_parquet(path)
    with path.open("rb") as handle:
        return pd.read_parquet(handle)


def _as_path(location: str | Any) -> Any:
    if not isinstance(location, str):
        return location
    if "://" not in location:
        return Path(location)
    from upath import UPath

    return UPath(location)


def local_copy(location: str | Any) -> Path:
    """A local file or folder with the content of ``location``: itself when local, else a copy in a cache
    folder keyed by the URL (refreshed on every call, as a retried task may have rewritten it)."""
    source = _as_path(location)
    if is_local(source):
        return Path(source)
    key = hashlib.sha256(str(source).encode()).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / "evalops-work-cache" / key / source.name
    if target.exists():
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        source.fs.get(source.path.rstrip("/") + "/", str(target), recursive=True)
    else:
        source.fs.get(source.path, str(target))
    return target


def upload(local: Path, destination: Any) -> None:
    """Put the local file or folder ``local`` at ``destination`` (a no-op when it is the same local path)."""
    if is_local(destination):
        if Path(destination).resolve() != Path(local).resolve():
            if Path(local).is_dir():
                shutil.copytree(local, destination, dirs_exist_ok=True)
            else:
                Path(destination).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(local, destination)
        return
    if Path(local).is_dir():
        destination.mkdir(parents=True, exist_ok=True)
        for item in sorted(Path(local).rglob("*")):
            if item.is_file():
                target = destination / item.relative_to(local).as_posix()
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(item.read_bytes())
    else:
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(Path(local).read_bytes())
