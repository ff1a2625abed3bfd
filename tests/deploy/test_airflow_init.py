"""deploy/airflow-init.sh (the compose init job), with ``airflow`` and ``evalops`` replaced by recorders.

The real commands are exercised elsewhere (the scheduler test migrates a real metadata database); this
checks the script's own logic: order, fail-fast, and the admin password file.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "deploy" / "airflow-init.sh"


def _recorders(bin_dir: Path, calls: Path, fail: str | None = None) -> None:
    bin_dir.mkdir()
    for name in ("airflow", "evalops"):
        code = 1 if name == fail else 0
        (bin_dir / name).write_text(f'#!/bin/sh\necho "{name} $*" >> "{calls}"\nexit {code}\n')
        (bin_dir / name).chmod(0o755)
    (bin_dir / "python").symlink_to(sys.executable)


def _run(tmp_path: Path, fail: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    calls = tmp_path / "calls.txt"
    _recorders(tmp_path / "bin", calls, fail)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "EVALOPS"))}
    base.update({
        "PATH": f"{tmp_path / 'bin'}:{base.get('PATH', '')}",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(tmp_path / "auth" / "passwords.json"),
        "EVALOPS_WAREHOUSE_URL": "postgresql+psycopg://evalops:pw@postgres:5432/evalops",
        "AIRFLOW_ADMIN_PASSWORD": "s3cret-admin",
    })
    base.update(env)
    return subprocess.run(["bash", str(SCRIPT)], env=base, capture_output=True, text=True, timeout=60)


def test_init_migrates_airflow_writes_the_admin_password_then_migrates_the_warehouse(tmp_path):
    passwords = tmp_path / "auth" / "passwords.json"
    passwords.parent.mkdir()
    passwords.write_text(json.dumps({"ops": "kept"}))
    result = _run(tmp_path, AIRFLOW_ADMIN_USER="root-admin")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "calls.txt").read_text().splitlines() == ["airflow db migrate", "evalops db upgrade"]
    assert json.loads(passwords.read_text()) == {"ops": "kept", "root-admin": "s3cret-admin"}
    assert stat.S_IMODE(passwords.stat().st_mode) == 0o600
    assert "s3cret-admin" not in result.stdout + result.stderr


def test_init_stops_at_the_first_failing_step(tmp_path):
    result = _run(tmp_path, fail="airflow")
    assert result.returncode != 0
    assert (tmp_path / "calls.txt").read_text().splitlines() == ["airflow db migrate"]
    assert not (tmp_path / "auth" / "passwords.json").exists()


def test_init_refuses_to_start_without_an_admin_password(tmp_path):
    result = _run(tmp_path, AIRFLOW_ADMIN_PASSWORD="")
    assert result.returncode != 0
    assert "AIRFLOW_ADMIN_PASSWORD" in result.stderr
    assert not (tmp_path / "calls.txt").exists()
