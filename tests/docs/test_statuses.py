"""Every status value the warehouse models allow is documented: each ``IN (...)`` check constraint of the
models appears in docs/warehouse.md as the backticked list ``a|b|c`` after its table's name, in order."""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import CheckConstraint

from evalops.warehouse.models import ALERT_STATUSES, RUN_STATUSES, Base

DOC = Path(__file__).resolve().parents[2] / "docs" / "warehouse.md"


def _enumerations() -> list[tuple[str, str, tuple[str, ...]]]:
    found = []
    for table in Base.metadata.sorted_tables:
        for constraint in table.constraints:
            if isinstance(constraint, CheckConstraint):
                match = re.fullmatch(r"(\w+) IN \((.*)\)", str(constraint.sqltext))
                if match:
                    found.append((table.name, match[1], tuple(re.findall(r"'([^']*)'", match[2]))))
    return found


def test_the_models_hold_the_statuses_the_issue_named():
    enums = {(t, c): v for t, c, v in _enumerations()}
    assert enums[("eval_runs", "status")] == RUN_STATUSES and "abandoned" in RUN_STATUSES
    assert enums[("alerts", "delivery_status")] == ALERT_STATUSES
    assert {"unknown", "suppressed"} <= set(ALERT_STATUSES)


def test_every_status_list_of_the_models_is_in_the_docs_after_its_table():
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    enums = _enumerations()
    assert len(enums) >= 4
    for table, column, values in enums:
        listed = "`" + "|".join(values) + "`"
        at = text.find(listed)
        assert at >= 0, f"docs/warehouse.md does not list {table}.{column} as {listed}"
        assert f"`{table}`" in text[max(0, at - 700) : at], f"{listed} is not under the table `{table}`"
