"""tools/ratchet.py: a file may keep the findings recorded for it, never more; a file not recorded has none."""

from __future__ import annotations

import configparser
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def _ratchet() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ratchet", REPO / "tools" / "ratchet.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["ratchet"] = module
    spec.loader.exec_module(module)
    return module


ratchet = _ratchet()


def test_compare_reports_growth_new_files_and_shrinkage() -> None:
    recorded = {"mypy": {"a.py": 3, "b.py": 1}, "ruff": {"a.py": 2}}
    found = {"mypy": {"a.py": 4, "b.py": 0}, "ruff": {"a.py": 2, "c.py": 1}}
    changes = ratchet.compare(recorded, found)
    assert [(c.tool, c.path, c.recorded, c.found, c.grew) for c in changes] == [
        ("mypy", "a.py", 3, 4, True), ("mypy", "b.py", 1, 0, False), ("ruff", "c.py", 0, 1, True)]
    assert ratchet.compare(recorded, recorded) == []


def test_save_keeps_files_with_findings_only(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    ratchet.save({"mypy": {"b.py": 2, "a.py": 0}, "ruff": {}}, path)
    assert json.loads(path.read_text()) == {"mypy": {"b.py": 2}, "ruff": {}}
    assert ratchet.load(path) == {"mypy": {"b.py": 2}, "ruff": {}}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small tree with mypy's and ruff's settings and one finding of each in ``pkg/mod.py``."""
    (tmp_path / "mypy.ini").write_text(f"[mypy]\nfiles = pkg\ncache_dir = {tmp_path / '.mypy_cache'}\n")
    (tmp_path / "ruff.toml").write_text('[lint]\nselect = ["F"]\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text("import os\n\n\ndef f() -> int:\n    return 'one'\n")
    return tmp_path


def test_planted_error_fails_the_ratchet(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = project / "typecheck-ratchet.json"
    args = ["--root", str(project), "--ratchet-file", str(record)]
    # nothing recorded: the existing findings are new, and the ratchet refuses them
    assert ratchet.main(args) == 1
    assert ratchet.main([*args, "--update", "--accept-growth"]) == 0
    assert json.loads(record.read_text()) == {"mypy": {"pkg/mod.py": 1}, "ruff": {"pkg/mod.py": 1}}
    assert ratchet.main(args) == 0
    capsys.readouterr()

    # one more type error in the same file: more than recorded
    mod = project / "pkg" / "mod.py"
    mod.write_text(mod.read_text() + "\n\ndef g() -> str:\n    return 2\n")
    assert ratchet.main(args) == 1
    out = capsys.readouterr().out
    assert "mypy: pkg/mod.py: 2 findings, 1 allowed" in out
    assert "pkg/mod.py:9: Incompatible return value type" in out
    assert ratchet.main([*args, "--update"]) == 1  # --update alone never records growth
    assert json.loads(record.read_text())["mypy"] == {"pkg/mod.py": 1}

    # an error in a new file fails too; fixing everything passes and says how to record it
    mod.write_text("import os\n\n\ndef f() -> int:\n    return 1\n")
    (project / "pkg" / "new.py").write_text("x = undefined_name\n")
    assert ratchet.main(args) == 1
    assert "ruff: pkg/new.py: 1 findings, 0 allowed" in capsys.readouterr().out
    (project / "pkg" / "new.py").write_text("x = 1\n")
    assert ratchet.main(args) == 0
    assert "mypy: pkg/mod.py: 1 -> 0" in capsys.readouterr().out
    assert ratchet.main([*args, "--update"]) == 0
    assert json.loads(record.read_text()) == {"mypy": {}, "ruff": {"pkg/mod.py": 1}}


def test_the_pure_core_is_strict_and_clean() -> None:
    """evalops/metrics and evalops/stats are held to the flags of `mypy --strict` with no relaxed module and no
    error recorded: a finding there fails the ratchet (a new count above zero cannot be recorded)."""
    ini = configparser.ConfigParser()
    ini.read(REPO / "mypy.ini")
    core = ("evalops.metrics", "evalops.stats")
    strict = [s for s in ini.sections() if "evalops.metrics.*" in s and "evalops.stats.*" in s]
    assert len(strict) == 1 and ini[strict[0]].getboolean("disallow_untyped_defs")
    relaxed = [s for s in ini.sections() if s != strict[0] and any(c in s for c in core)]
    assert relaxed == [], f"mypy.ini relaxes the core in {relaxed}"
    counts = json.loads((REPO / "typecheck-ratchet.json").read_text())["mypy"]
    assert [f for f in counts if f.startswith(("evalops/metrics/", "evalops/stats/"))] == []
