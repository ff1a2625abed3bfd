"""The built distribution, as a user gets it: the wheel and the sdist built from this checkout, and fresh virtual
environments with the wheel installed (one per set of extras, built once per session).

Built with the uv that ``make venv`` installs. The installs take the versions of requirements.lock as
constraints, so they are the tested set and come from uv's cache (filled by ``make venv``) when it holds them;
uv asks the registry only for what the cache lacks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "requirements.lock"


def uv() -> str:
    beside = Path(sys.executable).parent / "uv"
    found = str(beside) if beside.is_file() else shutil.which("uv")
    if not found:
        pytest.fail("uv is missing: `make venv` installs it into the venv beside python")
    return found


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a new user's shell: no EVALOPS_*, no PYTHONPATH, no venv of this checkout; what
    reaches the registry (uv's settings, proxies, certificates) and uv's cache are kept."""
    keep = ("HOME", "LANG", "LC_ALL", "TMPDIR", "XDG_CACHE_HOME", "SSL_CERT_FILE", "SSL_CERT_DIR", "PIP_CERT",
            "REQUESTS_CA_BUNDLE")
    env = {k: v for k, v in os.environ.items()
           if k in keep or k.startswith("UV_") or k.lower() in ("http_proxy", "https_proxy", "no_proxy", "all_proxy")}
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    env.update(extra)
    return env


@dataclass(frozen=True)
class Artefacts:
    wheel: Path
    sdist: Path

    def wheel_names(self) -> set[str]:
        with zipfile.ZipFile(self.wheel) as zf:
            return set(zf.namelist())

    def sdist_names(self) -> set[str]:
        import tarfile

        with tarfile.open(self.sdist) as tf:
            names = tf.getnames()
        root = names[0].split("/")[0]
        return {n[len(root) + 1:] for n in names if n.startswith(root + "/")}


def source_files() -> list[str]:
    """The checkout's files as a fresh clone has them: tracked, or new and not ignored (no build leftovers:
    setuptools would take a stale ``*.egg-info/SOURCES.txt`` as the sdist's file list)."""
    done = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return [f for f in done.stdout.split("\0") if f and (REPO / f).is_file()]


@pytest.fixture(scope="session")
def artefacts(tmp_path_factory) -> Artefacts:
    """``uv build`` of a clean copy of the source: the sdist, then the wheel built from the sdist (so a file
    missing from the sdist is missing from the wheel too)."""
    source = tmp_path_factory.mktemp("source")
    for name in source_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, source / name)
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([uv(), "build", "--quiet", "--out-dir", str(out), str(source)], capture_output=True,
                          text=True, env=clean_env(), cwd=out)
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return Artefacts(wheel, sdist)


@dataclass(frozen=True)
class Venv:
    root: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def run(self, *args: str | os.PathLike[str], cwd: Path, env: dict[str, str] | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess:
        """``args[0]`` is a script of the venv's bin (``evalops``, ``python``, ``airflow``)."""
        cmd = [str(self.bin / str(args[0])), *map(str, args[1:])]
        full = clean_env(PATH=f"{self.bin}:/usr/local/bin:/usr/bin:/bin", VIRTUAL_ENV=str(self.root), **(env or {}))
        return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=full, timeout=timeout)


def make_venv(folder: Path, wheel: Path, extras: tuple[str, ...]) -> Venv:
    """A fresh venv (not the checkout's: no ``.pth`` of an editable install) with ``wheel[extras]``."""
    done = subprocess.run([uv(), "venv", "--quiet", "--python", sys.executable, str(folder)], capture_output=True,
                          text=True, env=clean_env())
    assert done.returncode == 0, done.stderr
    target = f"{wheel}[{','.join(extras)}]" if extras else str(wheel)
    install = [uv(), "pip", "install", "--quiet", "--python", str(folder / "bin" / "python"), "-c", str(LOCK), target]
    done = subprocess.run([*install, "--offline"], capture_output=True, text=True, env=clean_env())
    if done.returncode != 0:  # the cache lacks a package: let uv fetch it from the registry
        done = subprocess.run(install, capture_output=True, text=True, env=clean_env())
    assert done.returncode == 0, done.stderr[-3000:]
    return Venv(folder)


@pytest.fixture(scope="session")
def base_venv(artefacts, tmp_path_factory) -> Venv:
    """The wheel with no extra."""
    return make_venv(tmp_path_factory.mktemp("venv") / "base", artefacts.wheel, ())


@pytest.fixture(scope="session")
def pipeline_venv(artefacts, tmp_path_factory) -> Venv:
    """The wheel with the ``pipeline`` extra (every command; no Airflow, no Great Expectations)."""
    return make_venv(tmp_path_factory.mktemp("venv") / "pipeline", artefacts.wheel, ("pipeline",))


@pytest.fixture(scope="session")
def user_venv(artefacts, tmp_path_factory) -> Venv:
    """The wheel with the extras docs/install.md tells a user with Airflow to name."""
    return make_venv(tmp_path_factory.mktemp("venv") / "user", artefacts.wheel,
                     ("airflow", "gx", "retrievers", "reports"))


@pytest.fixture
def scifact_copy(tmp_path, shared_data) -> Path:
    """A copy of SciFact in this test's folder (made at test time; the project never holds it)."""
    target = tmp_path / "data" / "scifact"
    shutil.copytree(shared_data / "scifact", target)
    return target
