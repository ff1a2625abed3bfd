"""One type holds a decided comparison's fields: ``evalops.stats.Comparison``. The warehouse row, the report row,
the gate case and the decided comparison of a run hold it and declare none of its fields; no class forwards
attribute reads to it; one class is named ``Decision``.

The ``ab_tests`` table (``ABTestModel``) stores it once: its ``record``, with the two columns SQL reads
(``decision``, ``policy``)."""

from __future__ import annotations

import ast
from pathlib import Path

EVALOPS = Path(__file__).resolve().parents[2] / "evalops"

# a decided comparison: its delta, a p-value and the decision read from them
_DECIDED = ({"delta"}, {"p_value", "p_adjusted"}, {"decision"})


def _classes() -> list[tuple[str, ast.ClassDef]]:
    found = []
    for path in sorted(EVALOPS.rglob("*.py")):
        module = ".".join(path.relative_to(EVALOPS.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                found.append((module, node))
    return found


def _declared(node: ast.ClassDef) -> set[str]:
    """The names a class body declares: annotated fields (dataclasses, pydantic models, ORM columns) and
    plain assignments."""
    names = set()
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.add(item.target.id)
        elif isinstance(item, ast.Assign):
            names.update(t.id for t in item.targets if isinstance(t, ast.Name))
    return names


def holders(classes: list[tuple[str, ast.ClassDef]]) -> list[str]:
    return sorted(f"{module}.{node.name}" for module, node in classes
                  if all(_declared(node) & group for group in _DECIDED))


def test_exactly_one_type_holds_the_fields_of_a_decided_comparison():
    assert holders(_classes()) == ["evalops.stats.compare.Comparison"]


def test_the_check_finds_a_second_holder():
    source = ast.parse("class Row:\n    delta: float\n    p_adjusted: float\n    decision: str\n"
                       "class Other:\n    delta: float\n")
    classes = [("m", n) for n in source.body if isinstance(n, ast.ClassDef)]
    assert holders(classes) == ["m.Row"]


def _forwards_a_comparison(node: ast.ClassDef) -> bool:
    """A ``__getattr__`` that reads a held comparison or record (what the report row, the gate case and the
    stored record did) makes the class a second shape of it."""
    return any(isinstance(item, ast.FunctionDef) and item.name == "__getattr__"
               and any(word in ast.unparse(item) for word in ("comparison", "record", "RECORD_FIELDS"))
               for item in node.body)


def test_no_class_forwards_attribute_reads_to_a_comparison():
    assert sorted(f"{m}.{n.name}" for m, n in _classes() if _forwards_a_comparison(n)) == []
    before = ast.parse("class Row:\n    def __getattr__(self, name):\n        return getattr(self.record, name)\n")
    assert _forwards_a_comparison(before.body[0])  # type: ignore[arg-type]


def test_one_class_is_named_decision():
    assert [module for module, node in _classes() if node.name == "Decision"] == ["evalops.stats.decision"]
