"""Run a real Airflow for one test, talk to its REST API, and stop it without leftovers.

Either one ``airflow standalone`` (LocalExecutor), or, with ``components``, the components one by one
(``airflow db migrate`` first), which is how a CeleryExecutor deployment with its ``airflow celery worker``
processes runs (standalone forces the LocalExecutor).

Each process is started in a new session (``setsid``), so everything it spawns (scheduler, dag-processor,
api-server, executor workers, task supervisors) shares its session id even when a task supervisor moves to
its own process group. A process that escapes the session entirely is still recognised as ours by the
unique ``AIRFLOW_HOME`` in its environment.

Shutdown escalates: SIGINT to each process group (the components' own clean stop), then SIGTERM, then
SIGKILL to every process that is still ours, each after a bounded wait.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import httpx

__all__ = ["AirflowStandalone", "Component", "StandaloneError", "component_hostname", "free_port", "wait_for"]

REPO = Path(__file__).resolve().parents[2]
USERNAME = "evalops"
COMPONENTS = ("metadatabase", "scheduler", "triggerer", "dag_processor")
FAILING = ("failed", "up_for_retry", "upstream_failed")
# A component's own name for itself, read by component_hostname (``[core] hostname_callable``).
HOSTNAME_ENV = "HARNESS_HOSTNAME"

T = TypeVar("T")


class StandaloneError(RuntimeError):
    """Airflow did not reach the expected state; the message carries the tail of its logs."""


@dataclass(frozen=True)
class Component:
    """One long-running Airflow process: its name (and log file), its command line, its extra variables."""

    name: str
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)


def component_hostname() -> str:
    """``[core] hostname_callable`` for several workers on one machine: the ``HARNESS_HOSTNAME`` of the
    process (each worker gets its own), so a task instance's ``hostname`` names the worker that ran it."""
    return os.environ.get(HOSTNAME_ENV) or socket.getfqdn()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def machine_speed_factor(reference_s: float = 3.0) -> float:
    """How much slower this machine is right now than the idle 2-core machine the budgets were set on:
    the time of a cold ``import airflow.sdk`` in a fresh interpreter (about 3 s there) over ``reference_s``,
    never below 1. Waits multiply their deadlines by it, so a loaded machine gets proportionally longer."""
    import subprocess
    import sys

    start = time.monotonic()
    subprocess.run([sys.executable, "-c", "import airflow.sdk"], check=True, capture_output=True, timeout=600)
    return max(1.0, (time.monotonic() - start) / reference_s)


def wait_for(probe: Callable[[], T | None], *, timeout: float, interval: float, what: str,
              on_timeout: Callable[[], str], deadline: float | None = None) -> T:
    """Call ``probe`` until it returns something other than None; raise with diagnostics after ``timeout``
    seconds, or at the absolute ``deadline`` (``time.monotonic()``) when that comes first."""
    start = time.monotonic()
    end = start + timeout if deadline is None else min(start + timeout, deadline)
    while True:
        result = probe()
        if result is not None:
            return result
        if time.monotonic() > end:
            raise StandaloneError(f"gave up after {time.monotonic() - start:.0f} s waiting for {what}\n"
                                  f"{on_timeout()}")
        time.sleep(interval)


