"""Alembic migrations, run programmatically (no alembic.ini needed).

The migration scripts live in ``evalops/warehouse/migrations``; ``alembic_config`` builds the Alembic
``Config`` in code and hands the caller's connection to ``env.py`` through ``config.attributes``.
``evalops db upgrade`` calls ``upgrade``; so do the DAG's first task and ``make demo``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.errors import WarehouseError
from evalops.warehouse._db import transaction

if TYPE_CHECKING:  # pragma: no cover
    from alembic.config import Config
    from sqlalchemy.engine import Connection, Engine

__all__ = [
    "MIGRATIONS_DIR",
    "alembic_config",
    "autogenerate_revision",
    "current_revision",
    "downgrade",
    "head_revisions",
    "upgrade",
]

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
FILE_TEMPLATE = "%%(year)d_%%(month).2d_%%(day).2d_%%(rev)s_%%(slug)s"


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


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to ``revision`` (default: the head) in one transaction."""
    from alembic import command

    with _alembic_errors(f"upgrading the warehouse schema to {revision}"), transaction(engine, "upgrading") as conn:
        command.upgrade(alembic_config(conn), revision)


def downgrade(engine: Engine, revision: str) -> None:
    """Step the schema back to ``revision`` (``"base"`` drops everything)."""
    from alembic import command

    with _alembic_errors(f"downgrading the warehouse schema to {revision}"), transaction(engine, "downgrading") as conn:
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
    """The revision the database is at, or None for an empty (never upgraded) database."""
    from alembic.runtime.migration import MigrationContext

    with transaction(engine, "reading the schema revision") as conn:
        return MigrationContext.configure(conn).get_current_revision()


@contextlib.contextmanager
def _alembic_errors(what: str) -> Iterator[None]:
    from alembic.util import CommandError

    try:
        yield
    except CommandError as exc:
        raise WarehouseError(f"{what} failed: {exc}") from exc
