"""Every install line names the distribution ``evalops-rag``: ``evalops`` on PyPI is another project, so no doc,
example, message or build file may tell a user to ``pip install evalops`` or ``evalops[...]``."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WRONG = re.compile(r"(pip|uv pip|pipx) install\s+(?:-\S+\s+)*[\"']?evalops(?![\w-])|uv add\s+[\"']?evalops(?![\w-])"
                   r"|(?<![\w-])evalops\[")


def _documents() -> list[Path]:
    found = [REPO / name for name in ("README.md", "Makefile", "Dockerfile", "mkdocs.yml", "docker-compose.yaml")]
    for folder, patterns in (("docs", ("*.md",)), ("include", ("*.md", "*.yaml", "*.yml")),
                             ("deploy", ("*",)), ("evalops", ("*.py", "*.html", "*.j2", "*.yaml")),
                             ("benchmarks", ("*.py",)), ("dags", ("*.py",))):
        for pattern in patterns:
            found.extend(p for p in (REPO / folder).rglob(pattern) if p.is_file())
    return [p for p in found if p.is_file()]


def test_no_install_line_names_the_other_projects_distribution():
    wrong = [f"{path.relative_to(REPO)}:{n}: {line.strip()}" for path in _documents()
             for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1) if WRONG.search(line)]
    assert not wrong, "install lines that fetch the unrelated `evalops` project:\n" + "\n".join(wrong)


def test_the_install_page_says_why_and_what_to_do_when_the_other_project_is_installed():
    page = (REPO / "docs" / "install.md").read_text()
    assert 'pip install "evalops-rag[gx,retrievers,reports]"' in page
    assert "unrelated project" in page and "pip uninstall -y evalops evalops-rag" in page
    assert "install.md" in (REPO / "mkdocs.yml").read_text()
