"""Rendered pages are kept: a finished comparison's page until its runs change, every other page for a few
seconds; a second reader costs no warehouse read, and a re-run is seen."""

from __future__ import annotations

import datetime as dt
import sqlite3

import pytest
from fastapi.testclient import TestClient

from evalops.dashboard.cache import PageCache


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def renderer(pages: list[str], state=None):
    def render():
        pages.append("rendered")
        return f"<p>{len(pages)}</p>", 200, state() if state else None
    return render


def test_a_page_without_a_state_is_kept_for_its_ttl_then_rendered_again():
    clock, made = Clock(), []
    cache = PageCache(5, clock=clock)
    first = cache.page(("overview",), renderer(made))
    assert cache.page(("overview",), renderer(made)) is first and len(made) == 1
    clock.now += 5
    again = cache.page(("overview",), renderer(made))
    assert len(made) == 2 and again.body == b"<p>2</p>" and again.etag != first.etag
    assert cache.cache_control == "private, max-age=5"


def test_a_page_kept_by_state_is_checked_after_its_ttl_and_rendered_when_the_state_changed():
    clock, made, reads = Clock(), [], []
    state = {"run": ("succeeded", 1)}

    def read_state():
        reads.append(1)
        return state["run"]

    cache = PageCache(5, clock=clock)
    first = cache.page(("ab", 1), renderer(made, read_state), read_state)
    assert len(made) == 1 and len(reads) == 1  # the state is read with the page
    assert cache.page(("ab", 1), renderer(made, read_state), read_state) is first and len(reads) == 1
    clock.now += 6
    assert cache.page(("ab", 1), renderer(made, read_state), read_state) is first
    assert len(made) == 1 and len(reads) == 2  # one read of the state, no render
    state["run"] = ("succeeded", 2)  # re-run
    clock.now += 6
    assert cache.page(("ab", 1), renderer(made, read_state), read_state).body == b"<p>2</p>"


def test_unfinished_runs_errors_and_oversized_pages_are_not_kept():
    clock, made = Clock(), []
    cache = PageCache(5, clock=clock, max_bytes=20)
    cache.page(("ab", 2), renderer(made, lambda: None), lambda: None)
    cache.page(("ab", 2), renderer(made, lambda: None), lambda: None)
    assert len(made) == 2  # a run not finished: rendered each time
    cache.page(("gone",), lambda: ("missing", 404, None))
    assert cache.page(("gone",), lambda: ("found", 200, None)).body == b"found"
    cache.page(("big",), lambda: ("x" * 21, 200, None))
    assert cache.page(("big",), lambda: ("y", 200, None)).body == b"y"
    cache.page(("a",), lambda: ("a" * 10, 200, None))
    cache.page(("b",), lambda: ("b" * 10, 200, None))
    cache.page(("c",), lambda: ("c" * 10, 200, None))  # over 20 bytes: the least recently used goes
    assert cache.page(("a",), lambda: ("new", 200, None)).body == b"new"


@pytest.fixture
def copied(filled, tmp_path):
    """A copy of the pipeline's warehouse, free to change."""
    from evalops.warehouse import create_warehouse_engine

    copy = tmp_path / "warehouse.db"
    with sqlite3.connect(filled["engine"].url.database) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    engine = create_warehouse_engine(f"sqlite:///{copy}")
    yield engine
    engine.dispose()


def test_a_finished_comparison_is_served_without_a_read_until_a_re_run_changes_it(filled, copied):
    from sqlalchemy import event, text

    from evalops.dashboard import DashboardSettings, create_app
    from evalops.warehouse import load_ab_tests

    clock = Clock()
    app = create_app(copied, settings=DashboardSettings.from_config(filled["cfg"]), cache=PageCache(5, clock=clock))
    client = TestClient(app)
    ab = load_ab_tests(copied).iloc[0]
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_rest):
        if statement.lstrip().upper().startswith("SELECT"):  # reads (not the transaction's BEGIN)
            statements.append(statement)

    event.listen(copied, "before_cursor_execute", count)
    try:
        url = f"/ab/{int(ab['id'])}"
        first = client.get(url)
        assert first.status_code == 200 and len(statements) > 1
        assert first.headers["cache-control"] == "private, max-age=5"
        statements.clear()
        second = client.get(url)
        assert second.text == first.text and second.headers["etag"] == first.headers["etag"]
        assert statements == []  # the second reader costs no read
        assert client.get(url, headers={"If-None-Match": first.headers["etag"]}).status_code == 304

        clock.now += 6  # checked again: one small read, the same page
        assert client.get(url).text == first.text and len(statements) == 1

        statements.clear()
        # a re-run attempt opens on the candidate run (what record_run writes for one), then one more reader
        with copied.begin() as conn:
            conn.execute(text("UPDATE eval_runs SET attempt_started_at = :at, updated_at = :at WHERE id = :id"),
                         {"at": dt.datetime(2030, 1, 1), "id": int(ab["candidate_run_id"])})
        statements.clear()
        assert client.get(url).status_code == 200 and statements == []  # within the ttl: the kept page
        clock.now += 6
        assert client.get(url).status_code == 200 and len(statements) > 1  # the run changed: rendered again

        statements.clear()
        overview = client.get("/").text
        rendered = len(statements)
        assert client.get("/").text == overview and rendered > 1 and len(statements) == rendered  # kept
        clock.now += 6
        client.get("/")
        assert len(statements) == rendered + 1  # the warehouse did not change: one small read, no render
        with copied.begin() as conn:  # a new run's final write
            conn.execute(text("UPDATE eval_runs SET updated_at = :at WHERE id = :id"),
                         {"at": dt.datetime(2030, 1, 2), "id": int(ab["candidate_run_id"])})
        clock.now += 6
        statements.clear()
        client.get("/")
        assert len(statements) == rendered + 1  # the token, then the page again
    finally:
        event.remove(copied, "before_cursor_execute", count)
