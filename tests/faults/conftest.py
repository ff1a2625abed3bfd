"""Fault injection: every case runs against local servers it starts, under a generous hang guard."""

from __future__ import annotations

import pytest

# A hang guard, not a duration assertion: a case that hangs fails instead of blocking the suite.
WATCHDOG_SECONDS = 120


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("timeout") is None and "faults" in str(item.fspath):
            item.add_marker(pytest.mark.timeout(WATCHDOG_SECONDS, method="thread"))
