"""Pull-request mode (``evalops gate --pull-request``): a run that reads the shared warehouse and writes nothing
there.

A pull request's gate compares its versions with the promoted baselines, which live in the shared
warehouse, and must leave no trace there: no run, score, A/B result, alert or baseline row that the
dashboard, ``evalops history`` or a later run could read, and no alert sent. So the run goes to a scratch
SQLite warehouse in ``<project>/.evalops/pr/<run id>/`` (emptied first), with its work folder, Data Docs and
report beside it. Before the run, the rows it reads are copied there from the shared warehouse in one
read-only transaction (PostgreSQL: ``REPEATABLE READ, READ ONLY``; SQLite: the file opened ``mode=ro``):

* the ``measures`` table (measure ids stay the same) and every ``baselines`` row, with the ``eval_runs`` rows
  they point at and those runs' fingerprints, gold-set versions and knowledge-base snapshots;
* the per-query scores, aggregates, rankings and timings of each current baseline's run, and the query
  texts of its query set.

Every step then runs as ``evalops run`` runs it, against the scratch warehouse: a current baseline's stored
scores are compared as the main branch's run would compare them (gold-set decisions do not depend on earlier
days), a stale one is re-scored. The alerts are raised and stored in the scratch warehouse only; the webhook
and e-mail are off (:func:`pull_request_config`; the log notifier remains, it tells nobody). What is not
copied is not seen: earlier alerts (no reminder cadence: a regression is never ``suppressed``), the earlier
days of production-sample comparisons (each pooled one starts at its first look) and the judge's cache.

The shared warehouse must be at this evalops' schema revision (nothing here migrates it); one that has no
schema yet (or, on SQLite, no file) holds no baseline, and the run compares nothing.

**Run id.** Each pull-request run has its own id (:func:`pull_request_run_id`): ``--run-id``, else one read
from the CI's environment (:data:`CI_RUN_ID_VARIABLES`), else a fresh one; two runs the same day never share
a run key or a folder.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.errors import InputError, WarehouseError
from evalops.util import utc
from evalops.util.secrets import mask_url
from evalops.warehouse.config import create_warehouse_engine, url_for

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Connection, Engine

    from evalops.config import Config

__all__ = ["CI_RUN_ID_VARIABLES", "PR_FOLDER", "PullRequestRun", "ci_run_id", "copy_read_only_rows",
           "prepare_pull_request", "pull_request_config", "pull_request_run_id"]

PR_FOLDER = Path(".evalops") / "pr"

CI_RUN_ID_VARIABLES: tuple[tuple[str, ...], ...] = (
    ("GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT", "GITHUB_REF"),  # GitHub Actions: gh-pr<N>-<run id>[.<attempt>]
    ("CI_PIPELINE_ID", "CI_MERGE_REQUEST_IID"),  # GitLab CI: gl-mr<N>-<pipeline id>
)
"""The CI variables a pull-request run's id is read from, in this order (the first CI found wins): GitHub
Actions' run id (unique per workflow run) with its attempt and the pull request's number (``GITHUB_REF``
``refs/pull/<N>/merge``), GitLab's pipeline id with the merge request's number."""

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,99}")


def check_run_id(text: str) -> str:
    """``text`` as a run id: 1-100 letters, digits, ``.``, ``_``, ``:``, ``+`` or ``-`` starting with a letter or
    digit (it names a folder and goes into the run key); an ``InputError`` otherwise."""
    text = str(text).strip()
    if not _RUN_ID.fullmatch(text):
        raise InputError(f"--run-id {text[:40]!r}: use 1-100 letters, digits, '.', '_', ':', '+' or '-', starting "
                         "with a letter or digit")
    return text


def ci_run_id(environ: Mapping[str, str]) -> str | None:
    """The run id of the CI job this process runs in (:data:`CI_RUN_ID_VARIABLES`), or None outside CI."""
    run = environ.get("GITHUB_RUN_ID", "").strip()
    if run:
        number = re.fullmatch(r"refs/pull/(\d+)/(?:merge|head)", environ.get("GITHUB_REF", "").strip())
        attempt = environ.get("GITHUB_RUN_ATTEMPT", "").strip()
        return ((f"gh-pr{number[1]}-" if number else "gh-") + run
                + (f".{attempt}" if attempt and attempt != "1" else ""))
    pipeline = environ.get("CI_PIPELINE_ID", "").strip()
    if pipeline:
        request = environ.get("CI_MERGE_REQUEST_IID", "").strip()
        return (f"gl-mr{request}-" if request else "gl-") + pipeline
    return None


def pull_request_run_id(given: str | None, environ: Mapping[str, str],
                        now: Callable[[], dt.datetime] = utc.now) -> str:
    """The id of a pull-request run: ``given`` (``--run-id``), else the CI's (:func:`ci_run_id`), else
    ``local-<UTC time>-<random>``; checked by :func:`check_run_id`."""
    if given is not None:
        return check_run_id(given)
    found = ci_run_id(environ)
    if found is not None:
        return check_run_id(re.sub(r"[^A-Za-z0-9._:+-]", "_", found)[:100])
    return f"local-{now():%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"


def pull_request_config(cfg: Config, folder: Path) -> Config:
    """``cfg`` for a pull-request run in ``folder``: the scratch warehouse, work folder, Data Docs and report
    there, and no notifier but the log (no webhook, no e-mail, so no secret of theirs is needed)."""
    from evalops.config.sections import AlertingSettings

    alerting = cfg.alerting
    quiet = AlertingSettings.model_construct(
        _fields_set=alerting.model_fields_set - {"webhook_env", "webhook_conn_id", "email_to"},
        **{**alerting.model_dump(), "webhook_env": "", "webhook_conn_id": None, "email_to": ()})
    return cfg.model_copy(update={
        "warehouse_url": f"sqlite:///{folder / 'warehouse.db'}",
        "work_dir": str(folder / "work"),
        "data_docs": folder / "data_docs",
        "report_dir": folder / "reports",
        "alerting": quiet,
    })


@dataclass(frozen=True)
class PullRequestRun:
    """A prepared pull-request run: its id, its folder, the settings to run with (:func:`pull_request_config`),
    the shared warehouse it read (masked URL) and the rows copied from it, by table."""

    run_id: str
    folder: Path
    cfg: Config
    source: str
    copied: dict[str, int]


def prepare_pull_request(cfg: Config, run_id: str) -> PullRequestRun:
    """Empty ``<project>/.evalops/pr/<run id>/``, make its scratch warehouse and copy into it what the run
    reads from the shared warehouse of ``cfg`` (module docstring)."""
    from evalops.pipeline.store import engine_for, migrate_warehouse
    from evalops.pipeline.workdir import safe_name

    source = url_for(cfg)
    folder = cfg.home / PR_FOLDER / safe_name(run_id)
    if folder.exists():  # a re-run of the same CI job: start again from the shared warehouse
        from evalops.pipeline.store import dispose_engines

        dispose_engines()
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    scratch = pull_request_config(cfg, folder)
    if Path(scratch.warehouse_url.removeprefix("sqlite:///")).resolve() == _sqlite_path(source):
        raise InputError(f"{folder}: the scratch warehouse would be the shared one")
    migrate_warehouse(scratch)
    copied = copy_read_only_rows(source, engine_for(scratch))
    return PullRequestRun(run_id, folder, scratch, mask_url(source), copied)


def _sqlite_path(url: str) -> Path | None:
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database).expanduser().resolve()


def _read_only_engine(url: str) -> Engine | None:
    """An engine that cannot write the shared warehouse, or None when there is nothing to read (a SQLite
    file that does not exist: it is not created)."""
    import sqlite3

    from sqlalchemy import create_engine


    path = _sqlite_path(url)
    if path is not None:
        if not path.is_file():
            return None
        uri = f"{path.as_uri()}?mode=ro"
        return create_engine("sqlite://", creator=lambda: sqlite3.connect(uri, uri=True, isolation_level=None))
    return create_warehouse_engine(url)


def copy_read_only_rows(source_url: str, target: Engine) -> dict[str, int]:
    """Copy the rows a pull-request run reads (module docstring) from the warehouse at ``source_url``, in one
    read-only transaction, into ``target`` (a migrated, empty warehouse). Returns the rows copied, by table
    (empty when the source has no schema yet). A source at another schema revision is a ``WarehouseError``."""
    from sqlalchemy.exc import SQLAlchemyError

    from evalops.warehouse._db import describe_error

    engine = _read_only_engine(source_url)
    if engine is None:
        return {}
    try:
        with engine.connect() as conn:
            if conn.dialect.name == "sqlite":
                conn.exec_driver_sql("BEGIN")  # one snapshot of the file for every read
            else:
                conn.exec_driver_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            try:
                rows = _read_rows(conn)
            finally:
                conn.rollback()
    except SQLAlchemyError as exc:
        raise WarehouseError(f"reading the baselines from the shared warehouse failed: {describe_error(exc)}") from exc
    finally:
        engine.dispose()
    from evalops.warehouse._db import transaction

    with transaction(target, "copying the baselines into the pull-request warehouse") as conn:
        for table, items in rows:
            if items:
                conn.execute(table.insert(), items)
    return {table.name: len(items) for table, items in rows}


def _read_rows(conn: Connection) -> list[tuple[Any, list[dict[str, Any]]]]:
    """The rows to copy, table by table in an order the foreign keys accept (empty: no schema yet)."""
    from sqlalchemy import select

    from evalops.warehouse.migrate import _recorded_revisions, head_revisions, quick_head
    from evalops.warehouse.tables import metadata

    recorded = _recorded_revisions(conn)
    if not recorded:
        return []
    head = quick_head() or head_revisions()[0]
    if recorded != [head]:
        raise WarehouseError(f"the shared warehouse is at schema revision {', '.join(recorded)}, this evalops "
                             f"needs {head}; a pull-request run never migrates it: upgrade it from the main "
                             "branch (`evalops db upgrade`, or its next `evalops run`)")
    t = metadata.tables

    def read(name: str, *where: Any) -> list[dict[str, Any]]:
        table = t[name]
        key = list(table.primary_key.columns)
        return [dict(r) for r in conn.execute(select(table).where(*where).order_by(*key)).mappings()]

    baselines = read("baselines")
    run_ids = sorted({b["run_id"] for b in baselines})
    current = sorted({b["run_id"] for b in baselines if b["is_current"]})
    runs = read("eval_runs", t["eval_runs"].c.id.in_(run_ids)) if run_ids else []
    hashes = sorted({r["fingerprint_hash"] for r in runs} | {b["fingerprint_hash"] for b in baselines})
    fingerprints = read("eval_fingerprints", t["eval_fingerprints"].c.hash.in_(hashes)) if hashes else []
    gold = sorted({f["gold_set_version"] for f in fingerprints})
    snapshots = sorted({f["kb_snapshot_id"] for f in fingerprints})

    def of_runs(name: str) -> list[dict[str, Any]]:
        return read(name, t[name].c.run_id.in_(current)) if current else []

    return [
        (t["gold_set_versions"], read("gold_set_versions", t["gold_set_versions"].c.version.in_(gold)) if gold else []),
        (t["kb_snapshots"], read("kb_snapshots", t["kb_snapshots"].c.snapshot_id.in_(snapshots)) if snapshots else []),
        (t["eval_fingerprints"], fingerprints),
        (t["measures"], read("measures")),
        (t["eval_runs"], runs),
        (t["baselines"], baselines),
        (t["run_aggregates"], of_runs("run_aggregates")),
        (t["query_scores"], of_runs("query_scores")),
        (t["run_rankings"], of_runs("run_rankings")),
        (t["run_timings"], of_runs("run_timings")),
        (t["query_texts"], read("query_texts", t["query_texts"].c.query_set_version.in_(gold)) if gold else []),
    ]
