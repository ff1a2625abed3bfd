"""One type holds a decided comparison's fields: ``evalops.stats.Comparison``. The warehouse row, the report row,
the gate case and the decided comparison of a run hold it and declare none of its fields; no class forwards
attribute reads to it; one class is named ``Decision``.

The ``ab_tests`` table (``ABTestModel``) stores it once: its ``record``, with the two columns SQL reads
(``decision``, ``policy``). No other JSON column of the warehouse holds a decided comparison's fields: the
judge-label comparisons of a judge step are ``ab_tests`` rows too (naming the judge run), not dicts in
``judge_runs.results``."""

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


# -- the warehouse stores a decided comparison in one place: ab_tests ------------------------------------------

# where a comparison's fields may be: its record, and its per-segment readings beside it. An alert's payload
# is the alert as it was sent (evalops.alerting.Alert's details: the numbers its message quoted, what the
# reminder cadence compares), a record of the message rather than a second store of the comparison
_COMPARISON_COLUMNS = {("ab_tests", "record"), ("ab_tests", "segments"), ("alerts", "payload")}


def decided_dicts(value: object, path: str = "") -> list[str]:
    """Where in a JSON value a dict holds the fields of a decided comparison (a delta, a p-value and a decision,
    under their record names)."""
    found = []
    if isinstance(value, dict):
        if all(set(value) & group for group in _DECIDED):
            found.append(path or "(the value)")
        for key, inner in value.items():
            found += decided_dicts(inner, f"{path}.{key}")
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            found += decided_dicts(inner, f"{path}[{i}]")
    return found


def comparisons_stored_elsewhere(engine) -> list[str]:
    """Every place in the warehouse's JSON columns, but ``ab_tests``' own, that holds a decided comparison's
    fields (``table.column#id.path``)."""
    from sqlalchemy import JSON, select

    from evalops.warehouse.models import Base

    found = []
    with engine.connect() as conn:
        for table in Base.metadata.sorted_tables:
            key = next(iter(table.primary_key.columns))
            for column in table.columns:
                if not isinstance(column.type, JSON) or (table.name, column.name) in _COMPARISON_COLUMNS:
                    continue
                for row_id, value in conn.execute(select(key, column)).all():
                    found += [f"{table.name}.{column.name}#{row_id}{p}" for p in decided_dicts(value)]
    return found


def test_the_scan_finds_a_comparison_kept_in_a_judge_run(tmp_path):
    """What the judge step stored before its comparisons were ab_tests rows: their public views in
    ``judge_runs.results["comparisons"]``."""
    from evalops.warehouse import create_warehouse_engine, upgrade
    from evalops.warehouse.judgments import record_judge_run
    from tests.conftest import comparison_of

    engine = create_warehouse_engine(f"sqlite:///{tmp_path / 'warehouse.db'}")
    try:
        upgrade(engine)
        view = comparison_of(measure="judge:P@3", delta=-0.1, p_value=0.01, p_adjusted=0.02,
                             decision="regression").to_dict()
        record_judge_run(engine, dag_id="d", dag_run_id="r", scope="gold", values={
            "judge": {}, "prompt": "p", "items": 0, "requests": 0, "cache_hits": 0, "input_tokens": 0,
            "output_tokens": 0, "cost": 0.0, "missing": 0, "missing_reasons": {}, "gate": {}, "agreement": None,
            "results": {"versions": {"1.0": {"P@3": 0.5}}, "comparisons": [view]}})
        assert comparisons_stored_elsewhere(engine) == ["judge_runs.results#1.comparisons[0]"]
    finally:
        engine.dispose()


def test_a_judged_run_stores_its_comparisons_in_ab_tests_alone(tmp_path):
    """A run with the offline judge and a candidate: its judge-label comparisons are ``ab_tests`` rows naming
    the judge run, and no other JSON column of the warehouse holds a comparison's fields."""
    import yaml

    from evalops.config import load_config
    from evalops.pipeline import RunContext, promote, run_local
    from evalops.pipeline.store import engine_for
    from evalops.warehouse.abtests import judge_ab_tests
    from evalops.warehouse.judgments import load_judge_runs
    from tests.dags.conftest import INCLUDE, make_home

    env = make_home(tmp_path / "home", log_start="2024-05-29", log_days=4)
    env.update({"EVALOPS_JUDGE__KIND": "lexical", "EVALOPS_LOG_SAMPLE_SIZE": "20",
                "EVALOPS_JUDGE__PRODUCTION_QUERIES": "10", "EVALOPS_JUDGE__TOP_K": "3"})
    cfg = load_config(tmp_path / "home", environ=env)
    run_local(cfg, RunContext.for_day("2024-05-31"))
    promote(cfg, retriever="handbook-search", run="latest", reason="day one", promoted_by="tests")
    shipped = yaml.safe_load((INCLUDE / "retrievers.yaml").read_text())["retrievers"]
    truncated = next(e for e in shipped if e["version"] == "2.0-truncated")
    overlay = tmp_path / "candidate.yaml"
    overlay.write_text(yaml.safe_dump({"retrievers": [{**truncated, "deployed": True}]}))
    cfg2 = load_config(tmp_path / "home", environ={**env, "EVALOPS_RETRIEVERS_OVERLAY": str(overlay)})
    day2 = RunContext.for_day("2024-06-01")
    run_local(cfg2, day2)
    engine = engine_for(cfg2)
    runs = load_judge_runs(engine, day2.run_id)
    stored = judge_ab_tests(engine, runs["id"].astype(int))
    assert all(stored.values()) and set(runs["scope"]) == {"gold", "production"}
    assert all(r.judge_run_id == i and r.comparison.measure.startswith("judge:") for i, rows in stored.items()
               for r in rows)
    assert comparisons_stored_elsewhere(engine) == []
