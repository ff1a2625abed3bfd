"""A PostgreSQL warehouse that stops answering mid-run (a proxy that keeps the connections open and
forwards nothing): `evalops run` ends at the client's deadline with exit 7 and a clear error, and the next
run leaves nothing of the day `running`."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from tests.faults.servers import SearchService
from tests.warehouse.warehouse_helpers import scratch_pg_database

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(600, method="thread")]

REPO = Path(__file__).resolve().parents[2]
INCLUDE = REPO / "include"
DAY = "2024-05-30"
STATEMENT_TIMEOUT = 15  # seconds; the client's deadline is this + 5 s
CONNECT_TIMEOUT = 5
_TEST_URL = os.environ.get("EVALOPS_TEST_POSTGRES_URL")  # read at import, as the other PostgreSQL tests do


class SilenceableProxy:
    """Forwards 127.0.0.1:``port`` to ``upstream`` until :meth:`silence`; from then on it forwards nothing
    either way and accepts new connections without connecting them, keeping every socket open. Each loop
    wakes every 0.1 s and ends at :meth:`stop` or after ``lifetime`` seconds, whichever comes first."""

    def __init__(self, upstream: tuple[str, int], lifetime: float = 300.0):
        self.upstream = upstream
        self._listen = socket.create_server(("127.0.0.1", 0))
        self._listen.settimeout(0.1)
        self.port = self._listen.getsockname()[1]
        self._silent, self._stop = threading.Event(), threading.Event()
        self._until = time.monotonic() + lifetime
        self._held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def silence(self) -> None:
        self._silent.set()

    def _alive(self) -> bool:
        return not self._stop.is_set() and time.monotonic() < self._until

    def _accept(self) -> None:
        while self._alive():
            try:
                client, _ = self._listen.accept()
            except OSError:
                continue
            self._held.append(client)
            if self._silent.is_set():
                continue  # held open, never connected: a server that accepts and says nothing
            server = socket.create_connection(self.upstream, timeout=5)
            self._held.append(server)
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        src.settimeout(0.1)
        while self._alive():
            if self._silent.is_set():
                time.sleep(0.1)
                continue
            try:
                data = src.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            try:
                dst.sendall(data)
            except OSError:
                return

    def stop(self) -> None:
        self._stop.set()
        for s in self._held:
            s.close()
        self._listen.close()


@pytest.fixture
def database():
    if not _TEST_URL:
        pytest.skip("EVALOPS_TEST_POSTGRES_URL is not set")
    from sqlalchemy.engine import make_url

    with scratch_pg_database(_TEST_URL, "evalops_silent") as url:
        yield make_url(url)


def day_statuses(url: str) -> list[str]:
    from sqlalchemy import create_engine, select

    from evalops.warehouse.models import EvalRunModel

    runs = EvalRunModel.__table__
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return sorted(conn.execute(select(runs.c.status).where(runs.c.dag_run_id == f"cli__{DAY}")).scalars())
    finally:
        engine.dispose()


def test_a_warehouse_that_stops_answering_ends_the_run_at_the_deadline_with_exit_7(database, tmp_path):
    direct = database.render_as_string(hide_password=False)
    proxy = SilenceableProxy((database.host or "127.0.0.1", database.port or 5432))
    silenced_at: list[float] = []

    def silence() -> None:
        proxy.silence()
        silenced_at.append(time.monotonic())

    with (INCLUDE / "knowledge_base" / "corpus.jsonl").open(encoding="utf-8") as f:
        doc_ids = [json.loads(line)["_id"] for line in f if line.strip()][:20]
    service = SearchService(doc_ids, on_first=silence)
    overlay = tmp_path / "remote.yaml"
    overlay.write_text(yaml.safe_dump({"retrievers": [{
        "name": "handbook-search", "version": "3.0-remote", "adapter": "http", "deployed": True, "owner": "tests",
        "params": {"url": f"http://127.0.0.1:{service.port}/search", "max_retries": 0},
    }]}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALOPS_")}
    env.update({
        "PYTHONPATH": str(REPO), "EVALOPS_HOME": str(tmp_path), "EVALOPS_GOLD_SET": str(INCLUDE / "goldset"),
        "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"), "EVALOPS_REGISTRY": str(INCLUDE / "retrievers.yaml"),
        "EVALOPS_RETRIEVERS_OVERLAY": str(overlay), "EVALOPS_LOG_SAMPLE_SIZE": "0",
        "EVALOPS_WAREHOUSE_STATEMENT_TIMEOUT": str(STATEMENT_TIMEOUT), "EVALOPS_WAREHOUSE_IDLE_TIMEOUT": "15",
        "EVALOPS_WAREHOUSE_CONNECT_TIMEOUT": str(CONNECT_TIMEOUT),
    })
    command = [sys.executable, "-c", "from evalops.cli import main; main()", "run", "--date", DAY]
    through_proxy = direct.replace(f"@{database.host}:{database.port}", f"@127.0.0.1:{proxy.port}")
    try:
        with (tmp_path / "out.txt").open("w+") as out, (tmp_path / "err.txt").open("w+") as err_file:
            run = subprocess.Popen(command, cwd=tmp_path, env={**env, "EVALOPS_WAREHOUSE_URL": through_proxy},
                                   stdout=out, stderr=err_file, text=True)
            started = time.monotonic()
            while not silenced_at and run.poll() is None and time.monotonic() - started < 180:
                time.sleep(0.1)
            assert silenced_at, "the run ended (or stalled) before its first retriever request"
            try:  # the hang check: past the configured timeout + 10 s, `evalops run` is still waiting
                run.wait(timeout=max(0.0, silenced_at[0] + STATEMENT_TIMEOUT + 10 - time.monotonic()))
            except subprocess.TimeoutExpired:
                run.kill()
                run.wait()
                pytest.fail(f"`evalops run` hung with the warehouse silent: {err_file.read()[-2000:]}")
        err = (tmp_path / "err.txt").read_text()
        assert run.returncode == 7, ((tmp_path / "out.txt").read_text()[-1000:], err[-2000:])
        assert "did not answer" in err or "did not complete a connection" in err, err[-2000:]
        assert f"127.0.0.1:{proxy.port}" in err and "Traceback" not in err, err[-2000:]
    finally:
        proxy.stop()

    assert "running" in day_statuses(direct)  # left in flight: there was no warehouse to tell
    try:
        again = subprocess.run(command, cwd=tmp_path, env={**env, "EVALOPS_WAREHOUSE_URL": direct},
                               capture_output=True, text=True, timeout=240)
    finally:
        service.stop()
    assert again.returncode == 0, again.stderr[-2000:]
    assert set(day_statuses(direct)) == {"succeeded"}  # the re-run of the day took its rows over and finished them


def test_a_statement_the_server_never_answers_ends_at_the_client_deadline(database, monkeypatch):
    """Mid-transaction (the connection handed out and pinged): the wait for the answer has the client's
    deadline, the statement timeout + 5 s; the connection is closed and the error names the server."""
    from evalops.errors import WarehouseError
    from evalops.warehouse import create_warehouse_engine
    from evalops.warehouse._db import transaction

    monkeypatch.setenv("EVALOPS_WAREHOUSE_STATEMENT_TIMEOUT", "1")
    proxy = SilenceableProxy((database.host or "127.0.0.1", database.port or 5432))
    engine = create_warehouse_engine(database.set(host="127.0.0.1", port=proxy.port))
    outcome: list[BaseException | None] = []

    def read() -> None:
        try:
            with transaction(engine, "a read") as conn:
                conn.exec_driver_sql("SELECT 1")
                proxy.silence()
                conn.exec_driver_sql("SELECT 2")
            outcome.append(None)
        except BaseException as exc:  # handed to the test's thread
            outcome.append(exc)

    worker = threading.Thread(target=read, daemon=True)
    try:
        worker.start()
        worker.join(timeout=30)  # the hang check: the deadline is 6 s
        assert not worker.is_alive(), "the statement waited past the client's deadline"
    finally:
        proxy.stop()
        engine.dispose()
    (error,) = outcome
    assert isinstance(error, WarehouseError), error
    assert f"a read failed and was rolled back: the PostgreSQL server at 127.0.0.1:{proxy.port} did not answer " \
           "for 6 s (the client's deadline: the statement timeout from EVALOPS_WAREHOUSE_STATEMENT_TIMEOUT + 5 s)" \
           in str(error), error
