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


def judge_comparisons(engine, judge_run_id) -> list[dict]:
    """The stored comparisons of one judge run (``ab_tests`` rows naming it), each as its public view with its
    family, in the order the judge step stored them; and a check that ``judge_runs`` kept none of them."""
    from sqlalchemy import select

    from evalops.warehouse.abtests import judge_ab_tests
    from evalops.warehouse.tables import judge_runs

    with engine.connect() as conn:
        results = conn.execute(select(judge_runs.c.results).where(judge_runs.c.id == int(judge_run_id))).scalar_one()
    assert "comparisons" not in (results or {}), "judge_runs.results keeps comparisons: they belong in ab_tests"
    stored = judge_ab_tests(engine, [int(judge_run_id)])[int(judge_run_id)]
    assert all(r.judge_run_id == int(judge_run_id) and r.comparison.measure.startswith("judge:") for r in stored)
    return [{**r.comparison.to_dict(), "family": r.family} for r in stored]
