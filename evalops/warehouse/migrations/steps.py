"""The steps the warehouse's revisions share: columns added in one batch and dropped by the downgrade, a table
created with its indexes and dropped by the downgrade, the columns and constraints many tables have, a CHECK
constraint replaced, and ``ab_tests`` as it stood between revisions e6b1d3f5a7c9 and a7c3e5f1d9b2.

A revision's outcome may never change once released (a warehouse migrated by it holds what it made), so a step
here does not change what it emits: a revision that needs another outcome gets another step. The names are
the constraint and index names of :data:`evalops.warehouse.tables.NAMING_CONVENTION`, written out (``conv``:
not converted again), so that a revision does not depend on the models as they are later (the CHECK constraint
:func:`replace_check` creates is named by the convention, as the revisions named it before these steps).

Every step builds new schema objects on each call: a column belongs to one table, and an upgrade may run
again after its downgrade in the same process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.sql.elements import conv

__all__ = ["ab_tests_columns", "ab_tests_keys", "ab_tests_table", "add_columns", "adds_columns", "check",
           "create_table", "created_at", "drop_columns", "drop_table", "foreign_key", "id_column", "offline_sqlite",
           "primary_key", "replace_check", "run_key", "typed_columns", "unique"]

ColumnSpec = tuple[str, Any]  # (name, type): a nullable column


def add_columns(table: str, columns: Iterable[ColumnSpec]) -> None:
    """Nullable columns added to ``table`` in one batch (on SQLite ``ALTER TABLE ... ADD COLUMN``, no copy)."""
    with op.batch_alter_table(table, schema=None) as batch:
        for name, kind in columns:
            batch.add_column(sa.Column(name, kind, nullable=True))


def drop_columns(table: str, names: Iterable[str], copy_from: sa.Table | None = None) -> None:
    """Columns dropped from ``table`` in one batch (SQLite copies the table once: ``copy_from``, the table as
    it stands, lets the SQL script of a migration copy it without reading it)."""
    with op.batch_alter_table(table, schema=None, copy_from=copy_from) as batch:
        for name in names:
            batch.drop_column(name)


def adds_columns(table: str, *columns: ColumnSpec) -> tuple[Callable[[], None], Callable[[], None]]:
    """The ``upgrade`` and ``downgrade`` of a revision that adds nullable ``columns`` to ``table``: the
    downgrade drops them, the last added first."""

    def upgrade() -> None:
        add_columns(table, columns)

    def downgrade() -> None:
        drop_columns(table, [name for name, _ in reversed(columns)])

    return upgrade, downgrade


def typed_columns(kind: Any, *names: str, nullable: bool = True) -> list[sa.Column[Any]]:
    """Columns of one type (``kind``, e.g. ``sa.Double()``) and nullability, in the order named."""
    return [sa.Column(name, kind, nullable=nullable) for name in names]


def id_column() -> sa.Column[Any]:
    """The integer key of a table whose rows are numbered (its primary key: :func:`primary_key`)."""
    return sa.Column("id", sa.Integer(), nullable=False)


def created_at() -> sa.Column[Any]:
    """When a row was written."""
    return sa.Column("created_at", sa.DateTime(timezone=True), nullable=False)


def primary_key(table: str, *columns: str) -> sa.PrimaryKeyConstraint:
    return sa.PrimaryKeyConstraint(*columns, name=conv(f"pk_{table}"))


def unique(table: str, *columns: str) -> sa.UniqueConstraint:
    return sa.UniqueConstraint(*columns, name=conv(f"uq_{table}_{'_'.join(columns)}"))


def check(table: str, name: str, condition: str) -> sa.CheckConstraint:
    return sa.CheckConstraint(condition, name=conv(f"ck_{table}_{name}"))


def foreign_key(table: str, column: str, target: str, **kwargs: Any) -> sa.ForeignKeyConstraint:
    """``column`` of ``table`` refers to ``target`` (``table.column``); ``kwargs`` as ``ondelete``."""
    return sa.ForeignKeyConstraint([column], [target], name=conv(f"fk_{table}_{column}_{target.split('.')[0]}"),
                                   **kwargs)


def run_key(table: str) -> list[Any]:
    """The ``run_id`` column of a table of a run's rows and its foreign key: the rows go with the run."""
    return [sa.Column("run_id", sa.Integer(), nullable=False),
            foreign_key(table, "run_id", "eval_runs.id", ondelete="CASCADE")]


