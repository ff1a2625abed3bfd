"""The transport package's public API is what __all__ says, and importing it does not import httpx."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import evalops.transport


def test_all_names_exist_and_nothing_public_is_undeclared():
    for name in evalops.transport.__all__:
        assert hasattr(evalops.transport, name), name
    public = {n for n in dir(evalops.transport) if not n.startswith("_")}
    submodules = {m.name for m in pkgutil.iter_modules(evalops.transport.__path__)}
    assert public - set(evalops.transport.__all__) - submodules == set()


def test_importing_transport_does_not_import_httpx():
    code = "import sys, evalops.transport; print(sorted(m for m in ('httpx', 'httpcore') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_one_http_client_in_the_package():
    # retrievers, judges and webhooks send through evalops.transport; nothing else builds an httpx client
    from pathlib import Path

    root = Path(evalops.transport.__file__).resolve().parents[1]
    users = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                   if "import httpx" in p.read_text(encoding="utf-8") and "transport" not in p.parts)
    assert users == [], users
