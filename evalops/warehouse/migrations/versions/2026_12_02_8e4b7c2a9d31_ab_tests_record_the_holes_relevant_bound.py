"""ab_tests record the delta under the holes-relevant bound (every unjudged document of the candidate's top k
relevant; evalops.judged.holes), beside the delta as judged

Revision ID: 8e4b7c2a9d31
Revises: 6a3f0d9c1e52
Create Date: 2026-12-02 01:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from evalops.warehouse.migrations import steps

revision: str = '8e4b7c2a9d31'
down_revision: str | Sequence[str] | None = '6a3f0d9c1e52'


upgrade, downgrade = steps.adds_columns('ab_tests', ('delta_holes_relevant', sa.Double()))
