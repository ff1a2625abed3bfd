"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _shared_data_dir() -> Path:
    return Path(os.environ.get("EVALOPS_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real IR collections beside the project (``../shared/data``).

    Tests that need them skip on a user's machine without the folder. In CI (``CI`` set) the folder is
    always present, so its absence is a failure, not a skip.
    """
    path = _shared_data_dir()
    if not (path / "scifact").is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing in CI; the real collections must be beside the project")
        pytest.skip(f"real collections not found at {path}")
    return path


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO
