"""The harness's shutdown, checked on stand-in process trees (no Airflow): it must never leave one behind."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

from standalone_harness import AirflowStandalone, wait_for

URL = "postgresql+psycopg://unused@127.0.0.1:1/unused"  # never connected to: the stand-ins ignore it


def _standalone(home: Path, *command: str) -> AirflowStandalone:
    home.mkdir(exist_ok=True)
    return AirflowStandalone(home=home, dags_folder=home, metadata_url=URL, metadata_async_url=URL,
                             command=command)


def _stat_fields(pid: int) -> list[str]:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2:].split()  # [state, ppid, pgrp, session, ...]


def _session(pid: int) -> int:
    return int(_stat_fields(pid)[3])


def _is_dead(pid: int) -> bool:
    """Gone, or a zombie waiting for init to reap it (it runs nothing any more)."""
    try:
        return _stat_fields(pid)[0] in ("Z", "X")
    except FileNotFoundError:
        return True


# Waits end on a state; these deadlines only bound a real hang, so a loaded machine never fails them.
WAIT_S = 120


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def _wait_for_tree(standalone: AirflowStandalone, commands: list[str]) -> list[int]:
    """Wait until our live processes run exactly ``commands`` (a child forked but not yet exec'd still runs
    its parent's command line, and a signal then would hit the parent's handlers, not the child's)."""

    def probe() -> list[int] | None:
        pids = standalone.owned_pids()
        return pids if sorted(_command_line(p) for p in pids) == sorted(commands) else None

    return wait_for(probe, timeout=WAIT_S, interval=0.05, what=f"the stand-in processes {commands}",
                    on_timeout=lambda: f"{[_command_line(p) for p in standalone.owned_pids()]}\n"
                                       f"{standalone.log_tail()}")


def _wait_for_pids(standalone: AirflowStandalone, count: int) -> list[int]:
    return wait_for(lambda: (p if len(p := standalone.owned_pids()) >= count else None), timeout=WAIT_S,
                    interval=0.05, what=f"{count} stand-in processes", on_timeout=standalone.log_tail)


def test_sigint_to_the_group_is_enough_for_a_well_behaved_tree(tmp_path):
    # Python rather than sh: a non-interactive shell starts background jobs with SIGINT ignored. The tree
    # says "ready" once both children run `sleep` (Popen returns after the exec) and it is about to wait:
    # a SIGINT before that could land in a child between fork and exec, which Python's handler swallows.
    tree = ("import subprocess; children = [subprocess.Popen(['sleep', '600']) for _ in range(2)]; "
            "print('ready', flush=True); [p.wait() for p in children]")
    standalone = _standalone(tmp_path, sys.executable, "-c", tree)
    standalone.start()
    try:
        standalone.wait_for_log("standalone", "ready", timeout=WAIT_S)
        assert len(_wait_for_tree(standalone, ["sleep 600", "sleep 600", f"{sys.executable} -c {tree}"])) == 3
    finally:
        # Ends as soon as the tree is gone; the long bound only leaves a loaded machine time to get there.
        leftover = standalone.stop(sigint_wait=WAIT_S)
    assert leftover == []
    assert standalone.stopped_by is signal.SIGINT
    assert standalone.escalated == {}


def test_stop_escalates_to_sigkill_and_reaches_processes_that_left_the_session(tmp_path):
    # Every process ignores SIGINT and SIGTERM; one detaches with setsid, as a task's subprocess may.
    script = 'trap "" INT TERM; setsid sleep 600 & sleep 600 & wait'
    standalone = _standalone(tmp_path, "sh", "-c", script)
    standalone.start()
    try:
        # Both children must have exec'd `sleep` (setsid's own exec comes after it left the session).
        pids = _wait_for_tree(standalone, ["sleep 600", "sleep 600", f"sh -c {script}"])
        escaped = wait_for(
            lambda: (e if len(e := [p for p in pids if _session(p) != standalone.process.pid]) == 1 else None),
            timeout=WAIT_S, interval=0.05, what="the setsid child to leave the session",
            on_timeout=standalone.log_tail)
        assert len(escaped) == 1, "the setsid child must be found through its AIRFLOW_HOME, not its session"
    finally:
        # The tree ignores SIGINT and SIGTERM: those waits are short on purpose; SIGKILL's is a bound.
        leftover = standalone.stop(sigint_wait=0.5, sigterm_wait=0.5, sigkill_wait=WAIT_S)
    assert leftover == []
    assert standalone.stopped_by is signal.SIGKILL
    assert set(standalone.escalated) == {"SIGTERM", "SIGKILL"}
    assert sorted(standalone.escalated["SIGKILL"]) == sorted(["sleep 600", "sleep 600", f"sh -c {script}"])
    assert [pid for pid in pids if not _is_dead(pid)] == []


def test_a_stranger_with_another_airflow_home_is_not_ours(tmp_path):
    ours = _standalone(tmp_path / "a", "sleep", "600")
    other = _standalone(tmp_path / "b", "sleep", "600")
    ours.start()
    other.start()
    try:
        mine = _wait_for_pids(ours, 1)
        theirs = _wait_for_pids(other, 1)
        assert set(mine).isdisjoint(theirs)
    finally:
        assert ours.stop(sigint_wait=WAIT_S) == []
        assert other.stop(sigint_wait=WAIT_S) == []


def test_http_timeouts_scale_with_the_measured_speed_within_the_deadline(tmp_path):
    import time

    slow = AirflowStandalone(home=tmp_path, dags_folder=tmp_path, metadata_url=URL, metadata_async_url=URL,
                             speed=3.0)
    assert slow.http_timeout(30) == 90.0
    assert _standalone(tmp_path / "idle", "true").http_timeout(30) == 30.0
    slow.deadline = time.monotonic() + 40  # near the end of the budget: no later than it, at least the idle value
    assert 30.0 <= slow.http_timeout(30) <= 40.0
    slow.deadline = time.monotonic() + 1
    assert slow.http_timeout(30) == 30.0
