"""No evalops subpackage imports another in a circle, and evalops imports sit at the top of their module
(the exceptions and their reasons are below, at :data:`LAZY_IMPORTS_ALLOWED`).

The graph's nodes are the subpackages of ``evalops`` (``evalops.metrics``, ``evalops.config``, ...) and its
top-level modules (``evalops.data``, ``evalops.fingerprint``, ...). An edge is any ``import`` of one node
by a module of another, **including imports inside functions**: the project imports heavy libraries
lazily, but a lazy import between two evalops packages still ties them together (a change of one can
break the other, and neither can be understood alone), so it counts. Imports under ``if TYPE_CHECKING:``
do not count: they exist for the type checker only. Within one subpackage, modules may import each other,
but not in a circle either: the same check runs over single modules (``from evalops.a import b`` is an edge
to the module ``evalops.a.b`` when there is one, else to ``evalops.a``), so two modules of one subpackage
that can only be imported because one of them imports the other inside a function fail it too.
"""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path
from unittest import mock

# Edges allowed for now, each with the reason and what removes it. The test fails when an allowed edge is
# gone, so that the allowance is removed with it.
PENDING: dict[tuple[str, str], str] = {}


def _node(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _imports(tree: ast.AST, submodules: bool = False) -> list[tuple[str, int]]:
    """Imported module names with their lines; with ``submodules``, ``from a import b`` also yields ``a.b``
    (a submodule when one exists: the caller keeps the names that are modules)."""
    found: list[tuple[str, int]] = []

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                walk_else(child)
                continue
            if isinstance(child, ast.Import):
                found.extend((alias.name, child.lineno) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and not child.level and child.module:
                if child.module == "evalops":
                    found.extend((f"evalops.{alias.name}", child.lineno) for alias in child.names)
                else:
                    found.append((child.module, child.lineno))
                    if submodules:
                        found.extend((f"{child.module}.{alias.name}", child.lineno) for alias in child.names)
            walk(child)

    def walk_else(node: ast.If) -> None:
        for child in node.orelse:
            walk(ast.Module(body=[child], type_ignores=[]))

    walk(tree)
    return found


def import_graph(package: Path) -> dict[str, dict[str, list[str]]]:
    """``{node: {imported node: ["module:line", ...]}}`` over every module below ``package``."""
    graph: dict[str, dict[str, list[str]]] = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for target, line in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if not (target == "evalops" or target.startswith("evalops.")):
                continue
            source, imported = _node(module), _node(target)
            if imported not in (source, "evalops"):
                graph.setdefault(source, {}).setdefault(imported, []).append(f"{module}:{line}")
    return graph


def module_graph(package: Path) -> dict[str, dict[str, list[str]]]:
    """``{module: {imported module: ["module:line", ...]}}`` over the single modules below ``package``."""
    modules: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, dict[str, list[str]]] = {}
    for module, path in modules.items():
        found = _imports(ast.parse(path.read_text(encoding="utf-8")), submodules=True)
        named = {(t, line) for t, line in found}
        for target, line in found:
            if target not in modules or target == module:
                continue
            # ``from a import b`` of a submodule b: the edge goes to a.b (a's __init__ runs first, as for any
            # submodule; a package that imports its own modules is not a circle of its own)
            if any((f"{target}.{rest}", line) in named and f"{target}.{rest}" in modules
                   for rest in _names_at(found, target, line)):
                continue
            graph.setdefault(module, {}).setdefault(target, []).append(f"{module}:{line}")
    return graph


def _names_at(found: list[tuple[str, int]], module: str, line: int) -> list[str]:
    prefix = module + "."
    return [t[len(prefix):] for t, n in found if n == line and t.startswith(prefix) and "." not in t[len(prefix):]]


def cycles(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _without_pending(graph: dict[str, dict[str, list[str]]]) -> dict[str, dict[str, list[str]]]:
    return {a: {b: w for b, w in targets.items() if (a, b) not in PENDING} for a, targets in graph.items()}


def test_the_check_finds_a_cycle_through_a_lazy_import(tmp_path):
    pkg = tmp_path / "evalops"
    for name, text in {
        "__init__.py": "",
        "a/__init__.py": "from evalops.b import x\n",
        "b/__init__.py": "def f():\n    from evalops.c.mod import y\n",
        "c/__init__.py": "",
        "c/mod.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from evalops.b import x\n"
                    "def g():\n    import evalops.a\n",
        "d.py": "if TYPE_CHECKING:\n    import evalops.a\n",
    }.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text, encoding="utf-8")
    graph = import_graph(pkg)
    assert cycles(graph) == [["evalops.a", "evalops.b", "evalops.c"]]
    assert graph["evalops.c"] == {"evalops.a": ["evalops.c.mod:5"]}  # the TYPE_CHECKING import is left out
    assert "evalops.d" not in graph


def test_no_cycle_between_evalops_subpackages(repo_root):
    graph = import_graph(repo_root / "evalops")
    found = cycles(_without_pending(graph))
    details = []
    for component in found:
        for a in component:
            for b in component:
                if b in graph.get(a, {}):
                    details.append(f"{a} -> {b}: {', '.join(graph[a][b][:4])}")
    assert not found, "import cycles between evalops subpackages:\n" + "\n".join(details)


def test_the_module_check_finds_a_circle_inside_one_subpackage(tmp_path):
    pkg = tmp_path / "evalops"
    for name, text in {
        "__init__.py": "",
        "p/__init__.py": "from evalops.p.a import f\n",
        "p/a.py": "from evalops.p import b\ndef f():\n    return b\n",
        "p/b.py": "def g():\n    from evalops.p.c import h\n",
        "p/c.py": "from evalops.p.a import f as h\n",
        "p/d.py": "from evalops.p import a\n",  # the package's __init__ and its submodule: not a circle
    }.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text, encoding="utf-8")
    graph = module_graph(pkg)
    assert cycles(graph) == [["evalops.p.a", "evalops.p.b", "evalops.p.c"]]
    assert graph["evalops.p.d"] == {"evalops.p.a": ["evalops.p.d:1"]}
    assert cycles(import_graph(pkg)) == []  # one subpackage: the subpackage check cannot see it


