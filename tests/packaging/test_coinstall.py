"""evalops beside the evaluation frameworks people run it with: the built wheel (no extra) and ragas, or
deepeval, installed into one fresh venv in one command and one after the other in either order, as a user
would (no constraints file: the frameworks' own requirements decide), pass ``pip check`` with the framework at
the version it installs alone (a resolver could otherwise settle the clash by going back to an old release), and
evalops' commands still run there (deepeval pins click below 8.4 and rich below 15).

The frameworks are not in the lock, so their install reads the package registry."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from tests.packaging.conftest import Venv, clean_env, uv

pytestmark = pytest.mark.slow

ORDERS = {"together": None, "evalops first": 0, "framework first": 1}


def _install(venv: Venv, *targets: str, dry_run: bool = False) -> str:
    done = subprocess.run([uv(), "pip", "install", *(["--dry-run"] if dry_run else ["--quiet"]), "--python",
                           str(venv.bin / "python"), *targets], capture_output=True, text=True, env=clean_env(),
                          timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stderr


def _version(venv: Venv, name: str, cwd) -> str:
    done = venv.run("python", "-c", f"import importlib.metadata as m; print(m.version({name!r}))", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("order", sorted(ORDERS))
@pytest.mark.parametrize("framework", ["ragas", "deepeval"])
def test_evalops_installs_beside_the_framework_and_pip_check_passes(framework, order, artefacts, shared_data,
                                                                      tmp_path):
    root = tmp_path / "venv"
    done = subprocess.run([uv(), "venv", "--quiet", "--seed", "--python", sys.executable, str(root)],
                          capture_output=True, text=True, env=clean_env())
    assert done.returncode == 0, done.stderr
    venv = Venv(root)
    try:
        alone = re.search(rf"^ \+ {framework}==(\S+)$", _install(venv, framework, dry_run=True), re.MULTILINE)
        assert alone, f"{framework} would not be installed"
        pair = (str(artefacts.wheel), framework)
        if ORDERS[order] is None:
            _install(venv, *(pair if framework == "ragas" else pair[::-1]))  # as the install lines name them
        else:
            first = ORDERS[order]
            _install(venv, pair[first])
            _install(venv, pair[1 - first])
        check = venv.run("python", "-m", "pip", "check", cwd=tmp_path)
        assert check.returncode == 0, f"{framework}, {order}: {check.stdout}{check.stderr}"
        assert _version(venv, framework, tmp_path) == alone.group(1), f"{framework} held back by evalops ({order})"
        qrels, runs = shared_data / "scifact" / "qrels.tsv", shared_data / "scifact" / "runs"
        done = venv.run("evalops", "evaluate", qrels, runs / "bm25.trec", "-m", "nDCG@10", "--format", "json",
                        cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        assert round(json.loads(done.stdout)["measures"]["nDCG@10"]["mean"], 4) == 0.6762
        done = venv.run("evalops", "compare", qrels, runs / "bm25.trec", runs / "itsumida-te3large-zerank1-top15.trec",
                        "-m", "nDCG@10", cwd=tmp_path)
        assert done.returncode == 0 and "nDCG@10" in done.stdout, done.stderr[-3000:]
    finally:
        shutil.rmtree(root, ignore_errors=True)
