"""query_scores without the foreign key to eval_runs (its per-row check was most of the COPY time); on SQLite a WITHOUT ROWID table

On PostgreSQL a foreign key is a per-row referential-integrity trigger: COPY of 120,000 score rows took
0.85-1.3 s with it and 0.28-0.40 s without. The rows stay owned by their run: they are written in the
transaction that writes (and locks) the run row, and evalops never deletes a run (retention deletes score
rows only, ``evalops.warehouse.scores.prune_query_scores``), so nothing relied on ON DELETE CASCADE.

On SQLite the table is rebuilt (batch mode): a one-time copy of the stored scores. The copy is made a
WITHOUT ROWID table, whose rows live in the primary key's B-tree instead of a rowid table plus a key index:
120,000 inserts took 0.22 s instead of 0.34 s and the file 27 MB instead of 46 MB (per-row foreign key
checks had doubled the time: 0.70 s). The table is described here (``copy_from``) rather than reflected,
so ``evalops db upgrade --sql`` can write the SQLite script too.

The downgrade restores the constraint; it fails, changing nothing, while score rows of a deleted run remain
(delete them first: ``DELETE FROM query_scores WHERE run_id NOT IN (SELECT id FROM eval_runs)``).

Revision ID: a4d2f6b8c1e9
Revises: 9f3c5a1e7b42
Create Date: 2026-12-02 17:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from evalops.warehouse.migrations import steps

revision: str = 'a4d2f6b8c1e9'
down_revision: str | Sequence[str] | None = '9f3c5a1e7b42'


def _query_scores(*, with_run_key: bool, with_rowid: bool) -> sa.Table:
    """query_scores as revision 9f3c5a1e7b42 left it (run key, rowid) or as this one leaves it."""
    return sa.Table(
        'query_scores', sa.MetaData(),
        *steps.typed_columns(sa.Integer(), 'run_id', 'measure_id', nullable=False),
        sa.Column('query_id', sa.String(length=500), nullable=False),
        sa.Column('value', sa.Double(), nullable=True),
        steps.primary_key('query_scores', 'run_id', 'measure_id', 'query_id'),
        *([steps.foreign_key('query_scores', 'run_id', 'eval_runs.id', ondelete='CASCADE')] if with_run_key else []),
        sqlite_with_rowid=with_rowid,
    )


def upgrade() -> None:
    # PostgreSQL: ALTER TABLE ... DROP CONSTRAINT. SQLite: the table is copied (table_kwargs: WITHOUT ROWID).
    with op.batch_alter_table('query_scores', schema=None, copy_from=_query_scores(with_run_key=True, with_rowid=True),
                              table_kwargs={'sqlite_with_rowid': False}) as batch_op:
        batch_op.drop_constraint('fk_query_scores_run_id_eval_runs', type_='foreignkey')


def downgrade() -> None:
    with op.batch_alter_table('query_scores', schema=None, copy_from=_query_scores(with_run_key=False, with_rowid=False),
                              table_kwargs={'sqlite_with_rowid': True}) as batch_op:
        batch_op.create_foreign_key('fk_query_scores_run_id_eval_runs', 'eval_runs', ['run_id'], ['id'],
                                    ondelete='CASCADE')
