"""The lock (and so ``make venv`` and the deployment image) holds the tested set of every extra it names, the
image copies what the build of evalops-rag needs, and ``make venv`` installs compiled bytecode."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NOT_LOCKED = {"dense", "presidio"}  # need torch / Presidio; documented as outside the lock


def _pins() -> set[str]:
    return {re.sub(r"[-_.]+", "-", n).lower()
            for n in re.findall(r"^([A-Za-z0-9._-]+)==", (REPO / "requirements.lock").read_text(), re.MULTILINE)}


def test_the_lock_recipe_compiles_every_extra_and_the_lock_holds_them():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    recipe = (REPO / "Makefile").read_text().split("\nlock:", 1)[1]
    named = set(re.findall(r"--extra (\w+)", recipe))
    assert named == set(project["optional-dependencies"]) - NOT_LOCKED
    pins = _pins()
    for extra in named:
        for requirement in project["optional-dependencies"][extra]:
            if requirement.startswith(project["name"] + "["):  # another extra of evalops-rag, checked itself
                continue
            name = re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement).group(0)).lower()
            assert name in pins, f"{requirement} (extra {extra}) is not in requirements.lock: run `make lock`"
    assert {"psycopg", "psycopg-binary"} <= pins  # the postgres extra, which the image installs


def test_the_image_copies_what_the_build_reads_and_make_venv_compiles_bytecode():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    dockerfile = (REPO / "Dockerfile").read_text()
    copied = {name for line in re.findall(r"^COPY (.+)$", dockerfile, re.MULTILINE) for name in line.split()[:-1]}
    install = dockerfile.index('uv" pip install')
    for needed in ("pyproject.toml", project["readme"], *project["license-files"], "evalops"):
        assert needed in copied, f"the image's build of evalops-rag needs {needed}"
        assert dockerfile.index(needed, dockerfile.index("COPY pyproject.toml")) < install
    assert "--compile-bytecode" in dockerfile
    sync = re.search(r"uv pip sync ([^\n]*)", (REPO / "Makefile").read_text()).group(1)
    assert "--compile-bytecode" in sync
