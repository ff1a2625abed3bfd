"""Alembic migrations, run programmatically (the repository's ``alembic.ini`` serves the ``alembic`` CLI).

The migration scripts live in ``evalops/warehouse/migrations``; ``alembic_config`` builds the Alembic
``Config`` in code and hands the caller's connection to ``env.py`` through ``config.attributes``.
``evalops db upgrade`` calls ``upgrade``; so do the DAG's first task and ``make demo``.

The schema revision is kept in the table ``evalops_alembic_version`` (:data:`VERSION_TABLE`), so a
warehouse can share a database with Airflow, whose migrations use Alembic's default ``alembic_version``.
A warehouse migrated by an earlier release keeps its revision in ``alembic_version``: the next upgrade
(or any migration command) moves it over, once, in the same transaction
(:func:`adopt_legacy_version_table`), and only when the revision found there is one of evalops' own.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.errors import WarehouseError
from evalops.warehouse._db import describe_error, transaction

if TYPE_CHECKING:  # pragma: no cover
    from alembic.config import Config
    from sqlalchemy.engine import Connection, Engine

__all__ = [
    "LEGACY_VERSION_TABLE",
    "MIGRATIONS_DIR",
    "VERSION_TABLE",
    "adopt_legacy_version_table",
    "migration_history",
    "stamp",
    "upgrade_sql",
    "alembic_config",
    "at_head",
    "autogenerate_revision",
    "current_revision",
    "downgrade",
    "head_revisions",
    "quick_head",
    "upgrade",
]

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
FILE_TEMPLATE = "%%(year)d_%%(month).2d_%%(day).2d_%%(rev)s_%%(slug)s"
VERSION_TABLE = "evalops_alembic_version"
LEGACY_VERSION_TABLE = "alembic_version"


def alembic_config(connection: Connection | None = None, **attributes: Any) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("file_template", FILE_TEMPLATE)
    config.attributes["connection"] = connection
    config.attributes.update(attributes)
    return config


def head_revisions() -> tuple[str, ...]:
    from alembic.script import ScriptDirectory

    return tuple(ScriptDirectory.from_config(alembic_config()).get_heads())


@contextlib.contextmanager
def _migrating(engine: Engine, what: str) -> Iterator[Any]:
    """One transaction for a migration. On SQLite, foreign keys are not enforced during it: batch mode
    changes a table by copying it and dropping the old one, which the rows that reference it would refuse.
    The references are checked once the migration is done (``PRAGMA foreign_key_check``)."""
    if engine.dialect.name != "sqlite":
        with transaction(engine, what) as conn:
            yield conn
        return
    with engine.connect() as raw:
        driver = raw.connection.driver_connection  # autocommit: outside a transaction, or SQLite ignores it
        driver.execute("PRAGMA foreign_keys=OFF")
        try:
            with transaction_on(raw, what) as conn:
                yield conn
                broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise WarehouseError(f"{what} left {len(broken)} broken reference(s), e.g. {broken[0]}; "
                                         "nothing was changed")
        finally:
            driver.execute("PRAGMA foreign_keys=ON")


@contextlib.contextmanager
def transaction_on(connection: Any, what: str) -> Iterator[Any]:
    from sqlalchemy.exc import SQLAlchemyError

    try:
        with connection.begin():
            yield connection
    except WarehouseError:
        raise
    except SQLAlchemyError as exc:
        raise WarehouseError(f"{what} failed and was rolled back: {describe_error(exc, connection)}") from exc


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to ``revision`` (default: the head) in one transaction.

    A warehouse already at the head is left as it is without importing Alembic (about 0.1 s, paid by every
    run otherwise): :func:`at_head` reads the revision table and the migration scripts' own headers."""
    if revision == "head" and at_head(engine):
        return
    from alembic import command

    with _alembic_errors(f"upgrading the warehouse schema to {revision}"), _migrating(engine, "upgrading") as conn:
        command.upgrade(alembic_config(conn), revision)


_REVISION_LINE = re.compile(r"^revision(?:\s*:[^=]*)?=\s*['\"](\w+)['\"]\s*$", re.M)
_DOWN_REVISION_LINE = re.compile(r"^down_revision(?:\s*:[^=]*)?=\s*(?:['\"](\w+)['\"]|None)\s*$", re.M)


def quick_head() -> str | None:
    """The head revision read from the scripts' ``revision = '...'`` and ``down_revision = '...'`` lines,
    or None whenever that reading is not plain: a script without exactly one of each line (a merge
    revision's tuple, say), or not exactly one head. None sends :func:`upgrade` through Alembic; a test
    holds this equal to :func:`head_revisions`."""
    revisions, parents = set(), set()
    for path in (MIGRATIONS_DIR / "versions").glob("*.py"):
        source = path.read_text(encoding="utf-8")
        found, down = _REVISION_LINE.findall(source), _DOWN_REVISION_LINE.findall(source)
        if len(found) != 1 or len(down) != 1:
            return None
        revisions.add(found[0])
        if down[0]:
            parents.add(down[0])
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 and parents <= revisions else None


def at_head(engine: Engine) -> bool:
    """Whether the warehouse's recorded revision is the head (:func:`quick_head`), read with one query and
    no Alembic; False when unsure (no revision table, a legacy one, several rows, an unreadable head)."""
    head = quick_head()
    if head is None:
        return False
    with transaction(engine, "reading the schema revision") as conn:
        return _recorded_revisions(conn) == [head]


def _recorded_revisions(conn: Connection) -> list[str] | None:
    """The rows of the revision table (plain SQL, no Alembic), or None when there is no such table."""
    from sqlalchemy import inspect, text

    if not inspect(conn).has_table(VERSION_TABLE):
        return None
    return [row[0] for row in conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}"))]


