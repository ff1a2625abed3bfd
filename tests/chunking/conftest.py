from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def scifact_chunks(shared_data):
    from tests.chunking.collection import Collection

    return Collection(shared_data / "scifact")
