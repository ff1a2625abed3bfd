"""A warehouse that stops answering mid-run: the task fails on its timeout, the DAG's failure callback
delivers exactly one message to the webhook (saying the warehouse was unreachable), and nothing hangs.

The warehouse is PostgreSQL behind a local TCP proxy. Once ``migrate_warehouse`` has succeeded (read from
the in-process Airflow's metadata database), the proxy stops forwarding: open connections go silent and
new ones are accepted and never answered, which is what a stuck server or a dead network path looks like.
The only deadline is the generous watchdog of the child process; no duration is asserted.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.dags.conftest import DAGS, make_home

pytestmark = [pytest.mark.airflow, pytest.mark.slow, pytest.mark.postgres]

WATCHDOG_S = 1200  # the child is killed (and the test fails) only if something really hangs


class StallingProxy:
    """Forwards 127.0.0.1:<port> to a target until :meth:`stall`; then relays nothing, both ways."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.stalled = threading.Event()
        self.closing = threading.Event()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.sockets: list[socket.socket] = [self.server]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closing.is_set():
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            self.sockets.append(client)
            if self.stalled.is_set():
                continue  # accepted, never answered
            upstream = socket.create_connection(self.target)
            self.sockets.append(upstream)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                while self.stalled.is_set() and not self.closing.is_set():
                    time.sleep(0.05)  # hold the bytes: the peer waits forever
                if self.closing.is_set():
                    break
                dst.sendall(data)
        except OSError:
            pass

    def stall(self) -> None:
        self.stalled.set()

    def close(self) -> None:
        self.closing.set()
        for s in self.sockets:
            try:
                s.close()
            except OSError:
                pass


class Webhook:
    """A local Slack-compatible webhook that records every message it receives."""

    def __init__(self):
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                received.append(json.loads(body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/T/B/X"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


def _stall_after_migration(workdir: Path, proxy: StallingProxy, done: threading.Event) -> None:
    """Stall the proxy as soon as migrate_warehouse has succeeded in the child's Airflow database."""
    while not done.is_set():
        for db in workdir.glob("airflow-*/airflow.db"):
            try:
                with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
                    row = conn.execute("SELECT state FROM task_instance WHERE task_id = 'migrate_warehouse'").fetchone()
            except sqlite3.Error:
                continue
            if row and row[0] == "success":
                proxy.stall()
                return
        time.sleep(0.1)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    from sqlalchemy.engine import make_url

    from evalops.airflow.runner import run_steps_in_subprocess
    from tests.warehouse.warehouse_helpers import create_pg_database, drop_pg_database, server_url

    url = create_pg_database(server_url(), prefix="evalops_wh_stall")
    parsed = make_url(url)
    proxy = StallingProxy((parsed.host or "127.0.0.1", parsed.port or 5432))
    webhook = Webhook()
    root = tmp_path_factory.mktemp("stall")
    env = {
        **make_home(root, log_start="2024-05-30", log_days=1),
        "EVALOPS_WAREHOUSE_URL": parsed.set(port=proxy.port).render_as_string(hide_password=False),
        "EVALOPS_WEBHOOK_URL": webhook.url,
        "EVALOPS_TASK_TIMEOUT": "20",
        "EVALOPS_TASK_TIMEOUTS__MIGRATE_WAREHOUSE": "600",
    }
    done = threading.Event()
    workdir = root / "airflow"
    workdir.mkdir()
    watcher = threading.Thread(target=_stall_after_migration, args=(workdir, proxy, done), daemon=True)
    watcher.start()
    try:
        results = run_steps_in_subprocess(
            DAGS, [{"dag_id": "retrieval_eval", "logical_date": "2024-05-31T00:00:00+00:00"}], workdir=workdir,
            log_path=root / "airflow.log", env=env, inherit_evalops_env=False, timeout=WATCHDOG_S,
            counts=False,
        )
    finally:
        done.set()
        proxy.close()
        webhook.close()
        drop_pg_database(url)
    yield {"results": results, "messages": list(webhook.received), "stalled": proxy.stalled.is_set(),
           "log": (root / "airflow.log").read_text(encoding="utf-8", errors="replace")}


def test_the_run_fails_on_a_task_timeout_after_the_warehouse_stalls(scenario):
    assert scenario["stalled"]
    assert [r["state"] for r in scenario["results"]] == ["failed"]
    assert "AirflowTaskTimeout" in scenario["log"] or "Timeout" in scenario["log"]


def test_the_failure_callback_delivers_exactly_one_message_saying_the_warehouse_was_unreachable(scenario):
    clues = [line for line in scenario["log"].splitlines()
             if any(w in line for w in ("callback", "evalops.alerts", "unreachable", "Traceback", "Error"))]
    assert len(scenario["messages"]) == 1, (scenario["messages"], clues[-40:])
    text = scenario["messages"][0]["text"]
    assert text.startswith("retrieval_eval run manual__2024-05-31T00:00:00+00:00: task ")
    assert "failed (try 3 of 3)" in text
    assert "The evalops warehouse was unreachable" in text and "not stored" in text
    assert "hooks/T/B/X" not in text  # the webhook URL is a secret
