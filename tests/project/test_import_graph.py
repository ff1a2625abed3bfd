"""No evalops subpackage imports another in a circle.

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
from pathlib import Path

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