def downgrade(engine: Engine, revision: str) -> None:
    """Step the schema back to ``revision`` (``"base"`` drops everything)."""
    from alembic import command

    with _alembic_errors(f"downgrading the warehouse schema to {revision}"), _migrating(engine, "downgrading") as conn:
        command.downgrade(alembic_config(conn), revision)


def autogenerate_revision(engine: Engine, message: str) -> str:
    """Write a new migration script from the difference between the models and ``engine``'s schema.

    For maintainers: upgrade a scratch database to head, change ``models.py``, then call this. Returns the
    path of the new script (review it before committing).
    """
    from alembic import command

    with _alembic_errors("generating a migration"), transaction(engine, "comparing the schema") as conn:
        script = command.revision(alembic_config(conn), message=message, autogenerate=True)
    return str(script.path)


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or None for an empty (never upgraded) database. A warehouse whose
    revision is still in the legacy table reports that revision (it moves at the next migration). The
    common case, one row in the revision table, is read without importing Alembic."""
    with transaction(engine, "reading the schema revision") as conn:
        recorded = _recorded_revisions(conn)
        if recorded is not None and len(recorded) == 1:
            return recorded[0]
        from alembic.runtime.migration import MigrationContext

        found = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE}).get_current_revision()
        if found is None:
            legacy = _legacy_revisions(conn)
            found = legacy[0] if len(legacy) == 1 else None
        return found


def _our_revisions() -> set[str]:
    from alembic.script import ScriptDirectory

    return {s.revision for s in ScriptDirectory.from_config(alembic_config()).walk_revisions()}


def _legacy_revisions(conn: Connection) -> list[str]:
    """evalops revisions recorded in the legacy ``alembic_version`` table (none when it is absent)."""
    from sqlalchemy import inspect, text

    if not inspect(conn).has_table(LEGACY_VERSION_TABLE):
        return []
    found = [r[0] for r in conn.execute(text(f"SELECT version_num FROM {LEGACY_VERSION_TABLE}"))]
    ours = _our_revisions()
    return [r for r in found if r in ours]


def adopt_legacy_version_table(conn: Connection) -> str | None:
    """Move evalops' revision from ``alembic_version`` to ``evalops_alembic_version`` (once).

    Does nothing when ``evalops_alembic_version`` exists already or ``alembic_version`` holds no evalops
    revision (an Airflow revision there is left alone). The legacy table is dropped when it is left empty.
    Returns the revision moved, or None.
    """
    from sqlalchemy import inspect, text

    inspector = inspect(conn)
    if inspector.has_table(VERSION_TABLE):
        return None
    legacy = _legacy_revisions(conn)
    if not legacy:
        return None
    if len(legacy) > 1:
        raise WarehouseError(f"{LEGACY_VERSION_TABLE} holds several evalops revisions ({', '.join(legacy)}); "
                             "fix it by hand, then run `evalops db stamp REVISION`")
    revision = legacy[0]
    conn.execute(text(f"CREATE TABLE {VERSION_TABLE} (version_num VARCHAR(32) NOT NULL, "
                      f"CONSTRAINT {VERSION_TABLE}_pkc PRIMARY KEY (version_num))"))
    conn.execute(text(f"INSERT INTO {VERSION_TABLE} (version_num) VALUES (:rev)"), {"rev": revision})
    conn.execute(text(f"DELETE FROM {LEGACY_VERSION_TABLE} WHERE version_num = :rev"), {"rev": revision})
    if conn.execute(text(f"SELECT COUNT(*) FROM {LEGACY_VERSION_TABLE}")).scalar_one() == 0:
        conn.execute(text(f"DROP TABLE {LEGACY_VERSION_TABLE}"))
    return revision


def stamp(engine: Engine, revision: str) -> None:
    """Record ``revision`` as the schema's revision without running any migration (for a schema created
    or repaired by hand; ``"base"`` clears it)."""
    from alembic import command

    with _alembic_errors(f"stamping the warehouse at {revision}"), transaction(engine, "stamping") as conn:
        command.stamp(alembic_config(conn), revision)


def upgrade_sql(url: str, revision: str = "head", start: str | None = None) -> str:
    """The SQL an upgrade to ``revision`` runs (Alembic's offline mode), for a DBA to review or apply;
    from ``start`` (a revision, default: an empty database). Nothing is executed."""
    import io

    from alembic import command

    out = io.StringIO()
    config = alembic_config()
    config.output_buffer = out
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    target = f"{start}:{revision}" if start else revision
    with _alembic_errors(f"writing the SQL of an upgrade to {revision}"):
        command.upgrade(config, target, sql=True)
    return out.getvalue()


def migration_history(engine: Engine | None = None) -> list[dict[str, Any]]:
    """Every revision, newest first: ``{revision, down_revision, message, is_head, is_current}``
    (``is_current`` only with an ``engine``)."""
    from alembic.script import ScriptDirectory

    current = current_revision(engine) if engine is not None else None
    script = ScriptDirectory.from_config(alembic_config())
    heads = set(script.get_heads())
    return [
        {"revision": s.revision, "down_revision": s.down_revision, "message": s.doc,
         "is_head": s.revision in heads, "is_current": s.revision == current}
        for s in script.walk_revisions()
    ]


@contextlib.contextmanager
def _alembic_errors(what: str) -> Iterator[None]:
    from alembic.util import CommandError

    try:
        yield
    except CommandError as exc:
        raise WarehouseError(f"{what} failed: {exc}") from exc
