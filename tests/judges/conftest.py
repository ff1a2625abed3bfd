from __future__ import annotations

import pytest

from evalops.judges.fakeserver import FakeChatServer


@pytest.fixture
def fake_server():
    with FakeChatServer() as server:
        yield server
