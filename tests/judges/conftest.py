from __future__ import annotations

import os
import socket

import pytest

from evalops.judges.fakeserver import FakeChatServer


@pytest.fixture
def fake_server():
    with FakeChatServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _no_evalops_environment(monkeypatch):
    """Judge tests configure evalops explicitly; a developer's own ``EVALOPS_*`` variables must not leak in."""
    for key in list(os.environ):
        if key.startswith("EVALOPS_") and key != "EVALOPS_SHARED_DATA":
            monkeypatch.delenv(key)


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
