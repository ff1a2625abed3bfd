"""Pipeline tests configure evalops explicitly (``load_config(home, environ=...)``); a developer's own
``EVALOPS_*`` variables must not leak in (the warehouse URL, for one, is also read from the process)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _no_evalops_environment(monkeypatch):
    for key in list(os.environ):
        if key.startswith("EVALOPS_") and key != "EVALOPS_SHARED_DATA":
            monkeypatch.delenv(key)
