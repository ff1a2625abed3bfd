"""The warehouse's tables are Core tables (``evalops.warehouse.tables``); the ORM classes are mapped onto them, and
the modules a run imports to read and write the warehouse do not import SQLAlchemy's ORM."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from evalops.warehouse import models, tables

# What a run imports for the warehouse: the pipeline's store, the repository modules its steps call, and the
# warehouse package's front (``evalops.warehouse.connect`` and the rest, imported on first use).
RUN_MODULES = (
    "evalops.pipeline.store",
    "evalops.pipeline.local",
    "evalops.warehouse.runs",
    "evalops.warehouse.scores",
    "evalops.warehouse.abtests",
    "evalops.warehouse.looks",
    "evalops.warehouse.alerts",
    "evalops.warehouse.dashboard",
    "evalops.warehouse.judgments",
)


def test_a_run_s_warehouse_modules_import_no_orm():
    code = (f"import sys, importlib; [importlib.import_module(m) for m in {RUN_MODULES!r}]; "
            "import evalops.warehouse as w; w.connect; "
            "print(sorted(m for m in sys.modules if m == 'sqlalchemy.orm' or m == 'evalops.warehouse.models'))")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def test_the_orm_classes_are_mapped_onto_the_core_tables():
    assert models.Base.metadata is tables.metadata
    mapped = {cls.__table__.name: cls.__table__ for cls in models.Base.registry._class_registry.values()
              if isinstance(cls, type) and hasattr(cls, "__table__")}
    assert mapped.keys() == tables.metadata.tables.keys()
    assert all(table is tables.metadata.tables[name] for name, table in mapped.items())