def test_no_cycle_between_evalops_modules(repo_root):
    graph = module_graph(repo_root / "evalops")
    details = [f"{a} -> {b}: {', '.join(graph[a][b][:4])}"
               for component in cycles(graph) for a in component for b in component if b in graph.get(a, {})]
    assert not details, "import cycles between evalops modules:\n" + "\n".join(details)


def test_pending_edges_still_exist(repo_root):
    graph = import_graph(repo_root / "evalops")
    gone = [edge for edge in PENDING if edge[1] not in graph.get(edge[0], {})]
    assert not gone, f"remove these edges from PENDING, they no longer exist: {gone}"


# --- Where internal imports sit ------------------------------------------------------------------------------
#
# An ``evalops`` import sits at the top of its module, so that a module's dependencies are read in one place
# and a circle between modules fails at import, in every test, instead of hiding in a function. A function
# may import an evalops module in two cases only:
#
# * the importing module is listed below, with its reason (the modules a DAG file loads when Airflow parses
#   it: parsing runs often and must stay cheap, so they import the rest of evalops inside the tasks; and the
#   command modules whose imports would make `evalops --help` load more);
# * the imported module loads a heavy library at import time (:data:`HEAVY_LIBRARIES`) that the importing
#   module does not load already: Airflow, Great Expectations, SQLAlchemy, HTTP, pandas, scipy ... stay at
#   the edges and are imported when used, so that ``import evalops.<light module>`` and ``evalops --help``
#   stay cheap. Which libraries a module loads is read from the module-level imports (the closure over
#   evalops modules, package ``__init__`` files included).
#
# A function-level import that only breaks a circle is not allowed: move the shared piece to a lower module.

DAG_PARSE = ("loaded when Airflow parses a DAG file (tests/dags/test_dag_integrity.py, ALLOWED_EVALOPS): "
             "imports the rest of evalops inside the tasks, so that parsing stays cheap")

HELP = "a command module, which `evalops --help` imports: the modules only the command's run needs load then"

