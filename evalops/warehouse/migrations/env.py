"""Alembic environment for the evalops warehouse.

Run through ``evalops.warehouse.migrate`` (which passes a live connection in ``config.attributes``), or
by the ``alembic`` command with the repository's ``alembic.ini``. Without a connection, it connects to
``sqlalchemy.url`` when set, else to the URL ``evalops.warehouse.config.resolve_url`` finds. SQLite gets
batch mode (``render_as_batch``) because it cannot ALTER most things in place.

The revision is kept in ``evalops_alembic_version`` (not Alembic's default ``alembic_version``, which
Airflow's own migrations use when the warehouse shares Airflow's database). A warehouse migrated before
that is moved over first (:func:`evalops.warehouse.migrate.adopt_legacy_version_table`).
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.types import TypeDecorator

from evalops.warehouse.config import create_warehouse_engine, resolve_url
from evalops.warehouse.migrate import VERSION_TABLE, adopt_legacy_version_table
from evalops.warehouse.tables import metadata as target_metadata


def _render_item(type_, obj, autogen_context):
    """Render the warehouse's TypeDecorators as their plain column type.

    The DDL is the same, and migration scripts then never import runtime code that may change later.
    """
    if type_ == "type" and isinstance(obj, TypeDecorator):
        return f"sa.{obj.impl!r}"
    return False


def _configure(connection) -> None:
    adopt_legacy_version_table(connection)
    context.configure(
        version_table=VERSION_TABLE,
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        render_item=_render_item,
    )


def run_migrations_offline() -> None:
    context.configure(
        url=context.config.get_main_option("sqlalchemy.url") or resolve_url().url,
        version_table=VERSION_TABLE,
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return

    engine = create_warehouse_engine(context.config.get_main_option("sqlalchemy.url") or None)
    try:
        with engine.begin() as connection:
            _configure(connection)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