def create_table(table: str, *items: Any, indexes: Sequence[Sequence[str]] = ()) -> None:
    """``table`` created with its columns and constraints (``items``), then a plain index on each column
    list of ``indexes``."""
    op.create_table(table, *items)
    for columns in indexes:
        op.create_index(conv(f"ix_{table}_{'_'.join(columns)}"), table, list(columns), unique=False)


def drop_table(table: str, indexes: Sequence[Sequence[str]] = ()) -> None:
    """The mirror of :func:`create_table`: the indexes dropped, the last first, then the table."""
    for columns in reversed(indexes):
        op.drop_index(conv(f"ix_{table}_{'_'.join(columns)}"), table_name=table)
    op.drop_table(table)


def offline_sqlite() -> bool:
    """Whether this is the SQL script of a SQLite migration (``evalops db upgrade --sql``): a CHECK constraint
    there can only change by copying the table, which needs the live table to reflect."""
    context = op.get_context()
    return bool(context.as_sql and context.dialect.name == "sqlite")


def replace_check(table: str, column: str, condition: str, batch: Any = None) -> None:
    """The CHECK constraint ``ck_<table>_<column>`` of ``table`` replaced by ``condition``: in ``batch`` (a
    ``batch_alter_table`` of ``table`` that makes other changes too), else in a batch of its own."""
    if batch is None:
        with op.batch_alter_table(table) as own:
            replace_check(table, column, condition, own)
        return
    batch.drop_constraint(conv(f"ck_{table}_{column}"), type_="check")
    batch.create_check_constraint(column, condition)


def ab_tests_columns() -> list[sa.Column[Any]]:
    """The columns revision 07f3ed2060d6 created ``ab_tests`` with, in their order."""
    return [
        id_column(),
        *typed_columns(sa.Integer(), "baseline_run_id", "candidate_run_id", "measure_id", "n", nullable=False),
        *typed_columns(sa.Double(), "baseline_mean", "candidate_mean", "delta", "delta_ci_low", "delta_ci_high"),
        sa.Column("ci_level", sa.Double(), nullable=False),
        sa.Column("test", sa.String(length=100), nullable=False),
        *typed_columns(sa.Double(), "p_value", "p_adjusted", "d_z", "d_z_ci_low", "d_z_ci_high"),
        *typed_columns(sa.Integer(), "wins", "ties", "losses", nullable=False),
        sa.Column("decision", sa.String(length=50), nullable=False),
        *typed_columns(sa.JSON(), "reasons", "policy", nullable=False),
        created_at(),
    ]


def ab_tests_keys() -> list[Any]:
    """The foreign keys, primary key and unique constraint of ``ab_tests`` (revision 07f3ed2060d6 on)."""
    return [
        foreign_key("ab_tests", "baseline_run_id", "eval_runs.id"),
        foreign_key("ab_tests", "candidate_run_id", "eval_runs.id"),
        foreign_key("ab_tests", "measure_id", "measures.id"),
        primary_key("ab_tests", "id"),
        unique("ab_tests", "candidate_run_id", "baseline_run_id", "measure_id"),
    ]


def ab_tests_table(*, record_required: bool) -> sa.Table:
    """ab_tests as revision e6b1d3f5a7c9 left it (``record`` nullable) or as revision f2a9c4e7b1d6 leaves it:
    described rather than reflected, so that ``evalops db upgrade --sql`` writes the SQLite script too."""
    return sa.Table(
        "ab_tests", sa.MetaData(),
        *ab_tests_columns(),
        sa.Column("severity", sa.String(length=20), nullable=True),
        sa.Column("criterion", sa.String(length=50), nullable=True),
        sa.Column("reason_code", sa.String(length=50), nullable=True),
        *typed_columns(sa.Double(), "margin", "interval_low", "interval_high", "interval_level"),
        sa.Column("family_size", sa.Integer(), nullable=True),
        sa.Column("family", sa.String(length=50), nullable=True),
        *typed_columns(sa.JSON(), "judged_coverage", "segments"),
        sa.Column("delta_holes_relevant", sa.Double(), nullable=True),
        sa.Column("record", sa.JSON(), nullable=not record_required),
        *ab_tests_keys(),
        sa.Index("ix_ab_tests_baseline_run_id", "baseline_run_id"),
    )