LAZY_IMPORTS_ALLOWED: dict[str, str] = {
    "evalops.airflow.dags.knowledge_base_producer": DAG_PARSE,
    "evalops.airflow.dags.promote_baseline": DAG_PARSE,
    "evalops.airflow.dags.promote_on_results": DAG_PARSE,
    "evalops.airflow.dags.retrieval_eval": DAG_PARSE,
    "evalops.airflow.tasks": DAG_PARSE,
    "evalops.config.env": DAG_PARSE + " (the import-light part of the settings: no pydantic)",
    # `evalops --help` imports every command module: what only a command's run needs is imported in it
    "evalops.cli.compare": HELP + " (evalops.abtest, evalops.formats, evalops.metrics, evalops.stats)",
    "evalops.cli.dashboard": HELP + " (the dashboard package: its pages, charts and markupsafe)",
    "evalops.cli.db": HELP + " (evalops.config's settings, evalops.metrics)",
    "evalops.cli.gate": HELP + " (evalops.gate, evalops.junit, the pipeline's run and store, the report tables)",
    "evalops.cli.pipeline": HELP + " (the Airflow runner, the settings, the demo project, the reports)",
    "evalops.cli.validate": HELP + " (the contracts, gold sets, snapshots and query logs: pandas, Great "
                                   "Expectations)",
    "evalops.warehouse": "the package front imports each part on first use (PEP 562), so that `evalops history` "
                         "loads neither the A/B tests' nor the scores' numpy; connect() is one such first use",
    "evalops.airflow.plugin": "build_app imports evalops.config when the api-server builds the app, so that a "
                              "half-installed evalops fails there and not while Airflow loads its plugins",
}

# Libraries whose import is costly or that belong to an edge; a light module does not load them when imported.
HEAVY_LIBRARIES = frozenset({
    "airflow", "alembic", "bm25s", "click", "fastapi", "great_expectations", "httpx", "jinja2", "matplotlib",
    "numpy", "openai", "pandas", "psycopg", "pyarrow", "pydantic", "pydantic_settings", "requests", "rich",
    "scipy", "sqlalchemy", "wordllama", "yaml",
})


def _modules(package: Path) -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


class _Asked(Exception):
    pass


@functools.cache
def _lazy_target(package: str, name: str) -> str | None:
    """The submodule a package's module ``__getattr__`` (PEP 562) imports for ``name``, or None (asked of
    the ``__getattr__`` without importing the submodule)."""
    module = importlib.import_module(package)
    if "__getattr__" not in vars(module):
        return None
    asked: list[str] = []

    def record(target: str, *args: object) -> None:
        asked.append(target)
        raise _Asked

    # A name the ``__getattr__`` already loaded (another test used it) sits in the namespace: asked without it,
    # so the answer does not depend on what ran before; a name the package defines itself gets no answer.
    namespace = vars(module)
    saved = namespace.pop(name, _Asked)
    try:
        with mock.patch("importlib.import_module", record):
            try:
                module.__getattr__(name)
            except (_Asked, AttributeError):
                pass
    finally:
        if saved is not _Asked:
            namespace[name] = saved
    return asked[0] if asked else None