def _proc_stat(pid: str) -> tuple[str, int] | None:
    """(state, session id) of a process, or None when it has gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: the fields after it start past the last ')'.
    fields = stat[stat.rindex(")") + 2:].split()
    return fields[0], int(fields[3])


def _has_env(pid: str, marker: bytes) -> bool:
    try:
        return marker in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


class AirflowStandalone:
    """One ``airflow standalone`` (LocalExecutor, SimpleAuthManager) in its own ``AIRFLOW_HOME``.

    ``env`` holds extra variables for the DAGs (warehouse URL, include paths); every ``AIRFLOW*`` and
    ``EVALOPS_*`` variable of the calling environment is dropped, so neither a developer's ``~/airflow``
    nor their evalops settings leak in.
    """

    def __init__(self, *, home: Path, dags_folder: Path, metadata_url: str, metadata_async_url: str,
                 env: dict[str, str] | None = None,
                 command: tuple[str, ...] = ("airflow", "standalone"),
                 components: Sequence[Component] = (),
                 health: Sequence[str] = COMPONENTS, speed: float = 1.0, cwd: Path | None = None) -> None:
        self.home = home
        self.cwd = cwd or home  # the components' working folder
        # machine_speed_factor(): every HTTP timeout is multiplied by it, as every wait's deadline is.
        self.speed = max(1.0, speed)
        self.dags_folder = dags_folder.resolve()
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        # Without components, one ``command`` (standalone) starts everything.
        self.components = tuple(components) or (Component("standalone", tuple(command)),)
        self.health = tuple(health)
        self.password = secrets.token_urlsafe(16)
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self._env = self._environment(metadata_url, metadata_async_url, env or {})
        self._token: str | None = None
        self.stopped_by: signal.Signals | None = None  # the signal after which nothing of ours was left
        self.escalated: dict[str, list[str]] = {}  # signal name -> command lines still running before it
        # Every wait also ends here, so a slow step fails with logs before the test's hard timeout.
        self.deadline: float | None = None

    @property
    def environment(self) -> dict[str, str]:
        """The components' environment (a copy); :meth:`update_environment` changes it before :meth:`start`."""
        return dict(self._env)

    def update_environment(self, values: dict[str, str]) -> None:
        if self.processes:
            raise StandaloneError("the environment cannot change once the components run")
        self._env.update(values)

    def _environment(self, metadata_url: str, metadata_async_url: str,
                     extra: dict[str, str]) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "EVALOPS_"))}
        venv_bin = str(Path(sys.executable).parent)
        passwords_file = self.home / "passwords.json"
        # Pre-seeded credentials: the auth manager only generates passwords for users missing from the file.
        passwords_file.write_text(json.dumps({USERNAME: self.password}))
        env.update({
            "PATH": f"{venv_bin}{os.pathsep}{env.get('PATH', '')}",
            "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p),
            "AIRFLOW_HOME": str(self.home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(self.dags_folder),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            # LocalExecutor forks one worker per parallelism slot (default 32); a few suffice here.
            "AIRFLOW__CORE__PARALLELISM": "4",
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{self.base_url}/execution/",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{USERNAME}:admin",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords_file),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": metadata_url,
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC": metadata_async_url,
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__API__PORT": str(self.port),
            "AIRFLOW__API__BASE_URL": self.base_url,
            "AIRFLOW__API__WORKERS": "1",
            "AIRFLOW__API__SECRET_KEY": secrets.token_hex(16),
            "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_hex(32),
            # The log servers default to fixed ports (8793/8794) that concurrent runs would fight over.
            "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
            "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(free_port()),
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
        })
        env.update(extra)
        return env

    # -- lifecycle ---------------------------------------------------------------------------------

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The first component's process (standalone itself when there is only that one)."""
        return self.processes.get(self.components[0].name)

    @property
    def log_path(self) -> Path:
        return self.log_of(self.components[0].name)

    def log_of(self, name: str) -> Path:
        return self.home / f"{name}.log"

    def initialize(self, timeout: float) -> None:
        """``airflow db migrate``, as standalone does before it starts the components (the metadata
        database must exist before the scheduler and api-server connect)."""
        result = subprocess.run(["airflow", "db", "migrate"], cwd=self.home, env=self._env,
                                stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                                start_new_session=True)
        if result.returncode != 0:
            raise StandaloneError(f"airflow db migrate exited with code {result.returncode}:\n"
                                  + result.stdout.decode(errors="replace")[-4000:]
                                  + result.stderr.decode(errors="replace")[-4000:])

    def start(self) -> None:
        # the stop begins with SIGINT: a process started with it ignored (under `nohup`, or as a background
        # job of a non-interactive shell) would pass that on and ignore it; the components get the default
        prefix = ["env", "--default-signal=INT"] if signal.getsignal(signal.SIGINT) == signal.SIG_IGN else []
        for component in self.components:
            with open(self.log_of(component.name), "wb") as log:
                self.processes[component.name] = subprocess.Popen(
                    [*prefix, *component.argv], cwd=self.cwd, env={**self._env, **component.env},
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    start_new_session=True,  # setsid: the new session and process group are ours alone
                )

    def wait_healthy(self, timeout: float = 150.0) -> dict:
        """Wait until the metadata DB and the ``health`` components (by default the scheduler, triggerer
        and dag-processor) all report healthy."""

        def probe() -> dict | None:
            self._raise_if_exited("becoming healthy")
            try:
                health = httpx.get(f"{self.base_url}/api/v2/monitor/health", timeout=self.http_timeout(5)).json()
            except (httpx.HTTPError, ValueError):
                return None
            healthy = all((health.get(c) or {}).get("status") == "healthy" for c in self.health)
            return health if healthy else None

        return wait_for(probe, timeout=timeout, interval=1.0, what="airflow to become healthy",
                        on_timeout=self.diagnostics, deadline=self.deadline)

    def wait_for_log(self, name: str, text: str, timeout: float) -> None:
        """Wait until component ``name`` has written ``text`` to its log (a worker's "ready")."""

        def probe() -> bool | None:
            self._raise_if_exited(f"waiting for {name} to log {text!r}")
            try:
                return True if text in self.log_of(name).read_text(errors="replace") else None
            except OSError:
                return None

        wait_for(probe, timeout=timeout, interval=1.0, what=f"{name} to log {text!r}",
                 on_timeout=self.diagnostics, deadline=self.deadline)

    def _raise_if_exited(self, doing: str) -> None:
        for name, process in self.processes.items():
            if process.poll() is not None:
                raise StandaloneError(
                    f"airflow {name} exited with code {process.returncode} while {doing}\n" + self.diagnostics()
                )

    def owned_pids(self) -> list[int]:
        """Live processes that belong to this Airflow: its components' sessions, or its unique AIRFLOW_HOME."""
        if not self.processes:
            return []
        for process in self.processes.values():
            process.poll()  # reap the leaders so they do not linger as zombies
        sessions = {process.pid for process in self.processes.values()}
        marker = f"AIRFLOW_HOME={self.home}".encode()
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            stat = _proc_stat(entry)
            if stat is None or stat[0] in ("Z", "X"):
                continue
            if stat[1] in sessions or _has_env(entry, marker):
                pids.append(int(entry))
        return pids

    def stop(self, *, sigint_wait: float = 20.0, sigterm_wait: float = 10.0,
             sigkill_wait: float = 5.0) -> list[int]:
        """Stop everything; return the pids still alive afterwards (empty when the stop was clean)."""
        if not self.processes:
            return []
        for process in self.processes.values():
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGINT)
                except ProcessLookupError:
                    pass
        for sig, wait in ((signal.SIGINT, sigint_wait), (signal.SIGTERM, sigterm_wait),
                          (signal.SIGKILL, sigkill_wait)):
            if sig is not signal.SIGINT:
                self.escalated.setdefault(sig.name, self._command_lines())
                self._signal_all(sig)
            if self._wait_gone(wait):
                self.stopped_by = sig
                return []
        return self.owned_pids()

    def _command_lines(self) -> list[str]:
        lines = []
        for pid in self.owned_pids():
            try:
                lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip())
            except OSError:
                continue
        return lines

    def _signal_all(self, sig: signal.Signals) -> None:
        for pid in self.owned_pids():
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def _wait_gone(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.owned_pids():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.25)
        for process in self.processes.values():
            process.wait(timeout=5)
        return True

    # -- REST API ----------------------------------------------------------------------------------

    def http_timeout(self, idle_seconds: float) -> float:
        """An HTTP timeout of ``idle_seconds`` on the idle machine, scaled by the measured speed; never
        past the run's deadline by more than the idle value (a slow step still fails with logs)."""
        scaled = idle_seconds * self.speed
        if self.deadline is not None:
            scaled = min(scaled, max(idle_seconds, self.deadline - time.monotonic()))
        return scaled

    def token(self) -> str:
        """A bearer token from ``POST /auth/token`` with the pre-seeded admin credentials."""
        if self._token is None:
            response = httpx.post(f"{self.base_url}/auth/token",
                                  json={"username": USERNAME, "password": self.password},
                                  timeout=self.http_timeout(10))
            if response.status_code != 201:
                raise StandaloneError(f"POST /auth/token returned {response.status_code}: {response.text}\n"
                                      + self.diagnostics())
            self._token = response.json()["access_token"]
        return self._token

    def request(self, method: str, path: str, *, expect: Iterable[int] = (200,), **kwargs) -> httpx.Response:
        """An authenticated REST call; a status outside ``expect`` raises with the response and log tail."""
        headers = {"Authorization": f"Bearer {self.token()}"}
        response = httpx.request(method, f"{self.base_url}{path}", headers=headers, timeout=self.http_timeout(30),
                                 **kwargs)
        if response.status_code not in tuple(expect):
            raise StandaloneError(f"{method} {path} returned {response.status_code}: {response.text}\n"
                                  + self.diagnostics())
        return response

    def wait_for_dag(self, dag_id: str, timeout: float = 90.0) -> dict:
        """Wait until the dag-processor has parsed ``dag_id``; fail at once on a DAG import error."""

        def probe() -> dict | None:
            self._raise_if_exited(f"parsing {dag_id}")
            errors = self.request("GET", "/api/v2/importErrors").json()["import_errors"]
            if errors:
                raise StandaloneError("DAG import errors:\n" + "\n".join(
                    f"{e['filename']}: {e['stack_trace']}" for e in errors))
            response = self.request("GET", f"/api/v2/dags/{dag_id}", expect=(200, 404))
            return response.json() if response.status_code == 200 else None

        return wait_for(probe, timeout=timeout, interval=2.0, what=f"DAG {dag_id} to be parsed",
                        on_timeout=self.diagnostics, deadline=self.deadline)

    def unpause(self, dag_id: str) -> None:
        body = self.request("PATCH", f"/api/v2/dags/{dag_id}", json={"is_paused": False}).json()
        if body["is_paused"]:
            raise StandaloneError(f"PATCH /api/v2/dags/{dag_id} left the DAG paused: {body}")

    def asset_id(self, name: str) -> int:
        """The id of the asset named ``name`` (the events endpoint takes ids, not names)."""
        assets = self.request("GET", "/api/v2/assets", params={"name_pattern": name}).json()["assets"]
        matches = [a["id"] for a in assets if a["name"] == name]
        if len(matches) != 1:
            raise StandaloneError(f"expected one asset named {name!r}, the API lists {assets}")
        return matches[0]

    def post_asset_event(self, name: str, extra: dict) -> dict:
        """``POST /api/v2/assets/events``: what a knowledge-base pipeline calls after an update."""
        return self.request("POST", "/api/v2/assets/events", expect=(200,),
                            json={"asset_id": self.asset_id(name), "extra": extra}).json()

    def wait_for_run(self, dag_id: str, *, run_type: str, timeout: float) -> dict:
        """Wait until a run of ``run_type`` exists and has finished (success or failed); return it.

        A task that fails or is waiting for a retry ends the wait at once: retries only add minutes
        before the same failure, and the task log is what the reader needs.
        """

        def probe() -> dict | None:
            self._raise_if_exited(f"waiting for a {run_type} run of {dag_id}")
            runs = self.request("GET", f"/api/v2/dags/{dag_id}/dagRuns",
                                params={"run_type": run_type}).json()["dag_runs"]
            for run in runs:
                if run["state"] in ("success", "failed"):
                    return run
                broken = [f"{ti['task_id']}[{ti['map_index']}]={ti['state']}"
                          for ti in self.task_instances(dag_id, run["dag_run_id"]) if ti["state"] in FAILING]
                if broken:
                    raise StandaloneError(f"run {run['dag_run_id']} of {dag_id} has failing tasks: {broken}\n"
                                          f"{self.run_summary(dag_id)}\n{self.diagnostics()}")
            return None

        return wait_for(probe, timeout=timeout, interval=2.0, what=f"a finished {run_type} run of {dag_id}",
                        on_timeout=lambda: self.run_summary(dag_id) + "\n" + self.diagnostics(),
                        deadline=self.deadline)

    def cancel_scheduled_run(self, dag_id: str, timeout: float) -> str | None:
        """Mark the daily run that unpausing creates (``catchup=False`` keeps the latest one) failed, so an
        asset-triggered run does not queue behind it under ``max_active_runs=1``. Returns its run id, or
        None when none appeared within ``timeout`` (the DAG has no time schedule)."""

        def probe() -> dict | None:
            runs = self.request("GET", f"/api/v2/dags/{dag_id}/dagRuns",
                                params={"run_type": "scheduled"}).json()["dag_runs"]
            return runs[0] if runs else None

        try:
            run = wait_for(probe, timeout=timeout, interval=1.0, what=f"the daily run of {dag_id}",
                           on_timeout=lambda: "", deadline=self.deadline)
        except StandaloneError:
            return None
        if run["state"] not in ("success", "failed"):
            self.request("PATCH", f"/api/v2/dags/{dag_id}/dagRuns/{run['dag_run_id']}", json={"state": "failed"})
        return run["dag_run_id"]

    def task_instances(self, dag_id: str, run_id: str) -> list[dict]:
        return self.request("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances",
                            params={"limit": 1000}).json()["task_instances"]

    def triggering_events(self, dag_id: str, run_id: str) -> list[dict]:
        """The asset events that triggered a run, as the scheduler recorded them."""
        return self.request("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/upstreamAssetEvents"
                            ).json()["asset_events"]

    def run_summary(self, dag_id: str) -> str:
        """Every run of ``dag_id`` with its task-instance states, for failure messages."""
        lines = []
        try:
            runs = self.request("GET", f"/api/v2/dags/{dag_id}/dagRuns").json()["dag_runs"]
            for run in runs:
                lines.append(f"run {run['dag_run_id']} type={run['run_type']} state={run['state']}")
                tis = self.task_instances(dag_id, run["dag_run_id"])
                lines.extend(f"  {ti['task_id']}[{ti['map_index']}] {ti['state']} try={ti['try_number']}"
                             for ti in tis)
        except (StandaloneError, httpx.HTTPError) as exc:
            lines.append(f"(could not list runs: {exc.__class__.__name__})")
        return "\n".join(lines) or f"(no runs of {dag_id})"

    # -- diagnostics -------------------------------------------------------------------------------

    def log_tail(self, lines: int = 60) -> str:
        """The last ``lines`` of each component's log (standalone's alone when it is the only one)."""
        parts = []
        for component in self.components:
            try:
                text = "\n".join(self.log_of(component.name).read_text(errors="replace").splitlines()[-lines:])
            except OSError:
                text = f"(no {component.name} log)"
            parts.append(text if len(self.components) == 1 else f"--- {component.name} ---\n{text}")
        return "\n".join(parts)

    def task_log_tails(self, lines: int = 40) -> str:
        logs = sorted((self.home / "logs").glob("dag_id=*/**/*.log"), key=lambda p: p.stat().st_mtime)
        parts = []
        for path in logs[-4:]:
            text = path.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"--- {path.relative_to(self.home)} ---\n" + "\n".join(text))
        return "\n".join(parts) or "(no task logs)"

    def diagnostics(self) -> str:
        return (f"--- airflow log (tail) ---\n{self.log_tail()}\n"
                f"--- task logs (tail) ---\n{self.task_log_tails()}")
