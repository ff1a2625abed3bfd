"""The deployment image's install, checked statically: the locks it syncs and how it syncs them."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^([A-Za-z0-9._-]+)==(\S+)", re.MULTILINE)


def _pins(path: Path) -> dict[str, str]:
    return {re.sub(r"[-_.]+", "-", name).lower(): version for name, version in PIN.findall(path.read_text())}


def _requirement_blocks(path: Path) -> list[str]:
    """One string per requirement: its pin line and its ``--hash`` continuation lines."""
    body = "\n".join(line for line in path.read_text().splitlines() if not line.startswith("#"))
    return re.split(r"\n(?=[A-Za-z0-9])", body.strip())


def test_the_image_syncs_the_hash_checked_locks_with_the_makefiles_uv():
    dockerfile = (REPO / "Dockerfile").read_text()
    makefile_uv = re.search(r"^UV_VERSION\s*:=\s*(\S+)", (REPO / "Makefile").read_text(), re.MULTILINE).group(1)
    assert f"ARG UV_VERSION={makefile_uv}" in dockerfile
    sync = re.search(r"uv\" pip sync ([^\n]*\n[^\n]*)", dockerfile).group(1)
    assert "--require-hashes" in sync
    assert "requirements.lock deploy/requirements-celery.lock" in sync
    assert re.search(r"uv\" pip install [^\n]*--no-deps[^\n]* \.", dockerfile), "evalops itself: no new deps"


def test_the_celery_lock_adds_packages_without_repinning_the_main_lock():
    main = _pins(REPO / "requirements.lock")
    celery = _pins(REPO / "deploy" / "requirements-celery.lock")
    assert "apache-airflow-providers-celery" in celery and "celery" in celery and "redis" in celery
    assert set(celery) & set(main) == set(), "a package pinned twice would make the image sync ambiguous"
    for block in _requirement_blocks(REPO / "deploy" / "requirements-celery.lock"):
        assert "--hash=sha256:" in block, f"unhashed requirement: {block.splitlines()[0]}"


def test_the_build_context_leaves_out_secrets_and_local_state():
    ignored = set((REPO / ".dockerignore").read_text().split())
    assert {".env", ".venv", ".git", ".evalops", "tests"} <= ignored
    for needed in ("requirements.lock", "pyproject.toml", "README.md", "evalops", "dags", "include", "deploy"):
        assert needed not in ignored