class _Imports:
    """The imports of every evalops module: at module level and inside functions (``TYPE_CHECKING`` blocks
    left out), each evalops import resolved to the module it loads."""

    def __init__(self, package: Path, resolve_lazy: bool = True):
        self.modules = _modules(package)
        self.resolve_lazy = resolve_lazy
        self.lazy_packages = {m for m, path in self.modules.items()
                              if path.name == "__init__.py" and "__getattr__" in path.read_text(encoding="utf-8")}
        self.top: dict[str, set[str]] = {}  # module -> evalops modules and third-party roots it imports at top
        self.late: dict[str, list[tuple[int, str, set[str]]]] = {}  # module -> [(line, statement, targets)]
        for module, path in self.modules.items():
            top: set[str] = set()
            late: list[tuple[int, str, set[str]]] = []
            self._walk(ast.parse(path.read_text(encoding="utf-8")), False, top, late)
            self.top[module], self.late[module] = top, late
        self._closure: dict[str, frozenset[str]] = {}

    def _targets(self, node: ast.Import | ast.ImportFrom) -> set[str]:
        if isinstance(node, ast.Import):
            return {alias.name if alias.name.startswith("evalops") else alias.name.split(".")[0]
                    for alias in node.names}
        if node.level or not node.module:
            return set()
        if not node.module.startswith("evalops"):
            return {node.module.split(".")[0]}
        found = set()
        for alias in node.names:
            sub = f"{node.module}.{alias.name}"
            lazy = (_lazy_target(node.module, alias.name)
                    if self.resolve_lazy and sub not in self.modules and node.module in self.lazy_packages else None)
            found.add(sub if sub in self.modules else lazy or node.module)
        return found

    def _walk(self, tree: ast.AST, in_function: bool, top: set[str], late: list) -> None:
        for child in ast.iter_child_nodes(tree):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for other in child.orelse:
                    self._walk(ast.Module(body=[other], type_ignores=[]), in_function, top, late)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                targets = self._targets(child)
                if not in_function:
                    top |= targets
                elif any(t.startswith("evalops") for t in targets):
                    late.append((child.lineno, ast.unparse(child), {t for t in targets if t.startswith("evalops")}))
            self._walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)),
                       top, late)

    def heavy(self, module: str) -> frozenset[str]:
        """The heavy libraries importing ``module`` loads (its packages' ``__init__`` files included)."""
        seen: set[str] = set()
        stack = [module]
        libraries: set[str] = set()
        while stack:
            current = stack.pop()
            parts = current.split(".")
            for name in [".".join(parts[:i]) for i in range(1, len(parts) + 1)]:
                if name in seen or name not in self.modules:
                    continue
                seen.add(name)
                for target in self.top[name]:
                    if target.startswith("evalops"):
                        stack.append(target)
                    elif target in HEAVY_LIBRARIES:
                        libraries.add(target)
        return frozenset(libraries)

    def misplaced(self) -> list[str]:
        """The function-level evalops imports that belong at the top of their module."""
        found = []
        for module, late in sorted(self.late.items()):
            if module in LAZY_IMPORTS_ALLOWED:
                continue
            own = self.heavy(module)
            for line, statement, targets in late:
                light = sorted(target for target in targets if not self.heavy(target) - own)
                if light:
                    found.append(f"{module}:{line}: {statement} ({', '.join(light)} at the top)")
        return found


def test_the_check_finds_a_light_import_inside_a_function(tmp_path):
    pkg = tmp_path / "evalops"
    for name, text in {
        "__init__.py": "",
        "light.py": "import json\n",
        "edge/__init__.py": "import sqlalchemy\n",
        "edge/db.py": "X = 1\n",
        "user.py": "def f():\n    from evalops.light import json\n    from evalops.edge.db import X\n",
        "typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from evalops.light import json\n",
        "has_edge.py": "import sqlalchemy\ndef g():\n    from evalops.edge.db import X\n",
    }.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text, encoding="utf-8")
    imports = _Imports(pkg, resolve_lazy=False)
    assert imports.heavy("evalops.edge.db") == {"sqlalchemy"}  # through the package's __init__
    # evalops.light costs nothing, so its import belongs at the top; the edge's sqlalchemy justifies the
    # lazy import, unless the module loads sqlalchemy already
    assert imports.misplaced() == ["evalops.has_edge:3: from evalops.edge.db import X (evalops.edge.db at the top)",
                                   "evalops.user:2: from evalops.light import json (evalops.light at the top)"]


def test_internal_imports_are_at_the_top(repo_root):
    misplaced = _Imports(repo_root / "evalops").misplaced()
    assert not misplaced, (
        "these evalops imports inside functions load no heavy library the module does not load already: "
        "move them to the top of the module (a circle that results is fixed by moving the shared piece to a "
        "lower module, not by a late import):\n" + "\n".join(misplaced))


def test_every_module_allowed_late_imports_has_one(repo_root):
    imports = _Imports(repo_root / "evalops", resolve_lazy=False)
    stale = sorted(m for m in LAZY_IMPORTS_ALLOWED if not imports.late.get(m))
    assert not stale, f"remove these from LAZY_IMPORTS_ALLOWED, they import evalops at the top only: {stale}"
