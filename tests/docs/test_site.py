"""The documentation site builds with ``mkdocs build --strict``: a broken link, a missing anchor, a page left
out of the nav or a stale ``::: module`` reference fails the build, and so this test.

The build needs no network: Material's web fonts are off (``theme.font: false``) and no plugin that
downloads (social cards, privacy) is configured. The two negative tests break a small copy of the site and
check that the configuration really turns each mistake into a failure.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "mkdocs.yml"

pytestmark = pytest.mark.slow

DOWNLOADING_PLUGINS = {"social", "privacy", "material/social", "material/privacy", "optimize", "material/optimize"}


def _build(config: Path, site_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONWARNINGS": "ignore::DeprecationWarning"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site_dir)], cwd=config.parent, env=env, capture_output=True,
                          text=True, timeout=600)


def _site_config() -> dict:
    return yaml.safe_load(CONFIG.read_text(encoding="utf-8"))


def _plugin_names(config: dict) -> set[str]:
    return {next(iter(p)) if isinstance(p, dict) else p for p in config.get("plugins", [])}


def test_the_site_builds_strict_without_warnings(tmp_path):
    done = _build(CONFIG, tmp_path / "site")
    log = done.stdout + done.stderr
    warnings = [line for line in log.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert done.returncode == 0 and not warnings, log[-6000:]
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis.com" not in index and "fonts.gstatic.com" not in index
    api = (tmp_path / "site" / "api" / "metrics" / "index.html").read_text(encoding="utf-8")
    assert 'id="evalops.metrics.evaluate"' in api  # the API pages are generated from the docstrings
    from evalops.cli import COMMANDS

    cli = (tmp_path / "site" / "cli-reference" / "index.html").read_text(encoding="utf-8")
    assert all(f'id="evalops-{name}"' in cli for name in COMMANDS), "a command is missing from the CLI reference"
    assert 'id="evalops-db-upgrade"' in cli and "Usage: evalops db upgrade" in cli  # sub-commands of groups too
    pages = [p.read_text(encoding="utf-8") for p in (tmp_path / "site" / "api").rglob("index.html")]
    assert not [p for p in pages if re.search(r":(func|class|mod|meth|data):<code>", p)]  # docs/hooks/rst_roles.py


def test_the_build_needs_no_network():
    config = _site_config()
    assert config["theme"]["name"] == "material" and config["theme"].get("font") is False
    assert not _plugin_names(config) & DOWNLOADING_PLUGINS
    assert config.get("strict") is True


def _small_site(tmp_path: Path, index: str, extra_pages: dict[str, str] | None = None) -> Path:
    """A copy of the real configuration over a docs folder of a few pages."""
    config = _site_config()
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text(index, encoding="utf-8")
    nav = [{"Home": "index.md"}]
    for name, text in (extra_pages or {}).items():
        (docs / name).write_text(text, encoding="utf-8")
        nav.append(name)
    config.update(docs_dir=str(docs), nav=nav, hooks=[str(REPO / hook) for hook in config.get("hooks", [])])
    handlers = config["plugins"][[_plugin_names({"plugins": [p]}) == {"mkdocstrings"}
                                  for p in config["plugins"]].index(True)]["mkdocstrings"]["handlers"]
    handlers["python"]["paths"] = [str(REPO)]
    path = tmp_path / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_a_small_copy_of_the_site_builds(tmp_path):
    """The baseline for the negative tests: the copied configuration itself is sound."""
    config = _small_site(tmp_path, "# Home\n\nSee [the API](api.md#evalops.exitcodes.ExitCode).\n",
                         {"api.md": "# API\n\n::: evalops.exitcodes\n"})
    done = _build(config, tmp_path / "site")
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]


@pytest.mark.parametrize("index, pages, expected", [
    ("# Home\n\n[gone](missing.md)\n", {}, "missing.md"),
    ("# Home\n\n[gone](api.md#no-such-anchor)\n", {"api.md": "# API\n"}, "no-such-anchor"),
    ("# Home\n\n::: evalops.no_such_module\n", {}, "no_such_module"),
], ids=["broken-link", "missing-anchor", "stale-reference"])
def test_a_mistake_fails_the_strict_build(tmp_path, index, pages, expected):
    config = _small_site(tmp_path, index, pages)
    done = _build(config, tmp_path / "site")
    log = done.stdout + done.stderr
    assert done.returncode != 0 and expected in log, log[-4000:]


def test_the_readme_links_resolve_and_stay_short(repo_root):
    """The README is outside the site, so its links are checked here: each relative one names a file."""
    readme = (repo_root / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", readme)
    local = [t.split("#", 1)[0] for t in targets if not re.match(r"[a-z]+:", t)]
    assert local and all((repo_root / t).is_file() for t in local), [t for t in local if not (repo_root / t).is_file()]
    assert readme.startswith("# evalops\n\n```bash\nmake demo\nmake test\n```\n")
    assert len(readme.splitlines()) < 250
