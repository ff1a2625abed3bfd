"""The e-mail notifier goes through Airflow's SMTP hook; an unreachable server is a NotificationError.

Runs in a child process with its own AIRFLOW_HOME (importing the SMTP provider imports Airflow) and the
``smtp_default`` connection given as an environment variable pointing at a closed port on 127.0.0.1.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.airflow

CODE = """
from evalops.alerting import EmailNotifier, NotificationError, validation_alert
alert = validation_alert(stage="gold_set", summary="broken", day="2024-06-01")
try:
    EmailNotifier(["oncall@example.com"]).send(alert)
except NotificationError as exc:
    print("NotificationError:", exc)
"""


def test_unreachable_smtp_server_is_a_notification_error(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(tmp_path / "airflow"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW_CONN_SMTP_DEFAULT": (
            f"smtp://127.0.0.1:{port}?disable_ssl=true&disable_tls=true&timeout=2&retry_limit=0"
        ),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "NotificationError: e-mail via 'smtp_default' failed (ConnectionRefusedError)" in out.stdout
