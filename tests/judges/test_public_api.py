"""The public API of evalops.judges is what __all__ says, and importing it stays light."""

from __future__ import annotations

import subprocess
import sys

import evalops.judges as judges


def test_every_exported_name_exists():
    for name in judges.__all__:
        assert hasattr(judges, name), name
    assert len(set(judges.__all__)) == len(judges.__all__)


def test_import_pulls_in_no_http_client_or_dataframe_library():
    code = "import sys, evalops.judges; print([m for m in ('httpx', 'pandas', 'sqlalchemy') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
